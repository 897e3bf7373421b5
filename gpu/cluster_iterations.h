#pragma once
// Internal to gpu/: gpu-fused's accelerated iteration (--accel relax|auto, plain or
// TI) for small problems such as palettes, a whole chunk of iterations in one
// launch. One thread-block cluster (16 blocks on sm_90 where it launches, else 8)
// holds everything on chip for the whole launch: each block its share of the rows
// of K, of the row scalings and weights, and of the columns' scalings and weights,
// in its shared memory; the column sums, the step's partials and the new column
// scalings pass between the blocks through distributed shared memory, with three
// cluster barriers an iteration and no global memory until the launch ends. The
// step is the same device code as the step kernels' (relaxed_step_device.cuh):
// the same figures and decisions, the same RelaxedState; the stopping test runs
// on the device and the launch ends when the state stops.

#include <cuda_runtime.h>

#include <cstddef>

#include "gpu/relaxed_kernels.h"

namespace uot::gpu::detail {

struct ClusterPlan {
    int blocks = 0;             // 0: the problem does not fit (use the kernels of one pass each)
    std::size_t tileRows = 0;   // rows of K (and of u, a) a block holds
    std::size_t colShare = 0;   // columns of v, b a block owns
    std::size_t sharedBytes = 0;
    bool usable() const { return blocks > 0; }
};

// Whether (and how) a rows x cols matrix of T fits one cluster's shared memory on
// `device`, up to 768 x 768 entries (the largest measured faster than the CUDA graph
// of the separate kernels) or, with anySize (gpu_bench's profile), as large as fits.
template <typename T>
ClusterPlan planClusterIterations(std::size_t rows, std::size_t cols, int device, bool anySize = false);

// The phases of one iteration, as block 0 of the cluster sees them (gpu_bench's
// profile of the launch: launchClusterIterations's phaseCycles).
enum ClusterPhase : int {
    kPhaseRows,            // the relaxed row update of the block's rows
    kPhaseColumnSums,      // the block's share of K^T u~, then a cluster barrier
    kPhaseColumnsSweep,    // its columns' G^pass from every block's sums, the step's sweep, a barrier
    kPhaseDecide,          // every block's sweep partials reduced, the decision
    kPhaseCommit,          // the commit of its rows and columns, a barrier
    kPhaseFinish,          // the stopping figures, the new v gathered from every block
    kClusterPhases
};

// Runs up to `count` accelerated iterations from the accepted iterate (u, v) =
// (uSaved, vSaved): K (pitch `pitch`), the row exponent fa (the column one is
// params.fb); state and work as launchRelaxedStep's (work is not used). Stops
// early when the state stops (converged, the cap, not finite). phaseCycles, when
// not null: kClusterPhases counters to which block 0's clock cycles in each
// phase are added (a separate build of the kernel; the iterations are the same).
// plainOnly (gpu_bench's bound on what the step may cost): plain iterations
// instead, u = (a / K v)^fa and v = (b / K^T u)^fb, in the same launch with no
// step, no stopping test and two cluster barriers an iteration (state is read,
// not changed; the columns and the gather counted under kPhaseFinish).
template <typename T>
void launchClusterIterations(const ClusterPlan& plan, const T* K, std::size_t rows, std::size_t cols,
                             std::size_t pitch, T* u, T* v, T* uSaved, T* vSaved, const double* a, const double* b,
                             const double* logA, const double* logB, double fa, const RelaxedParams& params,
                             RelaxedState* state, double* work, int count, cudaStream_t stream,
                             long long* phaseCycles = nullptr, bool plainOnly = false);

}  // namespace uot::gpu::detail
