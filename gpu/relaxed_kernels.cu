// The over-relaxed step on the device (see relaxed_kernels.h). Two sweeps over the
// rows and columns (O(M + N), no read of K): the figures of
// core/transport/relaxed_step.cpp's afterPass, then one thread takes the decisions
// with the shared rules of relaxed_rules.h.

#include "gpu/relaxed_kernels.h"

#include <algorithm>
#include <cmath>

#include "gpu/cuda_support.h"
#include "gpu/gpu_kernels_device.cuh"
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
    decideFromPartials(x, static_cast<int>(gridDim.x), GlobalSweepPartials{x.work}, st, out, scratch);
    if (threadIdx.x == 0) st.tickets[0] = 0;
}

// gpu-fused's column half-step with the sweep in it: each block finalizes its 32
// columns (G^pass into v), then sweeps them and its share of the rows (the pass has
// left F~ in u); the last block to finish decides. The commit follows.
constexpr int kFinalizeLanes = kThreads / 32;

template <typename T>
__global__ void __launch_bounds__(kThreads) columnsAndSweep(T* partials, int partialRows, bool rezero,
                                                             std::size_t pitch, double fb, T* colSums, StepArgs<T> x)
{
    __shared__ T sums[kFinalizeLanes][33];
    __shared__ double scratch[kWarps][kMaxValues];
    gridDependentsLaunch();  // the commit may be scheduled (it waits for this grid)
    gridDependencyWait();    // every block of the pass has written its partials and u
    finalizeColumn<T, kFinalizeLanes>(partials, partialRows, rezero, pitch, x.cols, x.b, fb, x.v, colSums, sums);
    RelaxedState& st = *x.state;
    if (st.stop != kRunning) {  // frozen: the commit undoes the pass
        if (blockIdx.x == 0 && flatThread() == 0) scalarsOf(x.work).decision = 0;
        return;
    }
    // Column j's v was written above by this very thread (threadIdx.y == 0).
    const std::size_t j = blockIdx.x * std::size_t(32) + threadIdx.x;
    const Stride cols = threadIdx.y == 0 ? Stride{j, min(j + 1, x.cols), 1} : Stride{0, 0, 1};
    const std::size_t stride = std::size_t(gridDim.x) * kThreads;
    sweepBlock(x, st.omega, Stride{blockIdx.x * std::size_t(kThreads) + flatThread(), x.rows, stride}, cols,
               sweepPartials(x.work, blockIdx.x), scratch);
    if (!lastBlockToFinish(&st.tickets[0])) return;
    decideFromPartials(x, static_cast<int>(gridDim.x), GlobalSweepPartials{x.work}, st, scalarsOf(x.work), scratch);
    if (flatThread() == 0) st.tickets[0] = 0;
}

// Kernel 2: the commit, then (the last block to finish, accepted steps) the error and the stop.
template <typename V>
__global__ void __launch_bounds__(kThreads) stepCommit(StepArgs<V> x)
{
    __shared__ double scratch[kWarps][kMaxValues];
    gridDependencyWait();    // launched early after columnsAndSweep: its decision is complete
    gridDependentsLaunch();  // the next pass may start streaming K (it waits before reading u, v)
    const StepScalars& sc = scalarsOf(x.work);
    const std::size_t start = blockIdx.x * std::size_t(kThreads) + threadIdx.x, stride = std::size_t(gridDim.x) * kThreads;
    if (!commitBlock(x, sc, Stride{start, x.rows, stride}, Stride{start, x.cols, stride},
                     commitPartials(x.work, blockIdx.x), scratch))
        return;
    RelaxedState& st = *x.state;
    if (!lastBlockToFinish(&st.tickets[1])) return;
    finishFromPartials(x, static_cast<int>(gridDim.x), GlobalCommitPartials{x.work}, sc, st, scratch);
    if (threadIdx.x == 0) st.tickets[1] = 0;
}

}  // namespace

