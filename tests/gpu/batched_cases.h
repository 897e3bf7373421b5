#pragma once
// The checks of the batched GPU solver ("gpu-batched") and of the batched
// recolor engine, shared by the Qt test (tests/gpu/test_gpu_batched.cpp) and
// the Qt-free device driver (batched_bench --check). Every batched plan is
// judged against an independent float64 CPU solve of the same problem run to
// convergence (and against the single-problem GPU solve, gpu-mapreduce), never
// against the batched solver's own output.

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "core/pipeline/batched_recolor.h"
#include "core/registry/batched_solver_registry.h"
#include "core/registry/solver_registry.h"
#include "core/transport/uot_error.h"
#include "tests/gpu/mapreduce_cases.h"

namespace uot::test {

// Converged solves: the batched one to the pipeline's tolerance, 1e-5 in the
// log-scalings (its fp32 log-domain terms carry an absolute rounding of about
// |potential| x 6e-8, which puts a floor near 1e-6 under the largest change
// between iterations at eps 0.01), the references to 1e-12.
inline SolveOptions batchedOptions()
{
    SolveOptions o = cloudOptions(Precision::Fp32, 20000, 1e-5, 10);
    o.acceleration = Acceleration::Auto;
    return o;
}

inline SolveResult convergedReference(const UotProblem& problem)
{
    SolveOptions o = cloudOptions(Precision::Fp64, 200000, 1e-12, 10);
    o.acceleration = Acceleration::Auto;
    return createSolver("log")->solve(problem, o);
}

// Problems of different sizes, dimensions (1 to 3), penalties and reference
// measures, and a palette-like one (Lab-range points, cost / 100^2, eps 0.01,
// both marginals exact), solved in one batch.
inline std::vector<CloudCase> mixedBatchCases()
{
    return {
        {"1x7 d1 tau 1", 1, 7, 1, 0.05, 1.0, 1.0, ReferenceMeasure::Ones},
        {"7x1 d3 tau 1", 7, 1, 3, 0.05, 1.0, 1.0, ReferenceMeasure::Ones},
        {"37x53 d3 tau 1", 37, 53, 3, 0.05, 1.0, 1.0, ReferenceMeasure::Ones},
        {"513x1025 d3 tauA inf tauB 0.7", 513, 1025, 3, 0.05, kInfinity, 0.7, ReferenceMeasure::Ones},
        {"300x211 d2 tau 0.5/2 product", 300, 211, 2, 0.1, 0.5, 2.0, ReferenceMeasure::Product},
        {"1000x777 d3 balanced eps 0.01", 1000, 777, 3, 0.01, kInfinity, kInfinity, ReferenceMeasure::Ones},
    };
}

// A palette-like problem: points spread over a Lab-sized box, scale 1/100^2.
struct PaletteLikeProblem {
    std::vector<double> x, y, a, b;
    UotProblem problem;
    PaletteLikeProblem(std::size_t m, std::size_t n, unsigned seed) : x(3 * m), y(3 * n), a(m), b(n)
    {
        unsigned state = seed * 2654435761u + 7u;
        auto next = [&state]() {
            state = state * 1664525u + 1013904223u;
            return (state >> 8) / double(1u << 24);
        };
        for (std::size_t i = 0; i < m; ++i) x[3 * i] = 100 * next(), x[3 * i + 1] = 160 * next() - 80, x[3 * i + 2] = 160 * next() - 80;
        for (std::size_t j = 0; j < n; ++j) y[3 * j] = 20 + 60 * next(), y[3 * j + 1] = 80 * next() - 40, y[3 * j + 2] = 80 * next() - 40;
        double sa = 0, sb = 0;
        for (double& v : a) sa += (v = 0.05 + next() * next());
        for (double& v : b) sb += (v = 0.05 + next() * next());
        for (double& v : a) v /= sa;
        for (double& v : b) v /= sb;
        problem.cost = PointCloudCost{x.data(), y.data(), m, n, 3, 1e-4};
        problem.a = a;
        problem.b = b;
        problem.eps = 0.01;
        problem.tauA = kInfinity;
        problem.tauB = kInfinity;
    }
};

// Palette-like problems of four sizes, balanced (the recolor default) and with tau = 1
// on both sides, for the checks against single solves under the same rule.
struct PaletteBatch {
    std::vector<std::unique_ptr<PaletteLikeProblem>> owned;
    std::vector<UotProblem> problems;
    std::vector<std::string> names;
    PaletteBatch()
    {
        const std::size_t sizes[][3] = {{300, 200, 1}, {500, 400, 2}, {700, 900, 11}, {1200, 1000, 3}};
        for (const double tau : {kInfinity, 1.0})
            for (const auto& size : sizes) {
                owned.push_back(std::make_unique<PaletteLikeProblem>(size[0], size[1], unsigned(size[2])));
                UotProblem problem = owned.back()->problem;
                problem.tauA = problem.tauB = tau;
                problems.push_back(problem);
                names.push_back("palette-like " + std::to_string(size[0]) + "x" + std::to_string(size[1]) + " tau " +
                                (std::isinf(tau) ? std::string("inf") : std::string("1")));
            }
    }
};

// Each batched problem follows its single solve's iterate sequence under the same
// rule (the float64 CPU solve, "log", with the same mode, acceleration, omega and
// tolerance: the shared rules of relaxed_rules.h decide both): iterations within
// 5 % + 2 of the single solve's, the same number of undone steps, passes = 2 x
// (iterations + undone), converged, and the plan within 1e-4 of the converged
// float64 plan. what: the options' name in the messages.
inline std::vector<CheckOutcome> checkAgainstSingleSolves(const SolveOptions& options, const std::string& what,
                                                          bool needsUndo)
{
    const PaletteBatch batch;
    const std::vector<SolveResult> got = createBatchedSolver("gpu-batched")->solveBatch(batch.problems, options);
    SolveOptions singleOptions = options;
    singleOptions.precision = Precision::Fp64;
    auto single = createSolver("log");
    std::vector<CheckOutcome> out;
    long long batchedTotal = 0, singleTotal = 0;
    int undone = 0;
    for (std::size_t p = 0; p < batch.problems.size(); ++p) {
        const SolveResult alone = single->solve(batch.problems[p], singleOptions);
        const SolveResult ref = convergedReference(batch.problems[p]);
        const SolveResult& r = got[p];
        batchedTotal += r.iterations;
        singleTotal += alone.iterations;
        undone += alone.rejectedSteps;
        CheckOutcome o;
        o.tolerance = 1e-4;
        o.distance = planRelativeL1(batch.problems[p], r, ref);
        const bool sameIterations = std::abs(r.iterations - alone.iterations) <= 0.05 * alone.iterations + 2;
        const bool passes = r.passes == 2 * static_cast<std::uint64_t>(r.iterations + r.rejectedSteps);
        o.ok = finiteResult(r) && r.converged && alone.converged && ref.converged && sameIterations &&
               r.rejectedSteps == alone.rejectedSteps && passes && o.distance <= o.tolerance;
        std::ostringstream msg;
        msg << what << ", " << batch.names[p] << ": batched " << r.iterations << " iterations (" << r.rejectedSteps
            << " undone, " << r.passes << " passes, omega " << r.omega << ", converged " << r.converged
            << ") vs single fp64 " << alone.iterations << " (" << alone.rejectedSteps << " undone, omega "
            << alone.omega << "), rel L1 vs fp64 plan " << o.distance;
        o.detail = msg.str();
        out.push_back(o);
    }
    CheckOutcome total;
    total.ok = std::abs(double(batchedTotal - singleTotal)) <= 0.05 * double(singleTotal) && (!needsUndo || undone > 0);
    total.detail = what + ": " + std::to_string(batchedTotal) + " batched iterations in all vs " +
                   std::to_string(singleTotal) + " for the single solves (" + std::to_string(undone) +
                   " undone steps in the single solves)";
    out.push_back(total);
    return out;
}

// The recolor engine's options (TI, auto relaxation) to 1e-6.
inline std::vector<CheckOutcome> checkIterationsOfSingleSolves()
{
    SolveOptions o = cloudOptions(Precision::Fp32, 5000, 1e-6, 10);
    o.mode = IterationMode::TranslationInvariant;
    o.acceleration = Acceleration::Auto;
    return checkAgainstSingleSolves(o, "TI + auto", false);
}

// A fixed omega of 1.95: the safeguard undoes steps that lower the dual objective
// (two in each single solve of these problems) and shrinks omega.
inline std::vector<CheckOutcome> checkSafeguardUndo()
{
    SolveOptions o = cloudOptions(Precision::Fp32, 5000, 1e-6, 10);
    o.mode = IterationMode::TranslationInvariant;
    o.acceleration = Acceleration::Relax;
    o.omega = 1.95;
    return checkAgainstSingleSolves(o, "TI + relax 1.95", true);
}

// One batch of mixed problems: each plan against the converged float64 CPU plan
// and against the converged single-problem GPU plan (gpu-mapreduce), 1e-4 rel. L1.
inline std::vector<CheckOutcome> checkMixedBatch()
{
    std::vector<std::unique_ptr<CloudProblem>> clouds;
    for (const CloudCase& c : mixedBatchCases()) clouds.push_back(std::make_unique<CloudProblem>(c));
    PaletteLikeProblem palette(1500, 1200, 3);
    std::vector<UotProblem> problems;
    for (const auto& c : clouds) problems.push_back(c->problem);
    problems.push_back(palette.problem);
    const std::vector<SolveResult> got = createBatchedSolver("gpu-batched")->solveBatch(problems, batchedOptions());
    std::vector<CheckOutcome> out;
    auto single = createSolver("gpu-mapreduce");
    SolveOptions singleOptions = cloudOptions(Precision::Fp32, 200000, 1e-7, 10);
    singleOptions.acceleration = Acceleration::Auto;
    for (std::size_t p = 0; p < problems.size(); ++p) {
        const std::string name = p < clouds.size() ? mixedBatchCases()[p].name : "palette-like 1500x1200 eps 0.01";
        const SolveResult ref = convergedReference(problems[p]);
        const SolveResult alone = single->solve(problems[p], singleOptions);
        CheckOutcome o;
        o.tolerance = 1e-4;
        o.distance = planRelativeL1(problems[p], got[p], ref);
        const double toSingle = planRelativeL1(problems[p], got[p], alone);
        const double singleToRef = planRelativeL1(problems[p], alone, ref);
        o.ok = finiteResult(got[p]) && got[p].converged && ref.converged && o.distance <= o.tolerance &&
               toSingle <= o.tolerance;
        std::ostringstream msg;
        msg << "batch of " << problems.size() << ", " << name << ": rel L1 vs fp64 CPU " << o.distance
            << ", vs single GPU solve " << toSingle << " (single vs fp64 " << singleToRef << "), iterations "
            << got[p].iterations << " (omega " << got[p].omega << ", converged " << got[p].converged << "), fp64 "
            << ref.iterations << " (converged " << ref.converged << ")";
        o.detail = msg.str();
        out.push_back(o);
    }
    return out;
}

// The translation-invariant mode (--mode ti) on the unbalanced problems of the
// mixed batch, over-relaxed or not: each plan within 1e-4 of the converged
// float64 CPU plan, reported in TI mode, and the batch in fewer iterations in
// all than the plain mode with the same acceleration.
inline std::vector<CheckOutcome> checkTranslationInvariantBatch()
{
    std::vector<std::unique_ptr<CloudProblem>> clouds;
    std::vector<std::string> names;
    for (const CloudCase& c : mixedBatchCases()) {
        if (std::isinf(c.tauA) && std::isinf(c.tauB)) continue;  // balanced: TI is the plain step
        clouds.push_back(std::make_unique<CloudProblem>(c));
        names.push_back(c.name);
    }
    std::vector<UotProblem> problems;
    for (const auto& c : clouds) problems.push_back(c->problem);
    std::vector<CheckOutcome> out;
    auto solver = createBatchedSolver("gpu-batched");
    for (const Acceleration acceleration : {Acceleration::None, Acceleration::Auto}) {
        SolveOptions o = batchedOptions();
        o.acceleration = acceleration;
        o.mode = IterationMode::Plain;
        const std::vector<SolveResult> plain = solver->solveBatch(problems, o);
        o.mode = IterationMode::TranslationInvariant;
        const std::vector<SolveResult> got = solver->solveBatch(problems, o);
        int plainTotal = 0, tiTotal = 0;
        for (std::size_t p = 0; p < problems.size(); ++p) {
            plainTotal += plain[p].iterations;
            tiTotal += got[p].iterations;
            const SolveResult ref = convergedReference(problems[p]);
            CheckOutcome c;
            c.tolerance = 1e-4;
            c.distance = planRelativeL1(problems[p], got[p], ref);
            c.ok = finiteResult(got[p]) && got[p].converged && ref.converged && c.distance <= c.tolerance &&
                   got[p].mode == "translation-invariant";
            std::ostringstream msg;
            msg << "TI batch, accel " << toString(acceleration) << ", " << names[p] << ": rel L1 vs fp64 CPU "
                << c.distance << ", mode " << got[p].mode << ", iterations " << got[p].iterations << " (plain "
                << plain[p].iterations << "), converged " << got[p].converged;
            c.detail = msg.str();
            out.push_back(c);
        }
        CheckOutcome total;
        total.ok = tiTotal < plainTotal;
        total.detail = "TI batch, accel " + toString(acceleration) + ": " + std::to_string(tiTotal) +
                       " iterations in all vs " + std::to_string(plainTotal) + " in plain mode";
        out.push_back(total);
    }
    return out;
}

// An empty batch gives no results; a one-element batch equals the fp64 plan.
inline std::vector<CheckOutcome> checkEmptyAndSingle()
{
    std::vector<CheckOutcome> out;
    auto solver = createBatchedSolver("gpu-batched");
    CheckOutcome empty;
    empty.ok = solver->solveBatch({}, batchedOptions()).empty();
    empty.detail = "empty batch: no results";
    out.push_back(empty);
    PaletteLikeProblem palette(700, 900, 11);
    const std::vector<UotProblem> one{palette.problem};
    const std::vector<SolveResult> got = solver->solveBatch(one, batchedOptions());
    CheckOutcome single;
    single.tolerance = 1e-4;
    if (got.size() == 1) {
        const SolveResult ref = convergedReference(palette.problem);
        single.distance = planRelativeL1(palette.problem, got[0], ref);
        single.ok = finiteResult(got[0]) && got[0].converged && single.distance <= single.tolerance;
    }
    std::ostringstream msg;
    msg << "one-element batch (palette-like 700x900): " << got.size() << " result(s), rel L1 vs fp64 " << single.distance;
    single.detail = msg.str();
    out.push_back(single);
    return out;
}

// Cancellation: a flag set before the call stops every problem at once; a flag
// set from another thread during a long batch stops it, every result marked.
inline std::vector<CheckOutcome> checkCancellation()
{
    std::vector<CheckOutcome> out;
    std::vector<std::unique_ptr<PaletteLikeProblem>> owned;
    std::vector<UotProblem> problems;
    for (unsigned k = 0; k < 16; ++k) {
        owned.push_back(std::make_unique<PaletteLikeProblem>(2048, 2048, 100 + k));
        problems.push_back(owned.back()->problem);
    }
    SolveOptions endless = batchedOptions();
    endless.tolerance = 0;  // runs to the cap unless cancelled
    endless.maxIterations = 1000000;
    auto solver = createBatchedSolver("gpu-batched");
    {
        std::atomic<bool> cancel{true};
        SolveControl control;
        control.cancel = &cancel;
        const std::vector<SolveResult> got = solver->solveBatch(problems, endless, control);
        CheckOutcome o;
        o.ok = got.size() == problems.size();
        for (const SolveResult& r : got) o.ok = o.ok && r.cancelled && r.iterations == 0;
        o.detail = "cancelled before the start: every result cancelled after 0 iterations";
        out.push_back(o);
    }
    {
        std::atomic<bool> cancel{false};
        SolveControl control;
        control.cancel = &cancel;
        std::thread canceller([&cancel] {
            std::this_thread::sleep_for(std::chrono::milliseconds(200));
            cancel = true;
        });
        const std::vector<SolveResult> got = solver->solveBatch(problems, endless, control);
        canceller.join();
        CheckOutcome o;
        o.ok = got.size() == problems.size();
        int iterations = 0;
        for (const SolveResult& r : got) {
            o.ok = o.ok && r.cancelled && r.iterations < endless.maxIterations && finiteResult(r);
            iterations = r.iterations;
        }
        o.detail = "cancelled during the solve: every result cancelled, finite, after " + std::to_string(iterations) +
                   " of 1000000 iterations";
        out.push_back(o);
    }
    return out;
}

// A problem the batched solver does not take fails the call with a message naming it.
inline CheckOutcome checkRejectsDenseCost()
{
    PaletteLikeProblem palette(10, 12, 5);
    std::vector<double> cost(10 * 12, 0.5);
    UotProblem dense = palette.problem;
    dense.cost = DenseCost{nullptr, cost.data(), 10, 12};
    const std::vector<UotProblem> problems{palette.problem, dense};
    CheckOutcome o;
    try {
        createBatchedSolver("gpu-batched")->solveBatch(problems, batchedOptions());
        o.detail = "a dense cost was accepted";
    } catch (const Error& e) {
        const std::string what = e.what();
        o.ok = e.code() == ErrorCode::InvalidArgument && what.find("problem 1") != std::string::npos;
        o.detail = "dense cost rejected: " + what;
    }
    return o;
}

// Deterministic synthetic photo-like images (smooth colour fields with grain),
// so that the engine can run without image files (the GPU machine has no OpenCV).
inline Image syntheticImage(int width, int height, unsigned seed)
{
    Image image = Image::allocate(width, height, 3, 8);
    const double phase = 0.7 * seed, fx = 3.0 + (seed % 5), fy = 2.0 + (seed % 3);
    unsigned state = seed * 747796405u + 2891336453u;
    for (int y = 0; y < height; ++y)
        for (int x = 0; x < width; ++x) {
            const double u = double(x) / width, v = double(y) / height;
            state = state * 1664525u + 1013904223u;
            const double grain = ((state >> 8) & 31) - 15.5;
            const double rgb[3] = {128 + 90 * std::sin(fx * u + phase) * std::cos(fy * v),
                                   128 + 80 * std::sin(fy * v + 2 * phase + u),
                                   110 + 90 * std::cos(fx * (u - v) + 3 * phase)};
            for (int c = 0; c < 3; ++c)
                image.data[(std::size_t(y) * width + x) * 3 + c] =
                    static_cast<std::uint8_t>(std::clamp(rgb[c] + grain, 0.0, 255.0));
        }
    return image;
}

// The engine's settings for a GPU batch: gpu-fused per image (the mapping on
// the GPU), translation-invariant mode and automatic relaxation, as `uot batch
// --device gpu` sets them.
inline RecolorSettings gpuBatchSettings()
{
    RecolorSettings s;
    s.transport.solver = "gpu-fused";
    s.transport.options.mode = IterationMode::TranslationInvariant;
    s.transport.options.acceleration = Acceleration::Auto;
    return s;
}

// The batched engine against the per-image GPU loop on the same images: the
// recoloured pixels agree (mean |difference| <= 0.5 of 255, max <= 8), and a
// cancelled engine marks the rest cancelled.
inline std::vector<CheckOutcome> checkEngine()
{
    std::vector<CheckOutcome> out;
    const int count = 6;
    std::vector<Image> sources;
    for (int k = 0; k < count; ++k) sources.push_back(syntheticImage(320 + 16 * k, 240, 20 + k));
    const RecolorSettings settings = gpuBatchSettings();
    const auto reference = computePalette(syntheticImage(300, 200, 99), settings);
    std::vector<Image> batched(count);
    BatchedRecolorJob job;
    job.count = count;
    job.load = [&](std::size_t k) { return sources[k]; };
    job.store = [&](std::size_t k, const Image& result) { batched[k] = result; };
    BatchedRecolorOptions options;
    options.batchedSolver = "gpu-batched";
    options.groupSize = 4;  // two groups: 4 + 2
    const BatchedRecolorReport report = runBatchedRecolor(reference, settings, job, options);
    RecolorPipeline alone(settings);
    double worstMean = 0;
    int worstMax = 0;
    bool allDone = true;
    for (int k = 0; k < count; ++k) {
        allDone = allDone && report.items[k].status == BatchedItemStatus::Done;
        alone.setSource(sources[k]);
        alone.setReferencePalette(reference);
        const Image single = alone.run();
        if (batched[k].data.size() != single.data.size()) {
            allDone = false;
            continue;
        }
        double sum = 0;
        int most = 0;
        for (std::size_t i = 0; i < single.data.size(); ++i) {
            const int d = std::abs(int(batched[k].data[i]) - int(single.data[i]));
            sum += d;
            most = std::max(most, d);
        }
        worstMean = std::max(worstMean, sum / double(single.data.size()));
        worstMax = std::max(worstMax, most);
    }
    CheckOutcome same;
    same.ok = allDone && report.groups == 2 && worstMean <= 0.5 && worstMax <= 8;
    same.distance = worstMean;
    same.tolerance = 0.5;
    std::ostringstream msg;
    msg << "engine: " << count << " images in " << report.groups << " batched calls vs the per-image GPU loop: worst mean |diff| "
        << worstMean << ", worst max |diff| " << worstMax << " (of 255)";
    same.detail = msg.str();
    out.push_back(same);

    std::atomic<bool> cancel{false};
    BatchedRecolorControl control;
    control.cancel = &cancel;
    std::size_t finished = 0;
    control.onFinished = [&](std::size_t, const BatchedItemOutcome&) {
        if (++finished == 1) cancel = true;
    };
    BatchedRecolorOptions serial = options;
    serial.workers = 1;  // one image at a time: the flag lands while most are still to do
    serial.groupSize = 2;
    const BatchedRecolorReport stopped = runBatchedRecolor(reference, settings, job, serial, control);
    std::size_t cancelled = 0;
    for (const BatchedItemOutcome& o : stopped.items) cancelled += o.status == BatchedItemStatus::Cancelled ? 1 : 0;
    CheckOutcome c;
    c.ok = stopped.items.size() == std::size_t(count) && cancelled >= 1 && finished == std::size_t(count);
    c.detail = "engine cancelled after the first finished image: " + std::to_string(cancelled) + " of " +
               std::to_string(count) + " cancelled, every image reported";
    out.push_back(c);
    return out;
}

}  // namespace uot::test
