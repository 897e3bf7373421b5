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
//   --atomics adds gpu-fused[atomic] (column partials atomically into one row) and
//   gpu-fused[no-pdl] (without programmatic dependent launch) for comparison.
//   Any GPU solver name may carry '/'-separated tuning options in brackets:
//   atomic, no-pdl, uneven (Tuning::fusedEvenGroups = false), cN (Tuning::fusedCluster = N),
//   fN (Tuning::finalizeLanes = N),
//   e.g. --solvers gpu-fused,gpu-fused[c1/f8],gpu-fused[c4].
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
    std::string accuracySizes, solutionSizes, counterSizes;
    bool solversGiven = false;
    IterationMode mode = IterationMode::Plain;
    Acceleration acceleration = Acceleration::None;
    double eps = 0.01, tau = 1.0;
    std::string mapReduceSizes, mapReduceLarge;
    bool checkMapReduce = false;
    std::string mapReduceConfigs, mapReduceDefault;
    bool mapReduceFused = true;
    int largeIterations = 3;
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
        else if (arg == "--to-solution")
            solutionSizes = next();
        else if (arg == "--counters")
            counterSizes = next();
        else if (arg == "--mode")
            mode = parseIterationMode(next());
        else if (arg == "--accel")
            acceleration = parseAcceleration(next());
        else if (arg == "--eps")
            eps = std::atof(next().c_str());
        else if (arg == "--tau")
            tau = std::atof(next().c_str());
        else if (arg == "--mapreduce")
            mapReduceSizes = next();
        else if (arg == "--mapreduce-large")
            mapReduceLarge = next();
        else if (arg == "--iterations")
            largeIterations = std::max(1, std::atoi(next().c_str()));
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
                                 "[--to-solution MxN,.. [--eps X] [--tau X]] [--counters MxN,.. [--solvers a,b]] "
                                 "[--mapreduce MxN,.. [--mr-configs p16f1,..] [--mr-no-fused]] [--mapreduce-large MxN [--iterations K]] "
                                 "[--check-mapreduce] [--mr-config p16f1 (gpu-mapreduce's configuration)]\n");
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
                    // Variant options, '/'-separated: atomic, no-pdl, uneven, cN (cluster), fN (finalize lanes).
                    gpu::Tuning t = gpu::defaultTuning();
                    for (const std::string& option : split(name.substr(open + 1, name.size() - open - 2), '/')) {
                        if (option == "atomic")
                            t.fusedPartials = 1;
                        else if (option == "no-pdl")
                            t.programmaticLaunch = false;
                        else if (option == "uneven")
                            t.fusedEvenGroups = false;
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
                            "\"iterations\": %d, \"repeats\": %d, \"ms_per_iter\": %.5f, \"ms_per_iter_min\": %.5f, "
                            "\"ms_per_iter_max\": %.5f, \"bytes_per_iter\": %llu, \"gbps\": %.1f, "
                            "\"peak_read_gbps\": %.1f, \"peak_rw_gbps\": %.1f, \"peak_kind\": \"%s\", "
                            "\"pct_of_peak\": %.1f, \"peak_device_mb\": %.1f, \"matrix_mb\": %.1f, "
                            "\"timing_source\": \"cuda_events_iteration_loop\", \"status\": \"%s\"}\n",
                            name.c_str(), r.mode.c_str(), m, n, precisionText.c_str(), r.iterations, repeats, med, ms.front(),
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
