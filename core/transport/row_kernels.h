#pragma once
// The inner loops of the CPU scaling solvers, one row of the matrix at a time,
// in three builds selected at run time: AVX-512, AVX2 + FMA, and portable C++.
//
// Every pointer is host memory aligned to 64 bytes, and every length n is a
// multiple of 64 bytes' worth of elements (16 floats / 8 doubles): solvers pad
// each row of their matrix with zeros to that stride, so the kernels never
// need a scalar tail. Partial sums are kept in several vector accumulators,
// combined in a fixed order (results depend only on the build path, not on
// timing or thread count).

#include <cstddef>
#include <string>

#include "core/transport/row_kernels_types.h"

namespace uot::kernels {

enum class SimdPath { Generic, Avx2, Avx512 };

// The path in use: the best the CPU supports, lowered by the environment
// variable UOT_SIMD=generic|avx2|avx512 (for tests and comparisons).
SimdPath activeSimdPath();
std::string toString(SimdPath path);

// Whether the fused and mapuot passes should use the interleaved kernels
// (fusedRows / mapRows) rather than the plain per-group sequence. Same results
// either way; only speed differs: interleaving measured faster on Intel Xeon
// (2 threads, 4096^2: fused fp32 2.5 -> 2.0 ms) and slower on the AMD EPYC
// development VM (fused fp64 2.1 -> 2.4 ms, mapuot fp32 1.3 -> 1.7 ms). True on
// Intel CPUs; UOT_ROW_PIPELINE=on|off overrides.
bool pipelinedRowsPreferred();

// Kernels of the active path.
template <typename T>
const RowKernels<T>& rowKernels();

// Kernels of one path (must be supported by the CPU).
const RowKernels<float>& rowKernelsFloat(SimdPath path);
const RowKernels<double>& rowKernelsDouble(SimdPath path);

// Elements of T per 64-byte line, and n rounded up to a multiple of it.
template <typename T>
constexpr std::size_t paddedLength(std::size_t n)
{
    constexpr std::size_t w = kAlignBytes / sizeof(T);
    return (n + w - 1) / w * w;
}

}  // namespace uot::kernels
