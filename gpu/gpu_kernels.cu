// CUDA kernels of the GPU variants and their host launchers (see gpu_kernels.h).

#include "gpu/gpu_kernels.h"

#include <cooperative_groups.h>

#include <algorithm>
#include <cmath>
#include <type_traits>

#include "gpu/cuda_support.h"
#include "gpu/fused_limits.h"
#include "gpu/log_sum_exp.cuh"

namespace uot::gpu::detail {

namespace {

template <typename T>
struct VecOf;
template <>
struct VecOf<float> {
    using type = float4;
    static constexpr int E = 4;
};
template <>
struct VecOf<double> {
    using type = double2;
    static constexpr int E = 2;
};

// 128-bit vectors of the stored matrix: E elements of S each. Native storage is
// VecOf<T>; bf16 packs 8 entries (two per 32-bit word, the lower half first).
template <typename S>
struct StoreOf : VecOf<S> {
};
template <>
struct StoreOf<Bf16> {
    using type = uint4;
    static constexpr int E = 8;
};

// The E entries of one stored vector in the arithmetic type T.
template <typename T, int E, typename SV>
__device__ __forceinline__ void unpackVec(const SV& x, T (&out)[E])
{
    const T* p = reinterpret_cast<const T*>(&x);
#pragma unroll
    for (int e = 0; e < E; ++e) out[e] = p[e];
}
template <>
__device__ __forceinline__ void unpackVec<float, 8, uint4>(const uint4& x, float (&out)[8])
{
    // bf16 -> fp32 is exact: the 16 bits become the upper half of the float.
    const unsigned w[4] = {x.x, x.y, x.z, x.w};
#pragma unroll
    for (int q = 0; q < 4; ++q) {
        out[2 * q] = __uint_as_float(w[q] << 16);
        out[2 * q + 1] = __uint_as_float(w[q] & 0xffff0000u);
    }
}

// Conversions between the stored type and double (bf16: round to nearest even).
template <typename S>
__device__ __forceinline__ S storageFromDouble(double x)
{
    return static_cast<S>(x);
}
template <>
__device__ __forceinline__ Bf16 storageFromDouble<Bf16>(double x)
{
    return __double2bfloat16(x);
}
template <typename S>
__device__ __forceinline__ double storageToDouble(S x)
{
    return static_cast<double>(x);
}
template <>
__device__ __forceinline__ double storageToDouble<Bf16>(Bf16 x)
{
    return static_cast<double>(__bfloat162float(x));
}

template <typename T>
__device__ __forceinline__ T warpSum(T x)
{
#pragma unroll
    for (int offset = 16; offset > 0; offset >>= 1) x += __shfl_xor_sync(0xffffffffu, x, offset);
    return x;
}

__device__ __forceinline__ double warpMax(double x)
{
#pragma unroll
    for (int offset = 16; offset > 0; offset >>= 1) x = fmax(x, __shfl_xor_sync(0xffffffffu, x, offset));
    return x;
}

__device__ __forceinline__ void cpAsync16(void* sharedDst, const void* globalSrc)
{
    const unsigned dst = static_cast<unsigned>(__cvta_generic_to_shared(sharedDst));
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(dst), "l"(globalSrc) : "memory");
}
// Programmatic dependent launch (Hopper): a kernel launched with the programmatic
// stream-serialization attribute may start before its predecessor finishes;
// gridDependencyWait() blocks until the predecessor has completed and its memory
// is visible; gridDependentsLaunch() lets the successor start early.
__device__ __forceinline__ void gridDependencyWait()
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.wait;\n" ::: "memory");
#endif
}
__device__ __forceinline__ void gridDependentsLaunch()
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.launch_dependents;\n" ::: "memory");
#endif
}

__device__ __forceinline__ void cpAsyncCommit() { asm volatile("cp.async.commit_group;\n" ::: "memory"); }
template <int N>
__device__ __forceinline__ void cpAsyncWait()
{
    asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory");
}

unsigned gridFor(std::size_t work, unsigned threads, unsigned cap = 65535u * 32u)
{
    const std::size_t blocks = (work + threads - 1) / threads;
    return static_cast<unsigned>(std::max<std::size_t>(1, std::min<std::size_t>(blocks, cap)));
}

// ---------------------------------------------------------------- building K

template <typename T>
__device__ __forceinline__ T kernelValue(double cost, std::size_t i, std::size_t j, const BuildParams& p)
{
    double x = -cost * p.invEps;
    if (p.logA) x += p.logA[i] + p.logB[j];
    return p.logDomain ? storageFromDouble<T>(x) : storageFromDouble<T>(exp(x));
}

template <typename T>
__device__ __forceinline__ T paddingValue(const BuildParams& p)
{
    return p.logDomain ? storageFromDouble<T>(-INFINITY) : storageFromDouble<T>(0.0);
}

template <typename T, typename C>
__global__ void buildFromDenseKernel(const C* __restrict__ cost, std::size_t rowBegin, std::size_t chunkRows,
                                     std::size_t cols, std::size_t pitch, T* __restrict__ K, BuildParams p,
                                     unsigned long long* firstBad)
{
    const std::size_t total = chunkRows * pitch;
    for (std::size_t idx = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; idx < total;
         idx += std::size_t(gridDim.x) * blockDim.x) {
        const std::size_t r = idx / pitch;
        const std::size_t j = idx - r * pitch;
        const std::size_t i = rowBegin + r;
        T out = paddingValue<T>(p);
        if (j < cols) {
            const double c = static_cast<double>(cost[r * cols + j]);
            if (!(c >= 0.0) || !isfinite(c)) {
                atomicMin(firstBad, static_cast<unsigned long long>(i * cols + j));
            } else {
                out = kernelValue<T>(c, i, j, p);
            }
        }
        K[i * pitch + j] = out;
    }
}

