#pragma once
// Artifact measures of a colour transfer: what a colourist sees first, which the
// palette distance and the SSIM structure term do not (bench/quality/quality_metrics.h).
// Both images are scaled (area average in sRGB) to `longSide` pixels on the long
// side, converted to CIELAB (D65, exact formulas), blurred by a Gaussian of `sigma`
// pixels, and differentiated by 3x3 Sobel kernels divided by 8 (per-pixel units).
//   blotch: % of pixels where the result's chroma gradient |grad(a*, b*)| (the
//     Frobenius norm of the 2x2 Jacobian) exceeds blotchGain x the source's +
//     blotchOffset: colour edges and islands created where the source had none;
//   flip: among the pixels where the source's |grad L*| exceeds flipMinGradient,
//     % where the result's lightness gradient points the other way (negative dot
//     product): bands and inversions;
//   neutral drift: on the source's near-neutral pixels (chroma C* < neutralChroma),
//     the mean chroma gained (max(0, C*_result - C*_source)) and the % that gain
//     more than castChroma: greys drifting into a cast (reported, not a constraint).
// No Qt, no OpenCV.
#include <cstddef>
#include <vector>

#include "core/color/image.h"
#include "core/color/lightness_spans.h"

namespace uot::quality {

struct ArtifactSettings {
    // The scale and the blotch threshold the colour map's range budget estimates (lightness_spans.h).
    int longSide = kWholePictureLongSide;
    double sigma = kMeasureBlur;
    double blotchGain = kMarkedChromaGain, blotchOffset = kMarkedChromaGradient;
    double flipMinGradient = 1.5;
    double neutralChroma = 5, castChroma = 10;
};

// An image as the measures see it: scaled, CIELAB, blurred.
struct AnalysisImage {
    int width = 0, height = 0;
    std::vector<float> lab;  // width * height x 3
};

struct Artifacts {
    double blotch = 0;        // % of pixels
    double flip = 0;          // % of the pixels with a lightness gradient
    double neutralDrift = 0;  // mean chroma gained on near-neutral source pixels (C* units)
    double neutralCast = 0;   // % of those gaining more than castChroma
    std::size_t gradientPixels = 0, neutralPixels = 0;
};

// Area-average resize of an 8-bit RGB image (any Image: converted by rgb8) to
// `longSide` pixels on its long side (kept when already that small), in sRGB floats.
std::vector<float> scaledSrgb(const Image& img, int longSide, int& width, int& height);

// The image the measures read: scaled, in CIELAB, blurred by `settings.sigma`.
AnalysisImage analysisImage(const Image& img, const ArtifactSettings& settings = {});


// The measures between a source and a result of the same size (throws
// std::invalid_argument otherwise). mask (or null) receives one byte per analysis
// pixel: bit 0 a blotch pixel, bit 1 a flipped one (to draw where they are).
Artifacts measureArtifacts(const AnalysisImage& source, const AnalysisImage& result, const ArtifactSettings& settings = {},
                           std::vector<unsigned char>* mask = nullptr);
Artifacts measureArtifacts(const Image& source, const Image& result, const ArtifactSettings& settings = {});

}  // namespace uot::quality
