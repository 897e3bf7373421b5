#pragma once
// Color spaces of the pipeline (no OpenCV): sRGB <-> linear RGB <-> CIE XYZ (D65)
// <-> CIELAB, and Oklab. Every function works on host memory.
//
// Conventions: sRGB and linear RGB in [0, 1]; XYZ with Y of white = 1;
// CIELAB L in [0, 100], a/b roughly [-128, 127]; Oklab L in [0, 1].

#include <cstddef>
#include <string>

#include "core/color/image.h"

namespace uot {

// The space in which palettes are built, costs measured and colors displaced.
enum class WorkingSpace { Lab, Oklab, LinearRgb };

std::string toString(WorkingSpace space);
// "lab" | "oklab" | "linear-rgb" (also "linear"); throws uot::Error(InvalidArgument).
WorkingSpace parseWorkingSpace(const std::string& text);

// The nominal range D of the space: costs are C = |x - y|^2 / D^2 so that eps has
// the same meaning in every space (100 for Lab, 1 for Oklab and linear RGB).
double nominalRange(WorkingSpace space);

// Index of the lightness coordinate used as guide and for "preserve luminance":
// 0 for Lab and Oklab; linear RGB has none (luminance Y is computed instead).
bool hasLightnessAxis(WorkingSpace space);

// Single-color conversions (scalar, exact formulas; the reference for the fast paths).
double srgbToLinear(double v);
double linearToSrgb(double v);
void linearRgbToXyz(const double rgb[3], double xyz[3]);
void xyzToLinearRgb(const double xyz[3], double rgb[3]);
void xyzToLab(const double xyz[3], double lab[3]);
void labToXyz(const double lab[3], double xyz[3]);
void linearRgbToOklab(const double rgb[3], double lab[3]);
void oklabToLinearRgb(const double lab[3], double rgb[3]);
// Linear RGB <-> working space (identity for LinearRgb).
void linearRgbToSpace(WorkingSpace space, const double rgb[3], double out[3]);
void spaceToLinearRgb(WorkingSpace space, const double in[3], double rgb[3]);
// Relative luminance Y of linear RGB (Rec. 709 / sRGB primaries).
double luminance(const double rgb[3]);

// Converts every pixel of an image (gray, RGB or RGBA; 8 or 16 bit; alpha ignored)
// to the working space: out receives pixelCount * 3 floats (host memory, interleaved).
// Gray pixels become neutral colors. threads: OpenMP threads, 0 = all.
void imageToSpace(const Image& image, WorkingSpace space, float* out, int threads = 0);

// The same conversion for the pixels first, first + stride, ..., count of them
// (pixel index = row * width + column): out receives count * 3 floats. Each
// pixel converts to exactly the value imageToSpace gives it. Throws
// uot::Error(InvalidArgument) when the selection runs past the image.
void imagePixelsToSpace(const Image& image, WorkingSpace space, std::size_t first, std::size_t stride, std::size_t count,
                        float* out, int threads = 0);

// Converts n working-space colors (interleaved floats, host memory) to linear RGB
// in place (no clipping).
void spaceToLinearRgbInPlace(WorkingSpace space, float* colors, std::size_t n, int threads = 0);

}  // namespace uot
