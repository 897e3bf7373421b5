#pragma once
// A small photo-like RGB image for pipeline tests (no files): smooth shading,
// a few flat regions and a little noise, the same for the same seed.

#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "core/color/image.h"

namespace uot::test {

// A photo-like test image: smooth shading plus a few flat regions and texture.
inline Image scene(int w, int h, unsigned seed)
{
    Image img = Image::allocate(w, h, 3, 8);
    unsigned s = seed;
    for (int y = 0; y < h; ++y)
        for (int x = 0; x < w; ++x) {
            s = s * 1103515245u + 12345u;
            const int noise = static_cast<int>((s >> 16) % 9) - 4;
            const double fx = static_cast<double>(x) / w, fy = static_cast<double>(y) / h;
            int r = static_cast<int>(200 * fx + 30), g = static_cast<int>(120 + 80 * fy), b = static_cast<int>(220 - 150 * fx * fy);
            if ((x / 16 + y / 16) % 5 == 0) r = 240, g = 200, b = 40;
            const std::size_t k = (static_cast<std::size_t>(y) * w + x) * 3;
            img.data[k] = static_cast<std::uint8_t>(std::clamp(r + noise, 0, 255));
            img.data[k + 1] = static_cast<std::uint8_t>(std::clamp(g + noise, 0, 255));
            img.data[k + 2] = static_cast<std::uint8_t>(std::clamp(b + noise, 0, 255));
        }
    return img;
}

}  // namespace uot::test
