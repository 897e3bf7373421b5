#pragma once
// Internal to gpu/: the kernels of gpu-mapreduce, the matrix-free log-domain
// solver for point-cloud costs C_ij = scale |x_i - y_j|^2 (KeOps GpuConv1D
// style: one thread per own point, tiles of the other point set staged in
// shared memory, the cost recomputed on the fly, never stored).
//
// One half-step ("pass") updates the potentials of one side (own) from those of
// the other side:  pot_i = f (logW_i - LSE_j(logK_ij + potOther_j)).
// Arithmetic is fp32 in log2 units with the expansion
//   -C_ij/eps log2(e) = t_ij - s2 |x_i|^2,  t_ij = 2 s2 x_i.y_j + w_j,
//   w_j = (potOther_j + logRefOther_j) log2(e) - s2 |y_j|^2,  s2 = scale/eps log2(e),
// on centred coordinates (the cost is translation invariant), so a term costs d
// FMAs, one add, one exp2 and one add.
//
// Two ways to reduce a row, both underflow-free:
//  - fast: every term is taken relative to the row's log-sum-exp of the previous
//    pass (`shift`); the sum is accepted when it lies in [2^-40, 2^60], else the
//    pass is flagged and redone exactly;
//  - exact: an online log-sum-exp with a running max (first pass, flagged passes).
// Both write partials per block and row block (gpu/mapreduce_schedule.h) that
// a finalize kernel merges per row in float64 (log-sum-exp of the partials).

#include <cuda_runtime.h>

#include <cstddef>

#include "gpu/mapreduce_config.h"
#include "gpu/mapreduce_schedule.h"

namespace uot::gpu::detail {

constexpr int kMapReduceMaxDim = 8;
constexpr int kMapReduceTile = 256;  // points of the other side per shared-memory tile

// Floats per packed point: the coordinates, then w (or unused for the own side).
inline int mapReduceStride(int dim) { return dim == 3 ? 4 : dim + 1; }

// Points padded to a whole number of tiles (padding: coordinates 0, w = -inf).
inline std::size_t mapReducePadded(std::size_t count)
{
    return (count + kMapReduceTile - 1) / kMapReduceTile * kMapReduceTile;
}

// One side of the problem on the device.
struct MapReduceSide {
    float* packed = nullptr;        // padded x stride floats: centred coordinates, then w
    const double* norm2 = nullptr;  // |x_i|^2 of the (float-rounded) centred coordinates, count
    double* pot = nullptr;          // log-scalings (potentials / eps), count
    const double* logW = nullptr;   // log weights, count
    const double* logRef = nullptr; // log weights when the reference measure is a b^T, else null
    float* shift = nullptr;         // log2-sum-exp of t over the other side from the last pass, count
    std::size_t count = 0;
    double exponent = 1;            // f = tau / (tau + eps)
};

// How a pass is divided among blocks (gpu/mapreduce_schedule.h): the balanced
// or the split schedule (config.balanced), sized from the kernels' occupancy on
// `device` (or config.blocks).
MapReduceSchedule planMapReducePass(int dim, std::size_t ownCount, std::size_t otherCount,
                                    const MapReduceConfig& config, int device);

// Scratch of a pass: maxSegments x ownCount partial sums (and maxima), and the flag
// that asks for the exact reduction (1 = redo exactly; set by the host before the
// first pass of each side, cleared after every exact pass).
struct MapReduceScratch {
    float* partialSum = nullptr;
    float* partialMax = nullptr;
    int* exactFlag = nullptr;
};

// One pass: writes own.pot (and own.shift) from other.pot. s2 = scale/eps log2(e).
// config picks the compiled variant (gpu/mapreduce_config.h); plan must come from
// planMapReducePass with the same config.
void launchMapReducePass(int dim, const MapReduceSide& own, const MapReduceSide& other, double s2,
                         const MapReduceSchedule& plan, const MapReduceScratch& scratch,
                         const MapReduceConfig& config, cudaStream_t stream);

// Exp-throughput probe: exp2 evaluations per second of the special-function
// units (ex2.approx), measured over `seconds`-ish of work.
double measureExp2PerSecond(int device);

}  // namespace uot::gpu::detail
