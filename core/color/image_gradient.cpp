#include "core/color/image_gradient.h"

#include <algorithm>
#include <cmath>
#include <cstddef>

namespace uot {

void gaussianBlur3(std::vector<float>& x, int width, int height, double sigma)
{
    if (sigma <= 0) return;
    const int r = static_cast<int>(std::ceil(3 * sigma));
    std::vector<double> k(2 * r + 1);
    double sum = 0;
    for (int i = -r; i <= r; ++i) sum += k[i + r] = std::exp(-0.5 * i * i / (sigma * sigma));
    for (double& v : k) v /= sum;
    std::vector<float> tmp(x.size());
    const auto at = [](int i, int n) { return std::clamp(i, 0, n - 1); };
    for (int y = 0; y < height; ++y)
        for (int xx = 0; xx < width; ++xx)
            for (int c = 0; c < 3; ++c) {
                double s = 0;
                for (int i = -r; i <= r; ++i) s += k[i + r] * x[3 * (static_cast<std::size_t>(y) * width + at(xx + i, width)) + c];
                tmp[3 * (static_cast<std::size_t>(y) * width + xx) + c] = static_cast<float>(s);
            }
    for (int y = 0; y < height; ++y)
        for (int xx = 0; xx < width; ++xx)
            for (int c = 0; c < 3; ++c) {
                double s = 0;
                for (int i = -r; i <= r; ++i) s += k[i + r] * tmp[3 * (static_cast<std::size_t>(at(y + i, height)) * width + xx) + c];
                x[3 * (static_cast<std::size_t>(y) * width + xx) + c] = static_cast<float>(s);
            }
}

void sobel(const std::vector<float>& x, int width, int height, int c, std::vector<float>& gx, std::vector<float>& gy)
{
    gx.assign(static_cast<std::size_t>(width) * height, 0.0f);
    gy.assign(gx.size(), 0.0f);
    const auto v = [&](int xx, int y) {
        xx = std::clamp(xx, 0, width - 1), y = std::clamp(y, 0, height - 1);
        return x[3 * (static_cast<std::size_t>(y) * width + xx) + c];
    };
    for (int y = 0; y < height; ++y)
        for (int xx = 0; xx < width; ++xx) {
            const std::size_t p = static_cast<std::size_t>(y) * width + xx;
            gx[p] = ((v(xx + 1, y - 1) + 2 * v(xx + 1, y) + v(xx + 1, y + 1)) - (v(xx - 1, y - 1) + 2 * v(xx - 1, y) + v(xx - 1, y + 1))) / 8;
            gy[p] = ((v(xx - 1, y + 1) + 2 * v(xx, y + 1) + v(xx + 1, y + 1)) - (v(xx - 1, y - 1) + 2 * v(xx, y - 1) + v(xx + 1, y - 1))) / 8;
        }
}

}  // namespace uot
