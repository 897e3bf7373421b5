#pragma once
// Internal: the per-pixel steps of the mapping (color_map.h) as inline functions
// shared by the CPU loops (color_map.cpp) and the GPU kernels
// (gpu/gpu_color_map.cu): LUT interpolation, the bilinear read of the
// guided-filter coefficients, strength / preserve luminance / gamut, and the
// sRGB encoding table. Not part of the public API. No std:: calls inside the
// UOT_HD functions (they run on the device too).

#include <cstddef>

#include "core/color/color_map.h"
#include "core/color/color_space_inline.h"

namespace uot::color_detail {

UOT_HD inline float clampf(float v, float lo, float hi) { return v < lo ? lo : (v > hi ? hi : v); }

// The lightness guide of a working-space color (see guideValue in color_map.h).
UOT_HD inline float guideOf(WorkingSpace space, const float* c)
{
    if (space == WorkingSpace::Lab) return c[0] * 0.01f;
    if (space == WorkingSpace::Oklab) return c[0];
    return 0.2126729f * c[0] + 0.7151522f * c[1] + 0.0721750f * c[2];
}

// Trilinear read of a displacement lattice: values (size^3 x 3 floats), box corner
// lo and node spacing step per axis (DisplacementLut's fields). r receives 3 floats.
UOT_HD inline void lutLookupRaw(const float* v, int size, const double lo[3], const double step[3], const float* c, float* r)
{
    int i0[3];
    float f[3];
    for (int a = 0; a < 3; ++a) {
        float t = static_cast<float>((c[a] - lo[a]) / step[a]);
        t = clampf(t, 0.0f, static_cast<float>(size - 1));
        int i = static_cast<int>(t);
        if (i >= size - 1) i = size - 2;
        i0[a] = i;
        f[a] = t - static_cast<float>(i);
    }
    const std::size_t s = static_cast<std::size_t>(size);
    const std::size_t base = (static_cast<std::size_t>(i0[0]) * s + i0[1]) * s + i0[2];
    const float fx = f[0], fy = f[1], fz = f[2];
    for (int a = 0; a < 3; ++a) {
        const float c000 = v[3 * base + a], c001 = v[3 * (base + 1) + a];
        const float c010 = v[3 * (base + s) + a], c011 = v[3 * (base + s + 1) + a];
        const float c100 = v[3 * (base + s * s) + a], c101 = v[3 * (base + s * s + 1) + a];
        const float c110 = v[3 * (base + s * s + s) + a], c111 = v[3 * (base + s * s + s + 1) + a];
        const float c00 = c000 + fz * (c001 - c000), c01 = c010 + fz * (c011 - c010);
        const float c10 = c100 + fz * (c101 - c100), c11 = c110 + fz * (c111 - c110);
        const float c0 = c00 + fy * (c01 - c00), c1 = c10 + fy * (c11 - c10);
        r[a] = c0 + fx * (c1 - c0);
    }
}

// Bilinear position of full-resolution coordinate x in a grid subsampled by s.
struct Bilinear {
    int i0, i1;
    float w;
};
UOT_HD inline Bilinear bilinearAt(int x, int s, int lowSize)
{
    float f = (static_cast<float>(x) + 0.5f) / static_cast<float>(s) - 0.5f;
    f = clampf(f, 0.0f, static_cast<float>(lowSize - 1));
    int i0 = static_cast<int>(f);
    if (i0 > lowSize - 1) i0 = lowSize - 1;
    return {i0, i0 + 1 < lowSize - 1 ? i0 + 1 : lowSize - 1, f - static_cast<float>(i0)};
}

// The displacement d of a colour c (lightness guide g) from one node's model of a
// smoothed field (DisplacementField::coefficients, interpolated or not): colour
// guide, 12 values [A (3 x 3, row-major), b (3)], d = A c + b; lightness guide, 6
// values [a (3), b (3)], d = a g + b.
UOT_HD inline void fieldDisplacement(const float* m, bool colorGuided, const float* c, float g, float d[3])
{
    if (colorGuided) {
        for (int k = 0; k < 3; ++k) d[k] = m[3 * k] * c[0] + m[3 * k + 1] * c[1] + m[3 * k + 2] * c[2] + m[9 + k];
    } else {
        for (int k = 0; k < 3; ++k) d[k] = m[k] * g + m[3 + k];
    }
}

// Gamut handling in linear RGB (GamutMode), in place.
UOT_HD inline void gamutMapPixel(GamutMode mode, float c[3])
{
    const bool inside = c[0] >= 0 && c[0] <= 1 && c[1] >= 0 && c[1] <= 1 && c[2] >= 0 && c[2] <= 1;
    if (inside) return;
    if (mode == GamutMode::Compress) {
        float y = 0.2126729f * c[0] + 0.7151522f * c[1] + 0.0721750f * c[2];
        y = clampf(y, 0.0f, 1.0f);
        float t = 1.0f;
        for (int k = 0; k < 3; ++k) {
            if (c[k] > 1.0f && c[k] - y > 0) {
                const float q = (1.0f - y) / (c[k] - y);
                t = q < t ? q : t;
            }
            if (c[k] < 0.0f && y - c[k] > 0) {
                const float q = y / (y - c[k]);
                t = q < t ? q : t;
            }
        }
        for (int k = 0; k < 3; ++k) c[k] = y + t * (c[k] - y);
    }
    for (int k = 0; k < 3; ++k) c[k] = clampf(c[k], 0.0f, 1.0f);
}

// One pixel of the composition: working-space color c plus strength x
// displacement d, preserve luminance, then linear RGB in gamut (rgb, [0, 1]).
UOT_HD inline void composeLinear(WorkingSpace space, float strength, bool keepL, GamutMode gamut, const float* c,
                                 const float* d, float rgb[3])
{
    float w[3] = {c[0] + strength * d[0], c[1] + strength * d[1], c[2] + strength * d[2]};
    if (keepL && space != WorkingSpace::LinearRgb) w[0] = c[0];
    rgb[0] = rgb[1] = rgb[2] = 0;
    spaceToLinearFast(space, w, rgb);
    if (keepL && space == WorkingSpace::LinearRgb) {
        const float y0 = 0.2126729f * c[0] + 0.7151522f * c[1] + 0.0721750f * c[2];
        const float y1 = 0.2126729f * rgb[0] + 0.7151522f * rgb[1] + 0.0721750f * rgb[2];
        if (y1 > 1e-6f) {
            const float k = y0 / y1;
            for (int i = 0; i < 3; ++i) rgb[i] *= k;
        } else {
            rgb[0] = rgb[1] = rgb[2] = y0;
        }
    }
    gamutMapPixel(gamut, rgb);
}

// sRGB encoding of linear v through a table of kSrgbEncodeSize + 2 entries
// (table[i] = linearToSrgb(min(1, i / kSrgbEncodeSize))), linear interpolation.
inline constexpr int kSrgbEncodeSize = 8192;
UOT_HD inline float srgbEncode(const float* table, float v)
{
    if (!(v > 0.0f)) return 0.0f;
    if (v >= 1.0f) return 1.0f;
    const float t = v * kSrgbEncodeSize;
    const int i = static_cast<int>(t);
    return table[i] + (t - i) * (table[i + 1] - table[i]);
}

}  // namespace uot::color_detail
