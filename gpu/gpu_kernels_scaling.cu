// CUDA kernels of the stored-matrix passes outside gpu-fused: the scaling updates
// (pot-style), the matrix rescaling of the warm start and the gpu-mapuot in-place passes.
// Declarations and contracts: gpu/gpu_kernels.h.

#include "gpu/gpu_kernels_device.cuh"

namespace uot::gpu::detail {

namespace {

template <typename T>
__global__ void scalingUpdateKernel(const T* __restrict__ s, const double* __restrict__ w, T* __restrict__ x,
                                    std::size_t n, double f, const double* __restrict__ omega)
{
    const std::size_t k = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x;
    if (k >= n) return;
    const double plain = pow(w[k] / static_cast<double>(s[k]), f);
    const double relax = omega ? *omega : 1.0;
    // Over-relaxed: x^(1 - omega) plain^omega (relaxed_kernels.h).
    x[k] = static_cast<T>(relax == 1.0 ? plain
                                       : exp((1.0 - relax) * log(static_cast<double>(x[k])) + relax * log(plain)));
}

template <typename T>
__global__ void mapFactorsKernel(T* __restrict__ s, const double* __restrict__ w, T* __restrict__ x,
                                 T* __restrict__ factor, std::size_t n, double f, const double* __restrict__ omega)
{
    const std::size_t k = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x;
    if (k >= n) return;
    const double xk = static_cast<double>(x[k]);
    double g = pow(w[k] / static_cast<double>(s[k]), f) * (f == 1.0 ? 1.0 : pow(xk, f - 1.0));
    s[k] = T(0);
    if (!omega) {
        x[k] = static_cast<T>(xk * g);
        factor[k] = static_cast<T>(g);
        return;
    }
    // Over-relaxed: x^(1 - w) (plain x)^w = x g^w. An unusable factor leaves the
    // matrix as it is (factor 1) and the unusable x tells the step kernels.
    const double relax = *omega;
    if (relax != 1.0) g = pow(g, relax);
    const T gt = static_cast<T>(g), xt = static_cast<T>(xk * g);
    const bool usable = isfinite(static_cast<double>(gt)) && gt > T(0) && isfinite(static_cast<double>(xt)) && xt > T(0);
    x[k] = xt;
    factor[k] = usable ? gt : T(1);
}

template <typename T>
__global__ void mapRealignKernel(const T* __restrict__ u, T* __restrict__ uHeld, T* __restrict__ alpha,
                                 std::size_t rows, const T* __restrict__ v, T* __restrict__ vHeld,
                                 T* __restrict__ beta, std::size_t cols)
{
    const std::size_t k = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x;
    if (k < rows) {
        // The rows of A hold uHeld alpha since part 2.
        const double held = static_cast<double>(uHeld[k]) * static_cast<double>(alpha[k]);
        alpha[k] = static_cast<T>(static_cast<double>(u[k]) / held);
        uHeld[k] = u[k];
    }
    if (k < cols) {
        beta[k] = static_cast<T>(static_cast<double>(v[k]) / static_cast<double>(vHeld[k]));
        vHeld[k] = v[k];
    }
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
                                   const T* __restrict__ beta, T* __restrict__ rowSum, int ny,
                                   const T* __restrict__ rowFactor)
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
                const T rf = rowFactor ? rowFactor[row] : T(1);  // x b 1 == x b: the plain bits
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
                        xp[e] = xp[e] * bp[e] * rf;
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

}  // namespace

// ================================================================ launchers

template <typename T>
void launchScalingUpdate(const T* s, const double* w, T* x, std::size_t n, double f, cudaStream_t stream,
                         const double* omega)
{
    scalingUpdateKernel<T><<<gridFor(n, 256), 256, 0, stream>>>(s, w, x, n, f, omega);
    UOT_CUDA_CHECK_LAUNCH();
}

template <typename T>
void launchScaleMatrix(T* A, std::size_t rows, std::size_t pitch, const T* u, const T* v, cudaStream_t stream)
{
    scaleMatrixKernel<T><<<gridFor(rows * pitch, 256), 256, 0, stream>>>(A, rows, pitch, u, v);
    UOT_CUDA_CHECK_LAUNCH();
}

template <typename T>
void launchMapFactors(T* s, const double* w, T* x, T* factor, std::size_t n, double f, cudaStream_t stream,
                      const double* omega)
{
    mapFactorsKernel<T><<<gridFor(n, 256), 256, 0, stream>>>(s, w, x, factor, n, f, omega);
    UOT_CUDA_CHECK_LAUNCH();
}

template <typename T>
void launchMapRealign(const T* u, T* uHeld, T* alpha, std::size_t rows, const T* v, T* vHeld, T* beta,
                      std::size_t cols, cudaStream_t stream)
{
    const std::size_t n = std::max(rows, cols);
    mapRealignKernel<T><<<gridFor(n, 256), 256, 0, stream>>>(u, uHeld, alpha, rows, v, vHeld, beta, cols);
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
                        cudaStream_t stream, const T* rowFactor)
{
    const std::size_t pitchV = pitch / vectorWidth<T>();
    const std::size_t chunk = std::size_t(tx) * kRowQ;
    const dim3 grid(static_cast<unsigned>((pitchV + chunk - 1) / chunk),
                    static_cast<unsigned>(std::min<std::size_t>((rows + ny - 1) / ny, 65535)));
    const std::size_t shared = sizeof(T) * std::size_t(ny) * (tx / 32);
    mapApplyColsKernel<T><<<grid, tx, shared, stream>>>(A, rows, pitchV, beta, rowSum, ny, rowFactor);
    UOT_CUDA_CHECK_LAUNCH();
}

template <typename T>
void launchRowSums(const T* A, std::size_t rows, std::size_t cols, std::size_t pitch, T* s, cudaStream_t stream)
{
    rowSumsKernel<T><<<gridFor(rows * 32, 256), 256, 0, stream>>>(A, rows, cols, pitch, s);
    UOT_CUDA_CHECK_LAUNCH();
}

// ---------------------------------------------------------------- instantiations

#define UOT_INSTANTIATE(T)                                                                                          \
    template void launchScalingUpdate<T>(const T*, const double*, T*, std::size_t, double, cudaStream_t,            \
                                         const double*);                                                            \
    template void launchScaleMatrix<T>(T*, std::size_t, std::size_t, const T*, const T*, cudaStream_t);             \
    template void launchMapFactors<T>(T*, const double*, T*, T*, std::size_t, double, cudaStream_t,                 \
                                      const double*);                                                               \
    template void launchMapRealign<T>(const T*, T*, T*, std::size_t, const T*, T*, T*, std::size_t, cudaStream_t);  \
    template void launchMapApplyRows<T>(T*, std::size_t, std::size_t, const T*, T*, int, int, int, cudaStream_t);   \
    template void launchMapApplyCols<T>(T*, std::size_t, std::size_t, const T*, T*, int, int, cudaStream_t,         \
                                        const T*);                                                                  \
    template void launchRowSums<T>(const T*, std::size_t, std::size_t, std::size_t, T*, cudaStream_t);

UOT_INSTANTIATE(float)
UOT_INSTANTIATE(double)
#undef UOT_INSTANTIATE

}  // namespace uot::gpu::detail
