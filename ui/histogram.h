#pragma once
// Luminance and R, G, B histograms of an image as shown on screen (8-bit
// sRGB-encoded values, 256 bins, each normalised to a sum of 1). Luminance is
// Rec. 709 luma of the encoded values, as photo editors draw it. Large images
// are sampled on a regular grid of at most ~1 M pixels.

#include <QImage>

#include <array>

namespace uot::ui {

struct Histogram {
    enum Channel { Luma = 0, Red = 1, Green = 2, Blue = 3 };
    std::array<std::array<double, 256>, 4> bins{};
    bool empty = true;
};

Histogram computeHistogram(const QImage& image);

}  // namespace uot::ui
