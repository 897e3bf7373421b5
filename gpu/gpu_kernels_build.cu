// CUDA kernels that build K (or log K) from costs or point sets, and the zero-line count.
// Declarations and contracts: gpu/gpu_kernels.h.

#include "gpu/gpu_kernels_device.cuh"

namespace uot::gpu::detail {

namespace {

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

// ---------------------------------------------------------------- instantiations

#define UOT_INSTANTIATE(T)                                                                                          \
    template void launchBuildFromDense<T, float>(const float*, std::size_t, std::size_t, std::size_t, std::size_t,  \
                                                 T*, BuildParams, unsigned long long*, cudaStream_t);              \
    template void launchBuildFromDense<T, double>(const double*, std::size_t, std::size_t, std::size_t,            \
                                                  std::size_t, T*, BuildParams, unsigned long long*, cudaStream_t); \
    template void launchBuildFromPoints<T>(const double*, const double*, std::size_t, std::size_t, std::size_t,     \
                                           double, std::size_t, T*, BuildParams, cudaStream_t);                    \
    template void launchCountZeroLines<T>(const T*, std::size_t, std::size_t, std::size_t, int*, int*,              \
                                          cudaStream_t);

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

}  // namespace uot::gpu::detail