std::size_t relaxedWorkDoubles(std::size_t cols)
{
    using namespace relaxed;
    const std::size_t sweepBlocks = std::max<std::size_t>(kMaxBlocks, (cols + 31) / 32);
    return kScalarDoubles + std::size_t(kMaxBlocks) * kCommitSums + sweepBlocks * kSweepSlots;
}

namespace {

using namespace relaxed;

int stepBlocks(std::size_t rows, std::size_t cols)
{
    const std::size_t longest = std::max(rows, cols);
    return static_cast<int>(std::clamp<std::size_t>((longest + kThreads - 1) / kThreads, 1, kMaxBlocks));
}

template <typename V>
void launchCommit(const StepArgs<V>& x, bool programmatic, cudaStream_t stream)
{
    LaunchConfig launch(dim3(static_cast<unsigned>(stepBlocks(x.rows, x.cols))), dim3(kThreads), stream, programmatic);
    UOT_CUDA_CHECK(cudaLaunchKernelEx(&launch.config, stepCommit<V>, x));
}

}  // namespace

template <typename V>
void launchRelaxedStep(V* u, V* v, V* uSaved, V* vSaved, std::size_t rows, std::size_t cols, const double* a,
                       const double* b, const double* logA, const double* logB, const RelaxedParams& params,
                       RelaxedState* state, double* work, cudaStream_t stream)
{
    using namespace relaxed;
    const StepArgs<V> x{u, v, uSaved, vSaved, rows, cols, a, b, logA, logB, params, state, work};
    stepSweep<V><<<stepBlocks(rows, cols), kThreads, 0, stream>>>(x);
    UOT_CUDA_CHECK_LAUNCH();
    launchCommit(x, false, stream);
}

template <typename T>
void launchColumnsAndRelaxedStep(T* partials, int partialRows, std::size_t pitch, double fb, T* colSums, T* u, T* v,
                                 T* uSaved, T* vSaved, std::size_t rows, std::size_t cols, const double* a,
                                 const double* b, const double* logA, const double* logB,
                                 const RelaxedParams& params, RelaxedState* state, double* work, bool programmatic,
                                 cudaStream_t stream)
{
    using namespace relaxed;
    const StepArgs<T> x{u, v, uSaved, vSaved, rows, cols, a, b, logA, logB, params, state, work};
    // Private rows per block (negative count) are overwritten by the next pass;
    // shared rows are accumulated with atomics and zeroed again.
    const bool rezero = partialRows > 0;
    LaunchConfig launch(dim3(static_cast<unsigned>((cols + 31) / 32)), dim3(32, kFinalizeLanes), stream, programmatic);
    UOT_CUDA_CHECK(cudaLaunchKernelEx(&launch.config, columnsAndSweep<T>, partials, rezero ? partialRows : -partialRows,
                                      rezero, pitch, fb, colSums, x));
    launchCommit(x, programmatic, stream);
}

template void launchRelaxedStep<float>(float*, float*, float*, float*, std::size_t, std::size_t, const double*,
                                       const double*, const double*, const double*, const RelaxedParams&,
                                       RelaxedState*, double*, cudaStream_t);
template void launchRelaxedStep<double>(double*, double*, double*, double*, std::size_t, std::size_t, const double*,
                                        const double*, const double*, const double*, const RelaxedParams&,
                                        RelaxedState*, double*, cudaStream_t);
#define UOT_INSTANTIATE(T)                                                                                          \
    template void launchColumnsAndRelaxedStep<T>(T*, int, std::size_t, double, T*, T*, T*, T*, T*, std::size_t,     \
                                                 std::size_t, const double*, const double*, const double*,         \
                                                 const double*, const RelaxedParams&, RelaxedState*, double*, bool, \
                                                 cudaStream_t);
UOT_INSTANTIATE(float)
UOT_INSTANTIATE(double)
#undef UOT_INSTANTIATE

}  // namespace uot::gpu::detail
