#include "core/color/lightness_spans.h"

#include <algorithm>
#include <cmath>

#include "core/color/color_map.h"
#include "core/color/image_gradient.h"

namespace uot {

LightnessSpans lightnessSpans(const float* colors, int width, int height, WorkingSpace space, int blockSize, int radius,
                              int threads)
{
    LightnessSpans out;
    out.space = space;
    if (!hasLightnessAxis(space) || width <= 0 || height <= 0) return out;
    const double longSide = static_cast<double>(std::max(width, height)) * std::max(1, blockSize);
    const int factor = std::max(1, static_cast<int>(std::lround(longSide / kWholePictureLongSide / std::max(1, blockSize))));
    const LowResolution picture = downsampleColors(colors, width, height, space, factor, threads);
    const int w = picture.width, h = picture.height, r = std::max(0, radius);
    std::vector<float> blurred = picture.colors, gx, gy;
    gaussianBlur3(blurred, w, h, kMeasureBlur);
    std::vector<float> gradient[3];
    for (int c = 0; c < 3; ++c) {
        sobel(blurred, w, h, c, gx, gy);
        gradient[c].resize(gx.size());
        for (std::size_t p = 0; p < gx.size(); ++p) gradient[c][p] = gx[p] * gx[p] + gy[p] * gy[p];
    }
    out.spans.resize(static_cast<std::size_t>(w) * h * LightnessSpans::kStride);
    for (int y = 0; y < h; ++y)
        for (int x = 0; x < w; ++x) {
            float lo = picture.colors[3 * (static_cast<std::size_t>(y) * w + x)], hi = lo;
            for (int v = std::max(0, y - r); v <= std::min(h - 1, y + r); ++v)
                for (int u = std::max(0, x - r); u <= std::min(w - 1, x + r); ++u) {
                    const float l = picture.colors[3 * (static_cast<std::size_t>(v) * w + u)];
                    lo = std::min(lo, l), hi = std::max(hi, l);
                }
            const std::size_t p = static_cast<std::size_t>(y) * w + x;
            float* s = &out.spans[LightnessSpans::kStride * p];
            s[0] = picture.colors[3 * p + 1];
            s[1] = picture.colors[3 * p + 2];
            s[2] = lo, s[3] = hi;
            s[4] = std::sqrt(gradient[0][p]);
            s[5] = std::sqrt(gradient[1][p] + gradient[2][p]);
        }
    return out;
}

}  // namespace uot
