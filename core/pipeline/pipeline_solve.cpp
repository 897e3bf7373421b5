// The solve stage of RecolorPipeline: the UOT problem between the palettes,
// warm-started from the previous plan or a coarse multiscale solve, on the
// requested device with a CPU fallback, matrix-free when the matrix would not fit.
#include "core/pipeline/recolor_pipeline.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <map>
#include <vector>

#include "core/pipeline/pipeline_state.h"
#include "core/transport/kernel_matrix.h"
#include "core/transport/point_cloud_cost.h"
#include "core/transport/uot_error.h"

namespace uot {

using namespace pipeline_detail;

namespace {

// Weighted grid reduction of a palette to at most `size` points (the finest
// grid over its bounding box that fits), for the coarse solve.
Palette reducePalette(const Palette& fine, int size)
{
    double lo[3] = {1e300, 1e300, 1e300}, hi[3] = {-1e300, -1e300, -1e300};
    for (std::size_t i = 0; i < fine.size(); ++i)
        for (int a = 0; a < 3; ++a) lo[a] = std::min(lo[a], fine.points[3 * i + a]), hi[a] = std::max(hi[a], fine.points[3 * i + a]);
    // Start near the size that fits (cube root of the target, doubled: palettes fill a
    // fraction of their box) and coarsen until it does.
    const int start = std::min(64, 2 * static_cast<int>(std::ceil(std::cbrt(static_cast<double>(size)))) + 2);
    for (int bins = start; bins >= 1; --bins) {
        std::map<std::size_t, std::array<double, 4>> cells;
        for (std::size_t i = 0; i < fine.size(); ++i) {
            std::size_t key = 0;
            for (int a = 0; a < 3; ++a) {
                const double span = hi[a] - lo[a];
                const int q = span > 0 ? std::min(bins - 1, static_cast<int>((fine.points[3 * i + a] - lo[a]) / span * bins)) : 0;
                key = key * static_cast<std::size_t>(bins) + static_cast<std::size_t>(q);
            }
            auto& c = cells[key];
            const double w = fine.weights[i];
            c[0] += w;
            for (int a = 0; a < 3; ++a) c[1 + a] += w * fine.points[3 * i + a];
        }
        if (cells.size() > static_cast<std::size_t>(size) && bins > 1) continue;
        Palette coarse;
        coarse.space = fine.space;
        for (const auto& [key, c] : cells) {
            coarse.weights.push_back(c[0]);
            for (int a = 0; a < 3; ++a) coarse.points.push_back(c[1 + a] / c[0]);
        }
        return coarse;
    }
    return fine;
}

// Threads of the coarse solve of the multiscale warm start.
constexpr int kCoarseSolveThreads = 4;

}  // namespace

// Multiscale warm start: solves the problem between coarse reductions of the two
// palettes, then carries the coarse source scalings to the fine reference points
// through one exact v-update: v_j = (b_j / sum_c u_c exp(-C(x_c, y_j) / eps))^f_b,
// computed in the log domain. Returns an empty vector when it cannot help.
std::vector<double> RecolorPipeline::coarseWarmStart(State& s, UotSolver& solver, const SolveOptions& fineOptions,
                                                     const PipelineControl& control)
{
    const TransportSettings& ts = s.settings.transport;
    const Palette coarseSource = reducePalette(*s.sourcePalette, ts.coarseSize);
    const Palette coarseReference = reducePalette(*s.referencePalette, ts.coarseSize);
    const auto* fineCost = std::get_if<PointCloudCost>(&s.problem.cost);
    if (!fineCost) return {};
    UotProblem coarse = s.problem;
    PointCloudCost cost = *fineCost;
    cost.x = coarseSource.points.data();
    cost.y = coarseReference.points.data();
    cost.rows = coarseSource.size();
    cost.cols = coarseReference.size();
    coarse.cost = cost;
    coarse.a = coarseSource.weights;
    coarse.b = coarseReference.weights;
    SolveOptions options = fineOptions;
    options.warmU = {};
    options.warmV = {};
    options.evaluateFinalPlan = false;
    // A few threads are plenty for a <= 512^2 problem, and fewer threads than
    // cores keep the barriers of the 50 iterations from waiting on a thread that
    // the render's prefetch thread (or anything else) pushed off its core.
    options.threads = std::min(kCoarseSolveThreads, resolveThreadCount(fineOptions.threads));
    SolveControl sc;
    sc.cancel = control.cancel;
    const SolveResult r = solver.solve(coarse, options, sc);
    if (r.cancelled) throw Cancelled();
    if (r.status == NumericalStatus::NotFinite || r.status == NumericalStatus::Underflow) return {};
    const std::size_t cols = s.problem.cols(), rows = coarseSource.size();
    const double fb = s.problem.exponentB();
    const double* y = fineCost->y;
    std::vector<double> v(cols);
    bool finite = true;
    const int threads = resolveThreadCount(s.settings.threads);
#pragma omp parallel for num_threads(threads) schedule(static) reduction(&& : finite)
    for (std::size_t j = 0; j < cols; ++j) {
        double best = -std::numeric_limits<double>::infinity();
        std::vector<double> e(rows);
        for (std::size_t c = 0; c < rows; ++c) {
            double d = 0;
            for (int a = 0; a < 3; ++a) d += (coarseSource.points[3 * c + a] - y[3 * j + a]) * (coarseSource.points[3 * c + a] - y[3 * j + a]);
            e[c] = r.logU[c] - cost.scale * d / s.problem.eps;
            best = std::max(best, e[c]);
        }
        double sum = 0;
        for (std::size_t c = 0; c < rows; ++c) sum += std::exp(e[c] - best);
        const double logKu = best + std::log(sum);
        v[j] = std::exp(fb * (std::log(s.problem.b[j]) - logKu));
        finite = finite && std::isfinite(v[j]) && v[j] > 0;
    }
    if (!finite) return {};
    return v;
}

void RecolorPipeline::solve(const PipelineControl& control)
{
    preparePalettes(control);
    solvePrepared(control);
}

void RecolorPipeline::solvePrepared(const PipelineControl& control)
{
    State& s = *m_state;
    const TransportSettings& ts = s.settings.transport;
    if (s.plan && s.planSettings == ts) {  // every transport setting is part of the key
        s.stats.planFromCache = true;
        return;
    }
    checkCancel(control);
    const auto start = Clock::now();
    s.problem.eps = ts.eps;
    s.problem.tauA = ts.sourceAdherence;
    s.problem.tauB = ts.adherence;
    s.problem.reference = ts.reference;
    validateProblem(s.problem);

    // A gpu-* solver runs on the GPU when one is usable; otherwise, or when the
    // GPU fails, the same variant on the CPU (with a note in the stats).
    std::string solverName = ts.solver;
    s.solveNote.clear();
    const bool wantGpu = runsOnGpu(ts.solver);
    if (wantGpu) {
        const std::string reason = gpuUnavailableReason();
        if (!reason.empty()) {
            solverName = cpuFallbackSolver(ts.solver);
            s.solveNote = "GPU unavailable (" + reason + "): solved on the CPU with '" + solverName + "'";
        }
    }
    // A solve whose palette matrix would not fit in its device's memory (or, for
    // the device's default variant, is past the measured crossover) runs matrix-free.
    const DeviceKind solveDevice = runsOnGpu(solverName) ? DeviceKind::Gpu : DeviceKind::Cpu;
    if (const std::optional<std::string> matrixFree =
            matrixFreeInstead(solverName, s.problem.rows(), s.problem.cols(), ts.options.precision,
                              memoryForMatrix(solveDevice, ts.options.device))) {
        addNote(s.solveNote, "the " + std::to_string(s.problem.rows()) + " x " + std::to_string(s.problem.cols()) +
                                 " palette matrix is solved matrix-free with '" + *matrixFree + "' instead of '" +
                                 solverName + "' (it would not fit in memory, or it is faster at this size)");
        solverName = *matrixFree;
    }
    SolveOptions baseOptions = ts.options;
    if (baseOptions.threads == 0) baseOptions.threads = s.settings.threads;
    const auto runSolve = [&](const std::string& name) {
        auto& solver = s.solvers[name];
        if (!solver) solver = createSolver(name);
        SolveOptions options = baseOptions;
        // Warm start from the previous plan of the same palettes (new eps / tau / iterations).
        std::vector<double> warmU, warmV;
        if (s.plan && s.plan->logU.size() == s.problem.rows() && s.plan->logV.size() == s.problem.cols()) {
            warmU = s.plan->u();
            warmV = s.plan->v();
            const auto finite = [](const std::vector<double>& v) {
                return std::all_of(v.begin(), v.end(), [](double x) { return std::isfinite(x) && x > 0; });
            };
            if (finite(warmU) && finite(warmV)) {
                options.warmU = warmU;
                options.warmV = warmV;
            }
        } else {
            options.warmU = {};
            options.warmV = {};
            if (ts.multiscale && s.problem.reference == ReferenceMeasure::Ones &&
                s.problem.rows() > 2 * static_cast<std::size_t>(ts.coarseSize) &&
                s.problem.cols() > 2 * static_cast<std::size_t>(ts.coarseSize)) {
                // The coarse solve is small: on the CPU even for a GPU solve, where
                // another problem size would cost the device solver a re-allocation
                // and new CUDA graphs (and it would lose the fine size's buffers).
                auto& coarseSolver = runsOnGpu(name) ? s.solvers[cpuFallbackSolver(name)] : solver;
                if (!coarseSolver) coarseSolver = createSolver(cpuFallbackSolver(name));
                warmV = coarseWarmStart(s, *coarseSolver, options, control);
                if (!warmV.empty()) options.warmV = warmV;
            }
        }
        SolveControl sc;
        sc.cancel = control.cancel;
        if (control.onProgress) {
            const int maxIter = options.maxIterations;
            sc.onProgress = [&control, maxIter](const SolveProgress& p) {
                PipelineProgress pp;
                pp.stage = PipelineStage::Solve;
                pp.fraction = std::min(1.0, static_cast<double>(p.iteration) / maxIter);
                pp.solve = &p;
                control.onProgress(pp);
            };
        }
        report(control, PipelineStage::Solve, 0.0);
        return solver->solve(s.problem, options, sc);
    };
    SolveResult result;
    try {
        result = runSolve(solverName);
    } catch (const Error& e) {
        if (!runsOnGpu(solverName) ||
            (e.code() != ErrorCode::Unavailable && e.code() != ErrorCode::Device && e.code() != ErrorCode::OutOfMemory))
            throw;
        const std::string fallback = cpuFallbackSolver(solverName);
        addNote(s.solveNote, std::string("the GPU solve failed (") + e.what() + "): solved on the CPU with '" + fallback + "'");
        solverName = fallback;
        result = runSolve(solverName);
    }
    if (result.cancelled) throw Cancelled();
    s.stats.solvedOnGpu = runsOnGpu(solverName);
    s.stats.gpuNote = s.solveNote;
    s.dropFromPlan();
    s.plan = std::move(result);
    s.planSettings = ts;
    s.stats.solve = s.plan;
    s.stats.planFromCache = false;
    s.stats.timings.solve = secondsSince(start);
    report(control, PipelineStage::Solve, 1.0);
}

void RecolorPipeline::adoptPlan(SolveResult plan, double solveSeconds)
{
    State& s = *m_state;
    if (!s.problemValid) throw Error(ErrorCode::InvalidArgument, "adoptPlan: call preparePalettes() first");
    if (plan.logU.size() != s.problem.rows() || plan.logV.size() != s.problem.cols())
        throw Error(ErrorCode::InvalidArgument, "adoptPlan: the plan is " + std::to_string(plan.logU.size()) + " x " +
                                                    std::to_string(plan.logV.size()) + ", the palettes " +
                                                    std::to_string(s.problem.rows()) + " x " +
                                                    std::to_string(s.problem.cols()));
    const TransportSettings& ts = s.settings.transport;
    s.problem.eps = ts.eps;  // the mapping reads the problem's parameters
    s.problem.tauA = ts.sourceAdherence;
    s.problem.tauB = ts.adherence;
    s.problem.reference = ts.reference;
    s.solveNote.clear();
    s.stats.solvedOnGpu = runsOnGpu(ts.solver);
    s.stats.gpuNote.clear();
    s.dropFromPlan();
    s.plan = std::move(plan);
    s.planSettings = ts;
    s.stats.solve = s.plan;
    s.stats.planFromCache = false;
    s.stats.timings.solve = solveSeconds;
}

}  // namespace uot
