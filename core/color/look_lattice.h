#pragma once
// The edge-aware look folded into the colour lattice (no Qt, no OpenCV), so that
// what is displayed is a function of the source colour alone and a 3-D LUT holds it.
//
// The guided-filter field (core/color/color_map.h) gives each pixel a displacement
// that depends on where it is as well as on its colour. fitLatticeToField finds the
// displacement lattice whose trilinear interpolation at the pixels' colours is
// closest in least squares to the field's displacements there (the regularised fit
// of core/color/look_fit.h, with the prior lattice as the pull for nodes that no
// pixel holds and a pull between neighbouring nodes). Composed per pixel from that
// lattice, the result keeps what the field does as a function of colour (the
// residual match, the edge-aware averaging of the map over a surface's colours) and
// drops what depends on position, which no LUT can hold, except a small bounded part:
// composeFolded keeps the field's displacement within kFoldSpatialBound of the fold's.
// The fitted lattice is bounded like any other (regularizeDisplacementLut).

#include "core/color/color_map.h"

namespace uot {

// The lattice of prior's box and size fitted to the displacements that `field`
// (smoothed, for this width x height image) gives the pixels whose x and y are
// multiples of `step` (weights: MappingSettings::fold); colors: the image's working-space colours (width x height x
// 3). prior must have every node evaluated (LatticeNodes::All). Throws
// uot::Error(InvalidArgument) for an unsmoothed field, a bad step or an inconsistent prior.
DisplacementLut fitLatticeToField(const DisplacementLut& prior, const float* colors, const DisplacementField& field,
                                  WorkingSpace space, int width, int height, int step, const LatticeFieldFit& weights = {},
                                  int threads = 0);

// The largest distance, in Lab units (scaled by the space's nominal range / 100), by
// which the displayed look may leave the fold per channel: the field's displacement is
// kept within it of the folded lattice's, so the look keeps what the field does below
// it (a smooth sky's JPEG blocks at the field's contrast, not the lattice slope's), and
// the position-dependent part no LUT holds stays under about 1.3 8-bit levels.
inline constexpr double kFoldSpatialBound = 0.5;

// composeMapped with the field's displacement at each pixel clamped per channel into
// the fold's displacement (lattice `fold`, read at the pixel's colour) +- bound
// (working-space units). field must be smoothed (as composeMapped's).
void composeFolded(const float* colors, const DisplacementLut& fold, const DisplacementField& field, float bound,
                   WorkingSpace space, const MappingSettings& settings, const Image& source, Image& result,
                   int threads = 0, const LookAdjustment* look = nullptr);

}  // namespace uot
