#pragma once
// The per-pixel step shared by the kernel builds of core/color/lut_apply.cpp
// (portable) and lut_apply_avx2.cpp (AVX2 + FMA): an input pixel's lattice cell,
// tetrahedron and barycentric weights, branch-free. Internal to those files:
// everything here has internal linkage, so each build keeps its own copy
// compiled with its own instruction set.

#include <algorithm>
#include <cstdint>
#include <cstring>

#include "core/color/lut_apply.h"

namespace uot {
namespace {

// The four corners of the pixel's tetrahedron (float offsets into the nodes) and
// their weights, in applyCube's order: corner 000, the two inner corners on the
// path to 111, corner 111.
struct LutTetra {
    std::int32_t node[4];
    float weight[4];
};

inline LutTetra locateTetra(const FrameLut& lut, const LutAxisEntry& r, const LutAxisEntry& g, const LutAxisEntry& b)
{
    const float fr = r.fraction, fg = g.fraction, fb = b.fraction;
    const int code = int(fr > fg) | int(fg > fb) << 1 | int(fr > fb) << 2;
    // The sorted fractions pick the weights (1 - max, max - mid, mid - min, min),
    // exactly applyCube's differences of the same floats.
    const float hi = std::max(fr, std::max(fg, fb));
    const float lo = std::min(fr, std::min(fg, fb));
    const float mid = std::max(std::min(fr, fg), std::min(std::max(fr, fg), fb));
    const std::int32_t base = r.offset + g.offset + b.offset;
    LutTetra t;
    t.node[0] = base;
    t.node[1] = base + lut.tetraFirst()[code];
    t.node[2] = base + lut.tetraSecond()[code];
    t.node[3] = base + lut.farCorner();
    t.weight[0] = 1.0f - hi;
    t.weight[1] = hi - mid;
    t.weight[2] = mid - lo;
    t.weight[3] = lo;
    return t;
}

// The axis entries of one input pixel (8- or 16-bit, RGB or BGR order).
template <bool Deep, bool Bgr>
inline void pixelAxes(const FrameLut& lut, const std::uint8_t* in, int x, const LutAxisEntry*& r,
                      const LutAxisEntry*& g, const LutAxisEntry*& b)
{
    constexpr int ri = Bgr ? 2 : 0, bi = Bgr ? 0 : 2;
    if constexpr (Deep) {
        std::uint16_t s[3];
        std::memcpy(s, in + static_cast<std::size_t>(x) * 6, sizeof s);
        r = lut.axis16(0) + s[ri];
        g = lut.axis16(1) + s[1];
        b = lut.axis16(2) + s[bi];
    } else {
        const std::uint8_t* p = in + static_cast<std::size_t>(x) * 3;
        r = lut.axis8(0) + p[ri];
        g = lut.axis8(1) + p[1];
        b = lut.axis8(2) + p[bi];
    }
}

}  // namespace
}  // namespace uot
