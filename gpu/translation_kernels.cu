// The translation-invariant correction on the device (see translation_kernels.h).

#include "gpu/translation_kernels.h"

#include <cmath>

#include "gpu/cuda_support.h"

namespace uot::gpu::detail {

namespace {

constexpr int kThreads = 1024;

struct Lse {
    double m = -INFINITY, s = 0;
    __device__ void add(double x)
    {
        if (x == -INFINITY) return;
        if (x > m) {
            s = s * exp(m - x) + 1.0;
            m = x;
        } else {
            s += exp(x - m);
        }
    }
    __device__ void merge(double m2, double s2)
    {
        if (m2 == -INFINITY) return;
        if (m2 > m) {
            s = s * exp(m - m2) + s2;
            m = m2;
        } else {
            s += s2 * exp(m2 - m);
        }
    }
};

// log sum of the block's terms, returned to every thread.
__device__ double blockLogSumExp(Lse local, double* sharedM, double* sharedS)
{
    for (int offset = 16; offset > 0; offset >>= 1) {
        const double m2 = __shfl_xor_sync(0xffffffffu, local.m, offset);
        const double s2 = __shfl_xor_sync(0xffffffffu, local.s, offset);
        local.merge(m2, s2);
    }
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    if (lane == 0) {
        sharedM[warp] = local.m;
        sharedS[warp] = local.s;
    }
    __syncthreads();
    if (warp == 0) {
        Lse total;
        if (lane < blockDim.x / 32) total = Lse{sharedM[lane], sharedS[lane]};
        for (int offset = 16; offset > 0; offset >>= 1) {
            const double m2 = __shfl_xor_sync(0xffffffffu, total.m, offset);
            const double s2 = __shfl_xor_sync(0xffffffffu, total.s, offset);
            total.merge(m2, s2);
        }
        if (lane == 0) sharedM[0] = total.m == -INFINITY ? -INFINITY : total.m + log(total.s);
    }
    __syncthreads();
    const double result = sharedM[0];
    __syncthreads();  // the shared slots are reused by the next reduction
    return result;
}

template <typename V>
__device__ double logOf(V x, bool logDomain)
{
    return logDomain ? static_cast<double>(x) : log(static_cast<double>(x));
}

template <typename V>
__global__ void __launch_bounds__(kThreads) translateKernel(V* u, std::size_t rows, V* v, std::size_t cols,
                                                            const double* a, const double* b, TranslationParams p,
                                                            bool logDomain, bool init, V* colSum, double* state)
{
    __shared__ double sharedM[32], sharedS[32];
    if (init) {
        Lse l;
        for (std::size_t j = threadIdx.x; j < cols; j += blockDim.x) l.add(log(b[j]) - p.rb * logOf(v[j], logDomain));
        const double logB = blockLogSumExp(l, sharedM, sharedS);
        if (threadIdx.x == 0) state[0] = logB;
        return;
    }
    // Row half-step: F = F^ + s.
    Lse la;
    for (std::size_t i = threadIdx.x; i < rows; i += blockDim.x) la.add(log(a[i]) - p.ra * logOf(u[i], logDomain));
    const double logAHat = blockLogSumExp(la, sharedM, sharedS);
    const double s = p.cs * (state[0] - logAHat);
    const double logA = logAHat - p.ra * s;
    // Column half-step of the pass, for u = e^s u^: G^ = G^pass - fb s; then G = G^ + t.
    Lse lb;
    for (std::size_t j = threadIdx.x; j < cols; j += blockDim.x)
        lb.add(log(b[j]) - p.rb * (logOf(v[j], logDomain) - p.fb * s));
    const double logBHat = blockLogSumExp(lb, sharedM, sharedS);
    const double t = p.ct * (logA - logBHat);
    if (!isfinite(s) || !isfinite(t)) {
        if (threadIdx.x == 0) u[0] = static_cast<V>(NAN);
        return;
    }
    const double us = exp(s);
    for (std::size_t i = threadIdx.x; i < rows; i += blockDim.x)
        u[i] = logDomain ? static_cast<V>(static_cast<double>(u[i]) + s) : static_cast<V>(static_cast<double>(u[i]) * us);
    const double shiftV = t - p.fb * s;
    for (std::size_t j = threadIdx.x; j < cols; j += blockDim.x) {
        const double g = logOf(v[j], logDomain) + shiftV;
        v[j] = logDomain ? static_cast<V>(g) : static_cast<V>(exp(g));
        if (colSum) colSum[j] = static_cast<V>(static_cast<double>(colSum[j]) * us);
    }
    // log B of the new v, for the next iteration: every term changed by exp(-rb t).
    if (threadIdx.x == 0) state[0] = logBHat - p.rb * t;
}

}  // namespace

template <typename V>
void launchTranslate(V* u, std::size_t rows, V* v, std::size_t cols, const double* a, const double* b,
                     const TranslationParams& params, bool logDomain, bool init, V* colSum, double* state,
                     cudaStream_t stream)
{
    translateKernel<V><<<1, kThreads, 0, stream>>>(u, rows, v, cols, a, b, params, logDomain, init, colSum, state);
    UOT_CUDA_CHECK_LAUNCH();
}

template void launchTranslate<float>(float*, std::size_t, float*, std::size_t, const double*, const double*,
                                     const TranslationParams&, bool, bool, float*, double*, cudaStream_t);
template void launchTranslate<double>(double*, std::size_t, double*, std::size_t, const double*, const double*,
                                      const TranslationParams&, bool, bool, double*, double*, cudaStream_t);

}  // namespace uot::gpu::detail
