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
#include "core/color/marginal_match.h"

namespace uot {

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

void transferLightness(DisplacementLut& lut, WorkingSpace space, const MapBounds& bounds,
                       const ChannelQuantiles& source, const ChannelQuantiles& reference, double weight);

}  // namespace uot
