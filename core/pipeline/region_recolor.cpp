#include "core/pipeline/region_recolor.h"

#include <optional>
#include <string>

#include "core/color/float_buffer.h"
#include "core/pipeline/pipeline_state.h"
#include "core/registry/batched_solver_registry.h"
#include "core/registry/solver_registry.h"
#include "core/transport/uot_error.h"

namespace uot {

namespace {

using pipeline_detail::Clock;
using pipeline_detail::secondsSince;

void checkMaskFits(const Mask& mask, const Image& source)
{
    if (mask.width != source.width || mask.height != source.height)
        throw Error(ErrorCode::InvalidArgument, "the mask is " + std::to_string(mask.width) + "x" +
                                                    std::to_string(mask.height) + ", the source " +
                                                    std::to_string(source.width) + "x" + std::to_string(source.height));
}

// Sets the pipeline's source palette: the source's pixels weighted by the mask.
void setMaskedSourcePalette(RecolorPipeline& pipeline, const Mask& mask)
{
    const std::shared_ptr<const Image> source = pipeline.sourceImage();
    if (!source) throw Error(ErrorCode::InvalidArgument, "no source image set");
    checkMaskFits(mask, *source);
    const RecolorSettings& st = pipeline.settings();
    pipeline.setSourcePalette(std::make_shared<const Palette>(
        buildWeightedImagePalette(*source, mask.values.data(), st.space, st.palette, st.threads)));
}

// Renders the pipeline's masked result (its source where the mask is 0).
Image renderMasked(RecolorPipeline& pipeline, const Mask& mask, const PipelineControl& control)
{
    Image result = pipeline.render(control);
    const RecolorSettings& st = pipeline.settings();
    if (st.mapping.strength == 0.0) return result;  // exactly the source already (gray stays gray)
    blendMasked(*pipeline.sourceImage(), mask, result, st.threads);
    return result;
}

// The batched solver the regions' problems go to together, or nullopt: every
// region in `active` solves on the GPU (its solver runs there) and a batched
// solver for the GPU is registered.
std::optional<std::string> regionBatchedSolver(const std::vector<RecolorRegion>& regions,
                                               const std::vector<std::size_t>& active)
{
    for (std::size_t r : active)
        if (!runsOnGpu(regions[r].settings.transport.solver)) return std::nullopt;
    return batchedSolverFor(DeviceKind::Gpu);
}

// Solves the pipelines' problems (palettes prepared) in batched calls, one per
// group of pipelines with equal solve options (the batched solver takes one set
// of options; eps and the penalties are per problem), and hands each plan to its
// pipeline. A group of one, a problem the solver does not take, a failed call or
// a non-finite result leaves the pipeline to solve alone when it renders.
void solveTogether(const std::string& batchedName, const std::vector<std::unique_ptr<RecolorPipeline>>& pipelines,
                   const PipelineControl& control)
{
    std::vector<bool> grouped(pipelines.size(), false);
    const std::unique_ptr<BatchedUotSolver> solver = createBatchedSolver(batchedName);
    for (std::size_t first = 0; first < pipelines.size(); ++first) {
        if (grouped[first]) continue;
        const SolveOptions& options = pipelines[first]->settings().transport.options;
        std::vector<std::size_t> group;
        std::vector<UotProblem> problems;
        for (std::size_t k = first; k < pipelines.size(); ++k) {
            if (grouped[k] || !(pipelines[k]->settings().transport.options == options)) continue;
            const std::optional<UotProblem> problem = pipelines[k]->transportProblem();
            if (!problem || !batchedSolverAccepts(batchedName, *problem)) continue;
            grouped[k] = true;
            group.push_back(k);
            problems.push_back(*problem);
        }
        if (group.size() < 2) continue;
        SolveControl sc;
        sc.cancel = control.cancel;
        const auto start = Clock::now();
        std::vector<SolveResult> results;
        try {
            results = solver->solveBatch(problems, options, sc);
        } catch (const Error&) {
            continue;  // each pipeline of the group solves alone
        }
        const double seconds = secondsSince(start);
        for (std::size_t g = 0; g < group.size(); ++g) {
            if (results[g].cancelled) throw Cancelled();
            if (results[g].status == NumericalStatus::NotFinite) continue;
            pipelines[group[g]]->adoptPlan(std::move(results[g]), seconds / double(group.size()));
        }
    }
}

}  // namespace

Mask prepareMask(const Mask& mask, const Image& source, int featherRadius, WorkingSpace space, int threads)
{
    validateImage(source, "source image");
    if (mask.empty()) throw Error(ErrorCode::InvalidArgument, "the mask is empty");
    if (featherRadius < 0)
        throw Error(ErrorCode::InvalidArgument, "mask feather radius must be >= 0 (got " + std::to_string(featherRadius) + ")");
    Mask out = resizeMask(mask, source.width, source.height);
    if (featherRadius > 0) {
        FloatBuffer guide(source.pixelCount() * 3);  // not zeroed first: every value is written
        imageToSpace(source, space, guide.data(), threads);
        featherMask(out, guide.data(), space, featherRadius, threads);
    }
    return out;
}

Image recolorMasked(RecolorPipeline& pipeline, const Mask& mask, const PipelineControl& control)
{
    setMaskedSourcePalette(pipeline, mask);
    pipeline.resetTimings();
    return renderMasked(pipeline, mask, control);
}

Image recolorRegions(const Image& source, const std::vector<RecolorRegion>& regions, const PipelineControl& control,
                     std::vector<PipelineStats>* stats)
{
    if (regions.empty()) throw Error(ErrorCode::InvalidArgument, "no region");
    if (regions.size() > static_cast<std::size_t>(kMaxRegions))
        throw Error(ErrorCode::InvalidArgument, "at most " + std::to_string(kMaxRegions) + " regions (got " +
                                                    std::to_string(regions.size()) + ")");
    for (std::size_t r = 0; r < regions.size(); ++r)
        if (!regions[r].reference || regions[r].mask.empty())
            throw Error(ErrorCode::InvalidArgument, "region " + std::to_string(r + 1) + " has no mask or no reference");
    if (stats) stats->clear();
    // One pipeline per region that changes anything, its palettes prepared. On
    // the GPU all of them first, their problems solved together, then each region
    // renders with its plan; else one after the other (one source copy at a time).
    std::vector<std::size_t> active;
    for (std::size_t r = 0; r < regions.size(); ++r)
        if (regions[r].settings.mapping.strength != 0.0) active.push_back(r);  // else keeps everything as it is
    std::vector<std::unique_ptr<RecolorPipeline>> pipelines(active.size());
    std::vector<double> maskPaletteSeconds(active.size(), 0.0);  // not in the pipeline's own palette figure
    const auto prepare = [&](std::size_t k) {
        const RecolorRegion& region = regions[active[k]];
        checkMaskFits(region.mask, source);
        pipelines[k] = std::make_unique<RecolorPipeline>(region.settings);
        pipelines[k]->setSource(source);
        pipelines[k]->setReferencePalette(region.reference);
        const auto start = Clock::now();
        setMaskedSourcePalette(*pipelines[k], region.mask);
        maskPaletteSeconds[k] = secondsSince(start);
        pipelines[k]->preparePalettes(control);
    };
    const std::optional<std::string> batched = active.size() > 1 ? regionBatchedSolver(regions, active) : std::nullopt;
    if (batched) {
        for (std::size_t k = 0; k < active.size(); ++k) prepare(k);
        solveTogether(*batched, pipelines, control);
    }
    Image result = source;
    for (std::size_t k = 0; k < active.size(); ++k) {
        const RecolorRegion& region = regions[active[k]];
        if (!pipelines[k]) prepare(k);
        Image recolored = renderMasked(*pipelines[k], region.mask, control);
        if (stats) {
            stats->push_back(pipelines[k]->stats());
            stats->back().timings.palette += maskPaletteSeconds[k];
        }
        pipelines[k].reset();  // its buffers (host and device) go before the next region renders
        // recolored is already the source where the mask is 0; over a region
        // before it, blend it with the result so far instead.
        if (k > 0) blendMasked(result, region.mask, recolored, region.settings.threads);
        result = std::move(recolored);
    }
    return result;
}

}  // namespace uot
