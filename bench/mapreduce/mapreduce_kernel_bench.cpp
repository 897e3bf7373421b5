// uot_mapreduce_kernel_bench [--size N] [--threads T] [--rounds R] [--dims 1,3,8] [--precision fp32|fp64]
//
// One map-reduce pass (N targets x N sources, the `mapreduce` variant's
// shiftedSums kernel on the active SIMD path) against the compute probes
// (mapreduce_kernels.h: pure 2^x; the kernel's whole arithmetic per 3-D pair in
// registers; pure vector FMAs), run alternately R times on T threads; prints
// the best rate of each and the pass as a share of each. The FMA probe gives
// the port bound of a pair: the fewest vector operations a d = 3 pair needs on
// the FMA ports (kPairVectorOps) at the measured FMA rate. docs/BENCHMARKS.md
// (map-reduce) says which probe is the peak and why. Best-of-R, alternating, is the
// figure that survives other tenants on a shared VM (each side gets its quiet
// moments); `uot bench` gives the solver-level medians.

#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "core/transport/cpu_buffers.h"
#include "core/transport/mapreduce_kernels.h"

using namespace uot;
using namespace uot::kernels;

namespace {

// Vector operations of one d = 3 pair-vector: 3 FMAs, 2^x (range reduction,
// degree-5 polynomial: 5 FMAs, exponent insertion: 7 on AVX-512 with
// vreduce/vscalef, 8-9 elsewhere; 7 taken, the fewest), and 2 adds (the shift
// and the accumulation). Cores with separate FP adders (Golden Cove and later)
// run the adds off the FMA ports: the port bound lies between the two counts.
constexpr double kPairVectorOps = 3 + 7 + 2;
constexpr double kPairFmaPortOps = 3 + 7;

double seconds(std::chrono::steady_clock::time_point a)
{
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - a).count();
}

template <typename T>
void run(std::size_t n, int threads, int rounds, const std::vector<int>& dims)
{
    const MapReduceKernels<T>& k = mapReduceKernels<T>();
    std::mt19937 rng(1);
    std::uniform_real_distribution<double> unit(-0.5, 0.5);
    const std::size_t ld = paddedLength<T>(n);
    AlignedBuffer<T> q, h;
    q.resize(kMaxCloudDim * ld);
    h.resize(ld);
    for (std::size_t i = 0; i < kMaxCloudDim * ld; ++i) q.data()[i] = static_cast<T>(unit(rng));
    // Scores of a typical pass at eps ~ 0.05: spread over ~30 (base 2), shifts near the maximum.
    for (std::size_t i = 0; i < ld; ++i) h.data()[i] = static_cast<T>(-15.0 + 10.0 * unit(rng));
    std::vector<T> w(n * kMaxCloudDim), shift(n, T(0));
    for (T& x : w) x = static_cast<T>(20.0 * unit(rng));
    std::vector<double> sums(n);
    const CloudSources<T> src{q.data(), h.data(), ld};
    const double pairs = double(n) * double(n);
    const double probeUnits = double(kProbeStreams * k.lanes);
    // Probe rounds of about the same duration as a pass.
    const std::size_t probeRounds = std::max<std::size_t>(1, static_cast<std::size_t>(pairs / probeUnits / threads / 2));
    for (int d : dims) {
        double bestPass = 0, bestExp = 0, bestPair = 0, bestFma = 0;
        for (int r = 0; r < rounds; ++r) {
            auto t0 = std::chrono::steady_clock::now();
#pragma omp parallel for schedule(dynamic, 1) num_threads(threads)
            for (std::ptrdiff_t t = 0; t < static_cast<std::ptrdiff_t>((n + 63) / 64); ++t) {
                const std::size_t t0i = static_cast<std::size_t>(t) * 64, cnt = std::min<std::size_t>(64, n - t0i);
                k.shiftedSums[d - 1](src, w.data() + t0i * d, shift.data() + t0i, cnt, sums.data() + t0i);
            }
            bestPass = std::max(bestPass, pairs / seconds(t0));
            double* best[3] = {&bestExp, &bestPair, &bestFma};
            double (*probes[3])(std::size_t) = {k.probeExp, k.probePair, k.probeFma};
            for (int probe = 0; probe < 3; ++probe) {
                double sink = 0;
                t0 = std::chrono::steady_clock::now();
#pragma omp parallel num_threads(threads) reduction(+ : sink)
                sink += probes[probe](probe == 2 ? 4 * probeRounds : probeRounds);
                const double rate = probeUnits * double(probe == 2 ? 4 * probeRounds : probeRounds) * threads / seconds(t0);
                *best[probe] = std::max(*best[probe], rate);
                if (sink == 12345.678) std::printf(" ");
            }
        }
        // Lane-FMAs/s over the operations of a pair: all of them on the FMA ports, or the adds elsewhere.
        const double boundAll = bestFma / kPairVectorOps, boundFma = bestFma / kPairFmaPortOps;
        std::printf("%s d=%d threads=%d %zux%zu: pass %.3g pairs/s | probe 2^x %.3g/s -> %.1f%% | probe pair(3-D) "
                    "%.3g/s -> %.1f%% | probe FMA %.3g lane-FMA/s: port bound (d=3) %.3g-%.3g pairs/s -> %.0f-%.0f%%\n",
                    sizeof(T) == 4 ? "fp32" : "fp64", d, threads, n, n, bestPass, bestExp, 100 * bestPass / bestExp,
                    bestPair, 100 * bestPass / bestPair, bestFma, boundAll, boundFma, 100 * bestPass / boundFma,
                    100 * bestPass / boundAll);
    }
}

}  // namespace

int main(int argc, char** argv)
{
    std::size_t n = 4096;
    int threads = 2, rounds = 15;
    std::vector<int> dims{1, 3, 8};
    std::string precision = "fp32";
    for (int i = 1; i + 1 < argc; i += 2) {
        const std::string opt = argv[i], val = argv[i + 1];
        if (opt == "--size") n = std::strtoul(val.c_str(), nullptr, 10);
        else if (opt == "--threads") threads = std::atoi(val.c_str());
        else if (opt == "--rounds") rounds = std::atoi(val.c_str());
        else if (opt == "--precision") precision = val;
        else if (opt == "--dims") {
            dims.clear();
            for (std::size_t p = 0; p < val.size();) {
                dims.push_back(std::atoi(val.c_str() + p));
                const std::size_t c = val.find(',', p);
                p = c == std::string::npos ? val.size() : c + 1;
            }
        } else {
            std::fprintf(stderr, "unknown option %s\n", opt.c_str());
            return 2;
        }
    }
    for (int d : dims)
        if (d < 1 || d > kMaxCloudDim || n < 1 || threads < 1 || rounds < 1) {
            std::fprintf(stderr, "need --size >= 1, --threads >= 1, --rounds >= 1, --dims in 1..8\n");
            return 2;
        }
    std::printf("SIMD path %s (UOT_SIMD overrides)\n", toString(activeSimdPath()).c_str());
    if (precision == "fp64") run<double>(n, threads, rounds, dims);
    else run<float>(n, threads, rounds, dims);
    return 0;
}
