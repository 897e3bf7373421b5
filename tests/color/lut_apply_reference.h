#pragma once
// Shared by the CPU and GPU tests of the frame LUT (core/color/lut_apply.h,
// gpu/lut_apply.h): random LUTs (values beyond [0, 1] too, so clamping after
// the interpolation matters), random frames with padded rows, and the check of
// a mapped frame against applyCube (core/color/cube_lut.h), the per-point
// tetrahedral interpolation, evaluated here pixel by pixel.

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <sstream>
#include <string>
#include <vector>

#include "core/color/cube_lut.h"
#include "core/color/lut_apply.h"

namespace uot::test {

inline unsigned nextRandom(unsigned& state)
{
    state = state * 1664525u + 1013904223u;
    return state >> 8;
}

// A LUT of `size` nodes per axis with values uniform in [-0.25, 1.25].
inline CubeLut randomCube(int size, unsigned seed)
{
    CubeLut lut = identityCube(size);
    unsigned state = seed * 2654435761u + 7;
    for (float& v : lut.values) v = -0.25f + 1.5f * float(nextRandom(state) % 100000) / 99999.0f;
    return lut;
}

// A frame buffer with `pad` spare bytes after each row, filled with random samples.
struct TestFrame {
    std::vector<std::uint8_t> bytes;
    int width = 0, height = 0;
    std::size_t stride = 0;
    FramePixelFormat format = FramePixelFormat::Rgb8;

    TestFrame(int w, int h, FramePixelFormat f, std::size_t pad, unsigned seed = 1)
        : width(w), height(h), stride(static_cast<std::size_t>(w) * bytesPerPixel(f) + pad), format(f)
    {
        bytes.resize(stride * static_cast<std::size_t>(h) + 8);  // 16-bit rows stay even when pad is even
        unsigned state = seed;
        for (auto& b : bytes) b = static_cast<std::uint8_t>(nextRandom(state));
    }
    ConstFrameView view() const { return {bytes.data(), width, height, stride, format}; }
    FrameView view() { return {bytes.data(), width, height, stride, format}; }
    // Sample c (0 R, 1 G, 2 B) of pixel (x, y) as the code value.
    int sample(int x, int y, int c) const
    {
        const int k = isBgr(format) ? 2 - c : c;
        const std::uint8_t* p = bytes.data() + static_cast<std::size_t>(y) * stride;
        if (isDeep(format)) {
            std::uint16_t v;
            std::memcpy(&v, p + static_cast<std::size_t>(x) * 6 + 2 * k, 2);
            return v;
        }
        return p[static_cast<std::size_t>(x) * 3 + k];
    }
    void setSample(int x, int y, int c, int value)
    {
        const int k = isBgr(format) ? 2 - c : c;
        std::uint8_t* p = bytes.data() + static_cast<std::size_t>(y) * stride;
        if (isDeep(format)) {
            const std::uint16_t v = static_cast<std::uint16_t>(value);
            std::memcpy(p + static_cast<std::size_t>(x) * 6 + 2 * k, &v, 2);
        } else {
            p[static_cast<std::size_t>(x) * 3 + k] = static_cast<std::uint8_t>(value);
        }
    }
};

// The largest |output - applyCube(input) in code values| over the frame (the
// exact output is applyCube's, clamped to [0, 1] and scaled to the depth), and
// where it is, in `where`.
inline double worstErrorAgainstApplyCube(const CubeLut& lut, const TestFrame& in, const TestFrame& out, std::string& where)
{
    const double maxValue = isDeep(in.format) ? 65535.0 : 255.0;
    double worst = 0;
    for (int y = 0; y < in.height; ++y)
        for (int x = 0; x < in.width; ++x) {
            float rgb[3], r[3];
            for (int c = 0; c < 3; ++c) rgb[c] = static_cast<float>(in.sample(x, y, c)) / static_cast<float>(maxValue);
            applyCube(lut, rgb, r, CubeInterpolation::Tetrahedral);
            for (int c = 0; c < 3; ++c) {
                const double exact = std::clamp(static_cast<double>(r[c]), 0.0, 1.0) * maxValue;
                const double e = std::abs(out.sample(x, y, c) - exact);
                if (e > worst) {
                    worst = e;
                    std::ostringstream s;
                    s << "pixel (" << x << ", " << y << ") channel " << c << ": input (" << in.sample(x, y, 0) << ", "
                      << in.sample(x, y, 1) << ", " << in.sample(x, y, 2) << "), got " << out.sample(x, y, c)
                      << ", applyCube gives " << exact;
                    where = s.str();
                }
            }
        }
    return worst;
}

// Within half a code value of the exact output, plus float rounding of the
// blend (a sum of four products near 1, scaled to the depth).
inline double roundingTolerance(FramePixelFormat format) { return 0.5 + (isDeep(format) ? 65535.0 : 255.0) * 4e-7; }

}  // namespace uot::test
