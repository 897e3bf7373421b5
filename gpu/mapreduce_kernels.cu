// CUDA kernels of gpu-mapreduce (contracts: gpu/mapreduce_kernels.h).

#include "gpu/mapreduce_kernels.h"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <vector>

#include "core/transport/uot_error.h"
#include "gpu/cuda_support.h"

namespace uot::gpu::detail {

namespace {

constexpr int kThreads = 256;
constexpr int kUnroll = 16;  // terms per unrolled step of the inner loop
constexpr double kLn2 = 0.69314718055994530942;
constexpr double kLog2e = 1.44269504088896340736;

// Own points per thread: more rows share each shared-memory load of a column.
template <int D>
constexpr int rowsPerThread()
{
    return D <= 4 ? 4 : 2;
}

__device__ __forceinline__ float sfuExp2(float x)
{
    float y;
    asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
    return y;
}

// 2^x on the FMA units: x = j + f with j integer, |f| <= 1/2; 2^f by its
// degree-6 Taylor polynomial (relative error below 1.3e-7), 2^j added into the
// exponent bits. x is clamped to [-126, 126] (a sum that reaches 2^126 is
// rejected by the range check anyway).
__device__ __forceinline__ float fmaExp2(float x)
{
    x = fminf(fmaxf(x, -126.f), 126.f);
    constexpr float kMagic = 12582912.f;  // 1.5 * 2^23: adding it rounds to an integer in the low bits
    const float r = x + kMagic;
    const float f = x - (r - kMagic);
    float p = 1.5403530393381609e-4f;  // ln2^6 / 720
    p = fmaf(p, f, 1.3333558146428443e-3f);
    p = fmaf(p, f, 9.6181291076284772e-3f);
    p = fmaf(p, f, 5.5504108664821580e-2f);
    p = fmaf(p, f, 2.4022650695910071e-1f);
    p = fmaf(p, f, 6.9314718055994531e-1f);
    p = fmaf(p, f, 1.f);
    return __int_as_float(__float_as_int(p) + (__float_as_int(r) << 23));
}

// Loads the S floats of packed point q of a shared-memory tile.
template <int S>
__device__ __forceinline__ void loadPoint(const float* tile, int q, float (&y)[S])
{
    if constexpr (S % 4 == 0) {
#pragma unroll
        for (int k = 0; k < S; k += 4) {
            const float4 v = *reinterpret_cast<const float4*>(tile + q * S + k);
            y[k] = v.x;
            y[k + 1] = v.y;
            y[k + 2] = v.z;
            y[k + 3] = v.w;
        }
    } else if constexpr (S % 2 == 0) {
#pragma unroll
        for (int k = 0; k < S; k += 2) {
            const float2 v = *reinterpret_cast<const float2*>(tile + q * S + k);
            y[k] = v.x;
            y[k + 1] = v.y;
        }
    } else {
#pragma unroll
        for (int k = 0; k < S; ++k) y[k] = tile[q * S + k];
    }
}

template <int S>
__device__ __forceinline__ void stageTile(float* tile, const float* __restrict__ src)
{
    for (int k = threadIdx.x; k < kMapReduceTile * S; k += kThreads) tile[k] = src[k];
}

// The fast reduction: sum_j 2^(t_ij - shift_i) over the tiles of this block's split.
template <int D, int POLY>
__global__ void __launch_bounds__(kThreads)
fastPassKernel(const float* __restrict__ own, std::size_t ownCount, const float* __restrict__ shift,
               const float* __restrict__ other, std::size_t otherTiles, float twoS2, int tilesPerSplit,
               float* __restrict__ partialSum, const int* __restrict__ exactFlag)
{
    if (*exactFlag) return;
    constexpr int S = D + 1, R = rowsPerThread<D>();
    __shared__ __align__(16) float tile[kMapReduceTile * S];
    float coef[R][D], negShift[R], acc[R];
    const std::size_t base = std::size_t(blockIdx.x) * (kThreads * R) + threadIdx.x;
#pragma unroll
    for (int r = 0; r < R; ++r) {
        const std::size_t i = base + std::size_t(r) * kThreads;
        const bool valid = i < ownCount;
#pragma unroll
        for (int k = 0; k < D; ++k) coef[r][k] = valid ? twoS2 * own[i * S + k] : 0.f;
        negShift[r] = valid ? -shift[i] : 0.f;
        acc[r] = 0.f;
    }
    const std::size_t t0 = std::size_t(blockIdx.y) * tilesPerSplit;
    const std::size_t t1 = std::min<std::size_t>(t0 + tilesPerSplit, otherTiles);
    for (std::size_t t = t0; t < t1; ++t) {
        __syncthreads();
        stageTile<S>(tile, other + t * kMapReduceTile * S);
        __syncthreads();
        for (int jb = 0; jb < kMapReduceTile; jb += kUnroll) {
#pragma unroll
            for (int q = 0; q < kUnroll; ++q) {
                float y[S];
                loadPoint<S>(tile, jb + q, y);
#pragma unroll
                for (int r = 0; r < R; ++r) {
                    float e = negShift[r];
#pragma unroll
                    for (int k = 0; k < D; ++k) e = fmaf(coef[r][k], y[k], e);
                    e += y[D];
                    if constexpr (POLY > 0) {
                        if ((q * R + r) % POLY == POLY - 1)
                            acc[r] += fmaExp2(e);
                        else
                            acc[r] += sfuExp2(e);
                    } else {
                        acc[r] += sfuExp2(e);
                    }
                }
            }
        }
    }
#pragma unroll
    for (int r = 0; r < R; ++r) {
        const std::size_t i = base + std::size_t(r) * kThreads;
        if (i < ownCount) partialSum[blockIdx.y * ownCount + i] = acc[r];
    }
}

// The exact reduction: online log-sum-exp (running max m, sum of 2^(t - m)).
template <int D>
__global__ void __launch_bounds__(kThreads)
exactPassKernel(const float* __restrict__ own, std::size_t ownCount, const float* __restrict__ other,
                std::size_t otherTiles, float twoS2, int tilesPerSplit, float* __restrict__ partialSum,
                float* __restrict__ partialMax, const int* __restrict__ exactFlag)
{
    if (!*exactFlag) return;
    constexpr int S = D + 1, R = rowsPerThread<D>();
    __shared__ __align__(16) float tile[kMapReduceTile * S];
    float coef[R][D], runMax[R], acc[R];
    const std::size_t base = std::size_t(blockIdx.x) * (kThreads * R) + threadIdx.x;
#pragma unroll
    for (int r = 0; r < R; ++r) {
        const std::size_t i = base + std::size_t(r) * kThreads;
        const bool valid = i < ownCount;
#pragma unroll
        for (int k = 0; k < D; ++k) coef[r][k] = valid ? twoS2 * own[i * S + k] : 0.f;
        runMax[r] = -FLT_MAX;
        acc[r] = 0.f;
    }
    const std::size_t t0 = std::size_t(blockIdx.y) * tilesPerSplit;
    const std::size_t t1 = std::min<std::size_t>(t0 + tilesPerSplit, otherTiles);
    for (std::size_t t = t0; t < t1; ++t) {
        __syncthreads();
        stageTile<S>(tile, other + t * kMapReduceTile * S);
        __syncthreads();
        for (int q = 0; q < kMapReduceTile; ++q) {
            float y[S];
            loadPoint<S>(tile, q, y);
#pragma unroll
            for (int r = 0; r < R; ++r) {
                float e = y[D];
#pragma unroll
                for (int k = 0; k < D; ++k) e = fmaf(coef[r][k], y[k], e);
                if (e > runMax[r]) {
                    acc[r] = acc[r] * sfuExp2(runMax[r] - e) + 1.f;
                    runMax[r] = e;
                } else {
                    acc[r] += sfuExp2(e - runMax[r]);
                }
            }
        }
    }
#pragma unroll
    for (int r = 0; r < R; ++r) {
        const std::size_t i = base + std::size_t(r) * kThreads;
        if (i < ownCount) {
            partialSum[blockIdx.y * ownCount + i] = acc[r];
            partialMax[blockIdx.y * ownCount + i] = runMax[r];
        }
    }
}

// w_j of the other side for this pass (padding keeps w = -inf).
template <int D>
__global__ void packPotentialKernel(MapReduceSide side, double s2)
{
    const std::size_t j = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x;
    if (j >= side.count) return;
    const double g = side.pot[j] + (side.logRef ? side.logRef[j] : 0.0);
    side.packed[j * (D + 1) + D] = static_cast<float>(g * kLog2e - s2 * side.norm2[j]);
}

// Merges the partials of one own point into its log2-sum-exp and writes its
// potential. Fast mode: rejects a sum outside [2^-40, 2^60] by raising the flag.
template <bool EXACT>
__global__ void finalizeKernel(MapReduceSide own, int splits, const float* __restrict__ partialSum,
                               const float* __restrict__ partialMax, int* exactFlag, double s2)
{
    const std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x;
    if (i >= own.count) return;
    const int flag = *exactFlag;
    if (EXACT ? !flag : flag) return;
    double lse2;
    if constexpr (EXACT) {
        double top = -INFINITY;
        for (int b = 0; b < splits; ++b)
            if (partialSum[b * own.count + i] > 0.f) top = fmax(top, double(partialMax[b * own.count + i]));
        double sum = 0;
        for (int b = 0; b < splits; ++b) {
            const double s = partialSum[b * own.count + i];
            if (s > 0) sum += s * exp2(double(partialMax[b * own.count + i]) - top);
        }
        lse2 = top + log2(sum);
    } else {
        double sum = 0;
        for (int b = 0; b < splits; ++b) sum += partialSum[b * own.count + i];
        if (!(sum >= 0x1p-40 && sum <= 0x1p60)) {
            *exactFlag = 1;
            return;
        }
        lse2 = double(own.shift[i]) + log2(sum);
    }
    own.shift[i] = static_cast<float>(lse2);
    double lse = (lse2 - s2 * own.norm2[i]) * kLn2;
    if (own.logRef) lse += own.logRef[i];
    own.pot[i] = own.exponent * (own.logW[i] - lse);
}

template <int D, int POLY>
void fastPass(const MapReduceSide& own, const MapReduceSide& other, float twoS2, const MapReduceLaunch& plan,
              const MapReduceScratch& scratch, cudaStream_t stream)
{
    const dim3 grid(static_cast<unsigned>(plan.rowBlocks), static_cast<unsigned>(plan.splits));
    fastPassKernel<D, POLY><<<grid, kThreads, 0, stream>>>(own.packed, own.count, own.shift, other.packed,
                                                           mapReducePadded(other.count) / kMapReduceTile, twoS2,
                                                           plan.tilesPerSplit, scratch.partialSum, scratch.exactFlag);
    UOT_CUDA_CHECK_LAUNCH();
}

template <int D>
void pass(const MapReduceSide& own, const MapReduceSide& other, double s2, const MapReduceLaunch& plan,
          const MapReduceScratch& scratch, int polyEvery, cudaStream_t stream)
{
    const float twoS2 = static_cast<float>(2 * s2);
    packPotentialKernel<D><<<static_cast<unsigned>((other.count + 255) / 256), 256, 0, stream>>>(other, s2);
    UOT_CUDA_CHECK_LAUNCH();
    if (polyEvery == 8)
        fastPass<D, 8>(own, other, twoS2, plan, scratch, stream);
    else if (polyEvery == 16)
        fastPass<D, 16>(own, other, twoS2, plan, scratch, stream);
    else
        fastPass<D, 0>(own, other, twoS2, plan, scratch, stream);
    const unsigned finalizeBlocks = static_cast<unsigned>((own.count + 255) / 256);
    finalizeKernel<false><<<finalizeBlocks, 256, 0, stream>>>(own, plan.splits, scratch.partialSum, nullptr,
                                                              scratch.exactFlag, s2);
    UOT_CUDA_CHECK_LAUNCH();
    const dim3 grid(static_cast<unsigned>(plan.rowBlocks), static_cast<unsigned>(plan.splits));
    exactPassKernel<D><<<grid, kThreads, 0, stream>>>(own.packed, own.count, other.packed,
                                                      mapReducePadded(other.count) / kMapReduceTile, twoS2,
                                                      plan.tilesPerSplit, scratch.partialSum, scratch.partialMax,
                                                      scratch.exactFlag);
    UOT_CUDA_CHECK_LAUNCH();
    finalizeKernel<true><<<finalizeBlocks, 256, 0, stream>>>(own, plan.splits, scratch.partialSum,
                                                             scratch.partialMax, scratch.exactFlag, s2);
    UOT_CUDA_CHECK_LAUNCH();
    UOT_CUDA_CHECK(cudaMemsetAsync(scratch.exactFlag, 0, sizeof(int), stream));
}

template <int D>
int blocksPerSm()
{
    int blocks = 0;
    UOT_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, fastPassKernel<D, 0>, kThreads, 0));
    return std::max(1, blocks);
}

