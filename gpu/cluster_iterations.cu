// gpu-fused's accelerated iteration in one thread-block cluster (see
// cluster_iterations.h). Block q of the cluster owns rows [q R, (q + 1) R) of K
// and of u, a (R = tileRows) and columns [q C, (q + 1) C) of v, b (C = colShare),
// all in its shared memory, plus a copy of the whole v for its row update. One
// iteration:
//   rows:    u~_i = relaxed (a_i / (K v)_i)^fa over its rows (a warp a row)
//   columns: its rows' share of K^T u~ into its column sums;    cluster barrier
//            its columns: G^pass = (b / every block's sums)^fb, read through
//            distributed shared memory, then its share of the step's sweep;
//                                                              cluster barrier
//   step:    every block reduces every block's sweep partials and takes the same
//            decisions (its own copy of the state; block 0 writes it back at the
//            end); the commit of its rows and columns;        cluster barrier
//            the stopping figures (every block), and the new v gathered.
// The step's pieces are those of the step kernels (relaxed_step_device.cuh),
// reading the block's arrays in shared memory through StepArgs whose pointers are
// shifted so that the global indices address them. Global memory is read at the
// start of a launch and written at its end.

#include "gpu/cluster_iterations.h"

#include <cooperative_groups.h>

#include <algorithm>
#include <cstring>

#include "gpu/cuda_support.h"
#include "gpu/gpu_kernels_device.cuh"
#include "gpu/relaxed_step_device.cuh"

namespace uot::gpu::detail {

namespace {

namespace cg = cooperative_groups;
using namespace relaxed;

constexpr int kPreferredBlocks = 16;  // the largest cluster of sm_90 (non-portable)
constexpr int kPortableBlocks = 8;
constexpr int kRowsAtOnce = 4;  // rows of K v a warp sums side by side
// Dynamic shared memory a block may take (the opt-in 227 KB of sm_90 less the
// kernel's static arrays and some room).
constexpr std::size_t kMaxSharedBytes = 220 * 1024;
// The largest matrix the cluster takes, in entries: the largest measured against the
// CUDA graph of one check interval (H100, TI + automatic omega: 36.6 against 44.0 µs an
// iteration at 768^2; docs/BENCHMARKS.md, 2026-11-27). Larger ones that fit were not measured.
constexpr std::size_t kMaxEntries = 768 * 768;

// Where a block's arrays lie in its dynamic shared memory: the float64 ones first
// (offsets in doubles), then those of the scalings' type (offsets in T after them).
struct ClusterLayout {
    std::size_t a, logA, b, logB, gPass, sweep, commit, doubles;
    std::size_t tile, vAll, colSums, u, uSaved, v, vSaved, values;
};

__host__ __device__ inline ClusterLayout clusterLayout(std::size_t tileRows, std::size_t colShare, std::size_t cols)
{
    ClusterLayout l{};
    l.a = 0;
    l.logA = l.a + tileRows;
    l.b = l.logA + tileRows;
    l.logB = l.b + colShare;
    l.gPass = l.logB + colShare;
    l.sweep = l.gPass + colShare;
    l.commit = l.sweep + kSweepSlots;
    l.doubles = (l.commit + kCommitSums + 1) / 2 * 2;  // 16-byte aligned T arrays
    l.tile = 0;
    l.vAll = l.tile + tileRows * cols;
    l.colSums = l.vAll + cols;
    l.u = l.colSums + cols;
    l.uSaved = l.u + tileRows;
    l.v = l.uSaved + tileRows;
    l.vSaved = l.v + colShare;
    l.values = l.vSaved + colShare;
    return l;
}

template <typename T>
std::size_t clusterSharedBytes(std::size_t tileRows, std::size_t colShare, std::size_t cols)
{
    const ClusterLayout l = clusterLayout(tileRows, colShare, cols);
    return l.doubles * sizeof(double) + l.values * sizeof(T);
}

// Value k of block blk's step partials (decideFromPartials's and finishFromPartials's
// Partials), read from that block's shared memory.
struct ClusterPartials {
    cg::cluster_group cluster;
    double* local;  // this block's partials; the same offset in every block
    __device__ double operator()(int blk, int k) const { return cluster.map_shared_rank(local, blk)[k]; }
};

// Block 0's clock at the phases' ends, added to `cycles` (kTimed builds only).
template <bool kTimed>
struct PhaseClock {
    long long last = 0;
    long long cycles[kClusterPhases] = {};
    __device__ void start() { last = clock64(); }
    __device__ void mark(int phase)
    {
        const long long now = clock64();
        cycles[phase] += now - last;
        last = now;
    }
};
template <>
struct PhaseClock<false> {
    __device__ void start() {}
    __device__ void mark(int) {}
};

// kStep false: plain iterations (u = (a / K v)^fa, v = (b / K^T u)^fb; no step, no
// stopping test, two cluster barriers), gpu_bench's measure of what the iteration
// costs without the step.
template <typename T, bool kTimed, bool kStep = true>
__global__ void __launch_bounds__(kThreads)
    clusterIterationsKernel(const T* __restrict__ K, std::size_t pitch, double fa, std::size_t tileRows,
                            std::size_t colShare, StepArgs<T> g, int count, long long* phaseCycles)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    extern __shared__ __align__(16) double clusterShared[];
    __shared__ double scratch[kWarps][kMaxValues];
    __shared__ __align__(16) unsigned char stateBytes[sizeof(RelaxedState)];
    __shared__ __align__(16) unsigned char scalarBytes[sizeof(StepScalars)];
    RelaxedState& st = *reinterpret_cast<RelaxedState*>(stateBytes);
    StepScalars& sc = *reinterpret_cast<StepScalars*>(scalarBytes);
    cg::cluster_group cluster = cg::this_cluster();
    const int rank = static_cast<int>(cluster.block_rank());
    const int blocks = static_cast<int>(cluster.num_blocks());
    const std::size_t rows = g.rows, cols = g.cols;
    const std::size_t r0 = std::min(rows, rank * tileRows), r1 = std::min(rows, r0 + tileRows);
    const std::size_t c0 = std::min(cols, rank * colShare), c1 = std::min(cols, c0 + colShare);
    const std::size_t ownRows = r1 - r0;
    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;

