#pragma once
// The global colour map of a colour transfer baked into a 3-D LUT (no Qt, no
// OpenCV): for every node of an RGB lattice over [0, 1]^3 (sRGB-encoded values,
// what LUT clients feed in for ordinary images), the colour the pipeline's
// per-pixel map gives that RGB value when the edge-aware smoothing is off:
//
//   sRGB -> linear RGB -> working space x -> x + strength * d(x) (d: the
//   displacement lattice, trilinear) -> preserve luminance -> linear RGB ->
//   gamut handling -> sRGB
//
// which is `uot recolor --no-smooth` for that colour. The spatial smoothing
// (a guided filter over the image) depends on where a pixel is, so a LUT cannot
// hold it.

#include <string>

#include "core/color/color_map.h"
#include "core/color/cube_lut.h"

namespace uot {

// Bakes the map into a LUT of `cubeSize` nodes per axis (2..256). `map` must have
// every node evaluated (buildDisplacementLut with LatticeNodes::All): colours
// outside its box take the displacement at the nearest point of the box, as in
// the pipeline. Strength 0 gives the identity (the pipeline returns the source).
// `look`: the prepared look controls (as the composition applies them), null for none.
CubeLut bakeLookCube(const DisplacementLut& map, WorkingSpace space, const MappingSettings& mapping, int cubeSize,
                     const std::string& title, int threads = 0, const LookAdjustment* look = nullptr);

}  // namespace uot