template <typename F>
decltype(auto) withDim(int dim, F&& f)
{
    switch (dim) {
    case 1: return f(std::integral_constant<int, 1>{});
    case 2: return f(std::integral_constant<int, 2>{});
    case 3: return f(std::integral_constant<int, 3>{});
    case 4: return f(std::integral_constant<int, 4>{});
    case 5: return f(std::integral_constant<int, 5>{});
    case 6: return f(std::integral_constant<int, 6>{});
    case 7: return f(std::integral_constant<int, 7>{});
    case 8: return f(std::integral_constant<int, 8>{});
    default: throw Error(ErrorCode::InvalidArgument, "gpu-mapreduce takes points of dimension 1 to 8");
    }
}

__global__ void exp2ProbeKernel(float* sink, int iterations, float seed)
{
    float x[8];
#pragma unroll
    for (int k = 0; k < 8; ++k) x[k] = seed * float(threadIdx.x + 37 * k);
    for (int it = 0; it < iterations; ++it) {
#pragma unroll
        for (int k = 0; k < 8; ++k) x[k] = sfuExp2(-x[k]);
    }
    float s = 0;
#pragma unroll
    for (int k = 0; k < 8; ++k) s += x[k];
    if (s == -1.f) *sink = s;  // never true (every x is > 0); keeps the work
}

}  // namespace