    const ClusterLayout l = clusterLayout(tileRows, colShare, cols);
    double* sd = clusterShared;
    T* sv = reinterpret_cast<T*>(sd + l.doubles);
    T* tile = sv + l.tile;  // ownRows x cols
    T* vAll = sv + l.vAll;  // the whole v, for the row update
    T* colSums = sv + l.colSums;
    T* uOwn = sv + l.u;
    T* vOwn = sv + l.v;
    // The step's view: the block's slices, addressed by global row and column indices.
    StepArgs<T> x = g;
    x.u = uOwn - r0;
    x.uSaved = sv + l.uSaved - r0;
    x.v = vOwn - c0;
    x.vSaved = sv + l.vSaved - c0;
    x.a = sd + l.a - r0;
    x.logA = sd + l.logA - r0;
    x.b = sd + l.b - c0;
    x.logB = sd + l.logB - c0;
    x.gPass = sd + l.gPass - c0;
    double* gPass = sd + l.gPass - c0;
    const ClusterPartials sweepParts{cluster, sd + l.sweep}, commitParts{cluster, sd + l.commit};
    // Each thread takes at most one row and one column of the step (tileRows and
    // colShare are below kThreads / 2), rows and columns on different threads.
    const Stride myRows{r0 + tid, r1, kThreads};
    const Stride myCols{c0 + (tid + kThreads / 2) % kThreads, c1, kThreads};

