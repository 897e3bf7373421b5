// CUDA kernels of gpu-log: the log-domain row and column passes (log-sum-exp).
// Declarations and contracts: gpu/gpu_kernels.h.

#include "gpu/gpu_kernels_device.cuh"

namespace uot::gpu::detail {

namespace {

template <typename T>
__global__ void logRowsKernel(const T* __restrict__ logK, std::size_t rows, std::size_t cols, std::size_t pitch,
                              const double* __restrict__ lv, const double* __restrict__ logWeightA, double fa,
                              double* __restrict__ lu, const double* __restrict__ omega)
{
    const double w = omega ? *omega : 1.0;  // over-relaxation (relaxed_kernels.h)
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
        if (lane == 0) {
            const double plain = fa * (logWeightA[row] - (m + log(s)));
            lu[row] = w == 1.0 ? plain : (1.0 - w) * lu[row] + w * plain;
        }
    }
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

}  // namespace

// ================================================================ launchers

template <typename T>
void launchLogRows(const T* logK, std::size_t rows, std::size_t cols, std::size_t pitch, const double* lv,
                   const double* logWeightA, double fa, double* lu, cudaStream_t stream, const double* omega)
{
    logRowsKernel<T><<<gridFor(rows * 32, 256), 256, 0, stream>>>(logK, rows, cols, pitch, lv, logWeightA, fa, lu,
                                                                   omega);
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
void launchLogColPartials(const T* logK, std::size_t rows, std::size_t cols, std::size_t pitch, const double* lu,
                          double* partialMax, double* partialSum, int bands, cudaStream_t stream)
{
    const dim3 grid(static_cast<unsigned>((cols + 31) / 32), static_cast<unsigned>(bands));
    logColsKernel<T><<<grid, dim3(32, kLogColTy), 0, stream>>>(logK, rows, cols, pitch, lu, partialMax, partialSum);
    UOT_CUDA_CHECK_LAUNCH();
}

template <typename T>
void launchLogCols(const T* logK, std::size_t rows, std::size_t cols, std::size_t pitch, const double* lu,
                   const double* logWeightB, double fb, double* lv, double* partialMax, double* partialSum,
                   int bands, cudaStream_t stream)
{
    launchLogColPartials(logK, rows, cols, pitch, lu, partialMax, partialSum, bands, stream);
    logColsFinalizeKernel<<<gridFor(cols, 256), 256, 0, stream>>>(partialMax, partialSum, bands, cols, logWeightB, fb,
                                                                 lv);
    UOT_CUDA_CHECK_LAUNCH();
}

// ---------------------------------------------------------------- instantiations

#define UOT_INSTANTIATE(T)                                                                                          \
    template void launchLogRows<T>(const T*, std::size_t, std::size_t, std::size_t, const double*, const double*,   \
                                   double, double*, cudaStream_t, const double*);                                  \
    template void launchLogColPartials<T>(const T*, std::size_t, std::size_t, std::size_t, const double*, double*, \
                                          double*, int, cudaStream_t);                                            \
    template void launchLogCols<T>(const T*, std::size_t, std::size_t, std::size_t, const double*, const double*,   \
                                   double, double*, double*, double*, int, cudaStream_t);

UOT_INSTANTIATE(float)
UOT_INSTANTIATE(double)
#undef UOT_INSTANTIATE

}  // namespace uot::gpu::detail