template <typename T>
__global__ void buildFromPointsKernel(const double* __restrict__ x, const double* __restrict__ y, std::size_t rows,
                                      std::size_t cols, std::size_t dim, double scale, std::size_t pitch,
                                      T* __restrict__ K, BuildParams p)
{
    const std::size_t total = rows * pitch;
    for (std::size_t idx = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; idx < total;
         idx += std::size_t(gridDim.x) * blockDim.x) {
        const std::size_t i = idx / pitch;
        const std::size_t j = idx - i * pitch;
        T out = paddingValue<T>(p);
        if (j < cols) {
            double d2 = 0;
            for (std::size_t k = 0; k < dim; ++k) {
                const double d = x[i * dim + k] - y[j * dim + k];
                d2 += d * d;
            }
            out = kernelValue<T>(scale * d2, i, j, p);
        }
        K[idx] = out;
    }
}

template <typename T>
__global__ void zeroRowsKernel(const T* __restrict__ K, std::size_t rows, std::size_t cols, std::size_t pitch,
                               int* zeroRows)
{
    const int lane = threadIdx.x & 31;
    const std::size_t warpsTotal = std::size_t(gridDim.x) * (blockDim.x / 32);
    for (std::size_t row = (blockIdx.x * std::size_t(blockDim.x) + threadIdx.x) / 32; row < rows; row += warpsTotal) {
        bool found = false;
        for (std::size_t j0 = 0; j0 < cols && !found; j0 += 32) {
            const std::size_t j = j0 + lane;
            const bool nz = j < cols && storageToDouble(K[row * pitch + j]) != 0.0;
            found = __any_sync(0xffffffffu, nz);
        }
        if (!found && lane == 0) atomicAdd(zeroRows, 1);
    }
}

template <typename T>
__global__ void zeroColsKernel(const T* __restrict__ K, std::size_t rows, std::size_t cols, std::size_t pitch,
                               int* zeroCols)
{
    const std::size_t j = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x;
    if (j >= cols) return;
    for (std::size_t i = 0; i < rows; ++i)
        if (storageToDouble(K[i * pitch + j]) != 0.0) return;
    atomicAdd(zeroCols, 1);
}

// ---------------------------------------------------------------- vectors

template <typename T>
__global__ void scalingUpdateKernel(const T* __restrict__ s, const double* __restrict__ w, T* __restrict__ x,
                                    std::size_t n, double f)
{
    const std::size_t k = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x;
    if (k < n) x[k] = static_cast<T>(pow(w[k] / static_cast<double>(s[k]), f));
}

template <typename T>
__global__ void mapFactorsKernel(T* __restrict__ s, const double* __restrict__ w, T* __restrict__ x,
                                 T* __restrict__ factor, std::size_t n, double f)
{
    const std::size_t k = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x;
    if (k >= n) return;
    const double xk = static_cast<double>(x[k]);
    const double g = pow(w[k] / static_cast<double>(s[k]), f) * (f == 1.0 ? 1.0 : pow(xk, f - 1.0));
    x[k] = static_cast<T>(xk * g);
    factor[k] = static_cast<T>(g);
    s[k] = T(0);
}

template <typename T>
__global__ void scaleMatrixKernel(T* __restrict__ A, std::size_t rows, std::size_t pitch, const T* __restrict__ u,
                                  const T* __restrict__ v)
{
    const std::size_t total = rows * pitch;
    for (std::size_t idx = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; idx < total;
         idx += std::size_t(gridDim.x) * blockDim.x) {
        const std::size_t i = idx / pitch;
        A[idx] *= u[i] * v[idx - i * pitch];
    }
}

// LANES = threadIdx.y: partial rows summed side by side per column (8, 16 or 32).
// Each thread loads its rows in batches of eight independent loads (264 rows
// with 32 lanes: one batch; with 8 lanes: five).
template <typename T, int LANES>
__global__ void __launch_bounds__(32 * LANES)
    finalizeColumnsKernel(T* __restrict__ partials, int partialRows, bool rezero, std::size_t pitch,
                          std::size_t cols, const double* __restrict__ b, double fb, T* __restrict__ v,
                          T* __restrict__ colSums)
{
    __shared__ T sums[LANES][33];
    gridDependentsLaunch();  // the next pass may start streaming K (it waits before reading v)
    gridDependencyWait();    // every block of the pass has written its partials
    const std::size_t j = blockIdx.x * std::size_t(32) + threadIdx.x;
    T s = T(0);
    if (j < cols) {
        // Loads first (independent and predicated: all eight in flight), then the
        // zeroing stores.
        for (int p = threadIdx.y; p < partialRows; p += 8 * LANES) {
            T x[8];
#pragma unroll
            for (int q = 0; q < 8; ++q) {
                const int row = p + q * LANES;
                x[q] = row < partialRows ? partials[std::size_t(row) * pitch + j] : T(0);
            }
#pragma unroll
            for (int q = 0; q < 8; ++q) {
                s += x[q];
                const int row = p + q * LANES;
                if (rezero && row < partialRows) partials[std::size_t(row) * pitch + j] = T(0);
            }
        }
    }
    sums[threadIdx.y][threadIdx.x] = s;
    __syncthreads();
    if (threadIdx.y == 0 && j < cols) {
        T total = T(0);
#pragma unroll
        for (int y = 0; y < LANES; ++y) total += sums[y][threadIdx.x];
        v[j] = static_cast<T>(pow(b[j] / static_cast<double>(total), fb));
        if (colSums) colSums[j] = total;
    }
}

// ---------------------------------------------------------------- gpu-fused

constexpr int kStages = kFusedStages;  // pipeline depth: groups staged in shared memory
constexpr int kMaxGroup = 8;  // rows per pipeline stage at most