MapReduceLaunch planMapReducePass(int dim, std::size_t ownCount, std::size_t otherCount, int device)
{
    int sms = 0;
    UOT_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
    const int perSm = withDim(dim, [](auto d) { return blocksPerSm<decltype(d)::value>(); });
    const int rows = kThreads * withDim(dim, [](auto d) { return rowsPerThread<decltype(d)::value>(); });
    MapReduceLaunch plan;
    const std::size_t rowBlocks = (ownCount + rows - 1) / rows;
    if (rowBlocks > 0x7fffffffu)
        throw Error(ErrorCode::InvalidArgument, "gpu-mapreduce: too many points for one launch");
    plan.rowBlocks = static_cast<int>(rowBlocks);
    const std::size_t tiles = mapReducePadded(otherCount) / kMapReduceTile;
    // As many splits of the other side as keep every block slot of one wave busy.
    const std::size_t slots = std::size_t(sms) * perSm;
    const std::size_t splits = std::clamp<std::size_t>(slots / rowBlocks, 1, std::min<std::size_t>(tiles, 65535));
    plan.tilesPerSplit = static_cast<int>((tiles + splits - 1) / splits);
    plan.splits = static_cast<int>((tiles + plan.tilesPerSplit - 1) / plan.tilesPerSplit);
    return plan;
}

