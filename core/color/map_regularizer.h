#pragma once
// Makes the colour map obey MapBounds (core/color/map_bounds.h): the displacement
// lattice's lightness becomes a monotone curve of the source lightness with bounded
// slope, its chroma displacement a Lipschitz function of the colour; the residual
// match's per-channel map gets bounded slopes; the guided-filter field's per-window
// chroma models get the lattice's slope bounds and stay within a distance of the
// global map. No OpenCV, no Qt.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

#include "core/color/color_map.h"

namespace uot {

struct LightnessSpans;

// Weighted isotonic regression (pool-adjacent-violators) of y with weights w
// (w >= 0; entries with w = 0 are free and filled by linear interpolation of their
// neighbours), then every step y[k+1] - y[k] clamped into [minStep, maxStep] in a
// forward pass. The result is non-decreasing when minStep >= 0.
std::vector<double> isotonicFit(const std::vector<double>& y, const std::vector<double>& w, double minStep, double maxStep);

// A lattice edge (node, node + e_axis) whose two nodes are both marked. The chroma's
// Lipschitz bounds project onto the edges' constraints in cyclic sweeps, in increasing
// node order and axis order within a node: that order is part of the result.
struct LatticeEdge {
    std::uint32_t node, next;
    int axis;
};

// The sweeps of those projections: at most kLipschitzSweeps; a channel stops after the
// sweep whose largest excess over an edge's bound is below kLipschitzSettled of the bound.
constexpr int kLipschitzSweeps = 200;
constexpr double kLipschitzSettled = 1e-2;

// Runs the sweeps of channels first..2 of `values` (nodes x 3 interleaved) elsewhere (a
// GPU colour mapper) over `edges` with bound[axis] per edge: it must leave `values` bit
// for bit as the sweeps here would. Returns false when it did not run them (they then
// run here).
using LipschitzSweeper =
    std::function<bool(float* values, std::size_t nodes, int first, const double bound[3], const std::vector<LatticeEdge>& edges)>;

// Applies the lightness and chroma bounds to a lattice built by buildDisplacementLut
// for `colors` (n interleaved working-space colours: the weights of the lightness
// regression and, with LatticeNodes::NextToColors, the nodes that carry values);
// the chroma's range along lightness (MapBounds::chromaLightnessRange) over the nodes
// next to `colors`, whatever `nodes` says: with `spans` (the source's, lightness_spans.h),
// only between the lightness levels that meet in the picture (each span's nodes within
// the range, chains of spans within as many ranges); without, over each whole column.
// The Lipschitz sweeps by `sweeper` when given (the same result). Does nothing when
// bounds.enabled is false.
void regularizeDisplacementLut(DisplacementLut& lut, WorkingSpace space, const MapBounds& bounds, const float* colors,
                               std::size_t n, LatticeNodes nodes, int threads = 0, const LightnessSpans* spans = nullptr,
                               const LipschitzSweeper* sweeper = nullptr);

// The largest slope of channel c of the lattice's displacement along axis a over the
// lattice edges whose two nodes are both marked (|v(node + e_a) - v(node)| / step[a]).
double latticeSlope(const DisplacementLut& lut, const std::vector<unsigned char>& marked, int channel, int axis);

// The residual match's map with each channel's slope clamped into
// [bounds.residualMinSlope, bounds.residualMaxSlope] (no change when disabled).
void boundResidualMap(MarginalMap& map, const MapBounds& bounds);

// The field's per-window models bounded (Lab / Oklab; other fields are left as they
// are): the chroma rows' slopes as the lattice's, the lightness row's slope
// d(out L)/dL in [lightnessMinSlope, lightnessMaxSlope], and the displacement at
// each block's mean colour within bounds.fieldDeviation (chroma) and
// bounds.fieldLightnessDeviation (lightness) of `target` (the block displacements
// the field was fitted to, or null: no distance bound).
void boundFieldChroma(DisplacementField& field, const LowResolution& low, const float* target, const MapBounds& bounds,
                      int threads = 0);

}  // namespace uot
