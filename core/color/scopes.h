#pragma once
// Video scopes of an image, computed on the host without Qt: a luma waveform,
// an RGB parade and a vectorscope, as small density plots (sample counts per
// cell) that a dock draws as they are or through scopeToGray8().
//
// On the encoded (sRGB) samples, as video scopes read them, with the Rec. 709
// weights: Y' = 0.2126 R' + 0.7152 G' + 0.0722 B', Cb = (B' - Y') / 1.8556,
// Cr = (R' - Y') / 1.5748 (R', G', B' in [0, 1]; Cb, Cr in [-0.5, 0.5]). A gray
// image reads as R' = G' = B'; alpha is ignored.
//
// Cost: one pass over at most about sampleLimit pixels (a regular grid, every
// step-th pixel along x and y), parallel over rows (OpenMP) with per-thread
// plots added at the end; the plots do not depend on the thread count.

#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/color/image.h"

namespace uot {

struct ScopeSettings {
    int columns = 256;          // waveform and parade: the image's width in this many columns (>= 1)
    int levels = 256;           // waveform and parade: value rows (>= 2)
    int vectorscopeSize = 256;  // vectorscope: size x size cells (>= 2)
    // At most about this many pixels are read: step = ceil(sqrt(pixels / sampleLimit))
    // along both axes (0 = every pixel).
    // 2^20: a 12 MP photo is read at every 4th pixel of every 4th row (750 000 pixels).
    std::size_t sampleLimit = std::size_t{1} << 20;
    int threads = 0;  // 0 = all
};

// width x height sample counts, row-major, row 0 at the top.
struct ScopePlot {
    int width = 0;
    int height = 0;
    std::vector<float> counts;
    float at(int x, int y) const { return counts[static_cast<std::size_t>(y) * width + x]; }
};

struct Scopes {
    // columns x levels: pixel column x (of W) falls in column x * columns / W; a
    // value v in [0, 1] in row levels - 1 - round(v (levels - 1)) (white at the top).
    ScopePlot waveform;              // luma Y'
    std::array<ScopePlot, 3> parade;  // R', G', B', one plot each
    // size x size: Cb along x, round((Cb + 0.5) (size - 1)) (blue to the right),
    // Cr along y, size - 1 - round((Cr + 0.5) (size - 1)) (red at the top).
    ScopePlot vectorscope;
    int step = 1;             // every step-th pixel along x and y was read
    std::size_t samples = 0;  // pixels read (each adds 1 to every plot)
};

// Throws uot::Error(InvalidArgument) for an inconsistent image or bad settings.
Scopes computeScopes(const Image& image, const ScopeSettings& settings = {});

// A plot as 8-bit gray for drawing: 255 x sqrt(count / largest count), 0 where
// empty (all 0 for an empty plot); same layout as counts.
std::vector<std::uint8_t> scopeToGray8(const ScopePlot& plot);

}  // namespace uot
