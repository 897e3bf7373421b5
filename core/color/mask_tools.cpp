#include "core/color/mask_tools.h"

#include <algorithm>
#include <cmath>

namespace uot {

namespace {

double brushFalloff(double d, double hardness)
{
    if (d >= 1.0) return 0.0;
    if (d <= hardness || hardness >= 1.0) return 1.0;
    const double s = (d - hardness) / (1.0 - hardness);
    return 1.0 - s * s * (3.0 - 2.0 * s);
}

double sample(const Image& image, std::size_t index)
{
    return image.depth == 16 ? image.samples16()[index] / 65535.0 : image.samples8()[index] / 255.0;
}

Mask blankMask(const Image& image)
{
    Mask mask;
    mask.width = image.width;
    mask.height = image.height;
    mask.values.assign(image.pixelCount(), 0.0f);
    return mask;
}

// 1 at distance 0 from a range, falling linearly to 0 at `softness`.
// The sky heuristic's thresholds (mask_tools.h).
constexpr double kSkyMinLuma = 0.15, kSkyWarmth = 0.05, kSkyEdge = 0.25;

float rampOutside(double distance, double softness)
{
    if (distance <= 0) return 1.0f;
    if (softness <= 0 || distance >= softness) return 0.0f;
    return float(1.0 - distance / softness);
}

}  // namespace

void paintStroke(Mask& mask, const std::vector<StrokePoint>& points, double size, double hardness, double opacity,
                 bool erase)
{
    if (mask.empty() || points.empty() || size <= 0 || opacity <= 0) return;
    const double radius = size / 2.0;
    hardness = std::clamp(hardness, 0.0, 1.0);
    opacity = std::clamp(opacity, 0.0, 1.0);
    // The dabs: the points, and between them one every quarter of the size.
    std::vector<StrokePoint> dabs{points.front()};
    const double spacing = std::max(0.5, size / 4.0);
    for (std::size_t k = 1; k < points.size(); ++k) {
        const StrokePoint a = points[k - 1], b = points[k];
        const double length = std::hypot(b.x - a.x, b.y - a.y);
        const int steps = std::max(1, int(std::ceil(length / spacing)));
        for (int s = 1; s <= steps; ++s)
            dabs.push_back({a.x + (b.x - a.x) * s / steps, a.y + (b.y - a.y) * s / steps});
    }
    double x0 = dabs[0].x, x1 = x0, y0 = dabs[0].y, y1 = y0;
    for (const StrokePoint& p : dabs) {
        x0 = std::min(x0, p.x), x1 = std::max(x1, p.x), y0 = std::min(y0, p.y), y1 = std::max(y1, p.y);
    }
    const int left = std::max(0, int(std::floor(x0 - radius))), right = std::min(mask.width - 1, int(std::ceil(x1 + radius)));
    const int top = std::max(0, int(std::floor(y0 - radius))), bottom = std::min(mask.height - 1, int(std::ceil(y1 + radius)));
    if (left > right || top > bottom) return;
    const int w = right - left + 1;
    std::vector<float> coverage(std::size_t(w) * (bottom - top + 1), 0.0f);
    for (const StrokePoint& p : dabs) {
        const int ax = std::max(left, int(std::floor(p.x - radius))), bx = std::min(right, int(std::ceil(p.x + radius)));
        const int ay = std::max(top, int(std::floor(p.y - radius))), by = std::min(bottom, int(std::ceil(p.y + radius)));
        for (int y = ay; y <= by; ++y)
            for (int x = ax; x <= bx; ++x) {
                const double d = std::hypot(x + 0.5 - p.x, y + 0.5 - p.y) / radius;
                float& c = coverage[std::size_t(y - top) * w + (x - left)];
                c = std::max(c, float(opacity * brushFalloff(d, hardness)));
            }
    }
    for (int y = top; y <= bottom; ++y)
        for (int x = left; x <= right; ++x) {
            const float c = coverage[std::size_t(y - top) * w + (x - left)];
            float& m = mask.values[std::size_t(y) * mask.width + x];
            m = erase ? m * (1.0f - c) : m + c * (1.0f - m);
        }
}

void pixelRgb(const Image& image, std::size_t pixel, double rgb[3])
{
    const std::size_t base = pixel * std::size_t(image.channels);
    for (int c = 0; c < 3; ++c) rgb[c] = sample(image, base + (image.channels >= 3 ? std::size_t(c) : 0));
}

double pixelLuma(const Image& image, std::size_t pixel)
{
    double rgb[3];
    pixelRgb(image, pixel, rgb);
    return 0.2126 * rgb[0] + 0.7152 * rgb[1] + 0.0722 * rgb[2];
}

Mask luminanceRangeMask(const Image& image, double low, double high, double softness)
{
    Mask mask = blankMask(image);
    for (std::size_t i = 0; i < mask.values.size(); ++i) {
        const double y = pixelLuma(image, i);
        mask.values[i] = rampOutside(std::max(low - y, y - high), softness);
    }
    return mask;
}

Mask colorRangeMask(const Image& image, const double rgb[3], double tolerance, double softness)
{
    Mask mask = blankMask(image);
    for (std::size_t i = 0; i < mask.values.size(); ++i) {
        double c[3];
        pixelRgb(image, i, c);
        const double d = std::sqrt((c[0] - rgb[0]) * (c[0] - rgb[0]) + (c[1] - rgb[1]) * (c[1] - rgb[1]) +
                                   (c[2] - rgb[2]) * (c[2] - rgb[2]));
        mask.values[i] = rampOutside(d - tolerance, softness);
    }
    return mask;
}

Mask skyMask(const Image& image)
{
    Mask mask = blankMask(image);
    const int w = image.width, h = image.height;
    // Each column's sky: the rows above the first that fails.
    std::vector<int> ends(std::size_t(w), 0);
    for (int x = 0; x < w; ++x) {
        double above[3] = {0, 0, 0};
        int end = 0;
        for (int y = 0; y < h; ++y, ++end) {
            double c[3];
            pixelRgb(image, std::size_t(y) * w + x, c);
            const double luma = 0.2126 * c[0] + 0.7152 * c[1] + 0.0722 * c[2];
            const double step = std::sqrt((c[0] - above[0]) * (c[0] - above[0]) + (c[1] - above[1]) * (c[1] - above[1]) +
                                          (c[2] - above[2]) * (c[2] - above[2]));
            if (luma < kSkyMinLuma || c[2] < c[0] - kSkyWarmth || (y > 0 && step >= kSkyEdge)) break;
            std::copy(c, c + 3, above);
        }
        ends[std::size_t(x)] = end;
    }
    // A bird or a wire ends one column early: the median over 4% of the width.
    const int half = std::max(1, int(std::lround(0.02 * w)));
    const int soft = std::max(1, int(std::lround(0.02 * h)));
    for (int x = 0; x < w; ++x) {
        std::vector<int> window(ends.begin() + std::max(0, x - half), ends.begin() + std::min(w, x + half + 1));
        std::nth_element(window.begin(), window.begin() + std::ptrdiff_t(window.size() / 2), window.end());
        const int end = window[window.size() / 2];
        // Full sky down to end - soft, fading to 0 at end.
        for (int y = 0; y < end; ++y) mask.values[std::size_t(y) * w + x] = float(std::min(1.0, double(end - y) / soft));
    }
    return mask;
}

PackedMask packMask(const Mask& mask)
{
    PackedMask packed{mask.width, mask.height, {}, {}};
    for (std::size_t i = 0; i < mask.values.size();) {
        std::size_t j = i + 1;
        while (j < mask.values.size() && mask.values[j] == mask.values[i] && j - i < 0xffffffffu) ++j;
        packed.lengths.push_back(std::uint32_t(j - i));
        packed.values.push_back(mask.values[i]);
        i = j;
    }
    return packed;
}

Mask unpackMask(const PackedMask& packed)
{
    Mask mask;
    mask.width = packed.width;
    mask.height = packed.height;
    mask.values.reserve(std::size_t(packed.width) * std::size_t(packed.height));
    for (std::size_t r = 0; r < packed.lengths.size(); ++r) mask.values.insert(mask.values.end(), packed.lengths[r], packed.values[r]);
    return mask;
}

Image maskToGrayImage(const Mask& mask)
{
    Image image = Image::allocate(mask.width, mask.height, 1, 8);
    for (std::size_t i = 0; i < mask.values.size(); ++i)
        image.samples8()[i] = std::uint8_t(std::lround(std::clamp(mask.values[i], 0.0f, 1.0f) * 255.0f));
    return image;
}

}  // namespace uot