void launchMapReducePass(int dim, const MapReduceSide& own, const MapReduceSide& other, double s2,
                         const MapReduceLaunch& plan, const MapReduceScratch& scratch, int polyEvery,
                         cudaStream_t stream)
{
    withDim(dim, [&](auto d) { pass<decltype(d)::value>(own, other, s2, plan, scratch, polyEvery, stream); });
}

double measureExp2PerSecond(int device)
{
    DeviceGuard guard(device);
    int sms = 0;
    UOT_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
    DeviceBuffer<float> sink(1);
    Stream stream;
    Event start, stop;
    const int blocks = sms * 8, iterations = 4096;
    exp2ProbeKernel<<<blocks, kThreads, 0, stream.get()>>>(sink.get(), iterations, 1e-3f);  // warm-up
    UOT_CUDA_CHECK_LAUNCH();
    std::vector<float> times;
    for (int rep = 0; rep < 5; ++rep) {
        UOT_CUDA_CHECK(cudaEventRecord(start.get(), stream.get()));
        exp2ProbeKernel<<<blocks, kThreads, 0, stream.get()>>>(sink.get(), iterations, 1e-3f);
        UOT_CUDA_CHECK_LAUNCH();
        UOT_CUDA_CHECK(cudaEventRecord(stop.get(), stream.get()));
        UOT_CUDA_CHECK(cudaEventSynchronize(stop.get()));
        float ms = 0;
        UOT_CUDA_CHECK(cudaEventElapsedTime(&ms, start.get(), stop.get()));
        times.push_back(ms);
    }
    std::sort(times.begin(), times.end());
    const double exps = double(blocks) * kThreads * iterations * 8;
    return exps / (times[times.size() / 2] * 1e-3);
}

}  // namespace uot::gpu::detail
