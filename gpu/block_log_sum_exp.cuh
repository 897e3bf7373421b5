#pragma once
// Internal to gpu/: a log-sum-exp over the threads of one block, on top of
// log_sum_exp.cuh's online state (translation_kernels.cu, batched_solver.cu).

#include <cmath>

#include "gpu/log_sum_exp.cuh"

namespace uot::gpu::detail {

// A log-sum-exp state (lseAdd / lseMerge of log_sum_exp.cuh).
struct Lse {
    double m = -INFINITY, s = 0;
    __device__ void add(double x) { lseAdd(m, s, x); }
    __device__ void merge(double m2, double s2) { lseMerge(m, s, m2, s2); }
};

// log sum of the block's terms, returned to every thread (blockDim.x a multiple of
// 32; sharedM, sharedS: 32 doubles of shared memory each).
__device__ inline double blockLogSumExp(Lse local, double* sharedM, double* sharedS)
{
    for (int offset = 16; offset > 0; offset >>= 1) {
        const double m2 = __shfl_xor_sync(0xffffffffu, local.m, offset);
        const double s2 = __shfl_xor_sync(0xffffffffu, local.s, offset);
        local.merge(m2, s2);
    }
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    if (lane == 0) {
        sharedM[warp] = local.m;
        sharedS[warp] = local.s;
    }
    __syncthreads();
    if (warp == 0) {
        Lse total;
        if (lane < blockDim.x / 32) total = Lse{sharedM[lane], sharedS[lane]};
        for (int offset = 16; offset > 0; offset >>= 1) {
            const double m2 = __shfl_xor_sync(0xffffffffu, total.m, offset);
            const double s2 = __shfl_xor_sync(0xffffffffu, total.s, offset);
            total.merge(m2, s2);
        }
        if (lane == 0) sharedM[0] = total.m == -INFINITY ? -INFINITY : total.m + log(total.s);
    }
    __syncthreads();
    const double result = sharedM[0];
    __syncthreads();  // the shared slots are reused by the next reduction
    return result;
}

}  // namespace uot::gpu::detail
