#include "core/pipeline/look_export.h"

#include "core/color/look_cube.h"
#include "core/color/look_fit.h"
#include "core/transport/uot_error.h"

namespace uot {

CubeLut bakePipelineLook(RecolorPipeline& pipeline, int cubeSize, const std::string& title, const PipelineControl& control)
{
    const DisplacementLut map = pipeline.globalColorMap(control);
    const RecolorSettings& settings = pipeline.settings();
    const LookAdjustment look = prepareLookAdjustment(settings.mapping.look, settings.space, pipeline.referencePalette().get());
    return bakeLookCube(map, settings.space, settings.mapping, cubeSize, title, settings.threads, &look);
}

LookLut exportPipelineLook(RecolorPipeline& pipeline, int cubeSize, const std::string& title, LookLutSource source,
                           const PipelineControl& control, const Image* rendered)
{
    if (!pipeline.hasSource()) throw Error(ErrorCode::InvalidArgument, "no source image to export the look of");
    LookLut out;
    const CubeLut global = bakePipelineLook(pipeline, cubeSize, title, control);
    const Image result = rendered ? Image{} : pipeline.render(control);
    const Image& target = rendered ? *rendered : result;
    const Image& sourceImage = *pipeline.sourceImage();
    const int threads = pipeline.settings().threads;
    out.globalMapPsnr = cubePsnr(global, sourceImage, target, CubeInterpolation::Tetrahedral, threads);
    if (source == LookLutSource::GlobalMap) {
        out.lut = global;
        out.psnr = out.globalMapPsnr;
        return out;
    }
    LookFitOptions fit;
    fit.threads = threads;
    out.lut = fitCubeToImage(sourceImage, target, global, fit);
    out.psnr = cubePsnr(out.lut, sourceImage, target, CubeInterpolation::Tetrahedral, threads);
    return out;
}

}  // namespace uot