// u = (a / r)^f in the storage precision (float: powf; the exponent is 1 when balanced).
__device__ __forceinline__ float scalingPow(double a, float r, double f)
{
    const float q = static_cast<float>(a) / r;
    return f == 1.0 ? q : powf(q, static_cast<float>(f));
}
__device__ __forceinline__ double scalingPow(double a, double r, double f)
{
    const double q = a / r;
    return f == 1.0 ? q : pow(q, f);
}

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
                int partialRows, int groupRows, int cluster)
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
using FusedFn = void (*)(const S*, std::size_t, std::size_t, const T*, const double*, double, T*, T*, int, int, int);

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

// ---------------------------------------------------------------- gpu-mapuot

template <typename T>
__global__ void mapApplyRowsKernel(T* __restrict__ A, std::size_t rows, std::size_t pitchV,
                                   const T* __restrict__ alpha, T* __restrict__ colSum, int ny)
{
    using V = typename VecOf<T>::type;
    constexpr int E = VecOf<T>::E;
    extern __shared__ __align__(16) unsigned char mapShared[];
    V* partial = reinterpret_cast<V*>(mapShared);                       // ty x tx
    T* alphaS = reinterpret_cast<T*>(partial + blockDim.x * blockDim.y);  // ty * ny
    const std::size_t cv = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x;
    const int rowsPerBlock = blockDim.y * ny;
    const int flat = threadIdx.y * blockDim.x + threadIdx.x;
    V* Av = reinterpret_cast<V*>(A);

    T acc[E];
#pragma unroll
    for (int e = 0; e < E; ++e) acc[e] = T(0);
    for (std::size_t rb = blockIdx.y; rb * rowsPerBlock < rows; rb += gridDim.y) {
        const std::size_t base = rb * rowsPerBlock;
        __syncthreads();
        for (int t = flat; t < rowsPerBlock; t += blockDim.x * blockDim.y)
            alphaS[t] = base + t < rows ? alpha[base + t] : T(0);
        __syncthreads();
        if (cv < pitchV) {
#pragma unroll 4
            for (int k = 0; k < ny; ++k) {
                const int local = threadIdx.y + k * blockDim.y;
                const std::size_t row = base + local;
                if (row < rows) {
                    V x = Av[row * pitchV + cv];
                    T* xp = reinterpret_cast<T*>(&x);
                    const T f = alphaS[local];
#pragma unroll
                    for (int e = 0; e < E; ++e) {
                        xp[e] *= f;
                        acc[e] += xp[e];
                    }
                    Av[row * pitchV + cv] = x;
                }
            }
        }
    }
    V mine;
    T* mp = reinterpret_cast<T*>(&mine);
#pragma unroll
    for (int e = 0; e < E; ++e) mp[e] = acc[e];
    partial[threadIdx.y * blockDim.x + threadIdx.x] = mine;
    __syncthreads();
    if (threadIdx.y == 0 && cv < pitchV) {
        T total[E];
#pragma unroll
        for (int e = 0; e < E; ++e) total[e] = T(0);
        for (int y = 0; y < static_cast<int>(blockDim.y); ++y) {
            const V p = partial[y * blockDim.x + threadIdx.x];
            const T* pp = reinterpret_cast<const T*>(&p);
#pragma unroll
            for (int e = 0; e < E; ++e) total[e] += pp[e];
        }
#pragma unroll
        for (int e = 0; e < E; ++e) atomicAdd(colSum + cv * E + e, total[e]);
    }
}

constexpr int kRowQ = 4;  // vectors per thread per row in part 4

template <typename T>
__global__ void mapApplyColsKernel(T* __restrict__ A, std::size_t rows, std::size_t pitchV,
                                   const T* __restrict__ beta, T* __restrict__ rowSum, int ny)
{
    using V = typename VecOf<T>::type;
    constexpr int E = VecOf<T>::E;
    extern __shared__ __align__(16) unsigned char mapShared[];
    T* red = reinterpret_cast<T*>(mapShared);  // ny x nwarps
    const int lane = threadIdx.x & 31;
    const int warp = threadIdx.x >> 5;
    const int nwarps = blockDim.x >> 5;
    V* Av = reinterpret_cast<V*>(A);
    const V* Bv = reinterpret_cast<const V*>(beta);

    V bq[kRowQ];
    bool ok[kRowQ];
    std::size_t cq[kRowQ];
#pragma unroll
    for (int q = 0; q < kRowQ; ++q) {
        cq[q] = blockIdx.x * std::size_t(blockDim.x) * kRowQ + std::size_t(q) * blockDim.x + threadIdx.x;
        ok[q] = cq[q] < pitchV;
        if (ok[q]) {
            bq[q] = Bv[cq[q]];
        } else {
            bq[q] = V{};
        }
    }
    for (std::size_t rb = blockIdx.y; rb * ny < rows; rb += gridDim.y) {
        for (int r = 0; r < ny; ++r) {
            const std::size_t row = rb * ny + r;
            T s = T(0);
            if (row < rows) {
                V x[kRowQ];
#pragma unroll
                for (int q = 0; q < kRowQ; ++q)
                    if (ok[q]) x[q] = Av[row * pitchV + cq[q]];
#pragma unroll
                for (int q = 0; q < kRowQ; ++q) {
                    if (!ok[q]) continue;
                    T* xp = reinterpret_cast<T*>(&x[q]);
                    const T* bp = reinterpret_cast<const T*>(&bq[q]);
#pragma unroll
                    for (int e = 0; e < E; ++e) {
                        xp[e] *= bp[e];
                        s += xp[e];
                    }
                    Av[row * pitchV + cq[q]] = x[q];
                }
            }
            s = warpSum(s);
            if (lane == 0) red[r * nwarps + warp] = s;
        }
        __syncthreads();
        for (int r = threadIdx.x; r < ny; r += blockDim.x) {
            const std::size_t row = rb * ny + r;
            if (row >= rows) continue;
            T total = T(0);
            for (int w = 0; w < nwarps; ++w) total += red[r * nwarps + w];
            atomicAdd(rowSum + row, total);
        }
        __syncthreads();
    }
}

