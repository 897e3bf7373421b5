#pragma once
// What the speed benches print and size alike: the machine's load average (the
// figures of a shared machine need it) and a photo's 4:3 size for a number of
// megapixels.

#include <cmath>
#include <fstream>
#include <string>

namespace uot::bench {

// "1.05 0.98 0.87" (1, 5 and 15 minutes), "" where /proc/loadavg is missing.
inline std::string loadAverage()
{
    std::ifstream in("/proc/loadavg");
    std::string a, b, c;
    if (!(in >> a >> b >> c)) return "";
    return a + " " + b + " " + c;
}

struct PhotoSize {
    int width = 0;
    int height = 0;
};

// Width x height of a 4:3 photo of about `megapixels` million pixels.
inline PhotoSize photoSizeOf(double megapixels)
{
    const int w = static_cast<int>(std::lround(std::sqrt(megapixels * 1e6 * 4 / 3)));
    return {w, w * 3 / 4};
}

}  // namespace uot::bench
