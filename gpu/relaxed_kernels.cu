// The over-relaxed step on the device (see relaxed_kernels.h). Two sweeps over the
// rows and columns (O(M + N), no read of K): the figures of
// core/transport/relaxed_step.cpp's afterPass, then one thread takes the decisions
// with the shared rules of relaxed_rules.h.

#include "gpu/relaxed_kernels.h"

#include <algorithm>
#include <cmath>

#include "gpu/cuda_support.h"
#include "gpu/relaxed_step_device.cuh"

namespace uot::gpu::detail {

namespace {

using namespace relaxed;

// Kernel 1: the sweep, then (the last block to finish) the decisions.
template <typename V>
__global__ void __launch_bounds__(kThreads) stepSweep(StepArgs<V> x)
{
    __shared__ double scratch[kWarps][kMaxValues];
    RelaxedState& st = *x.state;
    StepScalars& out = scalarsOf(x.work);
    if (st.stop != kRunning) {  // frozen: the commit undoes the pass
        if (blockIdx.x == 0 && threadIdx.x == 0) out.decision = 0;
        return;
    }
    const std::size_t start = blockIdx.x * std::size_t(kThreads) + threadIdx.x, stride = std::size_t(gridDim.x) * kThreads;
    sweepBlock(x, st.omega, Stride{start, x.rows, stride}, Stride{start, x.cols, stride},
               sweepPartials(x.work, blockIdx.x), scratch);
    if (!lastBlockToFinish(&st.tickets[0])) return;
    decideFromPartials(x, static_cast<int>(gridDim.x), st, out, scratch);
    if (threadIdx.x == 0) st.tickets[0] = 0;
}

// Kernel 2: the commit, then (the last block to finish, accepted steps) the error and the stop.
template <typename V>
__global__ void __launch_bounds__(kThreads) stepCommit(StepArgs<V> x)
{
    __shared__ double scratch[kWarps][kMaxValues];
    const StepScalars& sc = scalarsOf(x.work);
    const std::size_t start = blockIdx.x * std::size_t(kThreads) + threadIdx.x, stride = std::size_t(gridDim.x) * kThreads;
    if (!commitBlock(x, sc, Stride{start, x.rows, stride}, Stride{start, x.cols, stride},
                     commitPartials(x.work, blockIdx.x), scratch))
        return;
    RelaxedState& st = *x.state;
    if (!lastBlockToFinish(&st.tickets[1])) return;
    finishFromPartials(x, static_cast<int>(gridDim.x), sc, st, scratch);
    if (threadIdx.x == 0) st.tickets[1] = 0;
}

}  // namespace

std::size_t relaxedWorkDoubles()
{
    using namespace relaxed;
    return std::size_t(kMaxBlocks) * (kSweepSlots + int(kCommitSums)) + kScalarDoubles;
}

template <typename V>
void launchRelaxedStep(V* u, V* v, V* uSaved, V* vSaved, std::size_t rows, std::size_t cols, const double* a,
                       const double* b, const double* logA, const double* logB, const RelaxedParams& params,
                       RelaxedState* state, double* work, cudaStream_t stream)
{
    using namespace relaxed;
    const StepArgs<V> x{u, v, uSaved, vSaved, rows, cols, a, b, logA, logB, params, state, work};
    const std::size_t longest = std::max(rows, cols);
    const int blocks = static_cast<int>(std::clamp<std::size_t>((longest + kThreads - 1) / kThreads, 1, kMaxBlocks));
    stepSweep<V><<<blocks, kThreads, 0, stream>>>(x);
    UOT_CUDA_CHECK_LAUNCH();
    stepCommit<V><<<blocks, kThreads, 0, stream>>>(x);
    UOT_CUDA_CHECK_LAUNCH();
}

template void launchRelaxedStep<float>(float*, float*, float*, float*, std::size_t, std::size_t, const double*,
                                       const double*, const double*, const double*, const RelaxedParams&,
                                       RelaxedState*, double*, cudaStream_t);
template void launchRelaxedStep<double>(double*, double*, double*, double*, std::size_t, std::size_t, const double*,
                                        const double*, const double*, const double*, const RelaxedParams&,
                                        RelaxedState*, double*, cudaStream_t);

}  // namespace uot::gpu::detail
