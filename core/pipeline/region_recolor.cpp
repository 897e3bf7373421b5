#include "core/pipeline/region_recolor.h"

#include <algorithm>
#include <cstddef>
#include <exception>
#include <optional>
#include <variant>
#include <vector>
#include <string>

#include <omp.h>

#include "core/color/float_buffer.h"
#include "core/pipeline/pipeline_state.h"
#include "core/registry/batched_solver_registry.h"
#include "core/registry/solver_registry.h"
#include "core/transport/kernel_matrix.h"
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

// A palette problem with its own copy of the point sets and weights (the
// pipeline's view of it lasts only while its palettes and settings stay; each
// region now has its own pipeline, so the copy is a safeguard, not a need).
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

// Runs body(k) for k = 0 .. count - 1: concurrently, one OpenMP thread per
// region (each region's own parallel loops nested under it, with the thread
// count of its settings), or one after the other. An exception thrown by a
// region's body is rethrown once all have finished (the first region's first).
template <typename Body>
void forEachRegion(std::size_t count, bool concurrent, Body&& body)
{
    std::vector<std::exception_ptr> errors(count);
    const int levels = omp_get_max_active_levels();
    if (concurrent) omp_set_max_active_levels(std::max(levels, omp_get_active_level() + 2));
#pragma omp parallel for num_threads(static_cast<int>(count)) schedule(static, 1) if (concurrent)
    for (std::ptrdiff_t k = 0; k < static_cast<std::ptrdiff_t>(count); ++k) {
        try {
            body(static_cast<std::size_t>(k));
        } catch (...) {
            errors[static_cast<std::size_t>(k)] = std::current_exception();
        }
    }
    if (concurrent) omp_set_max_active_levels(levels);
    for (const std::exception_ptr& error : errors)
        if (error) std::rethrow_exception(error);
}

// The control with its progress callback called by one region at a time.
PipelineControl serializedProgress(const PipelineControl& control)
{
    PipelineControl out = control;
    if (control.onProgress)
        out.onProgress = [&control](const PipelineProgress& progress) {
#pragma omp critical(uot_region_progress)
            control.onProgress(progress);
        };
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
                     std::vector<PipelineStats>* stats, RegionSchedule schedule)
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
    // One pipeline per region (its own palettes, plan and field); what depends on
    // the source alone (its colours in the working space, on the CPU the block
    // means and the field's fitter) is made once, by the first, and shared.
    // Each region's thread count is fixed here, so that its sums are the same
    // whether the regions run concurrently or one by one.
    const std::size_t count = active.size();
    std::vector<RecolorSettings> settings(count);
    std::vector<std::unique_ptr<RecolorPipeline>> pipelines(count);
    for (std::size_t k = 0; k < count; ++k) {
        settings[k] = regions[active[k]].settings;
        settings[k].threads = resolveThreadCount(settings[k].threads);
        pipelines[k] = std::make_unique<RecolorPipeline>(settings[k]);
        if (k == 0) {
            pipelines[0]->setSource(source);
            pipelines[0]->prepareSourceInputs();
        } else {
            pipelines[k]->shareSourceWith(*pipelines[0]);
        }
    }
    const bool concurrent = schedule == RegionSchedule::Concurrent && count > 1;
    const PipelineControl regionControl = concurrent ? serializedProgress(control) : control;
    // Each region's palettes: its reference, and the source weighted by its mask.
    std::vector<double> maskPaletteSeconds(count, 0.0);  // not in the pipeline's own palette figure
    forEachRegion(count, concurrent, [&](std::size_t k) {
        RecolorPipeline& pipeline = *pipelines[k];
        pipeline.setReferencePalette(regions[active[k]].reference);
        const auto start = Clock::now();
        setMaskedSourcePalette(pipeline, regions[active[k]].mask);
        maskPaletteSeconds[k] = secondsSince(start);
        pipeline.resetTimings();
        pipeline.preparePalettes(regionControl);
    });
    // On the GPU, the regions' problems solved together.
    const std::optional<std::string> batchedName = count > 1 ? regionBatchedSolver(regions, active) : std::nullopt;
    if (batchedName) {
        std::vector<std::unique_ptr<OwnedProblem>> problems(count);
        std::vector<const SolveOptions*> options;
        for (std::size_t k = 0; k < count; ++k) {
            options.push_back(&settings[k].transport.options);
            const std::optional<UotProblem> problem = pipelines[k]->transportProblem();
            if (!problem || !batchedSolverAccepts(*batchedName, *problem)) continue;
            if (const auto* cloud = std::get_if<PointCloudCost>(&problem->cost))
                problems[k] = std::make_unique<OwnedProblem>(*problem, *cloud);
        }
        BatchedPlans batched = solveTogether(*batchedName, options, problems, control);
        for (std::size_t k = 0; k < count; ++k)
            if (batched.plans[k]) pipelines[k]->adoptPlan(std::move(*batched.plans[k]), batched.seconds[k]);
    }
    // Each region solved (unless batched) and mapped only under its mask, then all
    // composited in one pass.
    std::vector<Image> parts(count);
    forEachRegion(count, concurrent, [&](std::size_t k) {
        parts[k] = pipelines[k]->render(regionControl, regions[active[k]].mask.values.data());
    });
    std::vector<const Mask*> masks;
    std::vector<const Image*> results;
    for (std::size_t k = 0; k < count; ++k) {
        masks.push_back(&regions[active[k]].mask);
        results.push_back(&parts[k]);
        if (stats) {
            stats->push_back(pipelines[k]->stats());
            stats->back().timings.palette += maskPaletteSeconds[k];
        }
    }
    return compositeRegions(source, masks, results, settings[0].threads);
}

}  // namespace uot