template <typename T>
__global__ void rowSumsKernel(const T* __restrict__ A, std::size_t rows, std::size_t cols, std::size_t pitch,
                              T* __restrict__ s)
{
    const int lane = threadIdx.x & 31;
    const std::size_t warpsTotal = std::size_t(gridDim.x) * (blockDim.x / 32);
    for (std::size_t row = (blockIdx.x * std::size_t(blockDim.x) + threadIdx.x) / 32; row < rows; row += warpsTotal) {
        T acc = T(0);
        for (std::size_t j = lane; j < cols; j += 32) acc += A[row * pitch + j];
        acc = warpSum(acc);
        if (lane == 0) s[row] = acc;
    }
}

// ---------------------------------------------------------------- gpu-log

template <typename T>
__global__ void logRowsKernel(const T* __restrict__ logK, std::size_t rows, std::size_t cols, std::size_t pitch,
                              const double* __restrict__ lv, const double* __restrict__ logWeightA, double fa,
                              double* __restrict__ lu)
{
    const int lane = threadIdx.x & 31;
    const std::size_t warpsTotal = std::size_t(gridDim.x) * (blockDim.x / 32);
    for (std::size_t row = (blockIdx.x * std::size_t(blockDim.x) + threadIdx.x) / 32; row < rows; row += warpsTotal) {
        double m = -INFINITY, s = 0;
        for (std::size_t j = lane; j < cols; j += 32) lseAdd(m, s, static_cast<double>(logK[row * pitch + j]) + lv[j]);
#pragma unroll
        for (int offset = 16; offset > 0; offset >>= 1) {
            const double m2 = __shfl_xor_sync(0xffffffffu, m, offset);
            const double s2 = __shfl_xor_sync(0xffffffffu, s, offset);
            lseMerge(m, s, m2, s2);
        }
        if (lane == 0) lu[row] = fa * (logWeightA[row] - (m + log(s)));
    }
}

// Rows [begin, end) of this block's band: the rows cut into gridDim.y equal
// bands, band blockIdx.y (the column kernels' grid).
struct RowBand {
    std::size_t begin, end;
};

__device__ inline RowBand blockRowBand(std::size_t rows)
{
    const std::size_t rowsPerBand = (rows + gridDim.y - 1) / gridDim.y;
    const std::size_t begin = blockIdx.y * rowsPerBand;
    return {begin, min(rows, begin + rowsPerBand)};
}

constexpr int kLogColTy = 8;

template <typename T>
__global__ void logColsKernel(const T* __restrict__ logK, std::size_t rows, std::size_t cols, std::size_t pitch,
                              const double* __restrict__ lu, double* __restrict__ partialMax,
                              double* __restrict__ partialSum)
{
    __shared__ double sm[kLogColTy][32];
    __shared__ double ss[kLogColTy][32];
    const std::size_t j = blockIdx.x * std::size_t(32) + threadIdx.x;
    const RowBand band = blockRowBand(rows);
    double m = -INFINITY, s = 0;
    if (j < cols)
        for (std::size_t i = band.begin + threadIdx.y; i < band.end; i += kLogColTy)
            lseAdd(m, s, static_cast<double>(logK[i * pitch + j]) + lu[i]);
    sm[threadIdx.y][threadIdx.x] = m;
    ss[threadIdx.y][threadIdx.x] = s;
    __syncthreads();
    if (threadIdx.y == 0 && j < cols) {
        for (int y = 1; y < kLogColTy; ++y) lseMerge(m, s, sm[y][threadIdx.x], ss[y][threadIdx.x]);
        partialMax[blockIdx.y * cols + j] = m;
        partialSum[blockIdx.y * cols + j] = s;
    }
}

__global__ void logColsFinalizeKernel(const double* __restrict__ partialMax, const double* __restrict__ partialSum,
                                      int bands, std::size_t cols, const double* __restrict__ logWeightB, double fb,
                                      double* __restrict__ lv)
{
    const std::size_t j = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x;
    if (j >= cols) return;
    double m = -INFINITY, s = 0;
    for (int b = 0; b < bands; ++b) lseMerge(m, s, partialMax[b * cols + j], partialSum[b * cols + j]);
    lv[j] = fb * (logWeightB[j] - (m + log(s)));
}


// ---------------------------------------------------------------- marginal errors (progress)

__device__ __forceinline__ void lseWarpMerge(double& m, double& s)
{
#pragma unroll
    for (int offset = 16; offset > 0; offset >>= 1) {
        const double m2 = __shfl_xor_sync(0xffffffffu, m, offset);
        const double s2 = __shfl_xor_sync(0xffffffffu, s, offset);
        lseMerge(m, s, m2, s2);
    }
}

// One warp per row: |(P 1)_i - a_i| summed per warp, then added into *out.
template <typename T, typename S>
__global__ void marginalRowsKernel(const S* __restrict__ K, std::size_t rows, std::size_t cols, std::size_t pitch,
                                   const T* __restrict__ u, const T* __restrict__ v, const double* __restrict__ lu,
                                   const double* __restrict__ lv, const double* __restrict__ a, double* out)
{
    const int lane = threadIdx.x & 31;
    const std::size_t warpsTotal = std::size_t(gridDim.x) * (blockDim.x / 32);
    double err = 0;
    for (std::size_t row = (blockIdx.x * std::size_t(blockDim.x) + threadIdx.x) / 32; row < rows; row += warpsTotal) {
        const S* k = K + row * pitch;
        double total;
        if (lu) {
            double m = -INFINITY, s = 0;
            for (std::size_t j = lane; j < cols; j += 32) lseAdd(m, s, storageToDouble(k[j]) + lv[j]);
            lseWarpMerge(m, s);
            total = m == -INFINITY ? 0.0 : exp(lu[row] + m + log(s));
        } else {
            double dot = 0;
            for (std::size_t j = lane; j < cols; j += 32)
                dot += storageToDouble(k[j]) * (v ? static_cast<double>(v[j]) : 1.0);
            dot = warpSum(dot);
            total = (u ? static_cast<double>(u[row]) : 1.0) * dot;
        }
        err += fabs(total - a[row]);
    }
    if (lane == 0 && err != 0) atomicAdd(out, err);
}

