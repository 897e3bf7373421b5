#pragma once
// The machine's peak throughput of the two operations the matrix-free
// `mapreduce` variant is made of, measured in the same run as a benchmark:
// vector exponentials (the kernels' own 2^x, mapreduce_kernels.h, all in
// registers: no memory traffic) and vector FMAs. A matrix-free solve is
// compute-bound; its exponentials per second are reported as a share of this.

#include "core/transport/uot_problem.h"

namespace uot::perf {

struct ComputePeak {
    double expsPerSecond = 0;  // best repetition, all threads together
    // Pairs of 3-D points per second when nothing but the kernel's arithmetic runs
    // (score by 3 FMAs, one 2^x, accumulation; in registers): the compute ceiling
    // of a d = 3 map-reduce pass.
    double pairsPerSecond = 0;
    double fmaGflops = 0;      // best repetition, 2 flops per FMA lane
    int threads = 0;
};

// Runs each probe on `threads` OpenMP threads (0 = all) for about
// `seconds` in all, on the active SIMD path, in the given precision.
ComputePeak measureComputePeak(int threads, Precision precision, double seconds = 0.3);

}  // namespace uot::perf
