#pragma once
// Per-channel distributions of colour sets and the monotone per-channel map that
// carries one set's distributions onto another's (the 1-D optimal transport map
// of each channel, as in histogram matching), on working-space floats.
//
// The recolor pipeline's residual match: the result of the transport map, t, is
// moved toward the reference's per-channel distributions, t + s (f(t) - t), f the
// per-channel map from the result's quantiles to the reference's. The shift is
// folded into the smoothed displacement field (addResidualShift in color_map.h).

#include <array>
#include <cstddef>
#include <vector>


namespace uot {

// Quantiles of each of the 3 interleaved channels at the levels k / (levels - 1),
// k = 0..levels-1 (q[c][0] the minimum, q[c][levels - 1] the maximum). Empty when
// computed from no colours.
struct ChannelQuantiles {
    std::array<std::vector<float>, 3> q;
    bool empty() const { return q[0].empty(); }
};

// The quantiles of n colours (interleaved x 3, finite), read every `stride`-th colour,
// from a histogram of `bins` bins per channel over the channel's range with the
// mass spread uniformly inside each bin (exact to within one bin width).
// weights (or null: every colour counts 1): one non-negative weight per colour (the
// k-th read colour has weights[k * stride]), the mass each colour adds to its bin.
// Throws uot::Error(InvalidArgument) for levels < 2, bins < 1 or stride < 1.
constexpr int kQuantileLevels = 257, kQuantileBins = 4096;  // channelQuantiles' defaults
ChannelQuantiles channelQuantiles(const float* colors, std::size_t n, std::size_t stride = 1, int levels = kQuantileLevels,
                                  int bins = kQuantileBins, const float* weights = nullptr);

// The `levels` quantiles of one channel from its histogram of histogram.size() bins of
// equal width over [lo, hi] (the mass of a bin spread uniformly over it; `mass` their
// sum): channelQuantiles' last step, shared with histograms made elsewhere (a device).
// Every quantile is lo when hi <= lo.
std::vector<float> quantilesFromHistogram(float lo, float hi, const std::vector<double>& histogram, double mass, int levels);

// The piecewise-linear quantile function through the quantile levels q (at least 2,
// non-decreasing) at u in [0, 1] (clamped).
double quantileAt(const std::vector<float>& q, double u);

// The per-channel map x -> Q_to(F_from(x)) (F_from the piecewise-linear CDF through
// `from`'s quantiles, Q_to the piecewise-linear quantile function through `to`'s),
// tabulated on a uniform grid over `from`'s range; values outside the range map to
// `to`'s minimum / maximum. A channel whose `from` range is empty maps every value
// to `to`'s median.
class MarginalMap {
public:
    MarginalMap() = default;
    // Throws uot::Error(InvalidArgument) when either is empty or has fewer than 2 levels,
    // or gridSize < 2.
    MarginalMap(const ChannelQuantiles& from, const ChannelQuantiles& to, int gridSize = 2048);
    bool empty() const { return m_table[0].empty(); }
    // Clamps each channel's slope dy/dx into [minSlope, maxSlope] (minSlope >= 0 keeps
    // it monotone), walking out from the grid point of `from`'s median, whose value is kept.
    void limitSlopes(double minSlope, double maxSlope);
    // The slope of channel c's table between grid points i and i + 1 (0 for a flat channel).
    double slopeAt(int c, std::size_t i) const
    {
        return m_inverseStep[c] > 0 ? (m_table[c][i + 1] - m_table[c][i]) * static_cast<double>(m_inverseStep[c]) : 0.0;
    }
    std::size_t gridSize(int c) const { return m_table[c].size(); }
    // The mapped value of channel c: linear interpolation in its table (a uniform
    // grid from m_lo, 1 / spacing = m_inverseStep), clamped to the table's ends.
    float operator()(int c, float x) const
    {
        const std::vector<float>& t = m_table[c];
        const float u = (x - m_lo[c]) * m_inverseStep[c];
        if (!(u > 0)) return t.front();
        if (u >= static_cast<float>(t.size() - 1)) return t.back();
        const std::size_t i = static_cast<std::size_t>(u);
        const float w = u - static_cast<float>(i);
        return t[i] + w * (t[i + 1] - t[i]);
    }

private:
    std::array<float, 3> m_lo{}, m_inverseStep{};
    std::array<std::size_t, 3> m_anchor{};  // grid index nearest `from`'s median
    std::array<std::vector<float>, 3> m_table;
};

}  // namespace uot
