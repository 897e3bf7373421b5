// CUDA kernels of gpu-mapreduce (contracts: gpu/mapreduce_kernels.h).

#include "gpu/mapreduce_kernels.h"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <type_traits>
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

// 2^x on the FMA units: x = j + f with j integer, |f| <= 1/2; 2^f by a degree-5
// polynomial fitted for least relative error on [-1/2, 1/2] (7.5e-8 in exact
// arithmetic, about 1.5e-7 in fp32, as good as ex2.approx), 2^j added into the
// exponent bits. x is clamped to [-127, 127]: below, the term is negligible
// next to any accepted sum (>= 2^-40); above, the sum is rejected anyway
// (> 2^60). The clamps are FMNMX on the integer/ALU pipe, the rest 3 adds and 5 FMAs.
__device__ __forceinline__ float fmaExp2(float x)
{
    x = fminf(fmaxf(x, -127.f), 127.f);
    constexpr float kMagic = 12582912.f;  // 1.5 * 2^23: adding it rounds to an integer in the low bits
    const float r = x + kMagic;
    const float f = x - (r - kMagic);
    float p = 1.3276374666020274e-3f;
    p = fmaf(p, f, 9.675533510744572e-3f);
    p = fmaf(p, f, 5.550713464617729e-2f);
    p = fmaf(p, f, 2.4022120237350464e-1f);
    p = fmaf(p, f, 6.931469440460205e-1f);
    p = fmaf(p, f, 1.0000001192092896f);
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

// A tile of the other side (kMapReduceTile points, S floats each) moves from
// global to shared memory in S floats per thread (kThreads == kMapReduceTile),
// coalesced. With PREFETCH, the next tile is loaded into registers while the
// current one is reduced, so the global-memory latency is off the critical path.
template <int S>
struct TileStager {
    static_assert(kMapReduceTile == kThreads, "one point's worth of floats per thread");
    static constexpr int kVec = S % 4 == 0 ? 4 : 1;
    static constexpr int kLoads = S / kVec;
    using Piece = std::conditional_t<kVec == 4, float4, float>;
    Piece staged[kLoads];

    __device__ __forceinline__ void fetch(const float* __restrict__ src)
    {
        const Piece* from = reinterpret_cast<const Piece*>(src);
#pragma unroll
        for (int k = 0; k < kLoads; ++k) staged[k] = from[threadIdx.x + k * kThreads];
    }
    __device__ __forceinline__ void store(float* tile) const
    {
        Piece* to = reinterpret_cast<Piece*>(tile);
#pragma unroll
        for (int k = 0; k < kLoads; ++k) to[threadIdx.x + k * kThreads] = staged[k];
    }
};

// Walks the tiles [t0, t1) of the other side through shared memory, calling
// reduceTile() for each once it is staged.
template <int S, bool PREFETCH, typename F>
__device__ __forceinline__ void forEachTile(float* tile, const float* __restrict__ other, std::size_t t0,
                                            std::size_t t1, F&& reduceTile)
{
    TileStager<S> stager;
    if (PREFETCH && t0 < t1) stager.fetch(other + t0 * kMapReduceTile * S);
    for (std::size_t t = t0; t < t1; ++t) {
        __syncthreads();
        if constexpr (PREFETCH) {
            stager.store(tile);
            if (t + 1 < t1) stager.fetch(other + (t + 1) * kMapReduceTile * S);
        } else {
            stager.fetch(other + t * kMapReduceTile * S);
            stager.store(tile);
        }
        __syncthreads();
        reduceTile();
    }
}

// 2^e by fmaExp2 when onFma, else by the special-function unit (onFma is a
// constant once the caller's loops are unrolled: no branch remains).
__device__ __forceinline__ float pow2(bool onFma, float e) { return onFma ? fmaExp2(e) : sfuExp2(e); }

// Calls reduce(rowBlock, t0, t1) for each row block that this block's range of
// units meets: tiles [t0, t1) of that row block. The partials go to the slot
// partialSlot(schedule, rowBlock).
__device__ __forceinline__ std::size_t partialSlot(const MapReduceSchedule& schedule, std::uint64_t rowBlock)
{
    return static_cast<std::size_t>(schedule.slot(static_cast<int>(blockIdx.x), rowBlock));
}

template <typename F>
__device__ __forceinline__ void forEachSegment(const MapReduceSchedule& schedule, F&& reduce)
{
    const int b = static_cast<int>(blockIdx.x);
    std::uint64_t u, end;
    schedule.range(b, u, end);
    while (u < end) {
        const std::uint64_t r = u / schedule.tiles, first = r * schedule.tiles;
        const std::uint64_t stop = end < first + schedule.tiles ? end : first + schedule.tiles;
        reduce(r, u - first, stop - first);
        u = stop;
    }
}

// The fast reduction: sum_j 2^(t_ij - shift_i) over the tiles of each of this
// block's segments (forEachSegment). R own points per thread; every POLY-th term
// (0: none) by fmaExp2 on the FMA units.
template <int D, int R, int POLY, bool PREFETCH>
__global__ void __launch_bounds__(kThreads)
fastPassKernel(const float* __restrict__ own, std::size_t ownCount, const float* __restrict__ shift,
               const float* __restrict__ other, float twoS2, MapReduceSchedule schedule,
               float* __restrict__ partialSum, const int* __restrict__ exactFlag)
{
    if (*exactFlag) return;
    constexpr int S = D + 1;
    __shared__ __align__(16) float tile[kMapReduceTile * S];
    forEachSegment(schedule, [&](std::uint64_t rowBlock, std::uint64_t t0, std::uint64_t t1) {
        float coef[R][D], negShift[R], acc[R];
        const std::size_t base = rowBlock * (kThreads * R) + threadIdx.x;
#pragma unroll
        for (int r = 0; r < R; ++r) {
            const std::size_t i = base + std::size_t(r) * kThreads;
            const bool valid = i < ownCount;
#pragma unroll
            for (int k = 0; k < D; ++k) coef[r][k] = valid ? twoS2 * own[i * S + k] : 0.f;
            negShift[r] = valid ? -shift[i] : 0.f;
            acc[r] = 0.f;
        }
        const auto poly = [](int q, int r) { return POLY > 0 && (q * R + r) % POLY == POLY - 1; };
        forEachTile<S, PREFETCH>(tile, other, t0, t1, [&] {
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
                        acc[r] += pow2(poly(q, r), e + y[D]);
                    }
                }
            }
        });
        const std::size_t slot = partialSlot(schedule, rowBlock);
#pragma unroll
        for (int r = 0; r < R; ++r) {
            const std::size_t i = base + std::size_t(r) * kThreads;
            if (i < ownCount) partialSum[slot * ownCount + i] = acc[r];
        }
    });
}

