#include "core/perf/compute_probe.h"

#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cstddef>

#include "core/transport/kernel_matrix.h"
#include "core/transport/mapreduce_kernels.h"

namespace uot::perf {

namespace {

// Best rate (operations per second, all threads) of `body(rounds)` run by every
// thread at once, over repetitions of about `slice` seconds each.
template <typename Body>
double bestRate(int threads, double opsPerRound, double seconds, Body body)
{
    using Clock = std::chrono::steady_clock;
    // Size one repetition: rounds that take about seconds / 8 on one thread.
    std::size_t rounds = 1 << 12;
    for (;;) {
        const auto t0 = Clock::now();
        volatile double sink = body(rounds);
        (void)sink;
        const double dt = std::chrono::duration<double>(Clock::now() - t0).count();
        if (dt > seconds / 40 || rounds > (std::size_t(1) << 32)) {
            rounds = static_cast<std::size_t>(static_cast<double>(rounds) * (seconds / 8) / std::max(dt, 1e-6)) + 1;
            break;
        }
        rounds *= 4;
    }
    double best = 0;
    const auto start = Clock::now();
    for (int rep = 0; rep < 8 && std::chrono::duration<double>(Clock::now() - start).count() < 2 * seconds; ++rep) {
        double elapsed = 0;
#pragma omp parallel num_threads(threads)
        {
#pragma omp barrier
            const auto t0 = Clock::now();
            volatile double sink = body(rounds);
            (void)sink;
#pragma omp barrier
#pragma omp master
            elapsed = std::chrono::duration<double>(Clock::now() - t0).count();
        }
        if (elapsed > 0) best = std::max(best, opsPerRound * static_cast<double>(rounds) * threads / elapsed);
    }
    return best;
}

template <typename T>
ComputePeak measure(int threads, double seconds)
{
    const kernels::MapReduceKernels<T>& k = kernels::mapReduceKernels<T>();
    const double perRound = static_cast<double>(kernels::kProbeStreams * k.lanes);
    ComputePeak peak;
    peak.threads = threads;
    peak.expsPerSecond = bestRate(threads, perRound, seconds / 3, k.probeExp);
    peak.pairsPerSecond = bestRate(threads, perRound, seconds / 3, k.probePair);
    peak.fmaGflops = 2.0 * bestRate(threads, perRound, seconds / 3, k.probeFma) / 1e9;
    return peak;
}

}  // namespace

ComputePeak measureComputePeak(int threads, Precision precision, double seconds)
{
    const int n = resolveThreadCount(threads);
    return precision == Precision::Fp32 ? measure<float>(n, seconds) : measure<double>(n, seconds);
}

}  // namespace uot::perf
