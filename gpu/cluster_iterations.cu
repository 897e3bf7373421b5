// gpu-fused's accelerated iteration in one thread-block cluster (see
// cluster_iterations.h). Block q of the cluster owns rows [q R, (q + 1) R) of K (in
// its shared memory for the whole launch) and a slice of the columns. One iteration:
//   rows:    u~_i = relaxed (a_i / (K v)_i)^fa over its rows (v read whole)
//   columns: its rows' share of K^T u~ into `partials`;      cluster barrier
//            its columns: G^pass = (b / sum of the shares)^fb, then its share of
//            the step's sweep into the step's partials;     cluster barrier
//   step:    every block reduces the partials and takes the same decisions (the
//            state is kept in each block's shared memory, block 0 writes it back);
//            commit of its rows and columns;               cluster barrier
//            the stopping figures, again in every block.
// Data written by another block is read past L1 (__ldcg) after a barrier.

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
constexpr std::size_t kMaxSharedBytes = 227 * 1024;

template <typename T>
__global__ void __launch_bounds__(kThreads)
    clusterIterationsKernel(const T* __restrict__ K, std::size_t pitch, double fa, std::size_t tileRows,
                            T* __restrict__ partials, StepArgs<T> x, int count)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    extern __shared__ __align__(16) unsigned char clusterShared[];
    __shared__ double scratch[kWarps][kMaxValues];
    __shared__ __align__(16) unsigned char stateBytes[sizeof(RelaxedState)];
    __shared__ __align__(16) unsigned char scalarBytes[sizeof(StepScalars)];
    RelaxedState& st = *reinterpret_cast<RelaxedState*>(stateBytes);
    StepScalars& sc = *reinterpret_cast<StepScalars*>(scalarBytes);
    cg::cluster_group cluster = cg::this_cluster();
    const int rank = static_cast<int>(cluster.block_rank());
    const int blocks = static_cast<int>(cluster.num_blocks());
    const std::size_t rows = x.rows, cols = x.cols;
    T* tile = reinterpret_cast<T*>(clusterShared);  // tileRows x cols
    T* vAll = tile + tileRows * cols;               // cols
    T* uOwn = vAll + cols;                          // tileRows
    const std::size_t r0 = std::min(rows, rank * tileRows), r1 = std::min(rows, r0 + tileRows);
    const std::size_t colShare = (cols + blocks - 1) / blocks;
    const std::size_t c0 = std::min(cols, rank * colShare), c1 = std::min(cols, c0 + colShare);
    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
    const Stride myRows{r0 + tid, r1, kThreads}, myCols{c0 + tid, c1, kThreads};

    if (tid == 0) std::memcpy(&st, x.state, sizeof(RelaxedState));
    for (std::size_t k = tid; k < (r1 - r0) * cols; k += kThreads)
        tile[k] = K[(r0 + k / cols) * pitch + k % cols];
    __syncthreads();

    for (int it = 0; it < count && st.stop == kRunning; ++it) {
        const double w = st.omega;
        for (std::size_t j = tid; j < cols; j += kThreads) vAll[j] = __ldcg(x.v + j);
        __syncthreads();
        // The relaxed row update of this block's rows (a warp a row).
        for (std::size_t r = r0 + warp; r < r1; r += kWarps) {
            const T* row = tile + (r - r0) * cols;
            T dot = T(0);
            for (std::size_t j = lane; j < cols; j += 32) dot += row[j] * vAll[j];
            dot = warpSum(dot);
            if (lane == 0) {
                T ui = scalingPow(x.a[r], dot, fa);
                if (w != 1.0) ui = relaxedScaling(x.uSaved[r], ui, w);
                x.u[r] = ui;
                uOwn[r - r0] = ui;
            }
        }
        __syncthreads();
        // This block's share of the column sums K^T u~.
        for (std::size_t j = tid; j < cols; j += kThreads) {
            T sum = T(0);
            for (std::size_t r = 0; r < r1 - r0; ++r) sum += tile[r * cols + j] * uOwn[r];
            partials[std::size_t(rank) * cols + j] = sum;
        }
        cluster.sync();
        // The plain column update of this block's columns, then its share of the sweep.
        for (std::size_t j = myCols.first; j < c1; j += kThreads) {
            T total = T(0);
            for (int q = 0; q < blocks; ++q) total += __ldcg(partials + std::size_t(q) * cols + j);
            x.v[j] = static_cast<T>(pow(x.b[j] / static_cast<double>(total), x.p.fb));
        }
        __syncthreads();
        sweepBlock(x, w, myRows, myCols, sweepPartials(x.work, rank), scratch);
        cluster.sync();
        decideFromPartials(x, blocks, st, sc, scratch);
        __syncthreads();
        const bool accepted = commitBlock(x, sc, myRows, myCols, commitPartials(x.work, rank), scratch);
        cluster.sync();
        if (accepted) finishFromPartials(x, blocks, sc, st, scratch);
        __syncthreads();
    }
    if (rank == 0 && tid == 0) std::memcpy(x.state, &st, sizeof(RelaxedState));
    cluster.sync();  // the next launch reads what every block wrote
