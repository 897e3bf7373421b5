// gpu_bench: time per iteration of the GPU variants against the device's own
// bandwidth measured in the same run. Prints one JSON object per case (same
// field names as `uot bench`) and a table at the end.
//
//   gpu_bench [--sizes 1024x1024,4096x4096] [--solvers gpu-fused,gpu-mapuot]
//             [--precision fp32|fp64] [--repeats 3] [--tune] [--atomics]
//   --accuracy MxN[,MxN] (instead of timings): the plan relative L1 error of
//   gpu-fused-bf16 and gpu-fused fp32 against gpu-fused fp64 (and bf16 against
//   fp32) on the benchmark problem of that size, each after the same 400
//   iterations (converged: fp64 meets tolerance 1e-9 after 160), so the
//   differences are precision, not stopping points.
//   --mode plain|ti: the iteration mode of the timed cases (ti: translation-invariant).
//   --accel none|relax|auto: over-relaxation in the timed cases (the iteration with its
//   step kernels).
//   --to-solution MxN[,MxN] (instead of timings): for gpu-fused (or each of --solvers),
//   plain, ti, plain+accel and ti+accel (over-relaxation, automatic omega) side by
//   side: passes over K until the plan is within 1e-6 relative L1 of the converged
//   float64 plan (plain gpu-fused fp64), in fp64 and fp32 (the smallest from-scratch
//   solve that reaches it), the device time of that fp32 solve, and an fp32 solve
//   to tolerance 1e-5 by the solver's own criterion; then the ratios.
//   --eps X and --tau X set the problem (0.01 and 1 by default).
//   --setup N[,N] and --to-plan N[,N] (instead of timings): N random 3-D points each
//   side (palette-like, uniform masses, tau 1). --setup: the set-up alone (no iterations), fp32 and fp64,
//   for the cost built on the device from the points and for the dense cost given
//   as a host matrix, uploaded the old way (pageable, no overlap) and the new way
//   (page-locked, overlapped with the build); each with a fresh device context
//   ("cold": the backend's cache emptied first) and with the parked one ("warm":
//   a new solver object, as the studio's next solve). --to-plan: for eps 0.01 and
//   0.003 (or --eps), fp32 and fp64, TI + over-relaxation: the fewest iterations
//   whose plan is within 1e-6 relative L1 of the converged float64 plan, and the
//   wall time of that solve from host arrays to the plan (cold and warm), split
//   into set-up and iterations.
//   --atomics adds gpu-fused[atomic] (column partials atomically into one row) and
//   gpu-fused[no-pdl] (without programmatic dependent launch) for comparison.
//   Any GPU solver name may carry '/'-separated tuning options in brackets:
//   atomic, no-pdl, uneven (Tuning::fusedEvenGroups = false), no-cluster (Tuning::clusterIterations =
//   false: the accelerated iteration through the CUDA graph even where the matrix fits one
//   cluster), cluster (the default: one cluster launch where it fits), step-kernels
//   (Tuning::stepInColumns = false: the column finalize, then the step's two kernels), cN (Tuning::fusedCluster = N),
//   fN (Tuning::finalizeLanes = N),
//   e.g. --solvers gpu-fused,gpu-fused[c1/f8],gpu-fused[c4].
//   --cluster-phases N[,N] [--eps X] [--iterations K] (instead of timings): one cluster launch of K
//   accelerated iterations (TI + automatic omega, N random 3-D points a side, tau 1; fp32 and
//   fp64), its time per iteration and the share of each phase in block 0's clock cycles, and
//   the same launch's plain iterations (time, cycles, gap to float64: plain_*)
//   (tests/gpu/cluster_phase_bench.h).
//   --mapreduce MxN[,MxN] [--mr-configs p0f1s0,p0f1s2,..] [--mr-no-fused], --mapreduce-large MxN [--iterations K],
//   --check-mapreduce: gpu-mapreduce's timings against the exp2 probe (per kernel
//   configuration, gpu/mapreduce_config.h), one solve at a large size, and its checks
//   against the float64 CPU solvers (tests/gpu/mapreduce_bench.h); --mr-config sets the
//   configuration that "gpu-mapreduce" (checks, large solve) uses.
//
// ms_per_iter is device time from CUDA events around the iteration loop
// (result.timings.iterateSeconds / iterations), the median of the repeats,
// after a warm-up solve of the same case (graphs captured, buffers allocated).
// Exit 4 when no GPU is usable.

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "core/registry/solver_registry.h"
#include "core/transport/kernel_matrix.h"
#include "core/transport/uot_error.h"
#include "gpu/gpu_backend.h"
#include "tests/gpu/mapreduce_bench.h"
#if UOT_GPU_BENCH_CLUSTER_PHASES
#include "tests/gpu/cluster_phase_bench.h"
#endif
#include "tests/gpu/plan_distance.h"
#include "tests/support/passes_to_target.h"

using namespace uot;
using uot::test::planRelativeL1;

