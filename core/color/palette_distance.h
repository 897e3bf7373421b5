#pragma once
// The sliced Wasserstein-2 distance between two weighted colour sets (palettes), on
// a fixed set of 13 directions: the 3 axes, the 6 face diagonals and the 4 body
// diagonals of the cube. Their mean u u^T is I / 3, so two single points p and q
// are |p - q| / sqrt(3) apart, whatever the direction of p - q. The map's own
// estimate of the palette objective (the quality bench's palette distance, which
// uses 64 random directions on the result's pixels): cheap enough to compare
// candidate maps on the palettes (hundreds of points). No OpenCV, no Qt.
#include <vector>

namespace uot {

// points: n x 3 row-major, weights: n non-negative (normalised here). Returns 0 when
// either set has no weight. Throws uot::Error(InvalidArgument) when a size differs.
double slicedPaletteDistance(const std::vector<double>& a, const std::vector<double>& aWeights,
                             const std::vector<double>& b, const std::vector<double>& bWeights);

}  // namespace uot
