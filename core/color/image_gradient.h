#pragma once
// A small image's blur and gradients, as the artifact measures take them
// (bench/quality/artifact_metrics.h) and the map's bounds mirror them
// (core/color/lightness_spans.h). No OpenCV, no Qt.
#include <vector>

namespace uot {

// Gaussian blur (kernel radius ceil(3 sigma), edges replicated) of an interleaved
// 3-channel float image, in place.
void gaussianBlur3(std::vector<float>& x, int width, int height, double sigma);

// Sobel gradients / 8 (edges replicated) of channel c of an interleaved 3-channel image.
void sobel(const std::vector<float>& x, int width, int height, int c, std::vector<float>& gx, std::vector<float>& gy);

}  // namespace uot
