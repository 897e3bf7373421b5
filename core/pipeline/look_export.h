#pragma once
// A recolor pipeline's look as a 3-D LUT: the global colour map of its plan
// (RecolorPipeline::globalColorMap) baked into a .cube lattice
// (core/color/look_cube.h). Shared by `uot lut`, `uot recolor --export-lut` and
// the studio's File > Export LUT.

#include <string>

#include "core/color/cube_lut.h"
#include "core/pipeline/recolor_pipeline.h"

namespace uot {

// What a LUT can hold, in one sentence for --help and the export dialog.
inline constexpr const char* kLutHoldsGlobalMapOnly =
    "A LUT holds the global colour map only (what `uot recolor --no-smooth` does): the edge-aware spatial smoothing "
    "depends on where a pixel is in the image, so a LUT cannot hold it.";

// Solves when needed, then bakes settings().space / settings().mapping
// (strength, preserve luminance, gamut) into a cubeSize^3 LUT (2..256; the
// offered sizes are 17, 33 and 65). Throws uot::Error, uot::Cancelled.
CubeLut bakePipelineLook(RecolorPipeline& pipeline, int cubeSize, const std::string& title,
                         const PipelineControl& control = {});

}  // namespace uot
