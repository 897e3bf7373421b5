// Batched GPU recolor benchmark and checks, without Qt or OpenCV (the GPU
// machine has neither):
//
//   batched_bench --check
//       the checks of tests/gpu/batched_cases.h (exit 1 when one fails);
//   batched_bench [--images N] [--size WxH] [--group G[,G...]] [--workers W]
//       images per second of the batched engine (runBatchedRecolor with
//       gpu-batched) against the per-image GPU loop (one RecolorPipeline with
//       gpu-fused, image after image, as `uot batch --device gpu --gpu-batch 1`),
//       on N synthetic decoded images of W x H; then the solves alone: the N
//       palette problems solved one by one with gpu-fused against one batched call
//       (mean iterations, converged and undone steps of both, and the relative L1
//       distances, largest and mean, of the batched plans to the single solves' and
//       of both to the float64 CPU plans); --solves-only: that part alone.
//
// What is measured: everything of `uot batch` but the file decode and encode
// (the images are decoded buffers in memory; "load" is a copy, "store" keeps
// nothing). Timings are wall clock on the host, one run each after a warm-up.
// --group takes a list: the engine runs once per group size.
// Exit 4 when no GPU is usable.

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "gpu/gpu_backend.h"
#include "tests/gpu/batched_cases.h"

using namespace uot;
using namespace uot::test;

