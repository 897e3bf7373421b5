#pragma once
// Internal to gpu/: gpu-fused's accelerated iteration (--accel relax|auto, plain or
// TI) for small problems such as palettes, in one launch per check interval. One
// thread-block cluster (16 blocks on sm_90 where it launches, else 8) holds the
// matrix on chip, each block its share of the rows in shared memory, and runs the
// iterations there: the relaxed row pass, the column update and the step of
// relaxed_kernels.h, with cluster barriers between the phases instead of kernel
// launches. The step is the same device code as the step kernels'
// (relaxed_step_device.cuh): the same figures and decisions, the same RelaxedState.
// Used when Tuning::clusterIterations is set (off by default, see gpu_backend.h).

#include <cuda_runtime.h>

#include <cstddef>

#include "gpu/relaxed_kernels.h"

namespace uot::gpu::detail {

struct ClusterPlan {
    int blocks = 0;             // 0: the problem does not fit (use the kernels of one pass each)
    std::size_t tileRows = 0;   // rows of K a block holds
    std::size_t sharedBytes = 0;
    bool usable() const { return blocks > 0; }
};

// Whether (and how) a rows x cols matrix of T fits one cluster's shared memory on `device`.
template <typename T>
ClusterPlan planClusterIterations(std::size_t rows, std::size_t cols, int device);

// Elements of T the launch needs for the blocks' column partials.
std::size_t clusterPartialsCount(const ClusterPlan& plan, std::size_t cols);

// Runs `count` accelerated iterations from the accepted iterate (u, v) = (uSaved,
// vSaved): K (pitch `pitch`), the row exponent fa (the column one is params.fb);
// state and work as launchRelaxedStep's; partials: clusterPartialsCount elements.
// Iterations after the state stopped are not run.
template <typename T>
void launchClusterIterations(const ClusterPlan& plan, const T* K, std::size_t rows, std::size_t cols,
                             std::size_t pitch, T* u, T* v, T* uSaved, T* vSaved, const double* a, const double* b,
                             const double* logA, const double* logB, double fa, const RelaxedParams& params,
                             RelaxedState* state, double* work, T* partials, int count, cudaStream_t stream);

}  // namespace uot::gpu::detail
