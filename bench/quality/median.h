#pragma once
// The median of a sample (the mean of the two middle values for an even count;
// 0 for none), for the quality benches' summaries.

#include <algorithm>
#include <vector>

namespace uot::bench {

inline double median(std::vector<double> x)
{
    if (x.empty()) return 0;
    std::sort(x.begin(), x.end());
    const std::size_t k = x.size() / 2;
    return x.size() % 2 ? x[k] : 0.5 * (x[k - 1] + x[k]);
}

}  // namespace uot::bench
