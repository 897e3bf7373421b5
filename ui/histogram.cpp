#include "ui/histogram.h"

#include <algorithm>
#include <cmath>

namespace uot::ui {

Histogram computeHistogram(const QImage& image)
{
    Histogram h;
    if (image.isNull()) return h;
    const QImage rgb = image.convertToFormat(QImage::Format_RGB888);
    const long long pixels = static_cast<long long>(rgb.width()) * rgb.height();
    const int step = std::max(1, int(std::sqrt(double(pixels) / 1.0e6)));  // grid sampling for large images
    std::array<std::array<long long, 256>, 4> counts{};
    long long n = 0;
    for (int y = 0; y < rgb.height(); y += step) {
        const uchar* line = rgb.constScanLine(y);
        for (int x = 0; x < rgb.width(); x += step) {
            const int r = line[3 * x], g = line[3 * x + 1], b = line[3 * x + 2];
            const int luma = std::clamp(int(std::lround(0.2126 * r + 0.7152 * g + 0.0722 * b)), 0, 255);
            ++counts[Histogram::Luma][luma];
            ++counts[Histogram::Red][r];
            ++counts[Histogram::Green][g];
            ++counts[Histogram::Blue][b];
            ++n;
        }
    }
    for (int c = 0; c < 4; ++c)
        for (int i = 0; i < 256; ++i) h.bins[c][i] = double(counts[c][i]) / double(n);
    h.empty = false;
    return h;
}

}  // namespace uot::ui
