// CUDA reductions of every variant: the marginal errors reported as progress and
// the convergence check (stopping criterion and finiteness flag).
// Declarations and contracts: gpu/gpu_kernels.h.

#include "gpu/gpu_kernels_device.cuh"

namespace uot::gpu::detail {

namespace {

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

}  // namespace

// ================================================================ launchers

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
            launchLogColPartials(K, rows, cols, pitch, lu, partialMax, partialSum, std::max(1, bands), stream);
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

// ---------------------------------------------------------------- instantiations

#define UOT_INSTANTIATE(T)                                                                                          \
    template void launchCheck<T>(const T*, const T*, std::size_t, const T*, const T*, std::size_t, bool,            \
                                 CheckValues*, cudaStream_t);                                                      \
    template void launchMarginalErrors<T>(const T*, std::size_t, std::size_t, std::size_t, const T*, const T*,      \
                                          const double*, const double*, const double*, const double*, const T*,     \
                                          double*, int, double*, cudaStream_t);

UOT_INSTANTIATE(float)
UOT_INSTANTIATE(double)
#undef UOT_INSTANTIATE

// bf16 storage of K (gpu-fused-bf16): float arithmetic.
template void launchMarginalErrors<float, Bf16>(const Bf16*, std::size_t, std::size_t, std::size_t, const float*,
                                                const float*, const double*, const double*, const double*,
                                                const double*, const float*, double*, int, double*, cudaStream_t);

}  // namespace uot::gpu::detail
