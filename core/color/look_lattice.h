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
// drops only what depends on position, which no LUT can hold. The fitted lattice is
// then bounded like any other (regularizeDisplacementLut).

#include "core/color/color_map.h"
#include "core/color/look_fit.h"

namespace uot {

// The lattice of prior's box and size fitted to the displacements that `field`
// (smoothed, for this width x height image) gives the pixels whose x and y are
// multiples of `step` (weights: MappingSettings::fold); colors: the image's working-space colours (width x height x
// 3). prior must have every node evaluated (LatticeNodes::All). Throws
// uot::Error(InvalidArgument) for an unsmoothed field, a bad step or an inconsistent prior.
DisplacementLut fitLatticeToField(const DisplacementLut& prior, const float* colors, const DisplacementField& field,
                                  WorkingSpace space, int width, int height, int step, const LatticeFieldFit& weights = {},
                                  int threads = 0);

// The fold's system from the data part of its normal equations accumulated elsewhere (a
// device mapper's, from the pixels it holds): the regularisers of `weights` added
// (look_fit.h, regularisedNormalEquations). Node order and slots in the lattice's terms:
// the slot of the neighbour at offset (d0, d1, d2) along the working space's
// coordinates is (d0 + 1) * 9 + (d1 + 1) * 3 + (d2 + 1). fitLatticeToField solves it from
// the prior with kFoldIterations Jacobi-preconditioned conjugate-gradient iterations at
// most, to a relative residual of kFoldTolerance per channel.
LookNormalEquations latticeFoldSystem(const DisplacementLut& prior, LookNormalEquations equations,
                                      const LatticeFieldFit& weights = {});
constexpr int kFoldIterations = 100;
constexpr double kFoldTolerance = 1e-5;

}  // namespace uot
