#include "core/transport/row_block_reduction.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace uot {

LogSumParts LogSumParts::of(std::span<const double> x)
{
    double largest = -std::numeric_limits<double>::infinity();
    for (double v : x) largest = std::max(largest, v);
    if (!std::isfinite(largest)) return {largest, largest == -std::numeric_limits<double>::infinity() ? 0.0 : 1.0};
    double s = 0;
    for (double v : x) s += std::exp(v - largest);
    return {largest, s};
}

LogSumParts LogSumParts::combinedWith(const LogSumParts& other) const
{
    if (std::isnan(largest) || std::isnan(other.largest)) return {std::numeric_limits<double>::quiet_NaN(), 1.0};
    const double top = std::max(largest, other.largest);
    if (!std::isfinite(top)) return {top, top == -std::numeric_limits<double>::infinity() ? 0.0 : 1.0};
    // exp(-inf - top) = 0: a side without terms adds nothing.
    return {top, scaledSum * std::exp(largest - top) + other.scaledSum * std::exp(other.largest - top)};
}

double LogSumParts::value() const
{
    if (!std::isfinite(largest)) return largest;
    return largest + std::log(scaledSum);
}

RowTotals::RowTotals(std::size_t sums, std::size_t maxima, std::size_t logSums)
    : m_sums(sums), m_maxima(maxima), m_logSums(logSums), m_data(kHeader + sums + maxima + 2 * logSums, 0.0)
{
    m_data[0] = static_cast<double>(sums);
    m_data[1] = static_cast<double>(maxima);
    m_data[2] = static_cast<double>(logSums);
    for (double& x : this->maxima()) x = -std::numeric_limits<double>::infinity();
    for (std::size_t k = 0; k < logSums; ++k) setLogSum(k, {-std::numeric_limits<double>::infinity(), 0.0});
}

void RowTotals::setLogSum(std::size_t k, const LogSumParts& parts)
{
    double* p = m_data.data() + kHeader + m_sums + m_maxima + 2 * k;
    p[0] = parts.largest;
    p[1] = parts.scaledSum;
}

LogSumParts RowTotals::logSum(std::size_t k) const
{
    const double* p = m_data.data() + kHeader + m_sums + m_maxima + 2 * k;
    return {p[0], p[1]};
}

void RowTotals::combinePacked(const double* in, double* inout)
{
    const auto sums = static_cast<std::size_t>(inout[0]), maxima = static_cast<std::size_t>(inout[1]),
               logSums = static_cast<std::size_t>(inout[2]);
    const double* a = in + kHeader;
    double* b = inout + kHeader;
    for (std::size_t k = 0; k < sums; ++k) b[k] += a[k];
    a += sums;
    b += sums;
    for (std::size_t k = 0; k < maxima; ++k) b[k] = std::max(b[k], a[k]);
    a += maxima;
    b += maxima;
    for (std::size_t k = 0; k < logSums; ++k) {
        const LogSumParts combined = LogSumParts{b[2 * k], b[2 * k + 1]}.combinedWith({a[2 * k], a[2 * k + 1]});
        b[2 * k] = combined.largest;
        b[2 * k + 1] = combined.scaledSum;
    }
}

void RowBlockReduction::finishCombine(RowTotals& totals)
{
    // Without a packed transport: the sums and maxima in one call each, the
    // log-sums by their largest terms first, then their sums rescaled to those.
    if (!totals.sums().empty()) sum(totals.sums());
    if (!totals.maxima().empty()) max(totals.maxima());
    const std::size_t count = totals.logSumCount();
    if (count == 0) return;
    std::vector<double> largest(count), scaled(count);
    for (std::size_t k = 0; k < count; ++k) largest[k] = totals.logSum(k).largest;
    max(largest);
    for (std::size_t k = 0; k < count; ++k) {
        const LogSumParts mine = totals.logSum(k);
        const LogSumParts zero{largest[k], 0.0};
        scaled[k] = zero.combinedWith(mine).scaledSum;
    }
    sum(scaled);
    for (std::size_t k = 0; k < count; ++k) totals.setLogSum(k, {largest[k], scaled[k]});
}

}  // namespace uot
