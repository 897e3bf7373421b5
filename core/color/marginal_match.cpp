#include "core/color/marginal_match.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "core/transport/uot_error.h"

namespace uot {

ChannelQuantiles channelQuantiles(const float* colors, std::size_t n, std::size_t stride, int levels, int bins,
                                  const float* weights)
{
    if (levels < 2 || bins < 1 || stride < 1)
        throw Error(ErrorCode::InvalidArgument, "channelQuantiles: levels must be >= 2, bins and stride >= 1");
    ChannelQuantiles out;
    const std::size_t count = n == 0 ? 0 : (n - 1) / stride + 1;
    if (count == 0 || colors == nullptr) return out;
    for (int c = 0; c < 3; ++c) {
        float lo = colors[c], hi = colors[c];
        for (std::size_t k = 0; k < count; ++k) {
            const float v = colors[3 * k * stride + c];
            lo = std::min(lo, v), hi = std::max(hi, v);
        }
        const double width = (static_cast<double>(hi) - lo) / bins;
        std::vector<double> histogram(static_cast<std::size_t>(bins), 0.0);
        if (hi > lo)
            for (std::size_t k = 0; k < count; ++k) {
                const double u = (colors[3 * k * stride + c] - lo) / width;
                histogram[static_cast<std::size_t>(std::clamp(static_cast<int>(u), 0, bins - 1))] +=
                    weights ? static_cast<double>(weights[k * stride]) : 1.0;
            }
        double mass = static_cast<double>(count);
        if (weights) {
            mass = 0;
            for (double h : histogram) mass += h;
        }
        out.q[c] = quantilesFromHistogram(lo, hi, histogram, mass, levels);
    }
    return out;
}

std::vector<float> quantilesFromHistogram(float lo, float hi, const std::vector<double>& histogram, double mass, int levels)
{
    std::vector<float> q(static_cast<std::size_t>(levels), lo);
    if (!(hi > lo) || levels < 2 || histogram.empty()) return q;  // one value: every quantile is it
    const int bins = static_cast<int>(histogram.size());
    const double width = (static_cast<double>(hi) - lo) / bins;
    // Walk the cumulative histogram once; the mass of a bin is spread uniformly over it.
    double below = 0;  // mass of the bins before b
    int b = 0;
    for (int k = 0; k < levels; ++k) {
        const double target = mass * k / (levels - 1);
        while (b < bins - 1 && below + histogram[static_cast<std::size_t>(b)] < target) below += histogram[static_cast<std::size_t>(b++)];
        const double inBin = histogram[static_cast<std::size_t>(b)];
        const double f = inBin > 0 ? std::clamp((target - below) / inBin, 0.0, 1.0) : 0.0;
        q[static_cast<std::size_t>(k)] = static_cast<float>(std::min<double>(hi, lo + (b + f) * width));
    }
    q.front() = lo, q.back() = hi;
    return q;
}

namespace {

// The piecewise-linear CDF through the quantiles q (levels L) at x, in [0, 1].
double cdfAt(const std::vector<float>& q, double x)
{
    const std::size_t L = q.size();
    const std::size_t j = static_cast<std::size_t>(std::upper_bound(q.begin(), q.end(), static_cast<float>(x)) - q.begin());
    if (j == 0) return 0;
    if (j == L) return 1;
    const std::size_t k = j - 1;
    const double t = (x - q[k]) / (static_cast<double>(q[j]) - q[k]);
    return (static_cast<double>(k) + std::clamp(t, 0.0, 1.0)) / static_cast<double>(L - 1);
}

}  // namespace

double quantileAt(const std::vector<float>& q, double u)
{
    const double p = std::clamp(u, 0.0, 1.0) * static_cast<double>(q.size() - 1);
    const std::size_t k = std::min(static_cast<std::size_t>(p), q.size() - 2);
    return q[k] + (p - static_cast<double>(k)) * (static_cast<double>(q[k + 1]) - q[k]);
}

MarginalMap::MarginalMap(const ChannelQuantiles& from, const ChannelQuantiles& to, int gridSize)
{
    if (from.empty() || to.empty() || gridSize < 2)
        throw Error(ErrorCode::InvalidArgument, "MarginalMap: empty quantiles or a grid of fewer than 2 points");
    for (int c = 0; c < 3; ++c) {
        const std::vector<float>& qf = from.q[c];
        const std::vector<float>& qt = to.q[c];
        if (qf.size() < 2 || qt.size() < 2)
            throw Error(ErrorCode::InvalidArgument, "MarginalMap: quantile tables need at least 2 levels");
        std::vector<float>& table = m_table[c];
        m_lo[c] = qf.front();
        const double range = static_cast<double>(qf.back()) - qf.front();
        if (!(range > 0)) {
            table.assign(2, static_cast<float>(quantileAt(qt, 0.5)));
            m_inverseStep[c] = 0;
            continue;
        }
        const double step = range / (gridSize - 1);
        m_inverseStep[c] = static_cast<float>(1 / step);
        m_anchor[c] = static_cast<std::size_t>(
            std::clamp<long>(std::lround((quantileAt(qf, 0.5) - qf.front()) / step), 0, gridSize - 1));
        table.resize(static_cast<std::size_t>(gridSize));
        for (int i = 0; i < gridSize; ++i)
            table[static_cast<std::size_t>(i)] = static_cast<float>(quantileAt(qt, cdfAt(qf, qf.front() + i * step)));
    }
}

void MarginalMap::limitSlopes(double minSlope, double maxSlope)
{
    for (int c = 0; c < 3; ++c) {
        std::vector<float>& t = m_table[c];
        if (!(m_inverseStep[c] > 0)) continue;
        const double step = 1.0 / m_inverseStep[c];
        const double lo = minSlope * step, hi = maxSlope * step;
        for (std::size_t i = m_anchor[c]; i + 1 < t.size(); ++i)
            t[i + 1] = static_cast<float>(std::clamp<double>(t[i + 1], t[i] + lo, t[i] + hi));
        for (std::size_t i = m_anchor[c]; i > 0; --i)
            t[i - 1] = static_cast<float>(std::clamp<double>(t[i - 1], t[i] - hi, t[i] - lo));
    }
}

}  // namespace uot
