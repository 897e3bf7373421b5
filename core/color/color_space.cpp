#include "core/color/color_space.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

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

void linearRgbToXyz(const double c[3], double xyz[3])
{
    xyz[0] = 0.4124564 * c[0] + 0.3575761 * c[1] + 0.1804375 * c[2];
    xyz[1] = 0.2126729 * c[0] + 0.7151522 * c[1] + 0.0721750 * c[2];
    xyz[2] = 0.0193339 * c[0] + 0.1191920 * c[1] + 0.9503041 * c[2];
}

void xyzToLinearRgb(const double xyz[3], double c[3])
{
    c[0] = 3.2404542 * xyz[0] - 1.5371385 * xyz[1] - 0.4985314 * xyz[2];
    c[1] = -0.9692660 * xyz[0] + 1.8760108 * xyz[1] + 0.0415560 * xyz[2];
    c[2] = 0.0556434 * xyz[0] - 0.2040259 * xyz[1] + 1.0572252 * xyz[2];
}

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
    const double l = std::cbrt(0.4122214708 * c[0] + 0.5363325363 * c[1] + 0.0514459929 * c[2]);
    const double m = std::cbrt(0.2119034982 * c[0] + 0.6806995451 * c[1] + 0.1073969566 * c[2]);
    const double s = std::cbrt(0.0883024619 * c[0] + 0.2817188376 * c[1] + 0.6299787005 * c[2]);
    lab[0] = 0.2104542553 * l + 0.7936177850 * m - 0.0040720468 * s;
    lab[1] = 1.9779984951 * l - 2.4285922050 * m + 0.4505937099 * s;
    lab[2] = 0.0259040371 * l + 0.7827717662 * m - 0.8086757660 * s;
}

void oklabToLinearRgb(const double lab[3], double c[3])
{
    const double l = lab[0] + 0.3963377774 * lab[1] + 0.2158037573 * lab[2];
    const double m = lab[0] - 0.1055613458 * lab[1] - 0.0638541728 * lab[2];
    const double s = lab[0] - 0.0894841775 * lab[1] - 1.2914855480 * lab[2];
    const double l3 = l * l * l, m3 = m * m * m, s3 = s * s * s;
    c[0] = 4.0767416621 * l3 - 3.3077115913 * m3 + 0.2309699292 * s3;
    c[1] = -1.2684380046 * l3 + 2.6097574011 * m3 - 0.3413193965 * s3;
    c[2] = -0.0041960863 * l3 - 0.7034186147 * m3 + 1.7076147010 * s3;
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

double luminance(const double rgb[3]) { return 0.2126729 * rgb[0] + 0.7151522 * rgb[1] + 0.0721750 * rgb[2]; }

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
