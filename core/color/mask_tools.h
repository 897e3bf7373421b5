#pragma once
// The studio mask editor's operations on a mask (core/color/mask.h) of a source
// image, without Qt: brush strokes, masks from a luminance range, a colour
// range and the automatic sky heuristic, and the mask as an 8-bit gray image
// to save. The studio applies them as undo steps.

#include <cstdint>
#include <vector>

#include "core/color/image.h"
#include "core/color/mask.h"

namespace uot {

struct StrokePoint {
    double x = 0;  // source pixel coordinates (pixel centres at .5)
    double y = 0;
};

// A soft round brush along the points (dabs every quarter of the size between
// them). The stroke's coverage of a pixel is the largest dab value over it,
// opacity x fall-off(distance / radius): 1 up to `hardness`, then 1 - s^2 (3 - 2 s)
// with s = (d - hardness) / (1 - hardness), 0 from the radius on. Painting gives
// m + c (1 - m), erasing m (1 - c): one stroke never exceeds its opacity.
void paintStroke(Mask& mask, const std::vector<StrokePoint>& points, double size, double hardness, double opacity,
                 bool erase);

// Luma Y' = 0.2126 R' + 0.7152 G' + 0.0722 B' of a pixel's encoded samples
// (0..1; a gray pixel its value).
double pixelLuma(const Image& image, std::size_t pixel);
// A pixel's encoded R', G', B' (0..1; a gray pixel as R' = G' = B').
void pixelRgb(const Image& image, std::size_t pixel, double rgb[3]);

// 1 where low <= Y' <= high, falling linearly to 0 at `softness` outside the
// range (softness 0: a hard range).
Mask luminanceRangeMask(const Image& image, double low, double high, double softness);

// 1 where the Euclidean distance of (R', G', B') to `rgb` is at most
// `tolerance`, falling linearly to 0 at tolerance + softness.
Mask colorRangeMask(const Image& image, const double rgb[3], double tolerance, double softness);

// The automatic sky mask, a heuristic: column by column from the top, a pixel is
// sky while it is not dark (Y' >= 0.15), not warmer than it is blue (B' >= R' - 0.05)
// and close to the pixel above it (distance of R'G'B' < 0.25: no edge); the first
// pixel that fails ends the sky of its column. Each column then takes the median
// of the ends over 4% of the width (a bird does not cut a notch), and the sky's
// lower edge is softened over 2% of the height.
Mask skyMask(const Image& image);

// A mask as runs of equal values (exact): a painted mask is mostly runs of 0
// and 1, so the undo history keeps each step in a fraction of its 4 bytes a pixel.
struct PackedMask {
    int width = 0;
    int height = 0;
    std::vector<std::uint32_t> lengths;
    std::vector<float> values;
};
PackedMask packMask(const Mask& mask);
Mask unpackMask(const PackedMask& packed);

// The mask as an 8-bit gray image (round(255 m)).
Image maskToGrayImage(const Mask& mask);

}  // namespace uot
