#include "tests/gpu/cluster_phase_bench.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>
#include <type_traits>
#include <vector>

#include <cuda_runtime.h>

#include "core/transport/relaxed_rules.h"
#include "core/transport/translation_invariant.h"
#include "core/transport/uot_problem.h"
#include "gpu/cluster_iterations.h"

namespace uot::bench {

namespace {

using namespace uot::gpu::detail;

bool ok(cudaError_t status)
{
    if (status == cudaSuccess) return true;
    std::fprintf(stderr, "gpu_bench --cluster-phases: %s\n", cudaGetErrorString(status));
    return false;
}

template <typename T>
struct Buffer {
    T* p = nullptr;
    explicit Buffer(std::size_t n) { ok(cudaMalloc(&p, n * sizeof(T))); }
    ~Buffer() { cudaFree(p); }
    Buffer(const Buffer&) = delete;
    Buffer& operator=(const Buffer&) = delete;
    void put(const std::vector<T>& x) { ok(cudaMemcpy(p, x.data(), x.size() * sizeof(T), cudaMemcpyHostToDevice)); }
};

template <typename T>
bool profile(std::size_t n, double eps, int iterations, const char* precision)
{
    const ClusterPlan plan = planClusterIterations<T>(n, n, 0, true);
    if (!plan.usable()) return false;
    std::mt19937 rng(7);
    std::uniform_real_distribution<double> unit(0.0, 1.0);
    std::vector<double> x(3 * n), y(3 * n), a(n, 1.0 / n), b(n, 1.0 / n), logW(n, std::log(1.0 / n));
    for (double& v : x) v = unit(rng);
    for (double& v : y) v = unit(rng);
    std::vector<T> K(n * n), ones(n, T(1));
    for (std::size_t i = 0; i < n; ++i)
        for (std::size_t j = 0; j < n; ++j) {
            double d = 0;
            for (int k = 0; k < 3; ++k) d += (x[3 * i + k] - y[3 * j + k]) * (x[3 * i + k] - y[3 * j + k]);
            K[i * n + j] = static_cast<T>(std::exp(-d / 3.0 / eps));
        }
    UotProblem problem;
    problem.cost = PointCloudCost{x.data(), y.data(), n, n, 3, 3.0};
    problem.a = a;
    problem.b = b;
    problem.eps = eps;
    problem.tauA = problem.tauB = 1.0;
    const TranslationCoefficients tc = translationCoefficients(problem);
    RelaxedParams params;
    params.ra = tc.ra;
    params.rb = tc.rb;
    params.cs = tc.cs;
    params.ct = tc.ct;
    params.fb = problem.exponentB();
    params.translate = true;
    params.eps = eps;
    params.tauA = params.tauB = 1.0;
    params.slack = objectiveSlack(std::is_same_v<T, float>);
    params.tolerance = 0;  // never converged: every iteration runs
    params.maxIterations = 1 << 30;
    Buffer<T> dK(n * n), u(n), v(n), uSaved(n), vSaved(n);
    Buffer<double> da(n), db(n), dLogA(n), dLogB(n);
    Buffer<RelaxedState> state(1);
    Buffer<long long> cycles(kClusterPhases);
    dK.put(K);
    auto startFromOnes = [&] {
        for (Buffer<T>* s : {&u, &v, &uSaved, &vSaved}) s->put(ones);
    };
    startFromOnes();
    da.put(a);
    db.put(b);
    dLogA.put(logW);
    dLogB.put(logW);
    RelaxedState start;
    start.rule.start(Acceleration::Auto, 0.0);
    start.omega = start.rule.omega;
    ok(cudaMemcpy(state.p, &start, sizeof(start), cudaMemcpyHostToDevice));
    ok(cudaMemset(cycles.p, 0, kClusterPhases * sizeof(long long)));
    auto run = [&](long long* counters, bool plainOnly = false) {
        launchClusterIterations<T>(plan, dK.p, n, n, n, u.p, v.p, uSaved.p, vSaved.p, da.p, db.p, dLogA.p, dLogB.p,
                                   problem.exponentA(), params, state.p, nullptr, iterations, nullptr, counters,
                                   plainOnly);
    };
    run(nullptr);  // warm-up
    cudaEvent_t begin, end;
    ok(cudaEventCreate(&begin));
    ok(cudaEventCreate(&end));
    ok(cudaEventRecord(begin));
    run(nullptr);
    ok(cudaEventRecord(end));
    ok(cudaEventSynchronize(end));
    float plainMs = 0;
    ok(cudaEventElapsedTime(&plainMs, begin, end));
    ok(cudaEventRecord(begin));
    run(cycles.p);
    ok(cudaEventRecord(end));
    ok(cudaEventSynchronize(end));
    float timedMs = 0;
    ok(cudaEventElapsedTime(&timedMs, begin, end));
    std::vector<long long> c(kClusterPhases);
    ok(cudaMemcpy(c.data(), cycles.p, c.size() * sizeof(long long), cudaMemcpyDeviceToHost));
    RelaxedState after;
    ok(cudaMemcpy(&after, state.p, sizeof(after), cudaMemcpyDeviceToHost));
    // The bound: plain iterations in the same launch (after the accelerated ones,
    // which they do not change), timed and then counted the same way.
    run(nullptr, true);
    ok(cudaEventRecord(begin));
    run(nullptr, true);
    ok(cudaEventRecord(end));
    ok(cudaEventSynchronize(end));
    float plainOnlyMs = 0;
    ok(cudaEventElapsedTime(&plainOnlyMs, begin, end));
    ok(cudaMemset(cycles.p, 0, kClusterPhases * sizeof(long long)));
    run(cycles.p, true);
    std::vector<long long> plainCycles(kClusterPhases);
    ok(cudaMemcpy(plainCycles.data(), cycles.p, plainCycles.size() * sizeof(long long), cudaMemcpyDeviceToHost));
    // The plain launch checked: `iterations` plain iterations from u = v = 1 against the
    // same iterations in float64 on the host (K as stored): the largest |log v - log v_ref|.
    startFromOnes();
    run(nullptr, true);
    std::vector<T> vDevice(n);
    ok(cudaMemcpy(vDevice.data(), v.p, n * sizeof(T), cudaMemcpyDeviceToHost));
    const double fa = problem.exponentA(), fb = problem.exponentB();
    std::vector<double> uRef(n, 1.0), vRef(n, 1.0);
    for (int it = 0; it < iterations; ++it) {
        for (std::size_t i = 0; i < n; ++i) {
            double dot = 0;
            for (std::size_t j = 0; j < n; ++j) dot += double(K[i * n + j]) * vRef[j];
            uRef[i] = std::pow(a[i] / dot, fa);
        }
        std::vector<double> colSum(n, 0.0);
        for (std::size_t i = 0; i < n; ++i)
            for (std::size_t j = 0; j < n; ++j) colSum[j] += double(K[i * n + j]) * uRef[i];
        for (std::size_t j = 0; j < n; ++j) vRef[j] = std::pow(b[j] / colSum[j], fb);
    }
    double plainGap = 0;
    for (std::size_t j = 0; j < n; ++j)
        plainGap = std::max(plainGap, std::abs(std::log(double(vDevice[j])) - std::log(vRef[j])));
    cudaEventDestroy(begin);
    cudaEventDestroy(end);
    int clockKHz = 0;
    ok(cudaDeviceGetAttribute(&clockKHz, cudaDevAttrClockRate, 0));
    long long total = 0;
    for (long long v : c) total += v;
    const char* names[kClusterPhases] = {"rows", "column_sums", "columns_sweep", "decide", "commit", "finish"};
    std::printf("{\"cluster_phases\": %zu, \"precision\": \"%s\", \"blocks\": %d, \"shared_kb\": %.1f, "
                "\"iterations\": %d, \"us_per_iter\": %.3f, \"us_per_iter_timed\": %.3f, \"clock_mhz\": %.0f, "
                "\"cycles_per_iter\": %.0f",
                n, precision, plan.blocks, plan.sharedBytes / 1024.0, iterations, 1e3 * plainMs / iterations,
                1e3 * timedMs / iterations, clockKHz / 1e3, double(total) / iterations);
    for (int p = 0; p < kClusterPhases; ++p)
        std::printf(", \"%s_pct\": %.1f", names[p], 100.0 * double(c[p]) / double(std::max(1LL, total)));
    std::printf(", \"passes\": %lld, \"accepted\": %d, \"omega\": %.3f", after.passes, after.iterations,
                after.omega);
    long long plainTotal = 0;
    for (long long v : plainCycles) plainTotal += v;
    std::printf(", \"plain_us_per_iter\": %.3f, \"plain_cycles_per_iter\": %.0f, \"plain_rows_cycles\": %.0f, "
                "\"plain_column_sums_cycles\": %.0f, \"plain_columns_gather_cycles\": %.0f, "
                "\"plain_max_log_gap_to_float64\": %.2e}\n",
                1e3 * plainOnlyMs / iterations, double(plainTotal) / iterations,
                double(plainCycles[kPhaseRows]) / iterations, double(plainCycles[kPhaseColumnSums]) / iterations,
                double(plainCycles[kPhaseFinish]) / iterations, plainGap);
    std::fflush(stdout);
    return true;
}

}  // namespace

int runClusterPhases(const std::string& sizes, double eps, int iterations)
{
    int ran = 0;
    std::size_t start = 0;
    while (start < sizes.size()) {
        const std::size_t comma = sizes.find(',', start);
        const std::size_t n = std::stoull(sizes.substr(start, comma - start));
        ran += profile<float>(n, eps, iterations, "fp32") ? 1 : 0;
        ran += profile<double>(n, eps, iterations, "fp64") ? 1 : 0;
        if (comma == std::string::npos) break;
        start = comma + 1;
    }
    return ran > 0 ? 0 : 4;
}

}  // namespace uot::bench
