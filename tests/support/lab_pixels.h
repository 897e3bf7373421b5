#pragma once
// A CIELAB colour as an 8-bit sRGB pixel, for tests that build images from colours
// given in CIELAB (out-of-gamut colours are clipped per channel in linear RGB).
#include <algorithm>
#include <cmath>
#include <cstdint>

#include "core/color/color_space.h"

namespace uot::test {

inline void labToSrgb8(const double lab[3], std::uint8_t out[3])
{
    double xyz[3], rgb[3];
    labToXyz(lab, xyz);
    xyzToLinearRgb(xyz, rgb);
    for (int k = 0; k < 3; ++k)
        out[k] = static_cast<std::uint8_t>(std::lround(std::clamp(linearToSrgb(std::clamp(rgb[k], 0.0, 1.0)), 0.0, 1.0) * 255));
}

}  // namespace uot::test