#endif
}

template <typename T>
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

}  // namespace

template <typename T>
ClusterPlan planClusterIterations(std::size_t rows, std::size_t cols, int device)
{
    ClusterPlan none;
    int major = 0;
    if (cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device) != cudaSuccess || major < 9)
        return none;
    if (rows == 0 || cols == 0) return none;
    auto kernel = clusterIterationsKernel<T>;
    for (int blocks : {kPreferredBlocks, kPortableBlocks}) {
        ClusterPlan plan;
        plan.blocks = blocks;
        plan.tileRows = (rows + blocks - 1) / blocks;
        plan.sharedBytes = (plan.tileRows * cols + cols + plan.tileRows) * sizeof(T);
        if (plan.sharedBytes > kMaxSharedBytes) continue;
        if (cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                 static_cast<int>(plan.sharedBytes)) != cudaSuccess ||
            (blocks > kPortableBlocks &&
             cudaFuncSetAttribute(kernel, cudaFuncAttributeNonPortableClusterSizeAllowed, 1) != cudaSuccess)) {
            (void)cudaGetLastError();
            continue;
        }
        cudaLaunchAttribute attribute{};
        const cudaLaunchConfig_t config = configFor<T>(plan, &attribute, nullptr);
        int clusters = 0;
        if (cudaOccupancyMaxActiveClusters(&clusters, kernel, &config) != cudaSuccess || clusters < 1) {
            (void)cudaGetLastError();
            continue;
        }
        return plan;
    }
    return none;
}

std::size_t clusterPartialsCount(const ClusterPlan& plan, std::size_t cols)
{
    return std::size_t(std::max(plan.blocks, 1)) * cols;
}

template <typename T>
void launchClusterIterations(const ClusterPlan& plan, const T* K, std::size_t rows, std::size_t cols,
                             std::size_t pitch, T* u, T* v, T* uSaved, T* vSaved, const double* a, const double* b,
                             const double* logA, const double* logB, double fa, const RelaxedParams& params,
                             RelaxedState* state, double* work, T* partials, int count, cudaStream_t stream)
{
    if (count <= 0) return;
    const StepArgs<T> x{u, v, uSaved, vSaved, rows, cols, a, b, logA, logB, params, state, work};
    cudaLaunchAttribute attribute{};
    const cudaLaunchConfig_t config = configFor<T>(plan, &attribute, stream);
    UOT_CUDA_CHECK(cudaLaunchKernelEx(&config, clusterIterationsKernel<T>, K, pitch, fa, plan.tileRows, partials, x,
                                      count));
}

template ClusterPlan planClusterIterations<float>(std::size_t, std::size_t, int);
template ClusterPlan planClusterIterations<double>(std::size_t, std::size_t, int);
template void launchClusterIterations<float>(const ClusterPlan&, const float*, std::size_t, std::size_t, std::size_t,
                                             float*, float*, float*, float*, const double*, const double*,
                                             const double*, const double*, double, const RelaxedParams&,
                                             RelaxedState*, double*, float*, int, cudaStream_t);
template void launchClusterIterations<double>(const ClusterPlan&, const double*, std::size_t, std::size_t,
                                              std::size_t, double*, double*, double*, double*, const double*,
                                              const double*, const double*, const double*, double,
                                              const RelaxedParams&, RelaxedState*, double*, double*, int,
                                              cudaStream_t);

}  // namespace uot::gpu::detail
