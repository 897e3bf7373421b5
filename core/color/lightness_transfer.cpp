#include "core/color/lightness_transfer.h"

#include <algorithm>
#include <cmath>
#include <future>
#include <numeric>

#include "core/color/palette_distance.h"
#include "core/transport/uot_error.h"

namespace uot {

std::vector<double> boundedSlopeFit(const std::vector<double>& x, const std::vector<double>& t, double lo, double step,
                                    int nodes, double minSlope, double maxSlope, int sweeps)
{
    if (nodes < 2 || x.size() != t.size() || x.empty() || !(step > 0) || !(minSlope >= 0) || !(maxSlope >= minSlope))
        throw Error(ErrorCode::InvalidArgument,
                    "boundedSlopeFit: need 2 nodes, one target per point, step > 0 and 0 <= minSlope <= maxSlope");
    const std::size_t n = static_cast<std::size_t>(nodes), m = x.size();
    // Each point's cell and position in it: y(x) = (1 - f) y_i + f y_{i+1}.
    std::vector<std::size_t> cell(m);
    std::vector<double> frac(m);
    for (std::size_t p = 0; p < m; ++p) {
        const double u = std::clamp((x[p] - lo) / step, 0.0, static_cast<double>(n - 1));
        cell[p] = std::min(static_cast<std::size_t>(u), n - 2);
        frac[p] = u - static_cast<double>(cell[p]);
    }
    // y_k = y_0 + sum_{j<k} s_j, the steps s_j in [minSlope, maxSlope] step, starting at
    // slope 1 (where no point constrains a step it stays there). Cyclic coordinate
    // descent on (y_0, s), each coordinate set to its exact minimiser clamped into its
    // box: converges to the minimum of this convex quadratic over the box.
    const double minStep = minSlope * step, maxStep = maxSlope * step;
    std::vector<double> s(n - 1, std::clamp(step, minStep, maxStep)), r(m);
    // d y(x_p) / d s_j: 0 below the point's cell, its position f in it, 1 above.
    const auto along = [&](std::size_t p, std::size_t j) { return cell[p] > j ? 1.0 : (cell[p] == j ? frac[p] : 0.0); };
    const auto value = [&](std::size_t p) {
        double y = 0;
        for (std::size_t j = 0; j < cell[p]; ++j) y += s[j];
        return y + frac[p] * s[cell[p]];
    };
    for (std::size_t p = 0; p < m; ++p) r[p] = t[p] - value(p);
    double y0 = 0;
    for (int sweep = 0; sweep < sweeps; ++sweep) {
        double moved = 0;
        const double offset = std::accumulate(r.begin(), r.end(), 0.0) / static_cast<double>(m);
        y0 += offset;
        for (double& v : r) v -= offset;
        moved = std::abs(offset);
        for (std::size_t j = 0; j + 1 < n; ++j) {
            double num = 0, den = 0;
            for (std::size_t p = 0; p < m; ++p) {
                const double g = along(p, j);
                num += g * r[p], den += g * g;
            }
            if (!(den > 0)) continue;
            const double next = std::clamp(s[j] + num / den, minStep, maxStep), delta = next - s[j];
            if (delta == 0) continue;
            s[j] = next;
            for (std::size_t p = 0; p < m; ++p) r[p] -= delta * along(p, j);
            moved = std::max(moved, std::abs(delta));
        }
        if (moved <= 1e-9 * (1 + maxStep)) break;
    }
    std::vector<double> y(n, y0);
    for (std::size_t k = 0; k + 1 < n; ++k) y[k + 1] = y[k] + s[k];
    return y;
}

std::vector<double> lightnessTransferCurve(const std::vector<float>& from, const std::vector<float>& to, double lo,
                                           double step, int nodes, double minSlope, double maxSlope)
{
    if (from.size() < 2 || to.size() < 2)
        throw Error(ErrorCode::InvalidArgument, "lightnessTransferCurve: need 2 quantile levels on each side");
    // The monotone rearrangement pairs the u-quantile of `from` with the u-quantile of
    // `to`: at equal levels u (each level the same mass, `from`'s atoms included).
    const std::size_t levels = std::max(from.size(), to.size());
    std::vector<double> x(levels), t(levels);
    for (std::size_t l = 0; l < levels; ++l) {
        const double u = static_cast<double>(l) / static_cast<double>(levels - 1);
        x[l] = quantileAt(from, u), t[l] = quantileAt(to, u);
    }
    return boundedSlopeFit(x, t, lo, step, nodes, minSlope, maxSlope);
}

void transferLightness(DisplacementLut& lut, WorkingSpace space, const MapBounds& bounds,
                       const ChannelQuantiles& source, const ChannelQuantiles& reference, double weight)
{
    if (!(weight > 0) || !bounds.enabled || !hasLightnessAxis(space) || source.empty() || reference.empty() || lut.size < 2)
        return;
    const std::vector<double> curve = lightnessTransferCurve(source.q[0], reference.q[0], lut.lo[0], lut.step[0], lut.size,
                                                             bounds.lightnessMinSlope, bounds.lightnessMaxSlope);
    const std::size_t s = static_cast<std::size_t>(lut.size);
    for (std::size_t node = 0; node < s * s * s; ++node) {
        const std::size_t k = node / (s * s);
        const double L = lut.lo[0] + static_cast<double>(k) * lut.step[0];
        float& d = lut.values[3 * node];
        d = static_cast<float>((1 - weight) * (L + d) + weight * curve[k] - L);
    }
}

double paletteDistanceThrough(const DisplacementLut& lut, const Palette& source, const Palette& reference)
{
    const std::vector<float> colors(source.points.begin(), source.points.end());
    std::vector<float> displacement(colors.size());
    applyDisplacementLut(lut, colors.data(), source.size(), displacement.data(), 1);
    std::vector<double> mapped(colors.size());
    for (std::size_t i = 0; i < colors.size(); ++i) mapped[i] = static_cast<double>(colors[i]) + displacement[i];
    return slicedPaletteDistance(mapped, source.weights, reference.points, reference.weights);
}

// The transfer darkens or brightens whole lightness ranges under the plan's chroma: where
// that puts the colours' chroma out of the gamut or beyond the chroma's range along
// lightness (a dark reference's shadows under a bright source's colours), the chroma it
// costs can outweigh the lightness it gains (home <- squirrel_cls: W2 along b* 4.4 -> 12.0,
// docs/BENCHMARKS.md), so both lattices are bounded and the estimate decides.
void boundWithLightnessTransfer(DisplacementLut& lut, WorkingSpace space, const MapBounds& bounds, const float* colors,
                                std::size_t n, LatticeNodes nodes, int threads, const LightnessSpans* spans,
                                const Palette& source, const Palette& reference, const LipschitzSweeper* sweeper)
{
    const bool transfer = bounds.enabled && bounds.lightnessTransfer > 0 && hasLightnessAxis(space) &&
                          !source.marginals.empty() && !reference.marginals.empty();
    const bool elsewhere = sweeper && *sweeper;
    const auto bound = [&](DisplacementLut& lattice) {
        regularizeDisplacementLut(lattice, space, bounds, colors, n, nodes, threads, spans, sweeper);
    };
    // Without a sweeper the bounds' projections run on one thread each, so on a machine
    // with a second core the candidate costs no wall time.
    DisplacementLut moved;
    std::future<void> candidate;
    if (transfer) {
        moved = lut;
        transferLightness(moved, space, bounds, source.marginals, reference.marginals, bounds.lightnessTransfer);
        if (!elsewhere) candidate = std::async(std::launch::async, [&] { bound(moved); });
    }
    bound(lut);
    if (!transfer) return;
    if (elsewhere)
        bound(moved);
    else
        candidate.get();
    if (paletteDistanceThrough(moved, source, reference) < paletteDistanceThrough(lut, source, reference)) lut = std::move(moved);
}

}  // namespace uot