namespace {

using Clock = std::chrono::steady_clock;
double secondsSince(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

int runChecks()
{
    std::vector<CheckOutcome> all;
    const auto add = [&all](const std::vector<CheckOutcome>& v) { all.insert(all.end(), v.begin(), v.end()); };
    add(checkMixedBatch());
    add(checkTranslationInvariantBatch());
    add(checkIterationsOfSingleSolves());
    add(checkSafeguardUndo());
    add(checkEmptyAndSingle());
    add(checkCancellation());
    add({checkRejectsDenseCost()});
    add(checkEngine());
    return reportOutcomes(all, "batched");
}

std::vector<Image> makeImages(int count, int width, int height)
{
    std::vector<Image> images(count);
    std::vector<std::thread> threads;
    const int workers = std::max(1u, std::thread::hardware_concurrency());
    for (int w = 0; w < workers; ++w)
        threads.emplace_back([&, w] {
            for (int k = w; k < count; k += workers) images[k] = syntheticImage(width, height, 1000 + k);
        });
    for (std::thread& t : threads) t.join();
    return images;
}

int runBench(int count, int width, int height, const std::vector<std::size_t>& groups, int workers, bool solvesOnly)
{
    const auto genStart = Clock::now();
    const std::vector<Image> images = makeImages(count, width, height);
    const RecolorSettings settings = gpuBatchSettings();
    const auto reference = computePalette(syntheticImage(width, height, 7), settings);
    std::printf("{\"what\": \"setup\", \"images\": %d, \"width\": %d, \"height\": %d, \"reference_palette\": %zu, "
                "\"generate_s\": %.2f, \"hardware_threads\": %u}\n",
                count, width, height, reference->size(), secondsSince(genStart), std::thread::hardware_concurrency());

    // Warm-up: CUDA context, kernels, pools.
    if (!solvesOnly) {
        RecolorPipeline warm(settings);
        warm.setSource(images[0]);
        warm.setReferencePalette(reference);
        (void)warm.run();
    }

    // Per-image loop, as the batch engine runs it without batching.
    PhaseTimings loopSum;
    std::size_t paletteSum = 0;
    const auto loopStart = Clock::now();
    if (!solvesOnly) {
        RecolorPipeline pipeline(settings);
        for (int k = 0; k < count; ++k) {
            pipeline.setSource(images[k]);
            pipeline.setReferencePalette(reference);
            const Image result = pipeline.run();
            const PhaseTimings& t = pipeline.stats().timings;
            loopSum.palette += t.palette;
            loopSum.solve += t.solve;
            loopSum.map += t.map;
            paletteSum += pipeline.stats().sourcePaletteSize;
            if (result.data.empty()) std::abort();
        }
    }
    const double loopSeconds = secondsSince(loopStart);

    // The batched engine, for each group size.
    for (const std::size_t group : solvesOnly ? std::vector<std::size_t>{} : groups) {
        BatchedRecolorJob job;
        job.count = static_cast<std::size_t>(count);
        job.load = [&](std::size_t k) { return images[k]; };
        job.store = [](std::size_t, const Image& result) {
            if (result.data.empty()) std::abort();
        };
        BatchedRecolorOptions options;
        options.batchedSolver = "gpu-batched";
        options.groupSize = group;
        options.workers = workers;
        const auto batchStart = Clock::now();
        const BatchedRecolorReport report = runBatchedRecolor(reference, settings, job, options);
        const double batchSeconds = secondsSince(batchStart);
        std::size_t done = 0;
        PhaseTimings batchSum;
        for (const BatchedItemOutcome& o : report.items) {
            done += o.status == BatchedItemStatus::Done ? 1 : 0;
            batchSum.palette += o.timings.palette;
            batchSum.map += o.timings.map;
            if (!o.message.empty()) std::printf("note: %s\n", o.message.c_str());
        }
        std::printf("{\"what\": \"engine\", \"images\": %d, \"mean_source_palette\": %.0f, "
                    "\"per_image_loop_s\": %.3f, \"per_image_loop_images_per_s\": %.2f, "
                    "\"loop_mean_palette_ms\": %.2f, \"loop_mean_solve_ms\": %.2f, \"loop_mean_map_ms\": %.2f, "
                    "\"batched_s\": %.3f, \"batched_images_per_s\": %.2f, \"batched_done\": %zu, \"groups\": %zu, "
                    "\"group_size\": %zu, \"batched_solve_s\": %.3f, \"batched_mean_palette_ms\": %.2f, "
                    "\"batched_mean_map_ms\": %.2f, \"speedup\": %.2f}\n",
                    count, double(paletteSum) / count, loopSeconds, count / loopSeconds, 1e3 * loopSum.palette / count,
                    1e3 * loopSum.solve / count, 1e3 * loopSum.map / count, batchSeconds, count / batchSeconds, done,
                    report.groups, group, report.solveSeconds, 1e3 * batchSum.palette / count,
                    1e3 * batchSum.map / count, loopSeconds / batchSeconds);
        std::fflush(stdout);
    }

    // The solves alone: the same palette problems, one by one vs one batched call.
    std::vector<std::unique_ptr<RecolorPipeline>> prepared;
    std::vector<UotProblem> problems;
    for (int k = 0; k < count; ++k) {
        prepared.push_back(std::make_unique<RecolorPipeline>(settings));
        prepared.back()->setSource(images[k]);
        prepared.back()->setReferencePalette(reference);
        prepared.back()->preparePalettes();
        problems.push_back(*prepared.back()->transportProblem());
    }
    const SolveOptions& o = settings.transport.options;
    auto single = createSolver("gpu-fused");
    (void)single->solve(problems[0], o);  // warm-up
    int singleIterations = 0;
    std::vector<SolveResult> singles;
    singles.reserve(problems.size());
    const auto singleStart = Clock::now();
    for (const UotProblem& p : problems) {
        singles.push_back(single->solve(p, o));
        singleIterations += singles.back().iterations;
    }
    const double singleSeconds = secondsSince(singleStart);
    auto batched = createBatchedSolver("gpu-batched");
    (void)batched->solveBatch(std::span<const UotProblem>(problems.data(), 1), o);  // warm-up
    const auto batchedStart = Clock::now();
    const std::vector<SolveResult> results = batched->solveBatch(problems, o);
    const double batchedSeconds = secondsSince(batchedStart);
    // The float64 plans (the CPU log-domain solve, same rule, to 1e-10): which of the two is off.
    SolveOptions fp64 = o;
    fp64.precision = Precision::Fp64;
    fp64.tolerance = 1e-10;
    fp64.maxIterations = 100000;
    auto fp64Solver = createSolver("log");
    int batchedIterations = 0, converged = 0, singleConverged = 0, undone = 0, singleUndone = 0;
    double worstToSingle = 0, sumToSingle = 0, worstBatched = 0, sumBatched = 0, worstSingle = 0, sumSingle = 0;
    for (std::size_t p = 0; p < results.size(); ++p) {
        batchedIterations += results[p].iterations;
        converged += results[p].converged ? 1 : 0;
        singleConverged += singles[p].converged ? 1 : 0;
        undone += results[p].rejectedSteps;
        singleUndone += singles[p].rejectedSteps;
        const double d = planRelativeL1(problems[p], results[p], singles[p]);
        worstToSingle = std::max(worstToSingle, d);
        sumToSingle += d;
        const SolveResult ref = fp64Solver->solve(problems[p], fp64);
        const double toBatched = planRelativeL1(problems[p], results[p], ref);
        const double toSingle = planRelativeL1(problems[p], singles[p], ref);
        worstBatched = std::max(worstBatched, toBatched);
        sumBatched += toBatched;
        worstSingle = std::max(worstSingle, toSingle);
        sumSingle += toSingle;
    }
    std::printf("{\"what\": \"solves\", \"problems\": %d, \"single_gpu_fused_s\": %.3f, \"single_mean_iterations\": %.1f, "
                "\"single_converged\": %d, \"single_undone\": %d, \"batched_s\": %.3f, \"batched_mean_iterations\": %.1f, "
                "\"batched_converged\": %d, \"batched_undone\": %d, \"speedup\": %.2f, "
                "\"plan_rel_l1_batched_vs_single_max\": %.2e, \"plan_rel_l1_batched_vs_single_mean\": %.2e, "
                "\"plan_rel_l1_batched_vs_fp64_max\": %.2e, \"plan_rel_l1_batched_vs_fp64_mean\": %.2e, "
                "\"plan_rel_l1_single_vs_fp64_max\": %.2e, \"plan_rel_l1_single_vs_fp64_mean\": %.2e}\n",
                count, singleSeconds, double(singleIterations) / count, singleConverged, singleUndone, batchedSeconds,
                double(batchedIterations) / count, converged, undone, singleSeconds / batchedSeconds, worstToSingle,
                sumToSingle / count, worstBatched, sumBatched / count, worstSingle, sumSingle / count);
    return 0;
}

}  // namespace

int main(int argc, char** argv)
{
    bool check = false, solvesOnly = false;
    int count = 100, width = 1024, height = 1024, workers = 0;
    std::vector<std::size_t> groups = {16};
    for (int i = 1; i < argc; ++i) {
        const std::string arg = argv[i];
        const bool hasValue = i + 1 < argc;
        if (arg == "--check")
            check = true;
        else if (arg == "--images" && hasValue)
            count = std::atoi(argv[++i]);
        else if (arg == "--size" && hasValue && std::sscanf(argv[i + 1], "%dx%d", &width, &height) == 2)
            ++i;
        else if (arg == "--group" && hasValue) {
            groups.clear();
            std::stringstream list(argv[++i]);
            std::string item;
            while (std::getline(list, item, ',')) groups.push_back(static_cast<std::size_t>(std::atoi(item.c_str())));
        }
        else if (arg == "--solves-only")
            solvesOnly = true;
        else if (arg == "--workers" && hasValue)
            workers = std::atoi(argv[++i]);
        else {
            std::fprintf(stderr, "usage: batched_bench [--check] [--images N] [--size WxH] [--group G] [--workers W] "
                                 "[--solves-only]\n");
            return 2;
        }
    }
    const bool badGroup = groups.empty() || std::find(groups.begin(), groups.end(), 0u) != groups.end();
    if (count < 1 || width < 1 || height < 1 || badGroup) {
        std::fprintf(stderr, "batched_bench: --images, --size and --group need positive values\n");
        return 2;
    }
    const std::string reason = gpu::unavailableReason();
    if (!reason.empty()) {
        std::fprintf(stderr, "batched_bench: %s\n", reason.c_str());
        return 4;
    }
    try {
        return check ? runChecks() : runBench(count, width, height, groups, workers, solvesOnly);
    } catch (const std::exception& e) {
        std::fprintf(stderr, "batched_bench: %s\n", e.what());
        return 1;
    }
}
