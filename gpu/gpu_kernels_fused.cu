// CUDA kernels of gpu-fused: the one-pass row kernel (cp.async pipeline, clusters)
// and the column finalize (second stage of the column reduction), with the launch plan.
// Declarations and contracts: gpu/gpu_kernels.h.

#include "gpu/gpu_kernels_device.cuh"
#include "gpu/fused_limits.h"

namespace uot::gpu::detail {

namespace {

// The column finalize (finalizeColumn, gpu_kernels_device.cuh) as its own kernel.
template <typename T, int LANES>
__global__ void __launch_bounds__(32 * LANES)
    finalizeColumnsKernel(T* __restrict__ partials, int partialRows, bool rezero, std::size_t pitch,
                          std::size_t cols, const double* __restrict__ b, double fb, T* __restrict__ v,
                          T* __restrict__ colSums)
{
    __shared__ T sums[LANES][33];
    gridDependentsLaunch();  // the next pass may start streaming K (it waits before reading v)
    gridDependencyWait();    // every block of the pass has written its partials
    finalizeColumn<T, LANES>(partials, partialRows, rezero, pitch, cols, b, fb, v, colSums, sums);
}

constexpr int kStages = kFusedStages;  // pipeline depth: groups staged in shared memory
constexpr int kMaxGroup = 8;  // rows per pipeline stage at most

// Stores CH vectors of type V packed from the scalars src[0 .. CH * lanes)
// (lanes = elements per V) at dst[0 .. CH).
template <typename V, int CH, typename T>
__device__ __forceinline__ void storeVectors(V* dst, const T* src)
{
    constexpr int lanes = static_cast<int>(sizeof(V) / sizeof(T));
#pragma unroll
    for (int h = 0; h < CH; ++h) {
        V out;
        T* op = reinterpret_cast<T*>(&out);
#pragma unroll
        for (int e = 0; e < lanes; ++e) op[e] = src[h * lanes + e];
        dst[h] = out;
    }
}

// One read-only pass over K per iteration. Each block owns whole rows (groups of
// groupRows rows, grid-strided); each thread owns ITEMS 128-bit column vectors
// of every row. Rows arrive in shared memory through cp.async, three groups
// deep; a thread only ever reads the slots it copied itself, so the data needs
// no barrier. The software pipeline is lagged by one group so that one
// __syncthreads per group suffices and warp 0's reduction + power for group
// t+1 overlaps the other warps' column accumulation for group t:
//   dot(t+1) -> per-warp partials; sync; warp 0: u(t+1); all: partial columns += K(t) u(t).
//
// S is the stored type of K (T, or Bf16 with T = float): a thread's vector k is
// E = 16 / sizeof(S) columns; v, u and the partials stay in T, CH vectors of T
// per stored vector (1 for native storage, 2 for bf16).
template <typename T, typename S, int ITEMS, int STAGES>
__global__ void __launch_bounds__(kFusedMaxThreads)
    fusedKernel(const S* __restrict__ K, std::size_t rows, std::size_t pitch, const T* __restrict__ v,
                const double* __restrict__ a, double fa, T* __restrict__ u, T* __restrict__ partials,
                int partialRows, int groupRows, int cluster, const double* __restrict__ omega)
{
    using V = typename VecOf<T>::type;    // arithmetic vector (v, partials)
    using SV = typename StoreOf<S>::type;  // stored vector (K)
    constexpr int E = StoreOf<S>::E;
    constexpr int ET = VecOf<T>::E;
    constexpr int CH = E / ET;
    extern __shared__ __align__(16) unsigned char fusedShared[];
    SV* stage = reinterpret_cast<SV*>(fusedShared);
    V* stageT = reinterpret_cast<V*>(fusedShared);
    __shared__ T red[2][32][kMaxGroup];
    __shared__ T uShared[2][kMaxGroup];

    const int tid = threadIdx.x;
    const int nthreads = blockDim.x;
    const int lane = tid & 31;
    const int warp = tid >> 5;
    const int nwarps = nthreads >> 5;
    const std::size_t pitchV = pitch / E;
    const std::size_t slots = std::size_t(nthreads) * ITEMS;  // vectors per row in a stage

    T vr[ITEMS][E];
    T part[ITEMS][E];
    bool valid[ITEMS];
#pragma unroll
    for (int k = 0; k < ITEMS; ++k) {
        valid[k] = tid + std::size_t(k) * nthreads < pitchV;
#pragma unroll
        for (int e = 0; e < E; ++e) part[k][e] = T(0);
    }

    double w = 1.0;  // over-relaxation of the row update (read after the wait: the step kernel writes it)
    const std::size_t groups = (rows + groupRows - 1) / groupRows;
    const std::size_t myGroups = blockIdx.x < groups ? (groups - blockIdx.x + gridDim.x - 1) / gridDim.x : 0;
    auto firstRow = [&](std::size_t t) { return (blockIdx.x + t * gridDim.x) * groupRows; };

    auto issue = [&](std::size_t t) {
        if (t < myGroups) {
            const std::size_t row0 = firstRow(t);
            SV* dst0 = stage + (t % STAGES) * groupRows * slots;
            for (int r = 0; r < groupRows; ++r) {
                const std::size_t row = row0 + r;
                if (row >= rows) break;
                const SV* src = reinterpret_cast<const SV*>(K + row * pitch);
                SV* dst = dst0 + std::size_t(r) * slots;
#pragma unroll
                for (int k = 0; k < ITEMS; ++k) {
                    const std::size_t c = tid + std::size_t(k) * nthreads;
                    if (valid[k]) cpAsync16(dst + c, src + c);
                }
            }
        }
        cpAsyncCommit();
    };
    // This thread's vector k of row r of group t (zero outside the matrix).
    auto load = [&](std::size_t t, int r, int k) -> SV {
        SV x;
        if (r < groupRows && firstRow(t) + r < rows && valid[k]) {
            x = stage[((t % STAGES) * groupRows + r) * slots + tid + std::size_t(k) * nthreads];
        } else {
            x = SV{};
        }
        return x;
    };
    auto dotGroup = [&](std::size_t t) {
        T* out = &red[t & 1][warp][0];
#pragma unroll
        for (int r = 0; r < kMaxGroup; ++r) {
            if (r < groupRows) {
                T dot = T(0);
#pragma unroll
                for (int k = 0; k < ITEMS; ++k) {
                    const SV x = load(t, r, k);
                    T kp[E];
                    unpackVec<T, E>(x, kp);
#pragma unroll
                    for (int e = 0; e < E; ++e) dot += kp[e] * vr[k][e];
                }
                dot = warpSum(dot);
                if (lane == 0) out[r] = dot;
            }
        }
    };
    // Warp 0 only: row sums of group t from the per-warp partials, then lane r
    // computes u for row r (the powers run side by side).
    auto computeU = [&](std::size_t t) {
        T total[kMaxGroup];
#pragma unroll
        for (int r = 0; r < kMaxGroup; ++r)
            total[r] = r < groupRows ? warpSum(lane < nwarps ? red[t & 1][lane][r] : T(0)) : T(0);
        if (lane < groupRows) {
            T mine = total[0];
#pragma unroll
            for (int r = 1; r < kMaxGroup; ++r)
                if (lane == r) mine = total[r];
            const std::size_t row = firstRow(t) + lane;
            T ui = T(0);
            if (row < rows) {
                ui = scalingPow(a[row], mine, fa);
                if (w != 1.0) ui = relaxedScaling(u[row], ui, w);
                u[row] = ui;
            }
            uShared[t & 1][lane] = ui;
        }
    };
    auto accumulate = [&](std::size_t t) {
#pragma unroll
        for (int r = 0; r < kMaxGroup; ++r) {
            if (r < groupRows) {
                const T ur = uShared[t & 1][r];
#pragma unroll
                for (int k = 0; k < ITEMS; ++k) {
                    const SV x = load(t, r, k);
                    T kp[E];
                    unpackVec<T, E>(x, kp);
#pragma unroll
                    for (int e = 0; e < E; ++e) part[k][e] += kp[e] * ur;
                }
            }
        }
    };

    // K never changes: its first groups may stream in while the previous kernel
    // (the column finalize that writes v) is still running.
    for (int q = 0; q < STAGES - 1; ++q) issue(q);
    gridDependencyWait();
    if (omega) w = *omega;
#pragma unroll
    for (int k = 0; k < ITEMS; ++k) {
#pragma unroll
        for (int h = 0; h < CH; ++h) {
            V vv;
            if (valid[k]) {
                vv = reinterpret_cast<const V*>(v)[(tid + std::size_t(k) * nthreads) * CH + h];
            } else {
                vv = V{};
            }
            const T* vp = reinterpret_cast<const T*>(&vv);
#pragma unroll
            for (int e = 0; e < ET; ++e) vr[k][h * ET + e] = valid[k] ? vp[e] : T(0);
        }
    }
    if (myGroups > 0) {
        cpAsyncWait<STAGES - 2>();  // group 0 has landed
        dotGroup(0);
    }
    __syncthreads();
    if (myGroups > 0 && warp == 0) computeU(0);
    for (std::size_t t = 0; t < myGroups; ++t) {
        // Into the stage of group t - 1, whose slots this thread has finished reading.
        issue(t + STAGES - 1);
        const bool hasNext = t + 1 < myGroups;
        if (hasNext) {
            cpAsyncWait<STAGES - 2>();  // groups up to t + 1 have landed; STAGES - 2 still in flight
            dotGroup(t + 1);
        }
        __syncthreads();
        if (hasNext && warp == 0) computeU(t + 1);
        accumulate(t);
    }
    gridDependentsLaunch();  // the finalize may be scheduled; it waits for this grid to complete
    cpAsyncWait<0>();

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    if (cluster > 1) {
        // Thread-block cluster: the blocks of a cluster add their column partials
        // on chip (distributed shared memory) and write one row per cluster, each
        // block a 1/cluster share of it: cluster times fewer partial rows written
        // here and read by the finalize.
        namespace cg = cooperative_groups;
        cg::cluster_group cl = cg::this_cluster();
        // Every thread's own cp.async copies have landed (wait above); the barrier
        // makes every thread of the block done with the stage before it is reused.
        __syncthreads();
#pragma unroll
        for (int k = 0; k < ITEMS; ++k)
            if (valid[k]) storeVectors<V, CH>(stageT + (tid + std::size_t(k) * nthreads) * CH, part[k]);
        cl.sync();
        const unsigned rank = cl.block_rank();
        const std::size_t chunk = (pitchV + cluster - 1) / cluster;
        const std::size_t begin = min(pitchV, rank * chunk), end = min(pitchV, begin + chunk);
        const std::size_t clusterId = blockIdx.x / cluster;
        const std::size_t units = gridDim.x / cluster;
        T* prow = partials + (clusterId % partialRows) * pitch;
        const bool exclusive = static_cast<std::size_t>(partialRows) >= units;
        for (std::size_t c = begin + tid; c < end; c += nthreads) {
            T acc[E];
#pragma unroll
            for (int e = 0; e < E; ++e) acc[e] = T(0);
            for (int q = 0; q < cluster; ++q) {
                const V* remote = cl.map_shared_rank(stageT, q);
#pragma unroll
                for (int h = 0; h < CH; ++h) {
                    const V x = remote[c * CH + h];
                    const T* xp = reinterpret_cast<const T*>(&x);
#pragma unroll
                    for (int e = 0; e < ET; ++e) acc[h * ET + e] += xp[e];
                }
            }
            if (exclusive) {
                storeVectors<V, CH>(reinterpret_cast<V*>(prow) + c * CH, acc);
            } else {
#pragma unroll
                for (int e = 0; e < E; ++e) atomicAdd(prow + c * E + e, acc[e]);
            }
        }
        cl.sync();  // no block leaves while another still reads its shared memory
        return;
    }
#endif

    T* prow = partials + std::size_t(blockIdx.x % partialRows) * pitch;
    const bool exclusive = partialRows >= static_cast<int>(gridDim.x);
#pragma unroll
    for (int k = 0; k < ITEMS; ++k) {
        if (!valid[k]) continue;
        const std::size_t c = tid + std::size_t(k) * nthreads;
        if (exclusive) {
            storeVectors<V, CH>(reinterpret_cast<V*>(prow) + c * CH, part[k]);
        } else {
#pragma unroll
            for (int e = 0; e < E; ++e) atomicAdd(prow + c * E + e, part[k][e]);
        }
    }
}

template <typename T, typename S = T>
using FusedFn = void (*)(const S*, std::size_t, std::size_t, const T*, const double*, double, T*, T*, int, int, int,
                         const double*);

template <typename T, typename S, int STAGES>
FusedFn<T, S> fusedFunctionStages(int items)
{
    // bf16 rows take at most 4 vectors (32 entries) per thread (fusedRowShape).
    constexpr int kMaxItems = sizeof(S) == 2 ? kFusedMaxItemsBf16 : kFusedMaxItems;
    switch (items) {
    case 1: return fusedKernel<T, S, 1, STAGES>;
    case 2: return fusedKernel<T, S, 2, STAGES>;
    case 4: return fusedKernel<T, S, 4, STAGES>;
    default: return fusedKernel<T, S, kMaxItems, STAGES>;
    }
}

// Only the three-stage pipeline is instantiated: a six-stage variant (four groups
// in flight, one block per SM) measured slower on the H100 than three stages with
// two blocks per SM (4096^2: 0.050 vs 0.040 ms; 16384x1024: 0.069 vs 0.046 ms).
template <typename T, typename S>
FusedFn<T, S> fusedFunction(int items, int /*stages*/)
{
    return fusedFunctionStages<T, S, kStages>(items);
}

}  // namespace

// ================================================================ launchers

template <typename T, typename S>
FusedPlan planFused(std::size_t rows, std::size_t cols, std::size_t pitch, int device, int cluster, bool evenGroups)
{
    FusedPlan plan;
    // Blocks of about 256 threads (so that two fit on a multiprocessor), up to 8
    // vectors per thread; rows wider than 512 x 8 vectors take the two-pass path
    // (fused_limits.h states the same bound for bytesPerIterationFor).
    const FusedRowShape shape = fusedRowShape(cols, sizeof(S));
    (void)pitch;
    if (!shape.fitsThreads) return plan;
    const int items = shape.items;
    const int threads = shape.threads;
    const std::size_t slotBytes = shape.slotBytes;
    int optin = 0, perSmShared = 0, sms = 0;
    UOT_CUDA_CHECK(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
    UOT_CUDA_CHECK(cudaDeviceGetAttribute(&perSmShared, cudaDevAttrMaxSharedMemoryPerMultiprocessor, device));
    UOT_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
    const std::size_t headroom = kFusedSharedHeadroom;
    const std::size_t budget = optin > int(headroom) ? std::size_t(optin) - headroom : 0;
    const std::size_t wanted = std::max<std::size_t>(1, (rows + 4 * std::size_t(sms) - 1) / (4 * std::size_t(sms)));
    // Three stages, preferably two blocks per multiprocessor (measured faster than a
    // deeper pipeline with one block: the per-group barrier chain is the limit).
    const int stages = kStages;
    const std::size_t budgetTwo = std::size_t(perSmShared) / 2 > headroom ? std::size_t(perSmShared) / 2 - headroom : 0;
    std::size_t bySmem = budgetTwo / (kStages * slotBytes);
    if (bySmem == 0) bySmem = budget / (kStages * slotBytes);
    if (bySmem == 0) return plan;
    const int groupRows = static_cast<int>(std::min<std::size_t>({std::size_t(kMaxGroup), bySmem, wanted}));
    const std::size_t shared = std::size_t(stages) * groupRows * slotBytes;
    FusedFn<T, S> fn = fusedFunction<T, S>(items, stages);
    UOT_CUDA_CHECK(cudaFuncSetAttribute(fn, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(shared)));
    int perSm = 0;
    UOT_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&perSm, fn, threads, shared));
    if (perSm < 1) return plan;
    const std::size_t groups = (rows + groupRows - 1) / groupRows;
    std::size_t blocks = std::max<std::size_t>(1, std::min<std::size_t>(groups, std::size_t(sms) * perSm));
    if (cluster <= 0) {
        // Automatic (measured on the H100, docs/notes/benchmark-history.md): pairs of blocks; fours
        // where one block fills a multiprocessor and pairs would still leave more
        // partial rows than the private-row budget (rows / 30), e.g. 1024x16384
        // (0.0385 -> 0.0351 ms). Fours with two blocks per multiprocessor measured
        // 40% slower at 8192^2 (fewer clusters fit), so never there.
        const std::size_t pairs = std::size_t(sms) * perSm / 2;
        cluster = perSm == 1 && pairs > rows / 30 ? 4 : 2;
    }
    int clusterUsed = 1;
    if (cluster > 1) {
        // Clusters of `cluster` blocks (compute capability 9.0 and a driver that
        // launches them); otherwise the plain per-block path.
        int clusterLaunch = 0, major = 0;
        UOT_CUDA_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device));
        if (cudaDeviceGetAttribute(&clusterLaunch, cudaDevAttrClusterLaunch, device) != cudaSuccess) {
            (void)cudaGetLastError();
            clusterLaunch = 0;
        }
        cudaFuncAttributes attributes = {};
        UOT_CUDA_CHECK(cudaFuncGetAttributes(&attributes, fn));
        // The cluster code path exists only in sm_90+ machine code of the kernel.
        if (major >= 9 && clusterLaunch && attributes.binaryVersion >= 90) {
            cudaLaunchConfig_t config = {};
            config.gridDim = dim3(static_cast<unsigned>(std::size_t(sms) * perSm / cluster * cluster));
            config.blockDim = dim3(threads);
            config.dynamicSmemBytes = shared;
            cudaLaunchAttribute attribute[1];
            attribute[0].id = cudaLaunchAttributeClusterDimension;
            attribute[0].val.clusterDim.x = static_cast<unsigned>(cluster);
            attribute[0].val.clusterDim.y = 1;
            attribute[0].val.clusterDim.z = 1;
            config.attrs = attribute;
            config.numAttrs = 1;
            int clusters = 0;
            if (config.gridDim.x >= unsigned(cluster) &&
                cudaOccupancyMaxActiveClusters(&clusters, fn, &config) == cudaSuccess && clusters > 0) {
                const std::size_t rounded = (groups + cluster - 1) / cluster * cluster;
                blocks = std::min<std::size_t>(rounded, std::size_t(clusters) * cluster);
                clusterUsed = cluster;
            } else {
                (void)cudaGetLastError();
            }
        }
    }
    if (evenGroups && blocks > 1) {
        // The fewest blocks with the same largest number of groups per block, so that
        // every block ends together: at 8192^2, 256 blocks x 32 rows instead of 264
        // blocks of which 8 take a 32nd row while the others are done.
        const std::size_t step = std::size_t(clusterUsed);
        const std::size_t perBlock = (groups + blocks - 1) / blocks;
        std::size_t even = (groups + perBlock - 1) / perBlock;
        even = (even + step - 1) / step * step;
        if (even <= blocks) blocks = even;
    }
    plan.usable = true;
    plan.items = items;
    plan.threads = threads;
    plan.groupRows = groupRows;
    plan.blocks = static_cast<int>(blocks);
    plan.cluster = clusterUsed;
    plan.sharedBytes = shared;
    plan.stages = stages;
    return plan;
}