constexpr int kMarginColTy = 8;

// Column sums of diag(u) K over bands of rows, added into colSum (float64).
template <typename T, typename S>
__global__ void marginalColsKernel(const S* __restrict__ K, std::size_t rows, std::size_t cols, std::size_t pitch,
                                   const T* __restrict__ u, double* __restrict__ colSum)
{
    __shared__ double sh[kMarginColTy][33];
    const std::size_t j = blockIdx.x * std::size_t(32) + threadIdx.x;
    const RowBand band = blockRowBand(rows);
    double s = 0;
    if (j < cols)
        for (std::size_t i = band.begin + threadIdx.y; i < band.end; i += kMarginColTy)
            s += storageToDouble(K[i * pitch + j]) * (u ? static_cast<double>(u[i]) : 1.0);
    sh[threadIdx.y][threadIdx.x] = s;
    __syncthreads();
    if (threadIdx.y == 0 && j < cols) {
        for (int y = 1; y < kMarginColTy; ++y) s += sh[y][threadIdx.x];
        atomicAdd(colSum + j, s);
    }
}

// |(P^T 1)_j - b_j| summed into *out: from colSum (times v_j) or, when lv is
// given, from the log-domain band partials (max, sum) of logK_ij + lu_i.
__global__ void marginalColsFinalizeKernel(const double* __restrict__ colSum, const double* __restrict__ partialMax,
                                           const double* __restrict__ partialSum, int bands, std::size_t cols,
                                           const float* __restrict__ vf, const double* __restrict__ vd,
                                           const double* __restrict__ lv, const double* __restrict__ b, double* out)
{
    const std::size_t j = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x;
    double err = 0;
    if (j < cols) {
        double total;
        if (lv) {
            double m = -INFINITY, s = 0;
            for (int q = 0; q < bands; ++q) lseMerge(m, s, partialMax[q * cols + j], partialSum[q * cols + j]);
            total = m == -INFINITY ? 0.0 : exp(lv[j] + m + log(s));
        } else {
            const double vj = vf ? static_cast<double>(vf[j]) : vd ? vd[j] : 1.0;
            total = vj * colSum[j];
        }
        err = fabs(total - b[j]);
    }
    err = warpSum(err);
    if ((threadIdx.x & 31) == 0 && err != 0) atomicAdd(out, err);
}

// |v_j s_j - b_j| summed into *out, from column sums s = K^T u the iteration
// already computed (gpu-fused's finalize, gpu-pot-style's second gemv).
template <typename T>
__global__ void marginalFromColSumsKernel(const T* __restrict__ colSums, const T* __restrict__ v, std::size_t cols,
                                          const double* __restrict__ b, double* out)
{
    const std::size_t j = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x;
    double err = 0;
    if (j < cols) err = fabs(static_cast<double>(v[j]) * static_cast<double>(colSums[j]) - b[j]);
    err = warpSum(err);
    if ((threadIdx.x & 31) == 0 && err != 0) atomicAdd(out, err);
}

// ---------------------------------------------------------------- checks, bandwidth

constexpr int kCheckThreads = 1024;

template <typename T>
__global__ void __launch_bounds__(kCheckThreads)
    checkKernel(const T* __restrict__ u, const T* __restrict__ uPrev, std::size_t rows, const T* __restrict__ v,
                const T* __restrict__ vPrev, std::size_t cols, bool fromLogs, CheckValues* out)
{
    __shared__ double sh[4][32];
    __shared__ int shBad[32];
    double d[4] = {0.0, 1.0, 0.0, 1.0};
    int bad = 0;
    for (int side = 0; side < 2; ++side) {
        const T* x = side == 0 ? u : v;
        const T* xp = side == 0 ? uPrev : vPrev;
        const std::size_t n = side == 0 ? rows : cols;
        for (std::size_t k = threadIdx.x; k < n; k += blockDim.x) {
            double a = static_cast<double>(x[k]);
            double b = static_cast<double>(xp[k]);
            if (fromLogs) {
                if (isnan(a)) bad = 1;
                a = exp(a);
                b = exp(b);
            } else if (!(a > 0.0) || !isfinite(a)) {
                bad = 1;
            }
            d[2 * side] = fmax(d[2 * side], fabs(a - b));
            d[2 * side + 1] = fmax(d[2 * side + 1], fmax(fabs(a), fabs(b)));
        }
    }
    const int lane = threadIdx.x & 31;
    const int warp = threadIdx.x >> 5;
#pragma unroll
    for (int q = 0; q < 4; ++q) d[q] = warpMax(d[q]);
    bad = __any_sync(0xffffffffu, bad) ? 1 : 0;
    if (lane == 0) {
        for (int q = 0; q < 4; ++q) sh[q][warp] = d[q];
        shBad[warp] = bad;
    }
    __syncthreads();
    if (warp == 0) {
        const int nwarps = blockDim.x >> 5;
        for (int q = 0; q < 4; ++q) d[q] = warpMax(lane < nwarps ? sh[q][lane] : 0.0);
        bad = __any_sync(0xffffffffu, lane < nwarps ? shBad[lane] : 0) ? 1 : 0;
        if (lane == 0) {
            out->diffU = d[0];
            out->scaleU = d[1];
            out->diffV = d[2];
            out->scaleV = d[3];
            out->bad = bad;
            out->pad = 0;
        }
    }
}

