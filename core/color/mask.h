#pragma once
// Masks for regional colour transfer: one weight in [0, 1] per pixel (1 = the
// full transfer, 0 = the source kept exactly, between = a blend), read from a
// mask image, resized to a source, feathered along the source's colour edges,
// and the blend of a recolored image with its source through a mask.

#include <vector>

#include "core/color/color_space.h"
#include "core/color/image.h"

namespace uot {

struct Mask {
    int width = 0;
    int height = 0;
    std::vector<float> values;  // width x height, row-major, each in [0, 1]
    bool empty() const { return width <= 0 || height <= 0; }
};

// The mask an image holds: gray, its value; RGB, the mean of R, G and B; RGBA,
// that mean times alpha; divided by the largest sample (255 or 65535), so
// that white is exactly 1 and black exactly 0. Throws uot::Error(InvalidArgument)
// for an inconsistent image.
Mask maskFromImage(const Image& image);

// The mask resized to width x height, each axis on its own: when shrinking,
// every target pixel is the area-weighted mean of the mask pixels it covers
// (a box filter); when enlarging, bilinear interpolation between pixel centres
// (edges clamped). Values are normalised by the sum of their weights, so
// uniform areas stay exactly 0 or 1. Same size: a copy.
Mask resizeMask(const Mask& mask, int width, int height);

// The guided filter's regularisation of the feathering, in (guide / nominal
// range)^2 units: colour steps of more than about sqrt(1e-3) x 100 = 3 Lab
// units stop the feather.
inline constexpr double kMaskFeatherEps = 1e-3;

// Softens the mask's edges along the colour edges of the guide: the colour-
// guided filter (core/color/guided_filter.h) of radius `radius` pixels with
// the guide (width x height x 3 working-space colours of `space`, divided by
// its nominal range) and kMaskFeatherEps, clamped to [0, 1] (values within 1e-5
// of 0 or 1 become 0 or 1). From a radius of 8 the models are fitted on block
// means of radius / 4 pixels (the fast filter); an area further than 2.5 x radius
// pixels from any change of the mask keeps its value exactly (2 x radius below 8).
// radius 0: unchanged. Throws uot::Error(InvalidArgument) for a negative
// radius.
void featherMask(Mask& mask, const float* guide, WorkingSpace space, int radius, int threads = 0);

// Blends `recolored` (the pipeline's result for `source`: same size and depth,
// RGB or RGBA) with the source through the mask, in place: where the mask is 0
// the source's samples are copied (a gray source as R = G = B), where it is 1
// the recolored ones are kept, between them source + m (recolored - source),
// rounded. Throws uot::Error(InvalidArgument) when the shapes do not match.
void blendMasked(const Image& source, const Mask& mask, Image& recolored, int threads = 0);

// Several regions' results composited over their source in one pass. At each
// pixel, with the masks' weights w_i and S = sum w_i:
//   result = source + min(1, S) (sum w_i r_i / S - source), rounded
// (the source where S = 0, copied as in blendMasked). The regions share the
// pixel in proportion to their weights, and the source shows through only by
// 1 - S where the masks cover less than all of it: two complementary feathered
// masks (w_1 + w_2 = 1) leave no source across their seam, and one region gives
// exactly blendMasked's result. A result is read only where its weight is > 0
// (RecolorPipeline::render with the mask as `within`). results: the source's
// size and depth, RGB or RGBA, all of one shape; masks the source's size.
// Throws uot::Error(InvalidArgument) when the counts or shapes do not match.
Image compositeRegions(const Image& source, const std::vector<const Mask*>& masks, const std::vector<const Image*>& results,
                       int threads = 0);

}  // namespace uot