    if (tid == 0) std::memcpy(&st, g.state, sizeof(RelaxedState));
    for (std::size_t k = tid; k < ownRows * cols; k += kThreads) tile[k] = K[(r0 + k / cols) * pitch + k % cols];
    for (std::size_t i = r0 + tid; i < r1; i += kThreads) {
        sd[l.a + (i - r0)] = g.a[i];
        sd[l.logA + (i - r0)] = g.logA[i];
        x.u[i] = g.u[i];
        x.uSaved[i] = g.uSaved[i];
    }
    for (std::size_t j = c0 + tid; j < c1; j += kThreads) {
        sd[l.b + (j - c0)] = g.b[j];
        sd[l.logB + (j - c0)] = g.logB[j];
        x.v[j] = g.v[j];
        x.vSaved[j] = g.vSaved[j];
    }
    for (std::size_t j = tid; j < cols; j += kThreads) vAll[j] = g.v[j];
    __syncthreads();

    PhaseClock<kTimed> clock;
    clock.start();
    for (int it = 0; it < count && st.stop == kRunning; ++it) {
        const double w = kStep ? st.omega : 1.0;
        // (K v)_i a warp a row, kRowsAtOnce of a warp's rows side by side (each summed
        // in the same order as alone), then the scalings a thread a row. Relaxed:
        // u~ = u_old^(1 - w) (a / (K v))^(w fa) in logs, (1 - w) F_old + w fa (log a -
        // log (K v)): relaxedScaling of scalingPow without the pow and its log.
        for (std::size_t r = warp; r < ownRows; r += kRowsAtOnce * kWarps) {
            T dot[kRowsAtOnce];
            const T* row[kRowsAtOnce];
#pragma unroll
            for (int q = 0; q < kRowsAtOnce; ++q) {
                dot[q] = T(0);
                row[q] = tile + std::min(r + q * kWarps, ownRows - 1) * cols;
            }
            for (std::size_t j = lane; j < cols; j += 32) {
                const T vj = vAll[j];
#pragma unroll
                for (int q = 0; q < kRowsAtOnce; ++q) dot[q] += row[q][j] * vj;
            }
            warpReduce<Op::Sum>(dot);
            if (lane == 0)
#pragma unroll
                for (int q = 0; q < kRowsAtOnce; ++q)
                    if (r + q * kWarps < ownRows) uOwn[r + q * kWarps] = dot[q];
        }
        __syncthreads();
        for (std::size_t r = tid; r < ownRows; r += kThreads) {
            const std::size_t i = r0 + r;
            uOwn[r] = w == 1.0 ? scalingPow(x.a[i], uOwn[r], fa)
                               : static_cast<T>(exp((1.0 - w) * log(static_cast<double>(x.uSaved[i])) +
                                                    w * (fa * (x.logA[i] - log(static_cast<double>(uOwn[r]))))));
        }
        __syncthreads();
        clock.mark(kPhaseRows);
        for (std::size_t j = tid; j < cols; j += kThreads) {
            T sum = T(0);
            for (std::size_t r = 0; r < ownRows; ++r) sum += tile[r * cols + j] * uOwn[r];
            colSums[j] = sum;
        }
        cluster.sync();
        clock.mark(kPhaseColumnSums);
        // Column j's sum over the cluster: every block's share loaded first (all in
        // flight), then added in block order.
        auto columnTotal = [&](std::size_t j) {
            T sums[kPreferredBlocks];
#pragma unroll
            for (int q = 0; q < kPreferredBlocks; ++q)
                sums[q] = q < blocks ? cluster.map_shared_rank(colSums, q)[j] : T(0);
            T total = T(0);
#pragma unroll
            for (int q = 0; q < kPreferredBlocks; ++q)
                if (q < blocks) total += sums[q];
            return total;
        };
        if constexpr (!kStep) {
            for (std::size_t j = c0 + tid; j < c1; j += kThreads)
                vOwn[j - c0] = scalingPow(x.b[j], columnTotal(j), x.p.fb);
            cluster.sync();
        } else {
            for (std::size_t j = c0 + tid; j < c1; j += kThreads) {
                const T total = columnTotal(j);
                // G^pass = f_b (log b - log sum), kept in float64 for the step (no pow, no
                // log of a stored v); v is written by the commit.
                gPass[j] = x.p.fb * (x.logB[j] - log(static_cast<double>(total)));
            }
            __syncthreads();
            sweepBlock(x, w, myRows, myCols, sd + l.sweep, scratch);
            cluster.sync();
            clock.mark(kPhaseColumnsSweep);
            decideFromPartials<true>(x, blocks, sweepParts, st, sc, scratch);
            __syncthreads();
            clock.mark(kPhaseDecide);
            const bool accepted = commitBlock(x, sc, myRows, myCols, sd + l.commit, scratch);
            cluster.sync();
            clock.mark(kPhaseCommit);
            if (accepted) finishFromPartials<true>(x, blocks, commitParts, sc, st, scratch);
        }
        for (std::size_t j = tid; j < cols; j += kThreads)
            vAll[j] = cluster.map_shared_rank(vOwn, static_cast<int>(j / colShare))[j % colShare];
        __syncthreads();
        clock.mark(kPhaseFinish);
    }
    for (std::size_t i = r0 + tid; i < r1; i += kThreads) {
        g.u[i] = x.u[i];
        g.uSaved[i] = x.uSaved[i];
    }
    for (std::size_t j = c0 + tid; j < c1; j += kThreads) {
        g.v[j] = x.v[j];
        g.vSaved[j] = x.vSaved[j];
    }
    if (rank == 0 && tid == 0) {
        std::memcpy(g.state, &st, sizeof(RelaxedState));
        if constexpr (kTimed)
            for (int p = 0; p < kClusterPhases; ++p) phaseCycles[p] += clock.cycles[p];
    }
    cluster.sync();  // no block leaves while another may still read its shared memory
#endif
}

cudaLaunchConfig_t configFor(const ClusterPlan& plan, cudaLaunchAttribute* attribute, cudaStream_t stream)
{
    cudaLaunchConfig_t config{};
    config.gridDim = dim3(plan.blocks);
    config.blockDim = dim3(kThreads);
    config.dynamicSmemBytes = plan.sharedBytes;
    config.stream = stream;
    attribute->id = cudaLaunchAttributeClusterDimension;
    attribute->val.clusterDim.x = plan.blocks;
    attribute->val.clusterDim.y = 1;
    attribute->val.clusterDim.z = 1;
    config.attrs = attribute;
    config.numAttrs = 1;
    return config;
}

// Sets the kernel's attributes for `plan`; false where the device refuses them. The
// dynamic shared memory allowed is the most any plan takes, not this plan's: the
// attribute belongs to the kernel, and a solve of another shape (another engine,
// another thread) must not lower it under this plan's launches.
template <typename T, bool kTimed, bool kStep = true>
bool prepareKernel(const ClusterPlan& plan)
{
    auto kernel = clusterIterationsKernel<T, kTimed, kStep>;
    if (cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                             static_cast<int>(kMaxSharedBytes)) != cudaSuccess ||
        (plan.blocks > kPortableBlocks &&
         cudaFuncSetAttribute(kernel, cudaFuncAttributeNonPortableClusterSizeAllowed, 1) != cudaSuccess)) {
        (void)cudaGetLastError();
        return false;
    }
    return true;
}

}  // namespace

