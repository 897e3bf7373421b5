#pragma once
// Which lightness levels meet in the picture seen whole: the source scaled to about
// kWholePictureLongSide pixels on its long side (the scale of the artifact measures),
// and for each of those pixels its chroma and the span of lightness within `radius`
// pixels of it. Colours of one chroma whose lightness levels never meet within a few
// pixels (a shadow and a highlight far apart) can be given different chroma without a
// colour edge appearing; across levels that meet (an edge) the chroma step must stay
// small (MapBounds::chromaLightnessRange, applied by regularizeDisplacementLut).
// No OpenCV, no Qt.
#include <cstddef>
#include <vector>

#include "core/color/color_space.h"

namespace uot {

inline constexpr int kWholePictureLongSide = 128;
// The blotch measure's threshold on the result's chroma gradient after a Gaussian blur of
// kMeasureBlur pixels: kMarkedChromaGain times the source's chroma gradient plus
// kMarkedChromaGradient (Lab units a pixel). The quality bench's measures
// (bench/quality/artifact_metrics.h) take their defaults from these.
inline constexpr double kMeasureBlur = 1.5;
inline constexpr double kMarkedChromaGradient = 3;
inline constexpr double kMarkedChromaGain = 2;

struct LightnessSpans {
    WorkingSpace space = WorkingSpace::Lab;
    // Per pixel of the scaled picture: its two chroma channels, the lowest and the highest
    // lightness of the pixels within the radius (a square window), and the lightness
    // gradient as the measure takes it (|Sobel| / 8 after a Gaussian blur of
    // kMeasureBlur pixels; lightness units a pixel), then the chroma gradient taken the
    // same way (the Frobenius norm of the a, b gradients).
    static constexpr std::size_t kStride = 6;
    std::vector<float> spans;
    std::size_t size() const { return spans.size() / kStride; }
};

// `colors`: a width x height image in `space` (interleaved, lightness first) whose
// pixels each stand for blockSize x blockSize pixels of the original (block means; 1
// for the original itself). Block-averaged to about kWholePictureLongSide pixels on the
// original's long side (not enlarged), then the spans over (2 radius + 1)^2 windows.
// Empty for a space without a lightness axis.
LightnessSpans lightnessSpans(const float* colors, int width, int height, WorkingSpace space, int blockSize, int radius,
                              int threads = 0);

}  // namespace uot
