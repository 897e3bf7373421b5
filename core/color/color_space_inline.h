#pragma once
// Internal: single-precision fast paths of the conversions in color_space.h,
// inlined into the per-pixel loops. Not part of the public API.
// The functions marked UOT_HD are also compiled for the GPU (gpu/gpu_color_map.cu)
// when this header is included by nvcc; elsewhere UOT_HD is empty.

#include <cmath>
#include <cstdint>
#include <cstring>

#include "core/color/color_space.h"

#ifndef UOT_HD
#if defined(__CUDACC__)
#define UOT_HD __host__ __device__
#else
#define UOT_HD
#endif
#endif

namespace uot::color_detail {

inline constexpr double kWhiteX = 0.95047;  // D65, Y = 1
inline constexpr double kWhiteZ = 1.08883;

// Cube root for any float: bit-level first guess, then two Halley steps
// (relative error below 1e-7 for normal inputs).
UOT_HD inline float fastCbrt(float x)
{
    if (x == 0.0f) return 0.0f;
    const bool negative = x < 0.0f;
    const float a = negative ? -x : x;
    std::uint32_t bits;
    std::memcpy(&bits, &a, sizeof bits);
    bits = bits / 3u + 709921077u;
    float y;
    std::memcpy(&y, &bits, sizeof y);
    for (int k = 0; k < 2; ++k) {
        const float y3 = y * y * y;
        y = y * (y3 + 2.0f * a) / (2.0f * y3 + a);
    }
    return negative ? -y : y;
}

// exp(x) for x <= 0 (0 below -80), relative error about 2e-7; branch-free so that
// loops over it vectorise.
UOT_HD inline float fastExpNegative(float x)
{
    x = x < -80.0f ? -80.0f : x;
    const float t = x * 1.44269504f;            // x / ln 2, in [-115.5, 0]
    const int i = static_cast<int>(t);           // truncation toward zero: i in [-115, 0]
    const float f = (t - static_cast<float>(i)) * 0.69314718f;  // in (-ln 2, 0]
    // e^f by its Taylor series to degree 7 (error < 3e-8 on (-ln 2, 0]).
    const float p =
        1.0f + f * (1.0f + f * (0.5f + f * (1.0f / 6 + f * (1.0f / 24 + f * (1.0f / 120 + f * (1.0f / 720 + f * (1.0f / 5040)))))));
    const std::int32_t bits = (i + 127) << 23;  // 2^i, i + 127 >= 12: a normal float
    float scale;
    std::memcpy(&scale, &bits, sizeof scale);
    return x <= -80.0f ? 0.0f : p * scale;
}

UOT_HD inline float labF(float t)
{
    constexpr float d3 = 216.0f / 24389.0f;  // (6/29)^3
    return t > d3 ? fastCbrt(t) : t * (841.0f / 108.0f) + 4.0f / 29.0f;
}

// labF through a table on [0, 1.25] with linear interpolation (error below 1e-7
// in f, i.e. 1e-5 CIELAB units); exact formula outside the table. For the
// per-pixel conversion of images, where the cube root dominates.
struct LabFTable {
    static constexpr int kSize = 16384;
    static constexpr float kMax = 1.25f;
    float values[kSize + 2];
    LabFTable()
    {
        for (int i = 0; i <= kSize + 1; ++i) {
            const double t = static_cast<double>(i) * kMax / kSize;
            constexpr double d3 = 216.0 / 24389.0;
            values[i] = static_cast<float>(t > d3 ? std::cbrt(t) : t * (841.0 / 108.0) + 4.0 / 29.0);
        }
    }
    UOT_HD float operator()(float t) const
    {
        if (!(t >= 0.0f) || t >= kMax) return labF(t);
        const float x = t * (kSize / kMax);
        const int i = static_cast<int>(x);
        return values[i] + (x - static_cast<float>(i)) * (values[i + 1] - values[i]);
    }
};

inline const LabFTable& labFTable()
{
    static const LabFTable table;
    return table;
}

UOT_HD inline float labFInv(float f)
{
    return f > 6.0f / 29.0f ? f * f * f : (108.0f / 841.0f) * (f - 4.0f / 29.0f);
}

// The exact labF as a functor (the device path; no table).
struct LabFExact {
    UOT_HD float operator()(float t) const { return labF(t); }
};

// Linear RGB -> working space with a given CIELAB f(t) (table on the host,
// LabFExact on the GPU).
template <typename LabFunction>
UOT_HD inline void linearToSpaceWith(WorkingSpace space, const float c[3], float* out, const LabFunction& f)
{
    switch (space) {
    case WorkingSpace::Lab: {
        const float x = 0.4124564f * c[0] + 0.3575761f * c[1] + 0.1804375f * c[2];
        const float y = 0.2126729f * c[0] + 0.7151522f * c[1] + 0.0721750f * c[2];
        const float z = 0.0193339f * c[0] + 0.1191920f * c[1] + 0.9503041f * c[2];
        const float fx = f(x * static_cast<float>(1.0 / kWhiteX));
        const float fy = f(y);
        const float fz = f(z * static_cast<float>(1.0 / kWhiteZ));
        out[0] = 116.0f * fy - 16.0f;
        out[1] = 500.0f * (fx - fy);
        out[2] = 200.0f * (fy - fz);
        return;
    }
    case WorkingSpace::Oklab: {
        const float l = fastCbrt(0.4122214708f * c[0] + 0.5363325363f * c[1] + 0.0514459929f * c[2]);
        const float m = fastCbrt(0.2119034982f * c[0] + 0.6806995451f * c[1] + 0.1073969566f * c[2]);
        const float s = fastCbrt(0.0883024619f * c[0] + 0.2817188376f * c[1] + 0.6299787005f * c[2]);
        out[0] = 0.2104542553f * l + 0.7936177850f * m - 0.0040720468f * s;
        out[1] = 1.9779984951f * l - 2.4285922050f * m + 0.4505937099f * s;
        out[2] = 0.0259040371f * l + 0.7827717662f * m - 0.8086757660f * s;
        return;
    }
    case WorkingSpace::LinearRgb: out[0] = c[0]; out[1] = c[1]; out[2] = c[2]; return;
    }
}

inline void linearToSpaceFast(WorkingSpace space, const float c[3], float* out)
{
    linearToSpaceWith(space, c, out, labFTable());
}

UOT_HD inline void spaceToLinearFast(WorkingSpace space, const float* in, float c[3])
{
    switch (space) {
    case WorkingSpace::Lab: {
        const float fy = (in[0] + 16.0f) / 116.0f;
        const float fx = fy + in[1] / 500.0f;
        const float fz = fy - in[2] / 200.0f;
        const float x = static_cast<float>(kWhiteX) * labFInv(fx);
        const float y = labFInv(fy);
        const float z = static_cast<float>(kWhiteZ) * labFInv(fz);
        c[0] = 3.2404542f * x - 1.5371385f * y - 0.4985314f * z;
        c[1] = -0.9692660f * x + 1.8760108f * y + 0.0415560f * z;
        c[2] = 0.0556434f * x - 0.2040259f * y + 1.0572252f * z;
        return;
    }
    case WorkingSpace::Oklab: {
        const float l = in[0] + 0.3963377774f * in[1] + 0.2158037573f * in[2];
        const float m = in[0] - 0.1055613458f * in[1] - 0.0638541728f * in[2];
        const float s = in[0] - 0.0894841775f * in[1] - 1.2914855480f * in[2];
        const float l3 = l * l * l, m3 = m * m * m, s3 = s * s * s;
        c[0] = 4.0767416621f * l3 - 3.3077115913f * m3 + 0.2309699292f * s3;
        c[1] = -1.2684380046f * l3 + 2.6097574011f * m3 - 0.3413193965f * s3;
        c[2] = -0.0041960863f * l3 - 0.7034186147f * m3 + 1.7076147010f * s3;
        return;
    }
    case WorkingSpace::LinearRgb: c[0] = in[0]; c[1] = in[1]; c[2] = in[2]; return;
    }
}

}  // namespace uot::color_detail
