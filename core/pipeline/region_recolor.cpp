#include "core/pipeline/region_recolor.h"

#include <optional>
#include <variant>
#include <vector>
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

// Renders the pipeline's masked result (its source where the mask is 0; only
// the pixels under the mask are mapped).
Image renderMasked(RecolorPipeline& pipeline, const Mask& mask, const PipelineControl& control)
{
    Image result = pipeline.render(control, mask.values.data());
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

// A palette problem with its own copy of the point sets and weights: the
// pipeline's view of it changes with the next region's palettes.
struct OwnedProblem {
    std::vector<double> x, y, a, b;
    UotProblem problem;

    explicit OwnedProblem(const UotProblem& view, const PointCloudCost& cloud)
        : x(cloud.x, cloud.x + cloud.rows * cloud.dim), y(cloud.y, cloud.y + cloud.cols * cloud.dim),
          a(view.a.begin(), view.a.end()), b(view.b.begin(), view.b.end()), problem(view)
    {
        PointCloudCost own = cloud;
        own.x = x.data();
        own.y = y.data();
        problem.cost = own;
        problem.a = a;
        problem.b = b;
    }
};

// The regions' plans from batched calls, one per group of regions with equal
// solve options (the batched solver takes one set of options; eps and the
// penalties are per problem). A region without a problem here (one the solver
// does not take), alone in its group, in a failed call or with a non-finite
// result gets no plan: it is solved alone when it renders.
struct BatchedPlans {
    std::vector<std::optional<SolveResult>> plans;
    std::vector<double> seconds;  // each region's share of its call
};

BatchedPlans solveTogether(const std::string& batchedName, const std::vector<const SolveOptions*>& options,
                           const std::vector<std::unique_ptr<OwnedProblem>>& problems, const PipelineControl& control)
{
    BatchedPlans out{std::vector<std::optional<SolveResult>>(problems.size()), std::vector<double>(problems.size(), 0.0)};
    std::vector<bool> grouped(problems.size(), false);
    const std::unique_ptr<BatchedUotSolver> solver = createBatchedSolver(batchedName);
    for (std::size_t first = 0; first < problems.size(); ++first) {
        if (grouped[first] || !problems[first]) continue;
        std::vector<std::size_t> group;
        std::vector<UotProblem> batch;
        for (std::size_t k = first; k < problems.size(); ++k) {
            if (grouped[k] || !problems[k] || !(*options[k] == *options[first])) continue;
            grouped[k] = true;
            group.push_back(k);
            batch.push_back(problems[k]->problem);
        }
        if (group.size() < 2) continue;
        SolveControl sc;
        sc.cancel = control.cancel;
        const auto start = Clock::now();
        std::vector<SolveResult> results;
        try {
            results = solver->solveBatch(batch, *options[first], sc);
        } catch (const Error&) {
            continue;  // each region of the group solves alone
        }
        const double seconds = secondsSince(start);
        for (std::size_t g = 0; g < group.size(); ++g) {
            if (results[g].cancelled) throw Cancelled();
            if (results[g].status == NumericalStatus::NotFinite) continue;
            out.plans[group[g]] = std::move(results[g]);
            out.seconds[group[g]] = seconds / double(group.size());
        }
    }
    return out;
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
    std::vector<std::size_t> active;  // the regions that change anything
    for (std::size_t r = 0; r < regions.size(); ++r)
        if (regions[r].settings.mapping.strength != 0.0) active.push_back(r);
    if (active.empty()) return source;
    for (std::size_t r : active) checkMaskFits(regions[r].mask, source);
    // One pipeline for every region, given each region's settings and palettes
    // in turn: it keeps what depends on the source alone (its colours in the
    // working space; on the GPU the uploaded source and the mapping's buffers).
    // A new palette drops the plan, so each region is solved from its own start.
    RecolorPipeline pipeline(regions[active[0]].settings);
    pipeline.setSource(source);
    std::vector<std::shared_ptr<const Palette>> sourcePalettes(active.size());
    std::vector<double> maskPaletteSeconds(active.size(), 0.0);  // not in the pipeline's own palette figure
    const auto usePalettes = [&](std::size_t k) {
        const RecolorRegion& region = regions[active[k]];
        pipeline.setSettings(region.settings);
        pipeline.setReferencePalette(region.reference);
        if (sourcePalettes[k]) {
            pipeline.setSourcePalette(sourcePalettes[k]);
            return;
        }
        const auto start = Clock::now();
        setMaskedSourcePalette(pipeline, region.mask);
        maskPaletteSeconds[k] = secondsSince(start);
        sourcePalettes[k] = pipeline.sourcePalette();
    };
    // On the GPU, the regions' problems first, solved together.
    BatchedPlans batched{std::vector<std::optional<SolveResult>>(active.size()), std::vector<double>(active.size(), 0.0)};
    const std::optional<std::string> batchedName = active.size() > 1 ? regionBatchedSolver(regions, active) : std::nullopt;
    if (batchedName) {
        std::vector<std::unique_ptr<OwnedProblem>> problems(active.size());
        std::vector<const SolveOptions*> options;
        for (std::size_t k = 0; k < active.size(); ++k) {
            usePalettes(k);
            pipeline.preparePalettes(control);
            options.push_back(&regions[active[k]].settings.transport.options);
            const std::optional<UotProblem> problem = pipeline.transportProblem();
            if (!problem || !batchedSolverAccepts(*batchedName, *problem)) continue;
            if (const auto* cloud = std::get_if<PointCloudCost>(&problem->cost))
                problems[k] = std::make_unique<OwnedProblem>(*problem, *cloud);
        }
        batched = solveTogether(*batchedName, options, problems, control);
    }
    // Each region mapped only under its mask, then all composited in one pass.
    std::vector<Image> parts;
    std::vector<const Mask*> masks;
    for (std::size_t k = 0; k < active.size(); ++k) {
        const RecolorRegion& region = regions[active[k]];
        usePalettes(k);
        pipeline.resetTimings();
        if (batched.plans[k]) {
            pipeline.preparePalettes(control);
            pipeline.adoptPlan(std::move(*batched.plans[k]), batched.seconds[k]);
        }
        parts.push_back(pipeline.render(control, region.mask.values.data()));
        masks.push_back(&region.mask);
        if (stats) {
            stats->push_back(pipeline.stats());
            stats->back().timings.palette += maskPaletteSeconds[k];
        }
    }
    std::vector<const Image*> results;
    for (const Image& part : parts) results.push_back(&part);
    return compositeRegions(source, masks, results, regions[active[0]].settings.threads);
}

}  // namespace uot
