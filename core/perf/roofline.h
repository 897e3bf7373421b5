#pragma once
// Roofline accounting for one UOT iteration: bytes of matrix traffic, floating
// point operations, operational intensity, and the figures a benchmark or the
// app derives from a measured time (docs/notes/benchmark-history.md, "Definitions").
//
// Flop convention (per iteration, M rows x N cols): every variant touches each
// matrix element twice with a multiply-add (K v and K^T u, or their fused /
// in-place equivalents), i.e. 4 M N flops; the M + N scaling updates
// ((a_i / r_i)^f and the like) are counted as transcendentals, not flops. The
// log-domain variant additionally evaluates about 2 M N exponentials. The
// matrix-free `mapreduce` moves no matrix bytes and is counted by its own
// kernel's operations (mapReduceFlopsPerEntry, d = 3) and 2 M N exponentials;
// its operational intensity is taken over the points it must stream (pointBytes),
// which puts it far right of the ridge: compute-bound, held against the
// exp-and-FMA roof of matrixFreeRoofGflops rather than the memory roof.

#include <cstddef>
#include <cstdint>
#include <string>

#include "core/transport/uot_problem.h"

namespace uot::perf {

struct IterationCost {
    std::uint64_t bytes = 0;       // matrix bytes moved per iteration (reads + writes)
    double flops = 0;              // additions and multiplications per iteration
    double transcendentals = 0;    // pow / exp / log evaluations per iteration
    bool readOnly = true;          // the matrix is only read (peak to compare with: streaming read)
    // Matrix-free variants (bytes == 0): the point data one iteration streams at
    // the least, a row and a column pass each reading both clouds as fp32
    // (coordinates + potential: 4 floats a point at d = 3).
    std::uint64_t pointBytes = 0;
};

// The cost of one iteration of the registered variant `variant` on a rows x cols
// problem, from its capabilities (core/registry/solver_registry.h). Unknown
// names get the two-mat-vec figures (2 reads). `bytes` follows
// docs/ALGORITHMS.md section 3; pass the solver's own bytesPerIteration() where
// a solver object exists, it is authoritative.
IterationCost iterationCost(const std::string& variant, std::size_t rows, std::size_t cols, Precision precision);

// Flops per byte of matrix traffic; for a matrix-free cost (bytes 0), per byte
// of point traffic (pointBytes); 0 when both are 0.
double operationalIntensity(const IterationCost& cost);

// The compute roof of a matrix-free variant in GFLOP/s: its device's measured
// peak rate of whole entries (the GPU's exp2 probe, gpu/gpu_backend.h, one
// exponential an entry; the CPU's pair probe, core/perf/compute_probe.h) times
// the flops an entry counts (mapReduceFlopsPerEntry, d = 3, fp32).
double matrixFreeRoofGflops(double entriesPerSecond);

struct RooflineFigures {
    double msPerIteration = 0;       // milliseconds
    double iterationsPerSecond = 0;
    double gbps = 0;                 // achieved bandwidth: bytes / time / 1e9
    double gflops = 0;               // flops / time / 1e9
    double operationalIntensity = 0; // flops per byte
    double pctOfPeak = 0;            // 100 * gbps / peakGBps (0 when the peak is unknown)
};

// Figures for an iteration that took secondsPerIteration, against the measured
// peak bandwidth in GB/s (streaming read for read-only variants, read+write for
// in-place ones). secondsPerIteration must be > 0.
RooflineFigures rooflineFigures(const IterationCost& cost, double secondsPerIteration, double peakGBps);

}  // namespace uot::perf
