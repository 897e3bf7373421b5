#pragma once
// The lightness transfer: the lattice's lightness curve moved toward the 1-D optimal
// transport map of lightness, i.e. the monotone rearrangement of the source's
// lightness distribution onto the reference's (exact histogram specification on L,
// from the two palettes' distributions), with its slope held in the map's bounds.
//
// The transport's own lightness (the isotonic curve of core/color/map_regularizer.h)
// follows the plan, which is decided by colour: between a narrow-ranged image and a
// wide-ranged one it stays far from the reference's lightness distribution. The
// transfer is a function of the source lightness alone, so the look stays a
// function of colour (an exported LUT holds it), monotone (no bands, no
// inversions) and leaves the chroma displacement as it is. No OpenCV, no Qt.
#include <vector>

#include "core/color/color_map.h"
#include "core/color/map_regularizer.h"
#include "core/color/marginal_match.h"
#include "core/color/palette.h"

namespace uot {

struct LightnessSpans;

// The piecewise-linear curve y on `nodes` points x_k = lo + k step whose values at the
// points x (clamped into the nodes' range) are nearest to the targets t in the least-squares
// sense, sum_p (y(x_p) - t_p)^2, among those whose slope between nodes lies in
// [minSlope, maxSlope] (0 <= minSlope <= maxSlope). Where the targets are steeper than
// the bound the fit gives up rise where few points are, not everywhere. Throws
// uot::Error(InvalidArgument) for fewer than 2 nodes, no points, step <= 0 or bad slopes.
std::vector<double> boundedSlopeFit(const std::vector<double>& x, const std::vector<double>& t, double lo, double step,
                                    int nodes, double minSlope, double maxSlope, int sweeps = 500);

// The lightness curve of the transfer on `nodes` points x_k = lo + k step: the 1-D
// optimal transport map of lightness from the quantiles `from` onto `to` (the
// monotone rearrangement: each quantile of `from` goes to the same quantile of `to`),
// fitted by boundedSlopeFit with slopes in [minSlope, maxSlope]. Among bounded curves,
// the one whose result is closest (W2 over the quantile levels) to the reference's
// lightness distribution; an atom of `from` (a black border) goes to the mean of the
// part of `to` it is paired with. Throws as boundedSlopeFit, and for fewer than 2
// quantile levels.
std::vector<double> lightnessTransferCurve(const std::vector<float>& from, const std::vector<float>& to, double lo,
                                           double step, int nodes, double minSlope, double maxSlope);

// The lattice's lightness output moved toward lightnessTransferCurve(source's L quantiles,
// reference's) with the bounds' slopes, by `weight` (0: unchanged, 1: the transfer's curve
// at every node); the chroma untouched. Nothing happens for weight 0, bounds off, or a
// space without a lightness axis.
void transferLightness(DisplacementLut& lut, WorkingSpace space, const MapBounds& bounds,
                       const ChannelQuantiles& source, const ChannelQuantiles& reference, double weight);

// The source palette's points carried through the lattice (each point plus its
// displacement there) against the reference palette: the map's own estimate of its
// palette distance (slicedPaletteDistance, core/color/palette_distance.h).
double paletteDistanceThrough(const DisplacementLut& lut, const Palette& source, const Palette& reference);

// The lattice bounded by regularizeDisplacementLut (colors, n, nodes, threads, spans as
// there), with the lightness transfer (bounds.lightnessTransfer, from the palettes'
// distributions) where the estimate says it brings the palette nearer the reference's:
// bounded once with the transport's own lightness curve and once moved toward the transfer
// first, the one with the smaller paletteDistanceThrough is kept (the transport's on a tie).
// The Lipschitz sweeps by `sweeper` when given and not empty (as regularizeDisplacementLut); the two
// boundings then run one after the other (a sweeper serves one caller at a time), else
// side by side.
void boundWithLightnessTransfer(DisplacementLut& lut, WorkingSpace space, const MapBounds& bounds, const float* colors,
                                std::size_t n, LatticeNodes nodes, int threads, const LightnessSpans* spans,
                                const Palette& source, const Palette& reference,
                                const LipschitzSweeper* sweeper = nullptr);

}  // namespace uot