// The exact reduction: online log-sum-exp (running max m, sum of 2^(t - m)),
// per segment as in fastPassKernel.
template <int D, int R, bool PREFETCH>
__global__ void __launch_bounds__(kThreads)
exactPassKernel(const float* __restrict__ own, std::size_t ownCount, const float* __restrict__ other, float twoS2,
                MapReduceSchedule schedule, float* __restrict__ partialSum, float* __restrict__ partialMax,
                const int* __restrict__ exactFlag)
{
    if (!*exactFlag) return;
    constexpr int S = D + 1;
    __shared__ __align__(16) float tile[kMapReduceTile * S];
    forEachSegment(schedule, [&](std::uint64_t rowBlock, std::uint64_t t0, std::uint64_t t1) {
        float coef[R][D], runMax[R], acc[R];
        const std::size_t base = rowBlock * (kThreads * R) + threadIdx.x;
#pragma unroll
        for (int r = 0; r < R; ++r) {
            const std::size_t i = base + std::size_t(r) * kThreads;
            const bool valid = i < ownCount;
#pragma unroll
            for (int k = 0; k < D; ++k) coef[r][k] = valid ? twoS2 * own[i * S + k] : 0.f;
            runMax[r] = -FLT_MAX;
            acc[r] = 0.f;
        }
        forEachTile<S, PREFETCH>(tile, other, t0, t1, [&] {
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
        });
        const std::size_t slot = partialSlot(schedule, rowBlock);
#pragma unroll
        for (int r = 0; r < R; ++r) {
            const std::size_t i = base + std::size_t(r) * kThreads;
            if (i < ownCount) {
                partialSum[slot * ownCount + i] = acc[r];
                partialMax[slot * ownCount + i] = runMax[r];
            }
        }
    });
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

// Merges the partials of one own point (the slots of its row block) into its
// log2-sum-exp and writes its potential. Fast mode: rejects a sum outside
// [2^-40, 2^60] by raising the flag.
template <bool EXACT>
__global__ void finalizeKernel(MapReduceSide own, MapReduceSchedule schedule, const float* __restrict__ partialSum,
                               const float* __restrict__ partialMax, int* exactFlag, double s2)
{
    const std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x;
    if (i >= own.count) return;
    const int flag = *exactFlag;
    if (EXACT ? !flag : flag) return;
    const int slots = schedule.segments(i / std::size_t(schedule.rowsPerBlock));
    double lse2;
    if constexpr (EXACT) {
        double top = -INFINITY;
        for (int b = 0; b < slots; ++b)
            if (partialSum[b * own.count + i] > 0.f) top = fmax(top, double(partialMax[b * own.count + i]));
        double sum = 0;
        for (int b = 0; b < slots; ++b) {
            const double s = partialSum[b * own.count + i];
            if (s > 0) sum += s * exp2(double(partialMax[b * own.count + i]) - top);
        }
        lse2 = top + log2(sum);
    } else {
        double sum = 0;
        for (int b = 0; b < slots; ++b) sum += partialSum[b * own.count + i];
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

// One compiled configuration of the pass kernels.
template <int D, int R, int POLY, bool PREFETCH>
struct Variant {
    static constexpr int kDim = D, kRows = R, kPoly = POLY;
    static constexpr bool kPrefetch = PREFETCH;
};

template <bool PREFETCH, typename F>
decltype(auto) withPoly3(int polyEvery, F&& f)
{
    constexpr int R = rowsPerThread<3>();
    switch (polyEvery) {
    case 6: return f(Variant<3, R, 6, PREFETCH>{});
    case 8: return f(Variant<3, R, 8, PREFETCH>{});
    case 10: return f(Variant<3, R, 10, PREFETCH>{});
    case 12: return f(Variant<3, R, 12, PREFETCH>{});
    case 16: return f(Variant<3, R, 16, PREFETCH>{});
    case 32: return f(Variant<3, R, 32, PREFETCH>{});
    default: return f(Variant<3, R, 0, PREFETCH>{});
    }
}

// Calls f with the Variant for this dimension and configuration: d = 3 (the
// colour case) has every configuration of MapReduceConfig; other dimensions use
// all-SFU exponentials and their own rows per thread.
template <typename F>
decltype(auto) withVariant(int dim, const MapReduceConfig& config, F&& f)
{
    if (dim == 3)
        return config.prefetch ? withPoly3<true>(config.polyEvery, f) : withPoly3<false>(config.polyEvery, f);
    return withDim(dim, [&](auto d) -> decltype(auto) {
        constexpr int D = decltype(d)::value;
        return config.prefetch ? f(Variant<D, rowsPerThread<D>(), 0, true>{})
                               : f(Variant<D, rowsPerThread<D>(), 0, false>{});
    });
}

template <typename V>
void pass(const MapReduceSide& own, const MapReduceSide& other, double s2, const MapReduceSchedule& plan,
          const MapReduceScratch& scratch, cudaStream_t stream)
{
    constexpr int D = V::kDim;
    const float twoS2 = static_cast<float>(2 * s2);
    const unsigned grid = static_cast<unsigned>(plan.blocks);
    packPotentialKernel<D><<<static_cast<unsigned>((other.count + 255) / 256), 256, 0, stream>>>(other, s2);
    UOT_CUDA_CHECK_LAUNCH();
    fastPassKernel<D, V::kRows, V::kPoly, V::kPrefetch><<<grid, kThreads, 0, stream>>>(
        own.packed, own.count, own.shift, other.packed, twoS2, plan, scratch.partialSum, scratch.exactFlag);
    UOT_CUDA_CHECK_LAUNCH();
    const unsigned finalizeBlocks = static_cast<unsigned>((own.count + 255) / 256);
    finalizeKernel<false><<<finalizeBlocks, 256, 0, stream>>>(own, plan, scratch.partialSum, nullptr,
                                                              scratch.exactFlag, s2);
    UOT_CUDA_CHECK_LAUNCH();
    exactPassKernel<D, V::kRows, V::kPrefetch><<<grid, kThreads, 0, stream>>>(
        own.packed, own.count, other.packed, twoS2, plan, scratch.partialSum, scratch.partialMax, scratch.exactFlag);
    UOT_CUDA_CHECK_LAUNCH();
    finalizeKernel<true><<<finalizeBlocks, 256, 0, stream>>>(own, plan, scratch.partialSum, scratch.partialMax,
                                                             scratch.exactFlag, s2);
    UOT_CUDA_CHECK_LAUNCH();
    UOT_CUDA_CHECK(cudaMemsetAsync(scratch.exactFlag, 0, sizeof(int), stream));
}

// Resident blocks per SM of the slower-to-fit of the two pass kernels.
template <typename V>
int blocksPerSm()
{
    int fast = 0, exact = 0;
    UOT_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(
        &fast, fastPassKernel<V::kDim, V::kRows, V::kPoly, V::kPrefetch>, kThreads, 0));
    UOT_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(
        &exact, exactPassKernel<V::kDim, V::kRows, V::kPrefetch>, kThreads, 0));
    return std::max(1, std::min(fast, exact));
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

MapReduceSchedule planMapReducePass(int dim, std::size_t ownCount, std::size_t otherCount,
                                    const MapReduceConfig& config, int device)
{
    int sms = 0;
    UOT_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
    const int perSm = withVariant(dim, config, [](auto v) { return blocksPerSm<decltype(v)>(); });
    const int rows = kThreads * withVariant(dim, config, [](auto v) { return decltype(v)::kRows; });
    // Every block slot of one wave (all blocks resident at once), unless the
    // configuration names a count (balanced schedule).
    const int slots = sms * perSm;
    if (config.schedule == MapReduceWork::Split)
        return splitMapReduceSchedule(ownCount, otherCount, rows, kMapReduceTile, slots);
    return balancedMapReduceSchedule(ownCount, otherCount, rows, kMapReduceTile,
                                     config.blocks > 0 ? config.blocks : slots);
}

void launchMapReducePass(int dim, const MapReduceSide& own, const MapReduceSide& other, double s2,
                         const MapReduceSchedule& plan, const MapReduceScratch& scratch,
                         const MapReduceConfig& config, cudaStream_t stream)
{
    withVariant(dim, config, [&](auto v) { pass<decltype(v)>(own, other, s2, plan, scratch, stream); });
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
