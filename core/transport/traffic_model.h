#pragma once
// The one traffic model (docs/ALGORITHMS.md section 3): the bytes of the stored
// matrix that one iteration of an engine moves, counted as full sweeps (a read, or
// a write) over its rows x cols entries. Every engine's bytesPerIteration, the
// counters of its results (bytes per iteration, bytes moved) and the registry's
// figure for a variant (the benches' roofline, the pipeline's choices) come from
// here; an engine states only its sweeps and its entry size.

#include <cstddef>
#include <cstdint>

#include "core/transport/uot_problem.h"

namespace uot {

// Sweeps per iteration of the engines' passes.
namespace sweeps {
inline constexpr double kMatrixFree = 0;  // map-reduce: the cost is recomputed from the points
inline constexpr double kOneRead = 1;     // fused: the row update and the column sums in one read
inline constexpr double kTwoReads = 2;    // K v, then K^T u (also gpu-fused's pass for rows too wide)
inline constexpr double kTwoReadWrites = 4;  // gpu-mapuot: two kernels, each a read and a write of the plan
}  // namespace sweeps

// Bytes of one stored entry: storedEntryBytes when set (2 for bfloat16 storage),
// else the precision's 4 or 8.
constexpr std::size_t entryBytesFor(Precision precision, int storedEntryBytes = 0)
{
    return storedEntryBytes > 0 ? static_cast<std::size_t>(storedEntryBytes)
                                : (precision == Precision::Fp32 ? 4 : 8);
}

// The bytes one iteration moves: sweeps x rows x cols x entryBytes.
constexpr std::uint64_t matrixTrafficBytes(double sweepsPerIteration, std::size_t entryBytes, std::size_t rows,
                                           std::size_t cols)
{
    return static_cast<std::uint64_t>(sweepsPerIteration * double(entryBytes) * double(rows) * double(cols));
}

}  // namespace uot
