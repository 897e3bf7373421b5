#pragma once
// gpu_bench's gpu-mapreduce modes (Qt-free, for the device machine):
//  --mapreduce MxN[,MxN] [--mr-configs p16f1,..]: the exp2 probe of the
//    special-function units, then per size (d = 3, points in the unit cube, eps
//    0.05): ms per iteration (row pass + column pass) of gpu-mapreduce (the
//    default configuration, or each one listed) and of gpu-fused on the same
//    point-cloud problem where its matrix fits (the crossover); exponentials per
//    second as a share of the probe and GFLOP/s; all from one run. --mr-no-fused
//    leaves gpu-fused out.
//  --mapreduce-large MxN: one solve at that size (a few iterations and the final
//    plan evaluation), with peak device memory.
//  --check-mapreduce: every check of tests/gpu/mapreduce_cases.h; exit 1 on a failure.

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "core/registry/solver_registry.h"
#include "core/transport/uot_error.h"
#include "gpu/gpu_backend.h"
#include "tests/gpu/mapreduce_cases.h"

namespace uot::bench {

// Fills x, then y, with the benches' fixed pseudo-random coordinates in [0, 1)
// (a linear congruential sequence from one seed: the same points in every run).
inline void fillUnitCubePoints(std::vector<double>& x, std::vector<double>& y)
{
    unsigned state = 12345u;
    auto next = [&state]() {
        state = state * 1664525u + 1013904223u;
        return (state >> 8) / double(1u << 24);
    };
    for (double& v : x) v = next();
    for (double& v : y) v = next();
}

// Points in the unit cube, d = 3, scale 1/3, uniform-ish weights, tau 1.
struct LargeCloud {
    std::vector<double> x, y, a, b;
    UotProblem problem;
    LargeCloud(std::size_t m, std::size_t n, double eps) : x(m * 3), y(n * 3), a(m), b(n)
    {
        fillUnitCubePoints(x, y);
        for (std::size_t i = 0; i < m; ++i) a[i] = (1.0 + 0.5 * std::sin(0.1 * double(i))) / double(m);
        for (std::size_t j = 0; j < n; ++j) b[j] = (1.0 + 0.5 * std::cos(0.07 * double(j))) * 1.3 / double(n);
        problem.cost = PointCloudCost{x.data(), y.data(), m, n, 3, 1.0 / 3.0};
        problem.a = a;
        problem.b = b;
        problem.eps = eps;
    }
};

// Terms of one iteration (row pass + column pass) and the flops counted per term:
// d FMAs (2d), the shift add, the accumulation add, the exponential counted as 1.
inline double termsPerIteration(std::size_t m, std::size_t n) { return 2.0 * double(m) * double(n); }
inline double flopsPerTerm(std::size_t d) { return 2.0 * double(d) + 3.0; }

// "p16f1": polyEvery 16, prefetch on (gpu/mapreduce_config.h); an optional "sK"
// picks the schedule (gpu::MapReduceWork: s0 split, the schedule of session 19;
// s2 balanced, the default) and "bN" shares the work among N block slots
// (balanced), e.g. p0f1s0, p0f1s2b7.
inline gpu::MapReduceConfig parseMapReduceConfig(const std::string& text)
{
    gpu::MapReduceConfig c;
    int prefetch = 1, schedule = static_cast<int>(c.schedule), consumed = 0;
    const bool ok = std::sscanf(text.c_str(), "p%df%d%n", &c.polyEvery, &prefetch, &consumed) == 2;
    const char* rest = text.c_str() + consumed;
    int more = 0;
    if (ok && *rest == 's' && std::sscanf(rest, "s%d%n", &schedule, &more) == 1) rest += more;
    if (ok && *rest == 'b' && std::sscanf(rest, "b%d%n", &c.blocks, &more) == 1) rest += more;
    if (!ok || *rest != '\0')
        throw Error(ErrorCode::InvalidArgument, "gpu_bench: a map-reduce configuration reads pPOLYfPREFETCH[sSCHEDULE][bBLOCKS], "
                                                "e.g. p0f1s0, not '" + text + "'");
    c.prefetch = prefetch != 0;
    c.schedule = static_cast<gpu::MapReduceWork>(schedule);
    const std::string problem = gpu::mapReduceConfigProblem(c);
    if (!problem.empty()) throw Error(ErrorCode::InvalidArgument, problem);
    return c;
}

inline std::string configLabel(const gpu::MapReduceConfig& c)
{
    return "gpu-mapreduce[p" + std::to_string(c.polyEvery) + "f" + std::to_string(c.prefetch ? 1 : 0) + "s" +
           std::to_string(static_cast<int>(c.schedule)) + (c.blocks > 0 ? "b" + std::to_string(c.blocks) : std::string()) + "]";
}

// configs: the gpu-mapreduce variants to time (empty: the default one); gpu-fused
// follows unless withFused is false.
inline void runMapReduceBench(const std::vector<std::pair<std::size_t, std::size_t>>& sizes,
                              const std::vector<gpu::MapReduceConfig>& configs, bool withFused = true)
{
    const double probe = gpu::measureExp2Throughput(0);
    std::printf("{\"probe\": \"mufu_ex2\", \"exp2_per_second\": %.4e}\n", probe);
    std::fflush(stdout);
    struct Variant {
        std::string label;
        gpu::MapReduceConfig config;
        bool fused = false;  // gpu-fused (stored K)
    };
    std::vector<Variant> variants;
    for (const gpu::MapReduceConfig& c : configs.empty() ? std::vector<gpu::MapReduceConfig>{{}} : configs)
        variants.push_back({configs.empty() ? std::string("gpu-mapreduce") : configLabel(c), c, false});
    if (withFused) variants.push_back({"gpu-fused", {}, true});
    for (const auto& [m, n] : sizes) {
        const LargeCloud cloud(m, n, 0.05);
        for (const Variant& v : variants) {
            if (v.fused) {
                const gpu::DeviceMemory mem = gpu::deviceMemory(0);
                if (double(m) * double(n) * 4.0 > 0.8 * double(mem.freeBytes)) {
                    std::printf("{\"solver\": \"gpu-fused\", \"m\": %zu, \"n\": %zu, \"skipped\": \"K does not fit\"}\n",
                                m, n);
                    continue;
                }
            }
            auto solver = v.fused ? createSolver("gpu-fused") : gpu::createMapReduceSolver(v.config);
            const double estimate = termsPerIteration(m, n) / 3e12 + 3e-5;
            const int iterations = std::clamp(static_cast<int>(0.3 / estimate), 10, 2000);
            SolveOptions o = test::cloudOptions(Precision::Fp32, iterations, 0, iterations);
            solver->solve(cloud.problem, o);  // warm-up: buffers, graphs
            std::vector<double> ms;
            SolveResult r;
            for (int rep = 0; rep < 3; ++rep) {
                r = solver->solve(cloud.problem, o);
                ms.push_back(1e3 * r.timings.iterateSeconds / std::max(1, r.iterations));
            }
            std::sort(ms.begin(), ms.end());
            const double perIter = ms[1];
            const double expsPerSecond = termsPerIteration(m, n) / (perIter * 1e-3);
            std::printf("{\"solver\": \"%s\", \"m\": %zu, \"n\": %zu, \"d\": 3, \"iterations\": %d, "
                        "\"ms_per_iter\": %.5f, \"exp_per_second\": %.4e, \"share_of_probe\": %.4f, "
                        "\"gflops\": %.1f, \"peak_device_mb\": %.1f}\n",
                        v.label.c_str(), m, n, r.iterations, perIter, expsPerSecond, expsPerSecond / probe,
                        expsPerSecond * flopsPerTerm(3) / 1e9, double(r.peakDeviceBytes) / 1048576.0);
            std::fflush(stdout);
        }
    }
}

inline void runMapReduceLarge(std::size_t m, std::size_t n, int iterations)
{
    const LargeCloud cloud(m, n, 0.05);
    auto solver = createSolver("gpu-mapreduce");
    SolveOptions o = test::cloudOptions(Precision::Fp32, iterations, 0, iterations);
    o.evaluateFinalPlan = true;
    const gpu::DeviceMemory before = gpu::deviceMemory(0);
    const SolveResult r = solver->solve(cloud.problem, o);
    const double perIter = 1e3 * r.timings.iterateSeconds / std::max(1, r.iterations);
    std::printf("{\"solver\": \"gpu-mapreduce\", \"large\": true, \"m\": %zu, \"n\": %zu, \"d\": 3, "
                "\"iterations\": %d, \"ms_per_iter\": %.3f, \"exp_per_second\": %.4e, \"setup_s\": %.3f, "
                "\"evaluate_s\": %.3f, \"error\": %.3e, \"mass\": %.6f, \"marginal_a\": %.3e, \"marginal_b\": %.3e, "
                "\"objective\": %.6f, \"finite\": %s, \"peak_device_mb\": %.1f, \"device_free_mb_before\": %.0f}\n",
                m, n, r.iterations, perIter, termsPerIteration(m, n) / (perIter * 1e-3), r.timings.setupSeconds,
                r.timings.evaluateSeconds, r.error, r.mass, r.marginalErrorA, r.marginalErrorB, r.objective,
                test::finiteResult(r) ? "true" : "false", double(r.peakDeviceBytes) / 1048576.0,
                double(before.freeBytes) / 1048576.0);
    std::fflush(stdout);
}

inline int runMapReduceCheck()
{
    int failures = 0;
    auto report = [&failures](const char* group, const test::CheckOutcome& o) {
        failures += o.ok ? 0 : 1;
        std::printf("{\"check\": \"%s\", \"ok\": %s, \"distance\": %.3e, \"tolerance\": %.1e, \"detail\": \"%s\"}\n",
                    group, o.ok ? "true" : "false", o.distance, o.tolerance, o.detail.c_str());
        std::fflush(stdout);
    };
    auto guarded = [&](const char* group, auto&& check) {
        try {
            report(group, check());
        } catch (const std::exception& e) {
            test::CheckOutcome o;
            o.detail = std::string("threw: ") + e.what();
            report(group, o);
        }
    };
    for (const test::CloudCase& c : test::referenceCases())
        guarded("reference", [&] { return test::checkAgainstReference(c); });
    for (const test::CloudCase& c : test::smallEpsCases())
        guarded("small-eps", [&] { return test::checkSmallEps(c); });
    for (const test::ScheduleCase& c : test::scheduleCases())
        guarded("schedule", [&] { return test::checkSchedule(c); });
    guarded("warm-start", [] { return test::checkWarmStart(); });
    guarded("ti", [] { return test::checkTranslationInvariant(37, 53); });
    guarded("ti", [] { return test::checkTranslationInvariant(513, 1025); });
    guarded("final-plan", [] { return test::checkFinalEvaluation(); });
    guarded("refusals", [] { return test::checkRefusalsAndCancel(); });
    std::printf("{\"check_mapreduce_failures\": %d}\n", failures);
    return failures == 0 ? 0 : 1;
}

}  // namespace uot::bench
