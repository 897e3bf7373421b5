#include "core/color/color_space.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

#include <Eigen/Dense>

#include "core/color/color_space_inline.h"
#include "core/transport/kernel_matrix.h"
#include "core/transport/uot_error.h"

namespace uot {

std::string toString(WorkingSpace space)
{
    switch (space) {
    case WorkingSpace::Lab: return "lab";
    case WorkingSpace::Oklab: return "oklab";
    case WorkingSpace::LinearRgb: return "linear-rgb";
    }
    return "?";
}

WorkingSpace parseWorkingSpace(const std::string& text)
{
    if (text == "lab" || text == "cielab") return WorkingSpace::Lab;
    if (text == "oklab") return WorkingSpace::Oklab;
    if (text == "linear-rgb" || text == "linear" || text == "rgb") return WorkingSpace::LinearRgb;
    throw Error(ErrorCode::InvalidArgument, "unknown color space '" + text + "' (expected lab, oklab or linear-rgb)");
}

double nominalRange(WorkingSpace space) { return space == WorkingSpace::Lab ? 100.0 : 1.0; }

bool hasLightnessAxis(WorkingSpace space) { return space != WorkingSpace::LinearRgb; }

double srgbToLinear(double v) { return v <= 0.04045 ? v / 12.92 : std::pow((v + 0.055) / 1.055, 2.4); }

double linearToSrgb(double v) { return v <= 0.0031308 ? 12.92 * v : 1.055 * std::pow(v, 1.0 / 2.4) - 0.055; }

namespace {

using Vec3 = Eigen::Vector3d;
using Mat3 = Eigen::Matrix3d;

// Linear sRGB (D65) to CIE XYZ; the reverse map is its inverse, so the two are
// exact inverses of each other (the published 7-digit inverse is not).
const Mat3& rgbToXyz()
{
    static const Mat3 m = (Mat3() << 0.4124564, 0.3575761, 0.1804375,  //
                           0.2126729, 0.7151522, 0.0721750,             //
                           0.0193339, 0.1191920, 0.9503041)
                              .finished();
    return m;
}
const Mat3& xyzToRgb()
{
    static const Mat3 m = rgbToXyz().inverse();
    return m;
}

// Oklab (Ottosson 2020): linear sRGB -> LMS (M1), cube root, -> Lab (M2); back
// through the inverses.
const Mat3& oklabM1()
{
    static const Mat3 m = (Mat3() << 0.4122214708, 0.5363325363, 0.0514459929,  //
                           0.2119034982, 0.6806995451, 0.1073969566,              //
                           0.0883024619, 0.2817188376, 0.6299787005)
                              .finished();
    return m;
}
const Mat3& oklabM2()
{
    static const Mat3 m = (Mat3() << 0.2104542553, 0.7936177850, -0.0040720468,  //
                           1.9779984951, -2.4285922050, 0.4505937099,              //
                           0.0259040371, 0.7827717662, -0.8086757660)
                              .finished();
    return m;
}
const Mat3& oklabM1Inverse()
{
    static const Mat3 m = oklabM1().inverse();
    return m;
}
const Mat3& oklabM2Inverse()
{
    static const Mat3 m = oklabM2().inverse();
    return m;
}

}  // namespace

void linearRgbToXyz(const double c[3], double xyz[3]) { Vec3::Map(xyz) = rgbToXyz() * Eigen::Map<const Vec3>(c); }

void xyzToLinearRgb(const double xyz[3], double c[3]) { Vec3::Map(c) = xyzToRgb() * Eigen::Map<const Vec3>(xyz); }

namespace {
constexpr double kDelta = 6.0 / 29.0;
double labF(double t) { return t > kDelta * kDelta * kDelta ? std::cbrt(t) : t / (3 * kDelta * kDelta) + 4.0 / 29.0; }
double labFInv(double f) { return f > kDelta ? f * f * f : 3 * kDelta * kDelta * (f - 4.0 / 29.0); }
}  // namespace

void xyzToLab(const double xyz[3], double lab[3])
{
    const double fx = labF(xyz[0] / color_detail::kWhiteX);
    const double fy = labF(xyz[1]);
    const double fz = labF(xyz[2] / color_detail::kWhiteZ);
    lab[0] = 116 * fy - 16;
    lab[1] = 500 * (fx - fy);
    lab[2] = 200 * (fy - fz);
}

void labToXyz(const double lab[3], double xyz[3])
{
    const double fy = (lab[0] + 16) / 116;
    const double fx = fy + lab[1] / 500;
    const double fz = fy - lab[2] / 200;
    xyz[0] = color_detail::kWhiteX * labFInv(fx);
    xyz[1] = labFInv(fy);
    xyz[2] = color_detail::kWhiteZ * labFInv(fz);
}

void linearRgbToOklab(const double c[3], double lab[3])
{
    const Vec3 lms = (oklabM1() * Eigen::Map<const Vec3>(c)).unaryExpr([](double v) { return std::cbrt(v); });
    Vec3::Map(lab) = oklabM2() * lms;
}

void oklabToLinearRgb(const double lab[3], double c[3])
{
    const Vec3 lms = (oklabM2Inverse() * Eigen::Map<const Vec3>(lab)).array().cube().matrix();
    Vec3::Map(c) = oklabM1Inverse() * lms;
}

void linearRgbToSpace(WorkingSpace space, const double rgb[3], double out[3])
{
    switch (space) {
    case WorkingSpace::Lab: {
        double xyz[3];
        linearRgbToXyz(rgb, xyz);
        xyzToLab(xyz, out);
        return;
    }
    case WorkingSpace::Oklab: linearRgbToOklab(rgb, out); return;
    case WorkingSpace::LinearRgb: std::copy(rgb, rgb + 3, out); return;
    }
}

void spaceToLinearRgb(WorkingSpace space, const double in[3], double rgb[3])
{
    switch (space) {
    case WorkingSpace::Lab: {
        double xyz[3];
        labToXyz(in, xyz);
        xyzToLinearRgb(xyz, rgb);
        return;
    }
    case WorkingSpace::Oklab: oklabToLinearRgb(in, rgb); return;
    case WorkingSpace::LinearRgb: std::copy(in, in + 3, rgb); return;
    }
}

double luminance(const double rgb[3]) { return rgbToXyz().row(1).dot(Eigen::Map<const Vec3>(rgb)); }

namespace {

const std::vector<float>& decodeTable(int depth)
{
    static const std::vector<float> table8 = [] {
        std::vector<float> t(256);
        for (int i = 0; i < 256; ++i) t[i] = static_cast<float>(srgbToLinear(i / 255.0));
        return t;
    }();
    static const std::vector<float> table16 = [] {
        std::vector<float> t(65536);
        for (int i = 0; i < 65536; ++i) t[i] = static_cast<float>(srgbToLinear(i / 65535.0));
        return t;
    }();
    return depth == 16 ? table16 : table8;
}

// Converts pixels first, first + stride, ... (count of them) to out[0..3 count).
template <typename Sample>
void convertPixels(const Sample* samples, int channels, std::size_t first, std::size_t stride, std::size_t count,
                   const float* table, WorkingSpace space, float* out, int threads)
{
    const std::ptrdiff_t total = static_cast<std::ptrdiff_t>(count);
#pragma omp parallel for num_threads(threads) schedule(static) if (total > 65536)
    for (std::ptrdiff_t k = 0; k < total; ++k) {
        const Sample* s = samples + (first + static_cast<std::size_t>(k) * stride) * static_cast<std::size_t>(channels);
        float rgb[3] = {0, 0, 0};
        if (channels == 1) {
            rgb[0] = rgb[1] = rgb[2] = table[s[0]];
        } else {
            rgb[0] = table[s[0]];
            rgb[1] = table[s[1]];
            rgb[2] = table[s[2]];
        }
        color_detail::linearToSpaceFast(space, rgb, out + 3 * k);
    }
}

}  // namespace

void imageToSpace(const Image& image, WorkingSpace space, float* out, int threads)
{
    imagePixelsToSpace(image, space, 0, 1, image.pixelCount(), out, threads);
}

void imagePixelsToSpace(const Image& image, WorkingSpace space, std::size_t first, std::size_t stride, std::size_t count,
                        float* out, int threads)
{
    validateImage(image, "image");
    if (count > 0 && (stride == 0 || first + (count - 1) * stride >= image.pixelCount()))
        throw Error(ErrorCode::InvalidArgument, "imagePixelsToSpace: the pixel selection runs past the image");
    const int t = resolveThreadCount(threads);
    const std::vector<float>& table = decodeTable(image.depth);
    if (image.depth == 16)
        convertPixels(image.samples16(), image.channels, first, stride, count, table.data(), space, out, t);
    else
        convertPixels(image.samples8(), image.channels, first, stride, count, table.data(), space, out, t);
}

void spaceToLinearRgbInPlace(WorkingSpace space, float* colors, std::size_t n, int threads)
{
    const int t = resolveThreadCount(threads);
    const std::ptrdiff_t count = static_cast<std::ptrdiff_t>(n);
#pragma omp parallel for num_threads(t) schedule(static) if (count > 65536)
    for (std::ptrdiff_t p = 0; p < count; ++p) {
        float rgb[3] = {0, 0, 0};
        color_detail::spaceToLinearFast(space, colors + 3 * p, rgb);
        std::memcpy(colors + 3 * p, rgb, sizeof rgb);
    }
}

}  // namespace uot
