#pragma once
// Internal to gpu/gpu_kernels_*.cu, gpu/cluster_iterations.cu and gpu/relaxed_kernels.cu:
// the device helpers their kernels share (vector types, bf16 conversion, warp
// reductions, log-sum-exp accumulation, cp.async and programmatic-dependent-launch
// wrappers, launch-grid sizing, gpu-fused's column finalize).
// Internal linkage on purpose: each kernel file gets its own copy, as when the
// kernels lived in one file.

#include <cooperative_groups.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <type_traits>

#include "gpu/cuda_support.h"
#include "gpu/gpu_kernels.h"
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

// The over-relaxed row update u_old^(1 - w) u^w (log form: (1 - w) F_old + w F^), in
// float64 also for fp32 (one per row): float logs and exponentials of |F| ~ 10-30 lose
// |F| * 6e-8 in the exponent, which measured as a plan accuracy floor of about 1.5e-6.
template <typename T>
__device__ __forceinline__ T relaxedScaling(T old, T plain, double w)
{
    return static_cast<T>(exp((1.0 - w) * log(static_cast<double>(old)) + w * log(static_cast<double>(plain))));
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

// A launch configuration (cudaLaunchKernelEx) that lets the kernel start before its
// predecessor finishes (programmatic dependent launch) when `programmatic`; and,
// after clusterOf(n), in thread-block clusters of n blocks. Not copied: the
// configuration points at its own attributes.
struct LaunchConfig {
    cudaLaunchConfig_t config = {};
    cudaLaunchAttribute attribute[2] = {};
    LaunchConfig(dim3 grid, dim3 block, cudaStream_t stream, bool programmatic, std::size_t sharedBytes = 0)
    {
        config.gridDim = grid;
        config.blockDim = block;
        config.dynamicSmemBytes = sharedBytes;
        config.stream = stream;
        attribute[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
        attribute[0].val.programmaticStreamSerializationAllowed = programmatic ? 1 : 0;
        config.attrs = attribute;
        config.numAttrs = 1;
    }
    LaunchConfig(const LaunchConfig&) = delete;
    LaunchConfig& operator=(const LaunchConfig&) = delete;
    void clusterOf(unsigned blocks)
    {
        attribute[1].id = cudaLaunchAttributeClusterDimension;
        attribute[1].val.clusterDim.x = blocks;
        attribute[1].val.clusterDim.y = 1;
        attribute[1].val.clusterDim.z = 1;
        config.numAttrs = 2;
    }
};

inline unsigned gridFor(std::size_t work, unsigned threads, unsigned cap = 65535u * 32u)
{
    const std::size_t blocks = (work + threads - 1) / threads;
    return static_cast<unsigned>(std::max<std::size_t>(1, std::min<std::size_t>(blocks, cap)));
}

// gpu-fused's column finalize, one block of 32 x LANES threads (the second stage of
// the column reduction): column j = blockIdx.x * 32 + threadIdx.x summed over the
// partial rows (LANES side by side; zeroed again when rezero), v_j = (b_j / sum)^fb
// and colSums_j = sum written by the threads with threadIdx.y == 0. Each thread
// loads its rows in batches of eight independent loads (264 rows with 32 lanes: one
// batch; with 8 lanes: five). The caller waits for the pass first.
template <typename T, int LANES>
__device__ __forceinline__ void finalizeColumn(T* __restrict__ partials, int partialRows, bool rezero,
                                               std::size_t pitch, std::size_t cols, const double* __restrict__ b,
                                               double fb, T* __restrict__ v, T* __restrict__ colSums,
                                               T (&sums)[LANES][33])
{
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

}  // namespace

}  // namespace uot::gpu::detail
