// The translation-invariant correction on the device (see translation_kernels.h).

#include "gpu/translation_kernels.h"

#include <algorithm>
#include <cmath>

#include "gpu/cuda_support.h"
#include "gpu/block_log_sum_exp.cuh"

namespace uot::gpu::detail {

namespace {

constexpr int kThreads = 256;
constexpr std::size_t kMaxPartials = 64;  // block partials per side (state[2 ..] of the device buffer)

template <typename V>
__device__ double logOf(V x, bool logDomain)
{
    return logDomain ? static_cast<double>(x) : log(static_cast<double>(x));
}

// The log-sum-exp of `count` block partials (m, s), returned to every thread.
__device__ double reducePartials(const double2* parts, int count, double* sharedM, double* sharedS)
{
    Lse l;
    for (int k = threadIdx.x; k < count; k += blockDim.x) l.merge(parts[k].x, parts[k].y);
    return blockLogSumExp(l, sharedM, sharedS);
}

__device__ void writePartial(Lse l, double2* out, double* sharedM, double* sharedS)
{
    // blockLogSumExp returns log of the block's sum; store it as (m, s) = (value, 1).
    const double total = blockLogSumExp(l, sharedM, sharedS);
    if (threadIdx.x == 0) out[blockIdx.x] = make_double2(total, total == -INFINITY ? 0.0 : 1.0);
}

// Row side: partials of log A(F^) = log sum_i a_i exp(-ra F^_i).
template <typename V>
__global__ void rowPartialsKernel(const V* u, std::size_t rows, const double* a, double ra, bool logDomain,
                                  double2* out)
{
    __shared__ double sharedM[32], sharedS[32];
    Lse l;
    for (std::size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < rows; i += std::size_t(gridDim.x) * blockDim.x)
        l.add(log(a[i]) - ra * logOf(u[i], logDomain));
    writePartial(l, out, sharedM, sharedS);
}

// Column side: s from the row partials and state[0] (log B of the input v; block 0
// keeps s in state[1]), then partials of log B(G^) with G^ = G^pass - fb s.
// Without row partials (init): s = 0, the partials of log B(G) of the current v.
template <typename V>
__global__ void colPartialsKernel(const V* v, std::size_t cols, const double* b, TranslationParams p, bool logDomain,
                                  const double2* rowParts, int rowCount, double* state, double2* out)
{
    __shared__ double sharedM[32], sharedS[32];
    double s = 0;
    if (rowParts) {
        s = p.cs * (state[0] - reducePartials(rowParts, rowCount, sharedM, sharedS));
        if (blockIdx.x == 0 && threadIdx.x == 0) state[1] = s;
    }
    Lse l;
    for (std::size_t j = blockIdx.x * blockDim.x + threadIdx.x; j < cols; j += std::size_t(gridDim.x) * blockDim.x)
        l.add(log(b[j]) - p.rb * (logOf(v[j], logDomain) - p.fb * s));
    writePartial(l, out, sharedM, sharedS);
}

// Applies the shifts (init: only state[0] = log B(G), one block).
template <typename V>
__global__ void applyKernel(V* u, std::size_t rows, V* v, std::size_t cols, TranslationParams p, bool logDomain,
                            bool init, const double2* rowParts, int rowCount, const double2* colParts, int colCount,
                            V* colSum, double* state)
{
    __shared__ double sharedM[32], sharedS[32];
    const double logBHat = reducePartials(colParts, colCount, sharedM, sharedS);
    if (init) {
        if (threadIdx.x == 0) state[0] = logBHat;
        return;
    }
    const double s = state[1];
    const double logA = reducePartials(rowParts, rowCount, sharedM, sharedS) - p.ra * s;
    const double t = p.ct * (logA - logBHat);
    if (!isfinite(s) || !isfinite(t)) {
        if (blockIdx.x == 0 && threadIdx.x == 0) u[0] = static_cast<V>(NAN);  // the check flags it
        return;
    }
    const double us = exp(s), shiftV = t - p.fb * s;
    const std::size_t stride = std::size_t(gridDim.x) * blockDim.x;
    for (std::size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < rows; i += stride)
        u[i] = logDomain ? static_cast<V>(static_cast<double>(u[i]) + s) : static_cast<V>(static_cast<double>(u[i]) * us);
    for (std::size_t j = blockIdx.x * blockDim.x + threadIdx.x; j < cols; j += stride) {
        const double g = logOf(v[j], logDomain) + shiftV;
        v[j] = logDomain ? static_cast<V>(g) : static_cast<V>(exp(g));
        if (colSum) colSum[j] = static_cast<V>(static_cast<double>(colSum[j]) * us);
    }
    // log B of the new v, for the next iteration: every term changed by exp(-rb t).
    if (blockIdx.x == 0 && threadIdx.x == 0) state[0] = logBHat - p.rb * t;
}

// gpu-mapuot's half-step shift (launchTranslateHalf): the shift from the partials,
// applied to the scalings x and to the half-step's pending matrix factors.
template <typename V>
__global__ void halfShiftKernel(V* x, V* factor, std::size_t n, TranslationParams p, bool column,
                                const double2* rowParts, int rowCount, const double2* colParts, int colCount,
                                double* state)
{
    __shared__ double sharedM[32], sharedS[32];
    const double logA = reducePartials(rowParts, rowCount, sharedM, sharedS);
    double shift;
    if (!column) {
        shift = p.cs * (state[0] - logA);  // s; log A(F^) stays in the row partials
        if (blockIdx.x == 0 && threadIdx.x == 0) state[1] = shift;
    } else {
        const double logBHat = reducePartials(colParts, colCount, sharedM, sharedS);
        shift = p.ct * (logA - p.ra * state[1] - logBHat);  // t, with log A(F) = log A(F^) - ra s
        if (blockIdx.x == 0 && threadIdx.x == 0) state[0] = logBHat - p.rb * shift;
    }
    if (!isfinite(shift)) {
        if (blockIdx.x == 0 && threadIdx.x == 0) x[0] = static_cast<V>(NAN);  // the check flags it
        return;
    }
    const double e = exp(shift);
    for (std::size_t k = blockIdx.x * blockDim.x + threadIdx.x; k < n; k += std::size_t(gridDim.x) * blockDim.x) {
        x[k] = static_cast<V>(static_cast<double>(x[k]) * e);
        factor[k] = static_cast<V>(static_cast<double>(factor[k]) * e);
    }
}

int partialBlocks(std::size_t n) { return static_cast<int>(std::clamp<std::size_t>((n + 2047) / 2048, 1, kMaxPartials)); }

}  // namespace

std::size_t translationStateDoubles() { return 2 + 4 * kMaxPartials; }

template <typename V>
void launchTranslate(V* u, std::size_t rows, V* v, std::size_t cols, const double* a, const double* b,
                     const TranslationParams& params, bool logDomain, bool init, V* colSum, double* state,
                     cudaStream_t stream)
{
    // state: [0] log B of the current v, [1] the last row shift s, then the row and
    // the column block partials (kMaxPartials double2 each).
    double2* rowParts = reinterpret_cast<double2*>(state + 2);
    double2* colParts = rowParts + kMaxPartials;
    const int rowBlocks = partialBlocks(rows), colBlocks = partialBlocks(cols);
    if (!init) {
        rowPartialsKernel<V><<<rowBlocks, kThreads, 0, stream>>>(u, rows, a, params.ra, logDomain, rowParts);
        UOT_CUDA_CHECK_LAUNCH();
    }
    colPartialsKernel<V><<<colBlocks, kThreads, 0, stream>>>(v, cols, b, params, logDomain, init ? nullptr : rowParts,
                                                             rowBlocks, state, colParts);
    UOT_CUDA_CHECK_LAUNCH();
    const std::size_t longest = std::max(rows, cols);
    const unsigned applyBlocks = init ? 1u : static_cast<unsigned>(std::clamp<std::size_t>((longest + kThreads - 1) / kThreads, 1, 1024));
    applyKernel<V><<<applyBlocks, kThreads, 0, stream>>>(u, rows, v, cols, params, logDomain, init, rowParts, rowBlocks,
                                                         colParts, colBlocks, colSum, state);
    UOT_CUDA_CHECK_LAUNCH();
}

template <typename V>
void launchTranslateHalf(V* x, V* factor, std::size_t rows, std::size_t cols, const double* weights,
                         const TranslationParams& params, bool column, double* state, cudaStream_t stream)
{
    double2* rowParts = reinterpret_cast<double2*>(state + 2);
    double2* colParts = rowParts + kMaxPartials;
    const int rowBlocks = partialBlocks(rows), colBlocks = partialBlocks(cols);
    const std::size_t n = column ? cols : rows;
    if (!column) {
        rowPartialsKernel<V><<<rowBlocks, kThreads, 0, stream>>>(x, rows, weights, params.ra, false, rowParts);
    } else {
        colPartialsKernel<V><<<colBlocks, kThreads, 0, stream>>>(x, cols, weights, params, false, nullptr, 0, state,
                                                                 colParts);
    }
    UOT_CUDA_CHECK_LAUNCH();
    const unsigned blocks = static_cast<unsigned>(std::clamp<std::size_t>((n + kThreads - 1) / kThreads, 1, 1024));
    halfShiftKernel<V><<<blocks, kThreads, 0, stream>>>(x, factor, n, params, column, rowParts, rowBlocks, colParts,
                                                        colBlocks, state);
    UOT_CUDA_CHECK_LAUNCH();
}

template void launchTranslateHalf<float>(float*, float*, std::size_t, std::size_t, const double*,
                                         const TranslationParams&, bool, double*, cudaStream_t);
template void launchTranslateHalf<double>(double*, double*, std::size_t, std::size_t, const double*,
                                          const TranslationParams&, bool, double*, cudaStream_t);

template void launchTranslate<float>(float*, std::size_t, float*, std::size_t, const double*, const double*,
                                     const TranslationParams&, bool, bool, float*, double*, cudaStream_t);
template void launchTranslate<double>(double*, std::size_t, double*, std::size_t, const double*, const double*,
                                      const TranslationParams&, bool, bool, double*, double*, cudaStream_t);

}  // namespace uot::gpu::detail