template <typename T, typename S>
void launchFused(const FusedPlan& plan, const S* K, std::size_t rows, std::size_t pitch, const T* v,
                 const double* a, double fa, T* u, T* partials, int partialRows, bool programmatic,
                 cudaStream_t stream, const double* omega)
{
    FusedFn<T, S> fn = fusedFunction<T, S>(plan.items, plan.stages);
    LaunchConfig launch(dim3(plan.blocks), dim3(plan.threads), stream, programmatic, plan.sharedBytes);
    if (plan.cluster > 1) launch.clusterOf(static_cast<unsigned>(plan.cluster));
    UOT_CUDA_CHECK(cudaLaunchKernelEx(&launch.config, fn, K, rows, pitch, v, a, fa, u, partials, partialRows, plan.groupRows,
                                      plan.cluster, omega));
}

template <typename T>
void launchFinalizeColumns(T* partials, int partialRows, std::size_t pitch, std::size_t cols, const double* b,
                           double fb, T* v, T* colSums, int lanes, bool programmatic, cudaStream_t stream)
{
    // Private rows per block are overwritten by the next pass; shared rows are
    // accumulated with atomics and must be zeroed again. The caller passes a
    // negative count for the private (store) mode.
    const bool rezero = partialRows > 0;
    const int count = partialRows > 0 ? partialRows : -partialRows;
    if (lanes <= 0) lanes = 8;  // 16 and 32 measured no faster on the H100 (8192^2: 0.1013 / 0.1016 / 0.1035 ms)
    LaunchConfig launch(dim3(static_cast<unsigned>((cols + 31) / 32)), dim3(32, lanes >= 32 ? 32 : lanes >= 16 ? 16 : 8),
                        stream, programmatic);
    const cudaLaunchConfig_t& config = launch.config;
    if (lanes >= 32)
        UOT_CUDA_CHECK(cudaLaunchKernelEx(&config, finalizeColumnsKernel<T, 32>, partials, count, rezero, pitch, cols,
                                          b, fb, v, colSums));
    else if (lanes >= 16)
        UOT_CUDA_CHECK(cudaLaunchKernelEx(&config, finalizeColumnsKernel<T, 16>, partials, count, rezero, pitch, cols,
                                          b, fb, v, colSums));
    else
        UOT_CUDA_CHECK(cudaLaunchKernelEx(&config, finalizeColumnsKernel<T, 8>, partials, count, rezero, pitch, cols, b,
                                          fb, v, colSums));
}

// ---------------------------------------------------------------- instantiations

#define UOT_INSTANTIATE(T)                                                                                          \
    template FusedPlan planFused<T>(std::size_t, std::size_t, std::size_t, int, int, bool);                                    \
    template void launchFused<T>(const FusedPlan&, const T*, std::size_t, std::size_t, const T*, const double*,     \
                                 double, T*, T*, int, bool, cudaStream_t, const double*);                          \
    template void launchFinalizeColumns<T>(T*, int, std::size_t, std::size_t, const double*, double, T*, T*, int, \
                                           bool, cudaStream_t);

UOT_INSTANTIATE(float)
UOT_INSTANTIATE(double)
#undef UOT_INSTANTIATE

// bf16 storage of K (gpu-fused-bf16): float arithmetic.
template FusedPlan planFused<float, Bf16>(std::size_t, std::size_t, std::size_t, int, int, bool);
template void launchFused<float, Bf16>(const FusedPlan&, const Bf16*, std::size_t, std::size_t, const float*,
                                       const double*, double, float*, float*, int, bool, cudaStream_t, const double*);

}  // namespace uot::gpu::detail