namespace {

std::vector<std::string> split(const std::string& text, char sep)
{
    std::vector<std::string> out;
    std::size_t start = 0;
    while (start <= text.size()) {
        const std::size_t end = text.find(sep, start);
        const std::string item = text.substr(start, end == std::string::npos ? std::string::npos : end - start);
        if (!item.empty()) out.push_back(item);
        if (end == std::string::npos) break;
        start = end + 1;
    }
    return out;
}

// The benchmark problem: a smooth squared-distance cost with a little noise.
struct BenchProblem {
    std::vector<float> cost;
    std::vector<double> a, b;
    UotProblem problem;
    BenchProblem(std::size_t m, std::size_t n) : cost(m * n), a(m), b(n)
    {
        for (std::size_t i = 0; i < m; ++i) a[i] = (1.0 + 0.5 * std::sin(0.1 * i)) / m;
        for (std::size_t j = 0; j < n; ++j) b[j] = (1.0 + 0.5 * std::cos(0.07 * j)) * 1.3 / n;
        for (std::size_t i = 0; i < m; ++i)
            for (std::size_t j = 0; j < n; ++j) {
                const double d = double(i) / m - double(j) / n;
                cost[i * n + j] = static_cast<float>(d * d + 1e-4 * double((i * 7919 + j * 104729) % 1000));
            }
        problem.cost = DenseCost{cost.data(), nullptr, m, n};
        problem.a = a;
        problem.b = b;
        problem.eps = 0.05;
        problem.tauA = problem.tauB = 1.0;
    }
};


// --accuracy: bf16 and fp32 against fp64, the same 400 iterations each.
void runAccuracy(const std::string& sizes)
{
    for (const std::string& size : split(sizes, ',')) {
        const auto dims = split(size, 'x');
        const std::size_t m = std::stoull(dims.at(0)), n = std::stoull(dims.at(1));
        const BenchProblem bp(m, n);
        auto solve = [&](const char* name, Precision precision) {
            SolveOptions o;
            o.precision = precision;
            o.maxIterations = 400;
            o.tolerance = 0;
            o.checkEvery = 400;
            o.evaluateFinalPlan = false;
            return createSolver(name)->solve(bp.problem, o);
        };
        const SolveResult f64 = solve("gpu-fused", Precision::Fp64);
        const SolveResult f32 = solve("gpu-fused", Precision::Fp32);
        const SolveResult bf = solve("gpu-fused-bf16", Precision::Fp32);
        const double bfVs64 = planRelativeL1(bp.problem, bf, f64), f32Vs64 = planRelativeL1(bp.problem, f32, f64),
                     bfVs32 = planRelativeL1(bp.problem, bf, f32);
        std::printf("{\"accuracy\": \"plan_rel_l1\", \"m\": %zu, \"n\": %zu, \"eps\": %.3g, \"tau\": 1, "
                    "\"iterations_fp64\": %d, \"iterations_fp32\": %d, \"iterations_bf16\": %d, "
                    "\"stopping_error_bf16\": %.2e, \"bf16_vs_fp64\": %.4e, \"fp32_vs_fp64\": %.4e, "
                    "\"bf16_vs_fp32\": %.4e, \"peak_device_mb_bf16\": %.1f, \"peak_device_mb_fp32\": %.1f}\n",
                    m, n, bp.problem.eps, f64.iterations, f32.iterations, bf.iterations,
                    bf.error, bfVs64, f32Vs64, bfVs32, bf.peakDeviceBytes / 1048576.0,
                    f32.peakDeviceBytes / 1048576.0);
        std::fflush(stdout);
    }
}

// --counters: CUPTI's DRAM bytes per iteration against the traffic model for each
// solver and size (reads + writes, since the model counts both). The model is a
// DRAM figure only when K does not fit in L2: sizes whose matrix is at least
// twice the L2 must be within 10% of the model, or the run exits 1; smaller
// ones are reported (their L2 hit rate says how much the cache served).
int runCounters(const std::string& sizes, const std::string& solvers)
{
    int failures = 0;
    const double l2Bytes = double(gpu::listDevices().at(0).l2CacheBytes);
    for (const std::string& size : split(sizes, ',')) {
        const auto dims = split(size, 'x');
        const std::size_t m = std::stoull(dims.at(0)), n = std::stoull(dims.at(1));
        const BenchProblem bp(m, n);
        for (const std::string& name : split(solvers, ',')) {
            SolveOptions o;
            o.precision = Precision::Fp32;
            o.maxIterations = 60;
            o.tolerance = 0;
            o.checkEvery = 20;
            o.evaluateFinalPlan = false;
            o.sampleHardwareCounters = true;
            const SolveResult r = createSolver(name)->solve(bp.problem, o);
            const HardwareCounters& c = r.counters;
            const double model = double(r.bytesPerIteration);
            const double moved = c.dramReadBytesPerIteration + c.dramWriteBytesPerIteration;
            const double matrixBytes = model / solverCapabilities(name)->matrixSweepsPerIteration;
            const bool enforced = matrixBytes >= 2 * l2Bytes;
            const double ratio = c.sampled ? moved / model : 0.0;
            const bool ok = c.sampled && std::abs(ratio - 1.0) <= 0.10;
            if (enforced && !ok) ++failures;
            std::printf("{\"counters\": \"%s\", \"m\": %zu, \"n\": %zu, \"sampled\": %s, \"passes\": %d, "
                        "\"dram_read_mb_per_iter\": %.3f, \"dram_write_mb_per_iter\": %.3f, \"model_mb_per_iter\": %.3f, "
                        "\"dram_vs_model\": %.4f, \"l2_hit_rate\": %.4f, \"l1_hit_rate\": %.4f, "
                        "\"matrix_vs_l2\": %.2f, \"enforced\": %s, \"ok\": %s, \"note\": \"%s\"}\n",
                        name.c_str(), m, n, c.sampled ? "true" : "false", c.passes, c.dramReadBytesPerIteration / 1e6,
                        c.dramWriteBytesPerIteration / 1e6, model / 1e6, ratio, c.l2HitRate, c.l1HitRate,
                        matrixBytes / l2Bytes, enforced ? "true" : "false", ok ? "true" : "false", c.note.c_str());
            std::fflush(stdout);
        }
    }
    return failures == 0 ? 0 : 1;
}

// --to-solution: plain, translation-invariant and over-relaxed (automatic omega)
// iterations of one solver side by side: passes over K until the plan is within
// 1e-6 (relative L1) of the converged float64 plan, in fp64 and fp32, the device
// time of that fp32 solve, and an fp32 solve to tolerance 1e-5 by the solver's own
// criterion (POT's rule without acceleration, docs/TIME_TO_SOLUTION.md's with it).
void runToSolution(const std::string& sizes, double eps, double tau, const std::string& solverName)
{
    constexpr double kTarget = 1e-6;
    struct Mode {
        const char* name;
        IterationMode mode;
        Acceleration acceleration;
    };
    const Mode modes[] = {{"plain", IterationMode::Plain, Acceleration::None},
                          {"ti", IterationMode::TranslationInvariant, Acceleration::None},
                          {"plain+accel", IterationMode::Plain, Acceleration::Auto},
                          {"ti+accel", IterationMode::TranslationInvariant, Acceleration::Auto}};
    for (const std::string& size : split(sizes, ',')) {
        const auto dims = split(size, 'x');
        const std::size_t m = std::stoull(dims.at(0)), n = std::stoull(dims.at(1));
        BenchProblem bp(m, n);
        bp.problem.eps = eps;
        bp.problem.tauA = bp.problem.tauB = tau;
        auto opts = [](Precision precision, const Mode& mode, int iterations, double tol, int every) {
            SolveOptions o;
            o.precision = precision;
            o.mode = mode.mode;
            o.acceleration = mode.acceleration;
            o.maxIterations = iterations;
            o.tolerance = tol;
            o.checkEvery = every;
            o.evaluateFinalPlan = false;
            return o;
        };
        auto solver = createSolver(solverName);
        auto oracle = createSolver("gpu-fused");  // plain float64, unaccelerated: independent of the modes timed
        const SolveResult converged = oracle->solve(bp.problem, opts(Precision::Fp64, modes[0], 400000, 1e-13, 50));
        std::printf("{\"to_solution\": \"reference\", \"m\": %zu, \"n\": %zu, \"eps\": %g, \"tau\": %g, "
                    "\"iterations\": %d, \"converged\": %s, \"error\": %.2e}\n",
                    m, n, eps, tau, converged.iterations, converged.converged ? "true" : "false", converged.error);
        std::fflush(stdout);
        std::uint64_t passes64[4] = {0, 0, 0, 0}, passes32[4] = {0, 0, 0, 0};
        double ms32[4] = {0, 0, 0, 0};
        for (int k = 0; k < 4; ++k) {
            const Mode& mode = modes[k];
            // Passes to the target in fp64, each count the smallest from-scratch solve reaching it.
            const test::PassCount p64 = test::passesToTargetFromScratch(
                *solver, bp.problem, opts(Precision::Fp64, mode, 10, 0, 10), converged, kTarget);
            passes64[k] = p64.passes;
            // fp32: the same where fp32 reaches the target (tried first with 4x the fp64 passes).
            const int tryIterations = std::max(64, 4 * p64.iterations);
            const SolveResult probe =
                solver->solve(bp.problem, opts(Precision::Fp32, mode, tryIterations, 0, tryIterations));
            const double probeDistance = planRelativeL1(bp.problem, probe, converged);
            test::PassCount p32;
            double iterateMs = 0, wallMs = 0;
            if (probeDistance <= kTarget) {
                p32 = test::passesToTargetFromScratch(*solver, bp.problem, opts(Precision::Fp32, mode, 10, 0, 10),
                                                      converged, kTarget, &wallMs);
                const SolveResult again = solver->solve(
                    bp.problem, opts(Precision::Fp32, mode, p32.iterations, 0, std::max(1, p32.iterations)));
                iterateMs = 1e3 * again.timings.iterateSeconds;
            }
            passes32[k] = p32.passes;
            ms32[k] = iterateMs;
            // To tolerance 1e-5 (the recolor and studio default) by the solver's own criterion,
            // after a warm-up solve; at most 20000 iterations.
            const SolveOptions timed = opts(Precision::Fp32, mode, 20000, 1e-5, 10);
            solver->solve(bp.problem, timed);
            const SolveResult r32 = solver->solve(bp.problem, timed);
            std::printf("{\"to_solution\": \"%s\", \"solver\": \"%s\", \"m\": %zu, \"n\": %zu, \"eps\": %g, "
                        "\"tau\": %g, \"passes_to_1e-6_fp64\": %llu, \"fp64_iterations\": %d, "
                        "\"fp32_reaches_1e-6\": %s, \"fp32_probe_iterations\": %d, \"fp32_probe_rel_l1\": %.2e, \"passes_to_1e-6_fp32\": %llu, "
                        "\"fp32_ms_to_1e-6\": %.3f, \"fp32_wall_ms_to_1e-6\": %.3f, "
                        "\"tol1e-5_fp32_iterations\": %d, \"tol1e-5_fp32_passes\": %llu, \"tol1e-5_fp32_ms\": %.3f, "
                        "\"tol1e-5_fp32_rel_l1\": %.2e, \"tol1e-5_converged\": %s, \"omega\": %.3f, "
                        "\"rejected\": %d, \"acceleration\": \"%s\"}\n",
                        mode.name, solverName.c_str(), m, n, eps, tau, static_cast<unsigned long long>(p64.passes),
                        p64.iterations, probeDistance <= kTarget ? "true" : "false", tryIterations, probeDistance,
                        static_cast<unsigned long long>(p32.passes), iterateMs, wallMs, r32.iterations,
                        static_cast<unsigned long long>(r32.passes), 1e3 * r32.timings.iterateSeconds,
                        planRelativeL1(bp.problem, r32, converged), r32.converged ? "true" : "false", r32.omega,
                        r32.rejectedSteps, r32.acceleration.c_str());
            std::fflush(stdout);
        }
        auto ratio = [](std::uint64_t x, std::uint64_t y) { return y > 0 ? double(x) / double(y) : 0.0; };
        std::printf("{\"to_solution\": \"summary\", \"solver\": \"%s\", \"m\": %zu, \"n\": %zu, \"eps\": %g, "
                    "\"tau\": %g, \"fp64_passes_plain_ti_tiaccel\": [%llu, %llu, %llu], "
                    "\"plain_over_tiaccel\": %.1f, \"ti_over_tiaccel\": %.1f, "
                    "\"fp32_ms_to_1e-6_plain_ti_tiaccel\": [%.3f, %.3f, %.3f]}\n",
                    solverName.c_str(), m, n, eps, tau, static_cast<unsigned long long>(passes64[0]),
                    static_cast<unsigned long long>(passes64[1]), static_cast<unsigned long long>(passes64[3]),
                    ratio(passes64[0], passes64[3]), ratio(passes64[1], passes64[3]), ms32[0], ms32[1], ms32[3]);
        (void)passes32;
        std::fflush(stdout);
    }
}

// --setup: the palette-like problem, N points each side in [0, 1]^3.
struct PointProblem {
    std::vector<double> x, y, a, b, cost64;
    std::vector<float> cost32;
    UotProblem points, dense64, dense32;
    PointProblem(std::size_t n, double eps) : x(n * 3), y(n * 3), a(n, 1.0 / n), b(n, 1.0 / n)
    {
        uot::bench::fillUnitCubePoints(x, y);
        points.cost = PointCloudCost{x.data(), y.data(), n, n, 3, 1.0};
        points.a = a;
        points.b = b;
        points.eps = eps;
        points.tauA = points.tauB = 1.0;
        cost64.resize(n * n);
        for (std::size_t i = 0; i < n; ++i) fillCostRow(points.cost, i, cost64.data() + i * n);
        cost32.assign(cost64.begin(), cost64.end());
        dense64 = points;
        dense64.cost = DenseCost{nullptr, cost64.data(), n, n};
        dense32 = points;
        dense32.cost = DenseCost{cost32.data(), nullptr, n, n};
    }
    const UotProblem& dense(Precision p) const { return p == Precision::Fp32 ? dense32 : dense64; }
};

double median(std::vector<double> v)
{
    std::sort(v.begin(), v.end());
    return v.empty() ? 0.0 : v[v.size() / 2];
}

void runSetup(const std::string& sizes, const std::vector<double>& epsList, bool toPlan)
{
    const Precision precisions[] = {Precision::Fp32, Precision::Fp64};
    if (sizes.empty()) return;
    gpu::Tuning pageable = gpu::defaultTuning();
    pageable.overlappedUpload = false;
    using Clock = std::chrono::steady_clock;
    for (const std::string& size : split(sizes, ',')) {
        const std::size_t n = std::stoull(size);
        PointProblem pp(n, epsList.empty() ? 0.01 : epsList.front());
        // 1. Set-up alone: 0 iterations, median of 5 (cold: each after emptying the cache).
        for (Precision precision : toPlan ? std::vector<Precision>{} : std::vector<Precision>{Precision::Fp32, Precision::Fp64}) {
            SolveOptions o;
            o.precision = precision;
            o.maxIterations = 0;
            o.evaluateFinalPlan = false;
            struct Path {
                const char* name;
                const UotProblem* problem;
                bool overlapped;
            } paths[] = {{"points (device-built)", &pp.points, true},
                         {"dense, pageable upload", &pp.dense(precision), false},
                         {"dense, overlapped upload", &pp.dense(precision), true}};
            for (const Path& path : paths) {
                std::vector<double> cold, warm, coldWall, warmWall;
                for (int rep = 0; rep < 6; ++rep) {
                    gpu::releaseDeviceContexts();
                    for (int k = 0; k < 2; ++k) {  // k = 0: fresh context, k = 1: the parked one
                        auto solver = gpu::createSolver("gpu-fused", path.overlapped ? gpu::defaultTuning() : pageable);
                        const auto t0 = Clock::now();
                        const SolveResult r = solver->solve(*path.problem, o);
                        const double wall = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
                        if (rep == 0) continue;  // warm-up (module load, first allocations)
                        (k == 0 ? cold : warm).push_back(1e3 * r.timings.setupSeconds);
                        (k == 0 ? coldWall : warmWall).push_back(wall);
                    }
                }
                std::printf("{\"setup\": \"%s\", \"n\": %zu, \"precision\": \"%s\", \"matrix_mb\": %.1f, "
                            "\"setup_ms_cold\": %.3f, \"setup_ms_warm\": %.3f, \"wall_ms_cold\": %.3f, "
                            "\"wall_ms_warm\": %.3f}\n",
                            path.name, n, toString(precision).c_str(),
                            double(n) * n * (precision == Precision::Fp32 ? 4 : 8) / 1048576.0, median(cold),
                            median(warm), median(coldWall), median(warmWall));
                std::fflush(stdout);
            }
        }
        // 2. To a plan within 1e-6 of the float64 oracle (TI + over-relaxation, gpu-fused).
        for (double eps : !toPlan ? std::vector<double>{} : epsList.empty() ? std::vector<double>{0.01, 0.003} : epsList) {
            pp.points.eps = eps;
            SolveOptions base;
            base.mode = IterationMode::TranslationInvariant;
            base.acceleration = Acceleration::Auto;
            base.evaluateFinalPlan = false;
            SolveOptions oracleOptions = base;
            oracleOptions.mode = IterationMode::Plain;
            oracleOptions.acceleration = Acceleration::None;
            oracleOptions.precision = Precision::Fp64;
            oracleOptions.maxIterations = 400000;
            oracleOptions.tolerance = 1e-13;
            oracleOptions.checkEvery = 50;
            const SolveResult oracle = gpu::createSolver("gpu-fused")->solve(pp.points, oracleOptions);
            for (Precision precision : precisions) {
                SolveOptions o = base;
                o.precision = precision;
                auto solver = gpu::createSolver("gpu-fused");
                // fp32 may not get within 1e-6 at all: probed first.
                SolveOptions probe = o;
                probe.maxIterations = 4000;
                probe.tolerance = 0;
                probe.checkEvery = 4000;
                const double probeDistance = planRelativeL1(pp.points, solver->solve(pp.points, probe), oracle);
                if (probeDistance > 1e-6) {
                    std::printf("{\"to_plan\": \"gpu-fused ti+accel\", \"n\": %zu, \"eps\": %g, \"precision\": "
                                "\"%s\", \"reaches_1e-6\": false, \"rel_l1_after_4000\": %.2e}\n",
                                n, eps, toString(precision).c_str(), probeDistance);
                    std::fflush(stdout);
                    continue;
                }
                const test::PassCount count =
                    test::passesToTargetFromScratch(*solver, pp.points, o, oracle, 1e-6);
                o.maxIterations = count.iterations;
                o.tolerance = 0;
                o.checkEvery = std::max(1, count.iterations);
                solver.reset();
                std::vector<double> wall[2], setup[2], iterate[2];
                double distance = 0;
                for (int rep = 0; rep < 6; ++rep) {
                    gpu::releaseDeviceContexts();
                    for (int k = 0; k < 2; ++k) {
                        auto s = gpu::createSolver("gpu-fused");
                        const auto t0 = Clock::now();
                        const SolveResult r = s->solve(pp.points, o);
                        const double ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
                        if (rep == 0) continue;
                        wall[k].push_back(ms);
                        setup[k].push_back(1e3 * r.timings.setupSeconds);
                        iterate[k].push_back(1e3 * r.timings.iterateSeconds);
                        distance = std::max(distance, planRelativeL1(pp.points, r, oracle));
                    }
                }
                std::printf("{\"to_plan\": \"gpu-fused ti+accel\", \"n\": %zu, \"eps\": %g, \"precision\": \"%s\", "
                            "\"reaches_1e-6\": true, \"iterations\": %d, \"passes\": %llu, \"rel_l1\": %.2e, "
                            "\"oracle_iterations\": %d, \"cold_total_ms\": %.3f, \"cold_setup_ms\": %.3f, "
                            "\"cold_iterate_ms\": %.3f, \"warm_total_ms\": %.3f, \"warm_setup_ms\": %.3f, "
                            "\"warm_iterate_ms\": %.3f, \"warm_us_per_iteration\": %.2f}\n",
                            n, eps, toString(precision).c_str(), count.iterations,
                            static_cast<unsigned long long>(count.passes), distance, oracle.iterations,
                            median(wall[0]), median(setup[0]), median(iterate[0]), median(wall[1]), median(setup[1]),
                            median(iterate[1]), 1e3 * median(iterate[1]) / std::max(1, count.iterations));
                std::fflush(stdout);
            }
        }
        gpu::releaseDeviceContexts();
    }
}

struct Row {
    std::string solver;
    std::size_t m, n;
    double ms, gbps, pct, peakMb, matrixMb;
    const char* peakKind;
};

}  // namespace