__global__ void streamReadKernel(const float4* __restrict__ data, std::size_t count, float* sink)
{
    // Four independent 16-byte loads in flight per thread and step.
    const std::size_t stride = std::size_t(gridDim.x) * blockDim.x;
    std::size_t k = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x;
    float acc = 0.f;
    for (; k + 3 * stride < count; k += 4 * stride) {
        const float4 x0 = __ldcs(data + k);
        const float4 x1 = __ldcs(data + k + stride);
        const float4 x2 = __ldcs(data + k + 2 * stride);
        const float4 x3 = __ldcs(data + k + 3 * stride);
        acc += ((x0.x + x0.y) + (x0.z + x0.w)) + ((x1.x + x1.y) + (x1.z + x1.w)) +
               ((x2.x + x2.y) + (x2.z + x2.w)) + ((x3.x + x3.y) + (x3.z + x3.w));
    }
    for (; k < count; k += stride) {
        const float4 x = __ldcs(data + k);
        acc += (x.x + x.y) + (x.z + x.w);
    }
    if (acc == -1.2345f) *sink = acc;  // never true for the fill pattern; keeps the loads
}

__global__ void fillPatternKernel(float* data, std::size_t n)
{
    for (std::size_t k = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; k < n;
         k += std::size_t(gridDim.x) * blockDim.x) {
        unsigned h = static_cast<unsigned>(k) * 2654435761u;
        h ^= h >> 15;
        data[k] = 0.5f + 0.5f * (static_cast<float>(h & 0xffffu) + 1.f) / 65536.f;
    }
}

}  // namespace

// ================================================================ launchers

template <typename T, typename C>
void launchBuildFromDense(const C* cost, std::size_t rowBegin, std::size_t chunkRows, std::size_t cols,
                          std::size_t pitch, T* K, BuildParams params, unsigned long long* firstBad,
                          cudaStream_t stream)
{
    buildFromDenseKernel<T, C><<<gridFor(chunkRows * pitch, 256), 256, 0, stream>>>(cost, rowBegin, chunkRows, cols,
                                                                                    pitch, K, params, firstBad);
    UOT_CUDA_CHECK_LAUNCH();
}

template <typename T>
void launchBuildFromPoints(const double* x, const double* y, std::size_t rows, std::size_t cols, std::size_t dim,
                           double scale, std::size_t pitch, T* K, BuildParams params, cudaStream_t stream)
{
    buildFromPointsKernel<T><<<gridFor(rows * pitch, 256), 256, 0, stream>>>(x, y, rows, cols, dim, scale, pitch, K,
                                                                            params);
    UOT_CUDA_CHECK_LAUNCH();
}

template <typename T>
void launchCountZeroLines(const T* K, std::size_t rows, std::size_t cols, std::size_t pitch, int* zeroRows,
                          int* zeroCols, cudaStream_t stream)
{
    UOT_CUDA_CHECK(cudaMemsetAsync(zeroRows, 0, sizeof(int), stream));
    UOT_CUDA_CHECK(cudaMemsetAsync(zeroCols, 0, sizeof(int), stream));
    zeroRowsKernel<T><<<gridFor(rows * 32, 256), 256, 0, stream>>>(K, rows, cols, pitch, zeroRows);
    UOT_CUDA_CHECK_LAUNCH();
    zeroColsKernel<T><<<gridFor(cols, 256), 256, 0, stream>>>(K, rows, cols, pitch, zeroCols);
    UOT_CUDA_CHECK_LAUNCH();
}

template <typename T>
void launchScalingUpdate(const T* s, const double* w, T* x, std::size_t n, double f, cudaStream_t stream)
{
    scalingUpdateKernel<T><<<gridFor(n, 256), 256, 0, stream>>>(s, w, x, n, f);
    UOT_CUDA_CHECK_LAUNCH();
}