template <typename T>
ClusterPlan planClusterIterations(std::size_t rows, std::size_t cols, int device, bool anySize)
{
    ClusterPlan none;
    int major = 0;
    if (cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device) != cudaSuccess || major < 9)
        return none;
    if (rows == 0 || cols == 0 || (!anySize && rows * cols > kMaxEntries)) return none;
    for (int blocks : {kPreferredBlocks, kPortableBlocks}) {
        ClusterPlan plan;
        plan.blocks = blocks;
        plan.tileRows = (rows + blocks - 1) / blocks;
        plan.colShare = (cols + blocks - 1) / blocks;
        // One row and one column of the step per thread (relaxed_step_device.cuh's Strides).
        if (plan.tileRows > std::size_t(kThreads / 2) || plan.colShare > std::size_t(kThreads / 2)) continue;
        plan.sharedBytes = clusterSharedBytes<T>(plan.tileRows, plan.colShare, cols);
        if (plan.sharedBytes > kMaxSharedBytes || !prepareKernel<T, false>(plan) || !prepareKernel<T, true>(plan))
            continue;
        cudaLaunchAttribute attribute{};
        const cudaLaunchConfig_t config = configFor(plan, &attribute, nullptr);
        int clusters = 0;
        if (cudaOccupancyMaxActiveClusters(&clusters, clusterIterationsKernel<T, false>, &config) != cudaSuccess ||
            clusters < 1) {
            (void)cudaGetLastError();
            continue;
        }
        return plan;
    }
    return none;
}

