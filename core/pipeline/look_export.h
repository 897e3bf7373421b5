#pragma once
// A recolor pipeline's look as a 3-D LUT. Shared by `uot lut`, `uot recolor
// --export-lut` and the studio's File > Export LUT.
//
// The look a person sees is the rendered result, edge-aware smoothing and
// palette match included, and that depends on where a pixel is, which no LUT can
// hold. So the export fits the lattice that reproduces the rendered result best
// (core/color/look_fit.h), starting from the global colour map of the plan
// (what `--no-smooth` applies, core/color/look_cube.h) for colours the image does
// not have, and says how close it is: the PSNR of the LUT, applied as a LUT client
// does (tetrahedral), against the rendered result.

#include <string>

#include "core/color/cube_lut.h"
#include "core/pipeline/recolor_pipeline.h"

namespace uot {

// What a LUT can hold, in one sentence for --help and the export dialog.
inline constexpr const char* kLutHoldsGlobalMapOnly =
    "The LUT is fitted to the rendered result (smoothing and palette match included) over the source's colors, "
    "and its PSNR against that result is reported; the rendered look is itself a function of the color (its "
    "edge-aware part is folded into the color lattice), so the LUT reproduces it. --global-map exports the plan's "
    "global color map instead (what --no-smooth renders).";

enum class LookLutSource {
    Rendered,   // fitted to render() (the result `uot recolor` writes and the studio shows)
    GlobalMap   // the plan's global colour map baked node by node
};

struct LookLut {
    CubeLut lut;
    // PSNR (dB) of lut applied to the source (tetrahedral, rounded like a LUT
    // client) against the rendered result, and the same for the global map alone.
    double psnr = 0;
    double globalMapPsnr = 0;
};

// Solves and renders when needed, then makes the look's LUT of `cubeSize` nodes
// per axis (2..256; the offered sizes are 17, 33 and 65). `rendered`: the result
// of pipeline.render() at the current settings when the caller already has it
// (it is then not rendered again). Throws uot::Error, uot::Cancelled.
LookLut exportPipelineLook(RecolorPipeline& pipeline, int cubeSize, const std::string& title,
                           LookLutSource source = LookLutSource::Rendered, const PipelineControl& control = {},
                           const Image* rendered = nullptr);

// The global map alone, baked (no render): LookLutSource::GlobalMap without the PSNR.
CubeLut bakePipelineLook(RecolorPipeline& pipeline, int cubeSize, const std::string& title,
                         const PipelineControl& control = {});

}  // namespace uot