int main(int argc, char** argv)
{
    std::string sizes = "1024x1024,2048x2048,4096x4096,8192x8192,16384x16384,1024x16384,16384x1024";
    std::string solvers = "gpu-fused,gpu-mapuot,gpu-pot-style";
    std::string precisionText = "fp32";
    int repeats = 3;
    bool tune = false, atomics = false;
    std::string accuracySizes, solutionSizes, counterSizes, setupSizes, planSizes, phaseSizes;
    std::vector<double> epsList;
    bool solversGiven = false;
    IterationMode mode = IterationMode::Plain;
    Acceleration acceleration = Acceleration::None;
    double eps = 0.01, tau = 1.0;
    std::string mapReduceSizes, mapReduceLarge;
    bool checkMapReduce = false;
    std::string mapReduceConfigs, mapReduceDefault;
    bool mapReduceFused = true;
    int largeIterations = 3;
    bool iterationsGiven = false;
    for (int k = 1; k < argc; ++k) {
        const std::string arg = argv[k];
        auto next = [&]() -> std::string {
            if (k + 1 >= argc) {
                std::fprintf(stderr, "gpu_bench: %s needs a value\n", arg.c_str());
                std::exit(2);
            }
            return argv[++k];
        };
        if (arg == "--sizes")
            sizes = next();
        else if (arg == "--solvers") {
            solvers = next();
            solversGiven = true;
        }
        else if (arg == "--precision")
            precisionText = next();
        else if (arg == "--repeats")
            repeats = std::max(1, std::atoi(next().c_str()));
        else if (arg == "--tune")
            tune = true;
        else if (arg == "--atomics")
            atomics = true;
        else if (arg == "--accuracy")
            accuracySizes = next();
        else if (arg == "--setup")
            setupSizes = next();
        else if (arg == "--to-plan")
            planSizes = next();
        else if (arg == "--cluster-phases")
            phaseSizes = next();
        else if (arg == "--to-solution")
            solutionSizes = next();
        else if (arg == "--counters")
            counterSizes = next();
        else if (arg == "--mode")
            mode = parseIterationMode(next());
        else if (arg == "--accel")
            acceleration = parseAcceleration(next());
        else if (arg == "--eps") {
            eps = std::atof(next().c_str());
            epsList.push_back(eps);
        }
        else if (arg == "--tau")
            tau = std::atof(next().c_str());
        else if (arg == "--mapreduce")
            mapReduceSizes = next();
        else if (arg == "--mapreduce-large")
            mapReduceLarge = next();
        else if (arg == "--iterations") {
            largeIterations = std::max(1, std::atoi(next().c_str()));
            iterationsGiven = true;
        }
        else if (arg == "--check-mapreduce")
            checkMapReduce = true;
        else if (arg == "--mr-configs")
            mapReduceConfigs = next();
        else if (arg == "--mr-config")
            mapReduceDefault = next();
        else if (arg == "--mr-no-fused")
            mapReduceFused = false;
        else {
            std::fprintf(stderr, "usage: gpu_bench [--sizes MxN,..] [--solvers a,b] [--precision fp32|fp64] "
                                 "[--repeats R] [--tune] [--atomics] [--accuracy MxN,..] [--mode plain|ti] [--accel none|relax|auto] "
                                 "[--to-solution MxN,.. [--eps X] [--tau X]] [--setup N,..] [--to-plan N,.. [--eps X]]  [--counters MxN,.. [--solvers a,b]] "
                                 "[--mapreduce MxN,.. [--mr-configs p16f1,..] [--mr-no-fused]] [--mapreduce-large MxN [--iterations K]] "
                                 "[--check-mapreduce] [--mr-config p16f1 (gpu-mapreduce's configuration)] "
                                 "[--cluster-phases N,.. [--eps X] [--iterations K]]\n");
            return 2;
        }
    }
    const std::string reason = gpu::unavailableReason();
    if (!reason.empty()) {
        std::fprintf(stderr, "gpu_bench: %s\n", reason.c_str());
        return 4;
    }
    try {
        if (!mapReduceDefault.empty()) {
            gpu::Tuning t = gpu::defaultTuning();
            t.mapReduce = bench::parseMapReduceConfig(mapReduceDefault);
            gpu::setDefaultTuning(t);
        }
        if (checkMapReduce) return bench::runMapReduceCheck();
        if (!phaseSizes.empty()) {
#if UOT_GPU_BENCH_CLUSTER_PHASES
            return bench::runClusterPhases(phaseSizes, eps, iterationsGiven ? largeIterations : 500);
#else
            (void)iterationsGiven;
            std::fprintf(stderr, "gpu_bench: --cluster-phases needs a CUDA build\n");
            return 4;
#endif
        }
        if (!mapReduceSizes.empty() || !mapReduceLarge.empty()) {
            auto parse = [](const std::string& size) {
                const auto dims = split(size, 'x');
                return std::pair<std::size_t, std::size_t>(std::stoull(dims.at(0)), std::stoull(dims.at(1)));
            };
            std::vector<std::pair<std::size_t, std::size_t>> list;
            for (const std::string& size : split(mapReduceSizes, ',')) list.push_back(parse(size));
            std::vector<gpu::MapReduceConfig> configs;
            for (const std::string& c : split(mapReduceConfigs, ',')) configs.push_back(bench::parseMapReduceConfig(c));
            if (!list.empty()) bench::runMapReduceBench(list, configs, mapReduceFused);
            if (!mapReduceLarge.empty()) {
                const auto [m, n] = parse(mapReduceLarge);
                bench::runMapReduceLarge(m, n, largeIterations);
            }
            return 0;
        }
        if (!accuracySizes.empty()) {
            runAccuracy(accuracySizes);
            return 0;
        }
        if (!setupSizes.empty() || !planSizes.empty()) {
            runSetup(setupSizes, epsList, false);
            runSetup(planSizes, epsList, true);
            return 0;
        }
        if (!solutionSizes.empty()) {
            // gpu-fused unless --solvers names others.
            for (const std::string& name : split(solversGiven ? solvers : std::string("gpu-fused"), ','))
                runToSolution(solutionSizes, eps, tau, name);
            return 0;
        }
        if (!counterSizes.empty()) return runCounters(counterSizes, solvers);
        const Precision precision = parsePrecision(precisionText);
        const std::size_t elementBytes = precision == Precision::Fp32 ? 4 : 8;
        const auto devices = gpu::listDevices();
        const gpu::BandwidthMeasurement bw = gpu::measureBandwidth(0, std::size_t(1) << 30);
        std::printf("{\"device\": \"%s\", \"sms\": %d, \"read_gbps\": %.1f, \"d2d_copy_gbps\": %.1f, "
                    "\"fp32_gflops\": %.0f}\n",
                    devices.at(0).name.c_str(), devices.at(0).multiprocessors, bw.readGBps, bw.copyGBps, bw.fp32Gflops);

        if (tune) {
            std::vector<gpu::TuningTrial> trials;
            const gpu::Tuning best = gpu::tuneMapUot(0, 8192, 8192, &trials);
            for (const auto& t : trials)
                std::printf("{\"tune\": \"%s\", \"mapTx\": %d, \"mapTy\": %d, \"mapNy\": %d, \"rowTx\": %d, "
                            "\"rowNy\": %d, \"ms\": %.4f}\n",
                            t.part, t.tuning.mapTx, t.tuning.mapTy, t.tuning.mapNy, t.tuning.rowTx, t.tuning.rowNy,
                            t.ms);
            std::printf("{\"tuned\": {\"mapTx\": %d, \"mapTy\": %d, \"mapNy\": %d, \"rowTx\": %d, \"rowNy\": %d}}\n",
                        best.mapTx, best.mapTy, best.mapNy, best.rowTx, best.rowNy);
            gpu::setDefaultTuning(best);
        }

        std::vector<std::string> solverList = split(solvers, ',');
        if (atomics) {
            solverList.push_back("gpu-fused[atomic]");
            solverList.push_back("gpu-fused[no-pdl]");
        }
        std::vector<Row> rows;
        for (const std::string& size : split(sizes, ',')) {
            const auto dims = split(size, 'x');
            const std::size_t m = std::stoull(dims.at(0)), n = std::stoull(dims.at(1));
            const BenchProblem bp(m, n);
            const UotProblem& problem = bp.problem;

            for (const std::string& name : solverList) {
                std::unique_ptr<UotSolver> solver;
                const std::size_t open = name.find('[');
                if (open != std::string::npos && name.back() == ']') {
                    // Variant options, '/'-separated: atomic, no-pdl, uneven, (no-)cluster, step-kernels,
                    // cN (cluster size), fN (finalize lanes).
                    gpu::Tuning t = gpu::defaultTuning();
                    for (const std::string& option : split(name.substr(open + 1, name.size() - open - 2), '/')) {
                        if (option == "atomic")
                            t.fusedPartials = 1;
                        else if (option == "no-pdl")
                            t.programmaticLaunch = false;
                        else if (option == "uneven")
                            t.fusedEvenGroups = false;
                        else if (option == "cluster")
                            t.clusterIterations = true;
                        else if (option == "no-cluster")
                            t.clusterIterations = false;
                        else if (option == "step-kernels")
                            t.stepInColumns = false;
                        else if (option[0] == 'c')
                            t.fusedCluster = std::atoi(option.c_str() + 1);
                        else if (option[0] == 'f')
                            t.finalizeLanes = std::atoi(option.c_str() + 1);
                        else
                            throw Error(ErrorCode::InvalidArgument, "unknown solver option '" + option + "' in " + name);
                    }
                    solver = gpu::createSolver(name.substr(0, open), t);
                } else {
                    solver = createSolver(name);
                }
                const std::uint64_t bytes = solver->bytesPerIteration(m, n, precision);
                const double estimate = double(bytes) / 2.5e12 + 5e-6;
                const int iterations = std::clamp(static_cast<int>(0.25 / estimate), 20, 5000);
                SolveOptions o;
                o.precision = precision;
                o.mode = mode;
                o.acceleration = acceleration;
                o.maxIterations = iterations;
                o.tolerance = 0;
                o.checkEvery = iterations;
                o.evaluateFinalPlan = false;
                std::vector<double> ms;
                SolveResult r;
                for (int rep = 0; rep <= repeats; ++rep) {
                    r = solver->solve(problem, o);
                    if (rep > 0) ms.push_back(1e3 * r.timings.iterateSeconds / r.iterations);  // rep 0: warm-up
                }
                std::sort(ms.begin(), ms.end());
                const double med = ms[ms.size() / 2];
                const double gbps = double(bytes) / (med * 1e-3) / 1e9;
                const bool readOnly = name.find("fused") != std::string::npos || name == "gpu-pot-style";
                const double peak = readOnly ? bw.readGBps : bw.copyGBps;
                const bool bf16 = name.find("bf16") != std::string::npos;  // K stored in 2 bytes an entry
                const double matrixMb = double(m) * n * (bf16 ? 2 : elementBytes) / 1048576.0;
                const double peakMb = double(r.peakDeviceBytes) / 1048576.0;
                std::printf("{\"solver\": \"%s\", \"mode\": \"%s\", \"m\": %zu, \"n\": %zu, \"precision\": \"%s\", \"device\": \"gpu:0\", "
                            "\"iterations\": %d, \"passes\": %llu, \"repeats\": %d, \"ms_per_iter\": %.5f, \"ms_per_iter_min\": %.5f, "
                            "\"ms_per_iter_max\": %.5f, \"bytes_per_iter\": %llu, \"gbps\": %.1f, "
                            "\"peak_read_gbps\": %.1f, \"peak_rw_gbps\": %.1f, \"peak_kind\": \"%s\", "
                            "\"pct_of_peak\": %.1f, \"peak_device_mb\": %.1f, \"matrix_mb\": %.1f, "
                            "\"timing_source\": \"cuda_events_iteration_loop\", \"status\": \"%s\"}\n",
                            name.c_str(), r.mode.c_str(), m, n, precisionText.c_str(), r.iterations,
                            static_cast<unsigned long long>(r.passes), repeats, med, ms.front(),
                            ms.back(), static_cast<unsigned long long>(bytes), gbps, bw.readGBps, bw.copyGBps,
                            readOnly ? "read" : "read+write", 100.0 * gbps / peak, peakMb, matrixMb,
                            toString(r.status).c_str());
                std::fflush(stdout);
                rows.push_back({name, m, n, med, gbps, 100.0 * gbps / peak, peakMb, matrixMb,
                                readOnly ? "read" : "read+write"});
            }
        }
        std::printf("\n%-18s %13s %10s %9s %7s %-10s %12s %10s\n", "solver", "size", "ms/iter", "GB/s", "% peak",
                    "peak kind", "peak dev MB", "matrix MB");
        for (const Row& r : rows)
            std::printf("%-18s %6zux%-6zu %10.4f %9.0f %6.1f%% %-10s %12.1f %10.1f\n", r.solver.c_str(), r.m, r.n,
                        r.ms, r.gbps, r.pct, r.peakKind, r.peakMb, r.matrixMb);
        std::printf("device read %.0f GB/s, device-to-device copy %.0f GB/s (read + write counted)\n", bw.readGBps,
                    bw.copyGBps);
    } catch (const Error& e) {
        std::fprintf(stderr, "gpu_bench: %s\n", e.what());
        return e.code() == ErrorCode::Unavailable ? 4 : 1;
    }
    return 0;
}