template <typename T>
void launchClusterIterations(const ClusterPlan& plan, const T* K, std::size_t rows, std::size_t cols,
                             std::size_t pitch, T* u, T* v, T* uSaved, T* vSaved, const double* a, const double* b,
                             const double* logA, const double* logB, double fa, const RelaxedParams& params,
                             RelaxedState* state, double* work, int count, cudaStream_t stream, long long* phaseCycles,
                             bool plainOnly)
{
    if (count <= 0) return;
    const StepArgs<T> x{u, v, uSaved, vSaved, rows, cols, a, b, logA, logB, params, state, work};
    cudaLaunchAttribute attribute{};
    if (plainOnly) {
        const cudaLaunchConfig_t config = configFor(plan, &attribute, stream);
        const bool prepared = phaseCycles ? prepareKernel<T, true, false>(plan) : prepareKernel<T, false, false>(plan);
        UOT_CUDA_CHECK(prepared ? cudaSuccess : cudaErrorInvalidConfiguration);
        UOT_CUDA_CHECK(cudaLaunchKernelEx(&config,
                                          phaseCycles ? clusterIterationsKernel<T, true, false>
                                                      : clusterIterationsKernel<T, false, false>,
                                          K, pitch, fa, plan.tileRows, plan.colShare, x, count, phaseCycles));
        return;
    }
    if (phaseCycles) {
        const cudaLaunchConfig_t config = configFor(plan, &attribute, stream);
        UOT_CUDA_CHECK(cudaLaunchKernelEx(&config, clusterIterationsKernel<T, true>, K, pitch, fa, plan.tileRows,
                                          plan.colShare, x, count, phaseCycles));
        return;
    }
    const cudaLaunchConfig_t config = configFor(plan, &attribute, stream);
    UOT_CUDA_CHECK(cudaLaunchKernelEx(&config, clusterIterationsKernel<T, false>, K, pitch, fa, plan.tileRows,
                                      plan.colShare, x, count, phaseCycles));
}

template ClusterPlan planClusterIterations<float>(std::size_t, std::size_t, int, bool);
template ClusterPlan planClusterIterations<double>(std::size_t, std::size_t, int, bool);
template void launchClusterIterations<float>(const ClusterPlan&, const float*, std::size_t, std::size_t, std::size_t,
                                             float*, float*, float*, float*, const double*, const double*,
                                             const double*, const double*, double, const RelaxedParams&,
                                             RelaxedState*, double*, int, cudaStream_t, long long*, bool);
template void launchClusterIterations<double>(const ClusterPlan&, const double*, std::size_t, std::size_t,
                                              std::size_t, double*, double*, double*, double*, const double*,
                                              const double*, const double*, const double*, double,
                                              const RelaxedParams&, RelaxedState*, double*, int, cudaStream_t,
                                              long long*, bool);

}  // namespace uot::gpu::detail
