#include "core/pipeline/look_export.h"

#include "core/color/look_cube.h"

namespace uot {

CubeLut bakePipelineLook(RecolorPipeline& pipeline, int cubeSize, const std::string& title, const PipelineControl& control)
{
    const DisplacementLut map = pipeline.globalColorMap(control);
    const RecolorSettings& settings = pipeline.settings();
    return bakeLookCube(map, settings.space, settings.mapping, cubeSize, title, settings.threads);
}

}  // namespace uot