template <typename T>
void launchScaleMatrix(T* A, std::size_t rows, std::size_t pitch, const T* u, const T* v, cudaStream_t stream)
{
    scaleMatrixKernel<T><<<gridFor(rows * pitch, 256), 256, 0, stream>>>(A, rows, pitch, u, v);
    UOT_CUDA_CHECK_LAUNCH();
}

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
                 cudaStream_t stream)
{
    FusedFn<T, S> fn = fusedFunction<T, S>(plan.items, plan.stages);
    cudaLaunchConfig_t config = {};
    config.gridDim = dim3(plan.blocks);
    config.blockDim = dim3(plan.threads);
    config.dynamicSmemBytes = plan.sharedBytes;
    config.stream = stream;
    cudaLaunchAttribute attribute[2];
    attribute[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
    attribute[0].val.programmaticStreamSerializationAllowed = programmatic ? 1 : 0;
    config.attrs = attribute;
    config.numAttrs = 1;
    if (plan.cluster > 1) {
        attribute[1].id = cudaLaunchAttributeClusterDimension;
        attribute[1].val.clusterDim.x = static_cast<unsigned>(plan.cluster);
        attribute[1].val.clusterDim.y = 1;
        attribute[1].val.clusterDim.z = 1;
        config.numAttrs = 2;
    }
    UOT_CUDA_CHECK(cudaLaunchKernelEx(&config, fn, K, rows, pitch, v, a, fa, u, partials, partialRows, plan.groupRows,
                                      plan.cluster));
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
    cudaLaunchConfig_t config = {};
    config.gridDim = dim3(static_cast<unsigned>((cols + 31) / 32));
    config.blockDim = dim3(32, lanes >= 32 ? 32 : lanes >= 16 ? 16 : 8);
    config.stream = stream;
    cudaLaunchAttribute attribute[1];
    attribute[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
    attribute[0].val.programmaticStreamSerializationAllowed = programmatic ? 1 : 0;
    config.attrs = attribute;
    config.numAttrs = 1;
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

template <typename T>
void launchMapFactors(T* s, const double* w, T* x, T* factor, std::size_t n, double f, cudaStream_t stream)
{
    mapFactorsKernel<T><<<gridFor(n, 256), 256, 0, stream>>>(s, w, x, factor, n, f);
    UOT_CUDA_CHECK_LAUNCH();
}

template <typename T>
void launchMapApplyRows(T* A, std::size_t rows, std::size_t pitch, const T* alpha, T* colSum, int tx, int ty,
                        int ny, cudaStream_t stream)
{
    using V = typename VecOf<T>::type;
    const std::size_t pitchV = pitch / vectorWidth<T>();
    const dim3 block(tx, ty);
    const std::size_t rowBlocks = (rows + std::size_t(ty) * ny - 1) / (std::size_t(ty) * ny);
    const dim3 grid(static_cast<unsigned>((pitchV + tx - 1) / tx),
                    static_cast<unsigned>(std::min<std::size_t>(rowBlocks, 65535)));
    const std::size_t shared = sizeof(V) * tx * ty + sizeof(T) * ty * ny;
    mapApplyRowsKernel<T><<<grid, block, shared, stream>>>(A, rows, pitchV, alpha, colSum, ny);
    UOT_CUDA_CHECK_LAUNCH();
}

template <typename T>
void launchMapApplyCols(T* A, std::size_t rows, std::size_t pitch, const T* beta, T* rowSum, int tx, int ny,
                        cudaStream_t stream)
{
    const std::size_t pitchV = pitch / vectorWidth<T>();
    const std::size_t chunk = std::size_t(tx) * kRowQ;
    const dim3 grid(static_cast<unsigned>((pitchV + chunk - 1) / chunk),
                    static_cast<unsigned>(std::min<std::size_t>((rows + ny - 1) / ny, 65535)));
    const std::size_t shared = sizeof(T) * std::size_t(ny) * (tx / 32);
    mapApplyColsKernel<T><<<grid, tx, shared, stream>>>(A, rows, pitchV, beta, rowSum, ny);
    UOT_CUDA_CHECK_LAUNCH();
}

template <typename T>
void launchRowSums(const T* A, std::size_t rows, std::size_t cols, std::size_t pitch, T* s, cudaStream_t stream)
{
    rowSumsKernel<T><<<gridFor(rows * 32, 256), 256, 0, stream>>>(A, rows, cols, pitch, s);
    UOT_CUDA_CHECK_LAUNCH();
}

template <typename T>
void launchLogRows(const T* logK, std::size_t rows, std::size_t cols, std::size_t pitch, const double* lv,
                   const double* logWeightA, double fa, double* lu, cudaStream_t stream)
{
    logRowsKernel<T><<<gridFor(rows * 32, 256), 256, 0, stream>>>(logK, rows, cols, pitch, lv, logWeightA, fa, lu);
    UOT_CUDA_CHECK_LAUNCH();
}

int logColumnBands(std::size_t rows, std::size_t cols, int device)
{
    int sms = 0;
    UOT_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
    const std::size_t colBlocks = (cols + 31) / 32;
    const std::size_t wanted = (4 * std::size_t(sms) + colBlocks - 1) / colBlocks;
    const std::size_t maxBands = std::max<std::size_t>(1, rows / kLogColTy);
    return static_cast<int>(std::clamp<std::size_t>(wanted, 1, std::min<std::size_t>(maxBands, 1024)));
}

template <typename T>
void launchLogCols(const T* logK, std::size_t rows, std::size_t cols, std::size_t pitch, const double* lu,
                   const double* logWeightB, double fb, double* lv, double* partialMax, double* partialSum,
                   int bands, cudaStream_t stream)
{
    const dim3 grid(static_cast<unsigned>((cols + 31) / 32), static_cast<unsigned>(bands));
    logColsKernel<T><<<grid, dim3(32, kLogColTy), 0, stream>>>(logK, rows, cols, pitch, lu, partialMax, partialSum);
    UOT_CUDA_CHECK_LAUNCH();
    logColsFinalizeKernel<<<gridFor(cols, 256), 256, 0, stream>>>(partialMax, partialSum, bands, cols, logWeightB, fb,
                                                                 lv);
    UOT_CUDA_CHECK_LAUNCH();
}

template <typename T>
void launchCheck(const T* u, const T* uPrev, std::size_t rows, const T* v, const T* vPrev, std::size_t cols,
                 bool fromLogs, CheckValues* out, cudaStream_t stream)
{
    checkKernel<T><<<1, kCheckThreads, 0, stream>>>(u, uPrev, rows, v, vPrev, cols, fromLogs, out);
    UOT_CUDA_CHECK_LAUNCH();
}

template <typename T, typename S>
void launchMarginalErrors(const S* K, std::size_t rows, std::size_t cols, std::size_t pitch, const T* u, const T* v,
                          const double* lu, const double* lv, const double* a, const double* b, const T* colSums,
                          double* colScratch, int bands, double* out, cudaStream_t stream)
{
    UOT_CUDA_CHECK(cudaMemsetAsync(out, 0, 2 * sizeof(double), stream));
    marginalRowsKernel<T, S><<<gridFor(rows * 32, 256), 256, 0, stream>>>(K, rows, cols, pitch, u, v, lu, lv, a, out);
    UOT_CUDA_CHECK_LAUNCH();
    if (colSums && v && !lu) {
        marginalFromColSumsKernel<T><<<gridFor(cols, 256), 256, 0, stream>>>(colSums, v, cols, b, out + 1);
        UOT_CUDA_CHECK_LAUNCH();
        return;
    }
    const dim3 grid(static_cast<unsigned>((cols + 31) / 32), static_cast<unsigned>(std::max(1, bands)));
    const float* vf = nullptr;
    const double* vd = nullptr;
    if constexpr (std::is_same_v<T, float>)
        vf = v;
    else
        vd = v;
    if (lu) {
        if constexpr (!std::is_same_v<S, T>) {
            throw Error(ErrorCode::InvalidArgument, "log-domain marginals need a natively stored matrix");
        } else {
            double* partialMax = colScratch;
            double* partialSum = colScratch + std::size_t(std::max(1, bands)) * cols;
            logColsKernel<T><<<grid, dim3(32, kLogColTy), 0, stream>>>(K, rows, cols, pitch, lu, partialMax, partialSum);
            UOT_CUDA_CHECK_LAUNCH();
            marginalColsFinalizeKernel<<<gridFor(cols, 256), 256, 0, stream>>>(nullptr, partialMax, partialSum,
                                                                              std::max(1, bands), cols, nullptr, nullptr,
                                                                              lv, b, out + 1);
        }
    } else {
        UOT_CUDA_CHECK(cudaMemsetAsync(colScratch, 0, cols * sizeof(double), stream));
        marginalColsKernel<T, S><<<grid, dim3(32, kMarginColTy), 0, stream>>>(K, rows, cols, pitch, u, colScratch);
        UOT_CUDA_CHECK_LAUNCH();
        marginalColsFinalizeKernel<<<gridFor(cols, 256), 256, 0, stream>>>(colScratch, nullptr, nullptr, 0, cols, vf,
                                                                          vd, nullptr, b, out + 1);
    }
    UOT_CUDA_CHECK_LAUNCH();
}

void launchStreamRead(const float* data, std::size_t count, float* sink, int blocks, cudaStream_t stream)
{
    streamReadKernel<<<blocks, 512, 0, stream>>>(reinterpret_cast<const float4*>(data), count, sink);
    UOT_CUDA_CHECK_LAUNCH();
}

void launchFillPattern(float* data, std::size_t n, cudaStream_t stream)
{
    fillPatternKernel<<<gridFor(n, 256, 4096), 256, 0, stream>>>(data, n);
    UOT_CUDA_CHECK_LAUNCH();
}

// ---------------------------------------------------------------- instantiations

#define UOT_INSTANTIATE(T)                                                                                          \
    template void launchBuildFromDense<T, float>(const float*, std::size_t, std::size_t, std::size_t, std::size_t,  \
                                                 T*, BuildParams, unsigned long long*, cudaStream_t);              \
    template void launchBuildFromDense<T, double>(const double*, std::size_t, std::size_t, std::size_t,            \
                                                  std::size_t, T*, BuildParams, unsigned long long*, cudaStream_t); \
    template void launchBuildFromPoints<T>(const double*, const double*, std::size_t, std::size_t, std::size_t,     \
                                           double, std::size_t, T*, BuildParams, cudaStream_t);                    \
    template void launchCountZeroLines<T>(const T*, std::size_t, std::size_t, std::size_t, int*, int*,              \
                                          cudaStream_t);                                                           \
    template void launchScalingUpdate<T>(const T*, const double*, T*, std::size_t, double, cudaStream_t);           \
    template void launchScaleMatrix<T>(T*, std::size_t, std::size_t, const T*, const T*, cudaStream_t);             \
    template FusedPlan planFused<T>(std::size_t, std::size_t, std::size_t, int, int, bool);                                    \
    template void launchFused<T>(const FusedPlan&, const T*, std::size_t, std::size_t, const T*, const double*,     \
                                 double, T*, T*, int, bool, cudaStream_t);                                         \
    template void launchFinalizeColumns<T>(T*, int, std::size_t, std::size_t, const double*, double, T*, T*, int, \
                                           bool, cudaStream_t);                                                          \
    template void launchMapFactors<T>(T*, const double*, T*, T*, std::size_t, double, cudaStream_t);                \
    template void launchMapApplyRows<T>(T*, std::size_t, std::size_t, const T*, T*, int, int, int, cudaStream_t);   \
    template void launchMapApplyCols<T>(T*, std::size_t, std::size_t, const T*, T*, int, int, cudaStream_t);        \
    template void launchRowSums<T>(const T*, std::size_t, std::size_t, std::size_t, T*, cudaStream_t);              \
    template void launchLogRows<T>(const T*, std::size_t, std::size_t, std::size_t, const double*, const double*,   \
                                   double, double*, cudaStream_t);                                                 \
    template void launchLogCols<T>(const T*, std::size_t, std::size_t, std::size_t, const double*, const double*,   \
                                   double, double*, double*, double*, int, cudaStream_t);                          \
    template void launchCheck<T>(const T*, const T*, std::size_t, const T*, const T*, std::size_t, bool,            \
                                 CheckValues*, cudaStream_t);                                                      \
    template void launchMarginalErrors<T>(const T*, std::size_t, std::size_t, std::size_t, const T*, const T*,      \
                                          const double*, const double*, const double*, const double*, const T*,     \
                                          double*, int, double*, cudaStream_t);

UOT_INSTANTIATE(float)
UOT_INSTANTIATE(double)
#undef UOT_INSTANTIATE

// bf16 storage of K (gpu-fused-bf16): float arithmetic.
template void launchBuildFromDense<Bf16, float>(const float*, std::size_t, std::size_t, std::size_t, std::size_t,
                                                Bf16*, BuildParams, unsigned long long*, cudaStream_t);
template void launchBuildFromDense<Bf16, double>(const double*, std::size_t, std::size_t, std::size_t, std::size_t,
                                                 Bf16*, BuildParams, unsigned long long*, cudaStream_t);
template void launchBuildFromPoints<Bf16>(const double*, const double*, std::size_t, std::size_t, std::size_t, double,
                                          std::size_t, Bf16*, BuildParams, cudaStream_t);
template void launchCountZeroLines<Bf16>(const Bf16*, std::size_t, std::size_t, std::size_t, int*, int*,
                                         cudaStream_t);
template FusedPlan planFused<float, Bf16>(std::size_t, std::size_t, std::size_t, int, int, bool);
template void launchFused<float, Bf16>(const FusedPlan&, const Bf16*, std::size_t, std::size_t, const float*,
                                       const double*, double, float*, float*, int, bool, cudaStream_t);
template void launchMarginalErrors<float, Bf16>(const Bf16*, std::size_t, std::size_t, std::size_t, const float*,
                                                const float*, const double*, const double*, const double*,
                                                const double*, const float*, double*, int, double*, cudaStream_t);

}  // namespace uot::gpu::detail
