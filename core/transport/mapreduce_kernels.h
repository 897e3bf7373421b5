#pragma once
// The inner loops of the matrix-free `mapreduce` variant (mapreduce_solver.h):
// log-sum-exp reductions over a point cloud whose cost to each target point is
// recomputed on the fly, never stored. Built for AVX-512, AVX2 + FMA and
// portable C++ (the same source, mapreduce_kernels_impl.h, compiled three
// times) and picked at run time with the row kernels' rule (row_kernels.h:
// activeSimdPath, UOT_SIMD).
//
// The solver writes each pass in base-2 "scores": for target t with weights
// w_t (dim values) and source s with coordinates q_s and offset h_s,
//   y_ts = h_s + sum_d w_td q_sd
// (the squared distance expanded: see mapreduce_solver.cpp). The kernels sum
//   S_t = sum_s 2^(clamp(y_ts - shift_t, kLow, kHigh))
// with shift_t an integer the caller picks (its previous log2 S_t, or the true
// maximum), so there is no per-entry running max and one exponential per entry.
// 2^x is a polynomial of the fraction times 2^n: on AVX-512 by vreduce + vscalef
// (no clamp needed: exact 0 below range, inf above); elsewhere n goes into the
// exponent bits after the clamp, and entries clamped at kLow count 2^kLow
// (negligible next to a sum the caller accepts, see MapReduceLimits). An entry
// above kHigh (or inf) puts the sum out of the accepted range, and the caller
// redoes that target with shift_t = its maximum.

#include <cstddef>

#include "core/transport/row_kernels.h"

namespace uot::kernels {

inline constexpr int kMaxCloudDim = 8;

// Sources in structure-of-arrays form, host memory aligned to 64 bytes:
// q[d * ld + s] (d < dim) and h[s], s < ld; ld is a multiple of 64 bytes'
// worth of T, and the pads beyond the real sources have q = 0 and h very
// negative (they clamp to kLow).
template <typename T>
struct CloudSources {
    const T* q = nullptr;
    const T* h = nullptr;
    std::size_t ld = 0;
};

// Clamp bounds of the shifted exponent and the range of sums the caller accepts.
template <typename T>
struct MapReduceLimits;
template <>
struct MapReduceLimits<float> {
    static constexpr float kLow = -125, kHigh = 100;
    static constexpr double kAcceptLow = 0x1p-60, kAcceptHigh = 0x1p60;
};
template <>
struct MapReduceLimits<double> {
    static constexpr double kLow = -1000, kHigh = 600;
    static constexpr double kAcceptLow = 0x1p-300, kAcceptHigh = 0x1p300;
};

template <typename T>
struct MapReduceKernels {
    // For targets t < count: sums[t] = S_t (float64). w: count x dim target
    // weights (row-major), shift: count integer-valued shifts. Entry [dim - 1].
    void (*shiftedSums[kMaxCloudDim])(const CloudSources<T>& src, const T* w, const T* shift, std::size_t count,
                                      double* sums);
    // For targets t < count: out[t] = max_s y_ts (pads included, they never win).
    void (*maxScores[kMaxCloudDim])(const CloudSources<T>& src, const T* w, std::size_t count, T* out);
    // Throughput probes (docs/BENCHMARKS.md, map-reduce): `rounds` rounds of
    // kProbeStreams independent vector exponentials (the kernels' own 2^x), or
    // of kProbeStreams independent vector FMAs. Return a checksum (keep it).
    // probePair: the kernel's arithmetic for pairs of 3-D points (score by 3
    // FMAs, 2^x, accumulation) in registers, kProbeStreams pair-vectors a round.
    double (*probeExp)(std::size_t rounds);
    double (*probePair)(std::size_t rounds);
    double (*probeFma)(std::size_t rounds);
    std::size_t lanes;  // T values per vector on this path
};

inline constexpr std::size_t kProbeStreams = 8;

template <typename T>
const MapReduceKernels<T>& mapReduceKernels();  // active path

const MapReduceKernels<float>& mapReduceKernelsFloat(SimdPath path);
const MapReduceKernels<double>& mapReduceKernelsDouble(SimdPath path);

}  // namespace uot::kernels
