// The palette and cost stages of RecolorPipeline: the two palettes (cached
// against their settings) and the point-cloud cost between them.
#include "core/pipeline/recolor_pipeline.h"

#include "core/pipeline/pipeline_state.h"
#include "core/transport/point_cloud_cost.h"
#include "core/transport/uot_error.h"

namespace uot {

using namespace pipeline_detail;

std::shared_ptr<const Palette> computePalette(const Image& image, const RecolorSettings& settings,
                                              const PipelineControl& control)
{
    checkCancel(control);
    return std::make_shared<const Palette>(buildImagePalette(image, settings.space, settings.palette, settings.threads));
}

void RecolorPipeline::preparePalettes(const PipelineControl& control)
{
    State& s = *m_state;
    if (!s.source) throw Error(ErrorCode::InvalidArgument, "no source image set");
    if (!hasReference()) throw Error(ErrorCode::InvalidArgument, "no reference image set");
    const RecolorSettings& st = s.settings;
    const auto start = Clock::now();
    bool reused = true;
    report(control, PipelineStage::Palette, 0.0);

    if (s.externalSourcePalette) {
        if (s.sourcePalette->space != st.space)
            throw Error(ErrorCode::InvalidArgument, "the source palette was built in " + toString(s.sourcePalette->space) +
                                                        ", the settings ask for " + toString(st.space));
    } else if (!s.sourcePalette || s.sourcePalette->space != st.space ||
               !(s.sourcePaletteSettings == st.palette)) {
        checkCancel(control);
        // The CPU mapping converts every pixel anyway: the palette then reads those
        // colors; the GPU path converts on the device, and here only the sample.
        const bool cpuMapping = !runsOnGpu(st.transport.solver);
        s.sourcePalette = std::make_shared<const Palette>(
            cpuMapping ? buildPalette(s.fullSourceColors(), s.source->pixelCount(), st.space, st.palette, st.threads)
                       : buildImagePalette(*s.source, st.space, st.palette, st.threads));
        s.sourcePaletteSettings = st.palette;
        s.dropFromPalettes();
        reused = false;
    }
    report(control, PipelineStage::Palette, 0.5);
    if (s.externalReferencePalette) {
        if (s.referencePalette->space != st.space)
            throw Error(ErrorCode::InvalidArgument, "the reference palette was built in " +
                                                        toString(s.referencePalette->space) + ", the settings ask for " +
                                                        toString(st.space));
    } else if (!s.referencePalette || s.referencePalette->space != st.space ||
               !(s.referencePaletteSettings == st.palette)) {
        s.referencePalette = computePalette(*s.reference, st, control);
        s.referencePaletteSettings = st.palette;
        s.dropFromPalettes();
        reused = false;
    }
    s.stats.sourcePaletteSize = s.sourcePalette->size();
    s.stats.referencePaletteSize = s.referencePalette->size();
    s.stats.paletteFromCache = reused;
    if (!reused) s.stats.timings.palette = secondsSince(start);  // a cached stage keeps its figure since resetTimings()
    report(control, PipelineStage::Palette, 1.0);

    // Cost: the squared distance between palette points divided by D^2 (never stored).
    if (!s.problemValid) {
        const auto costStart = Clock::now();
        const double range = nominalRange(st.space);
        PointCloudCost cost;
        cost.x = s.sourcePalette->points.data();
        cost.y = s.referencePalette->points.data();
        cost.rows = s.sourcePalette->size();
        cost.cols = s.referencePalette->size();
        cost.dim = 3;
        cost.scale = 1.0 / (range * range);
        s.problem = UotProblem{};
        s.problem.cost = cost;
        s.problem.a = s.sourcePalette->weights;
        s.problem.b = s.referencePalette->weights;
        s.problemValid = true;
        s.stats.timings.cost = secondsSince(costStart);
    }
}

std::optional<UotProblem> RecolorPipeline::transportProblem() const
{
    const State& s = *m_state;
    if (!s.problemValid) return std::nullopt;
    UotProblem problem = s.problem;
    const TransportSettings& ts = s.settings.transport;
    problem.eps = ts.eps;
    problem.tauA = ts.sourceAdherence;
    problem.tauB = ts.adherence;
    problem.reference = ts.reference;
    return problem;
}

}  // namespace uot
