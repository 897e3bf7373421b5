// The over-relaxed step on the device (see relaxed_kernels.h). One block walks
// the rows and columns a few times (O(M + N), no read of K): the figures of
// core/transport/relaxed_step.cpp's afterPass, then thread 0 takes the decisions
// with the shared rules of relaxed_rules.h.

#include "gpu/relaxed_kernels.h"

#include <algorithm>
#include <cmath>

#include "gpu/cuda_support.h"
#include "gpu/log_sum_exp.cuh"

namespace uot::gpu::detail {

namespace {

constexpr int kThreads = 256;
constexpr int kWarps = kThreads / 32;
constexpr int kMaxValues = 8;  // values reduced together

enum class Op { Sum, Max };

// Reduces n values of every thread over the block (sums or maxima), in place,
// the result in every thread.
template <Op op, int n>
__device__ void blockReduce(double (&x)[n], double (*scratch)[kMaxValues])
{
    static_assert(n <= kMaxValues);
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
#pragma unroll
    for (int k = 0; k < n; ++k) {
        for (int offset = 16; offset > 0; offset >>= 1) {
            const double y = __shfl_xor_sync(0xffffffffu, x[k], offset);
            x[k] = op == Op::Sum ? x[k] + y : fmax(x[k], y);
        }
        if (lane == 0) scratch[warp][k] = x[k];
    }
    __syncthreads();
#pragma unroll
    for (int k = 0; k < n; ++k) {
        double total = scratch[0][k];
        for (int w = 1; w < kWarps; ++w) total = op == Op::Sum ? total + scratch[w][k] : fmax(total, scratch[w][k]);
        x[k] = total;
    }
    __syncthreads();  // the scratch is reused by the next reduction
}

// log-sum-exp states of the block merged, n of them; returns log of the sums.
template <int n>
__device__ void blockLogSumExp(double (&m)[n], double (&s)[n], double (*scratch)[kMaxValues])
{
    static_assert(2 * n <= kMaxValues);
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
#pragma unroll
    for (int k = 0; k < n; ++k) {
        for (int offset = 16; offset > 0; offset >>= 1) {
            const double m2 = __shfl_xor_sync(0xffffffffu, m[k], offset);
            const double s2 = __shfl_xor_sync(0xffffffffu, s[k], offset);
            lseMerge(m[k], s[k], m2, s2);
        }
        if (lane == 0) {
            scratch[warp][2 * k] = m[k];
            scratch[warp][2 * k + 1] = s[k];
        }
    }
    __syncthreads();
#pragma unroll
    for (int k = 0; k < n; ++k) {
        double mm = -INFINITY, ss = 0;
        for (int w = 0; w < kWarps; ++w) lseMerge(mm, ss, scratch[w][2 * k], scratch[w][2 * k + 1]);
        m[k] = mm == -INFINITY ? -INFINITY : mm + log(ss);
    }
    __syncthreads();
}

template <typename V>
__device__ double logOf(V x, bool logDomain)
{
    return logDomain ? static_cast<double>(x) : log(static_cast<double>(x));
}

template <typename V>
__device__ V stored(double logValue, bool logDomain)
{
    return static_cast<V>(logDomain ? logValue : exp(logValue));
}

template <typename V>
__device__ bool usable(V x, bool logDomain)
{
    const double d = static_cast<double>(x);
    return isfinite(d) && (logDomain || d > 0);
}

// The step runs as six short kernels over many blocks (the work is O(M + N) in
// float64 transcendentals: one block alone took about 0.12 ms at 4096 + 4096 on the
// H100). Each phase writes per-block partials into `work`; the next phase's blocks
// all reduce them (a few dozen values) to the scalars they need.
constexpr int kMaxBlocks = 128;
constexpr int kSlots = 12;  // partial values per block and phase

template <typename V>
struct StepArgs {
    V* u;
    V* v;
    V* uSaved;
    V* vSaved;
    std::size_t rows, cols;
    const double* a;
    const double* b;
    const double* logA;
    const double* logB;
    RelaxedParams p;
    RelaxedState* state;
    double* work;  // 4 phases x kMaxBlocks x kSlots, then the decision
};

__device__ double* partialsOf(double* work, int phase, int block) { return work + (std::size_t(phase) * kMaxBlocks + block) * kSlots; }
__device__ int* decisionOf(double* work) { return reinterpret_cast<int*>(work + std::size_t(4) * kMaxBlocks * kSlots); }

// Sums of `n` slots (from `first`) of a phase's partials over its `blocks` blocks (every
// thread gets them); gatherMaxes likewise.
template <int n>
__device__ void gatherSums(double* work, int phase, int first, double (&out)[n], double (*scratch)[kMaxValues],
                           int blocks)
{
#pragma unroll
    for (int k = 0; k < n; ++k) out[k] = 0;
    for (int blk = threadIdx.x; blk < blocks; blk += blockDim.x) {
        const double* part = partialsOf(work, phase, blk);
#pragma unroll
        for (int k = 0; k < n; ++k) out[k] += part[first + k];
    }
    blockReduce<Op::Sum, n>(out, scratch);
}
template <int n>
__device__ void gatherMaxes(double* work, int phase, int first, double (&out)[n], double (*scratch)[kMaxValues],
                            int blocks)
{
#pragma unroll
    for (int k = 0; k < n; ++k) out[k] = -INFINITY;
    for (int blk = threadIdx.x; blk < blocks; blk += blockDim.x) {
        const double* part = partialsOf(work, phase, blk);
#pragma unroll
        for (int k = 0; k < n; ++k) out[k] = fmax(out[k], part[first + k]);
    }
    blockReduce<Op::Max, n>(out, scratch);
}
// Log-sums stored per block: their log-sum-exp over the blocks.
template <int n>
__device__ void gatherLogSums(double* work, int phase, int first, double (&out)[n], double (*scratch)[kMaxValues],
                              int blocks)
{
    double s[n];
#pragma unroll
    for (int k = 0; k < n; ++k) {
        out[k] = -INFINITY;
        s[k] = 0;
    }
    for (int blk = threadIdx.x; blk < blocks; blk += blockDim.x) {
        const double* part = partialsOf(work, phase, blk);
#pragma unroll
        for (int k = 0; k < n; ++k) lseAdd(out[k], s[k], part[first + k]);
    }
    blockLogSumExp<n>(out, s, scratch);
}

template <typename V>
__device__ bool frozen(const StepArgs<V>& x)
{
    return x.state->stop != kRunning;
}

// Rows of the input plan: F_old, F~ (pass), F^ behind it; P 1 = a e^(F_old - F^ / f_a) = target e^((1 + ra)(F_old - F^)).
template <typename V>
__device__ void rowFigures(const StepArgs<V>& x, double w, std::size_t i, double& fHat, double& target,
                           double& marginal)
{
    const bool ld = x.p.logDomain;
    const double fOld = logOf(x.uSaved[i], ld), fRelaxed = logOf(x.u[i], ld);
    fHat = w == 1.0 ? fRelaxed : (fRelaxed - (1.0 - w) * fOld) / w;
    target = x.a[i] * exp(-x.p.ra * fOld);
    marginal = target * exp((1.0 + x.p.ra) * (fOld - fHat));
}

// The new G = (1 - w) G_old + w (G^ + t), its column marginal (the pass's column sums
// times e^(w s)) and target.
template <typename V>
__device__ void colFigures(const StepArgs<V>& x, double w, double s, double t, std::size_t j, double& g,
                           double& marginal, double& target)
{
    const bool ld = x.p.logDomain;
    const double gPass = logOf(x.v[j], ld), gOld = logOf(x.vSaved[j], ld);
    g = (1.0 - w) * gOld + w * (gPass - x.p.fb * w * s + t);
    marginal = exp(g + x.logB[j] - gPass / x.p.fb + w * s);
    target = x.b[j] * exp(-x.p.rb * g);
}

// s from phase 1 (log A(F^), log B(G_old)); t from phase 2 (log A(F), log B(G^)).
__device__ double shiftS(const RelaxedParams& p, const double (&logs1)[2])
{
    return p.translate ? p.cs * (logs1[1] - logs1[0]) : 0.0;
}
__device__ double shiftT(const RelaxedParams& p, const double (&logs2)[2])
{
    return p.translate ? p.ct * (logs2[0] - logs2[1]) : 0.0;
}

// Phase 1: log A(F^), log B(G_old), the row masses. Slots: massA, targetA, errA, logA(F^), logB(G_old).
template <typename V>
__global__ void __launch_bounds__(kThreads) stepPhase1(StepArgs<V> x)
{
    __shared__ double scratch[kWarps][kMaxValues];
    if (frozen(x)) return;
    const double w = x.state->omega, ra = x.p.ra, rb = x.p.rb;
    const std::size_t start = blockIdx.x * std::size_t(kThreads) + threadIdx.x, stride = std::size_t(gridDim.x) * kThreads;
    double lm[2] = {-INFINITY, -INFINITY}, ls[2] = {0, 0};
    double sums[3] = {0, 0, 0};
    for (std::size_t i = start; i < x.rows; i += stride) {
        double fHat, target, marginal;
        rowFigures(x, w, i, fHat, target, marginal);
        sums[0] += marginal;
        sums[1] += target;
        sums[2] += fabs(marginal - x.a[i]);
        lseAdd(lm[0], ls[0], x.logA[i] - ra * fHat);
    }
    for (std::size_t j = start; j < x.cols; j += stride)
        lseAdd(lm[1], ls[1], x.logB[j] - rb * logOf(x.vSaved[j], x.p.logDomain));
    blockLogSumExp<2>(lm, ls, scratch);
    blockReduce<Op::Sum, 3>(sums, scratch);
    if (threadIdx.x == 0) {
        double* out = partialsOf(x.work, 0, blockIdx.x);
        out[0] = sums[0];
        out[1] = sums[1];
        out[2] = sums[2];
        out[3] = lm[0];
        out[4] = lm[1];
    }
}

// Phase 2: the row violation; the new F = F~ + w s (written), its extremes and sums;
// log A(F), log B(G^) with G^ = G^pass - f_b w s. Slots: violA, dFmax, -dFmin, fMax,
// -fMin, sumA, linearA, logA(F), logB(G^), bad.
template <typename V>
__global__ void __launch_bounds__(kThreads) stepPhase2(StepArgs<V> x)
{
    __shared__ double scratch[kWarps][kMaxValues];
    if (frozen(x)) return;
    const double w = x.state->omega, ra = x.p.ra, rb = x.p.rb, fb = x.p.fb;
    const bool ld = x.p.logDomain;
    double masses[2], logs1[2];
    gatherSums<2>(x.work, 0, 0, masses, scratch, static_cast<int>(gridDim.x));
    gatherLogSums<2>(x.work, 0, 3, logs1, scratch, static_cast<int>(gridDim.x));
    const double massA = masses[0], targetA = masses[1], s = shiftS(x.p, logs1);
    const std::size_t start = blockIdx.x * std::size_t(kThreads) + threadIdx.x, stride = std::size_t(gridDim.x) * kThreads;
    double sums[4] = {0, 0, 0, 0};  // violA, sumA, linearA, bad
    double hi[4] = {-INFINITY, -INFINITY, -INFINITY, -INFINITY};
    double tm[2] = {-INFINITY, -INFINITY}, ts[2] = {0, 0};
    for (std::size_t i = start; i < x.rows; i += stride) {
        double fHat, target, marginal;
        rowFigures(x, w, i, fHat, target, marginal);
        sums[0] += fabs(marginal / massA - target / targetA);
        const double fOld = logOf(x.uSaved[i], ld);
        const double fNew = logOf(x.u[i], ld) + w * s;
        hi[0] = fmax(hi[0], fNew - fOld);
        hi[1] = fmax(hi[1], fOld - fNew);
        hi[2] = fmax(hi[2], fNew);
        hi[3] = fmax(hi[3], -fNew);
        sums[1] += x.a[i];
        sums[2] += x.a[i] * fNew;
        lseAdd(tm[0], ts[0], x.logA[i] - ra * fNew);
        const V out = stored<V>(fNew, ld);
        sums[3] += usable(out, ld) ? 0.0 : 1.0;
        x.u[i] = out;
    }
    for (std::size_t j = start; j < x.cols; j += stride)
        lseAdd(tm[1], ts[1], x.logB[j] - rb * (logOf(x.v[j], ld) - fb * w * s));
    blockReduce<Op::Sum, 4>(sums, scratch);
    blockReduce<Op::Max, 4>(hi, scratch);
    blockLogSumExp<2>(tm, ts, scratch);
    if (threadIdx.x == 0) {
        double* out = partialsOf(x.work, 1, blockIdx.x);
        out[0] = sums[0];
        for (int k = 0; k < 4; ++k) out[1 + k] = hi[k];
        out[5] = sums[1];
        out[6] = sums[2];
        out[7] = tm[0];
        out[8] = tm[1];
        out[9] = sums[3];
    }
}

// Phase 3: column sums and extremes of the new G. Slots: targetB, errB, mass, sumB,
// linearB, dGmax, -dGmin, gMax, -gMin.
template <typename V>
__global__ void __launch_bounds__(kThreads) stepPhase3(StepArgs<V> x)
{
    __shared__ double scratch[kWarps][kMaxValues];
    if (frozen(x)) return;
    const double w = x.state->omega;
    double logs1[2], logs2[2];
    gatherLogSums<2>(x.work, 0, 3, logs1, scratch, static_cast<int>(gridDim.x));
    gatherLogSums<2>(x.work, 1, 7, logs2, scratch, static_cast<int>(gridDim.x));
    const double s = shiftS(x.p, logs1), t = shiftT(x.p, logs2);
    const std::size_t start = blockIdx.x * std::size_t(kThreads) + threadIdx.x, stride = std::size_t(gridDim.x) * kThreads;
    double sums[5] = {0, 0, 0, 0, 0};
    double hi[4] = {-INFINITY, -INFINITY, -INFINITY, -INFINITY};
    for (std::size_t j = start; j < x.cols; j += stride) {
        double g, marginal, target;
        colFigures(x, w, s, t, j, g, marginal, target);
        const double gOld = logOf(x.vSaved[j], x.p.logDomain);
        sums[0] += target;
        sums[1] += fabs(marginal - x.b[j]);
        sums[2] += marginal;
        sums[3] += x.b[j];
        sums[4] += x.b[j] * g;
        hi[0] = fmax(hi[0], g - gOld);
        hi[1] = fmax(hi[1], gOld - g);
        hi[2] = fmax(hi[2], g);
        hi[3] = fmax(hi[3], -g);
    }
    blockReduce<Op::Sum, 5>(sums, scratch);
    blockReduce<Op::Max, 4>(hi, scratch);
    if (threadIdx.x == 0) {
        double* out = partialsOf(x.work, 2, blockIdx.x);
        for (int k = 0; k < 5; ++k) out[k] = sums[k];
        for (int k = 0; k < 4; ++k) out[5 + k] = hi[k];
    }
}

// Phase 4: the column violation, and G written. Slots: violB, bad.
template <typename V>
__global__ void __launch_bounds__(kThreads) stepPhase4(StepArgs<V> x)
{
    __shared__ double scratch[kWarps][kMaxValues];
    if (frozen(x)) return;
    const double w = x.state->omega;
    const bool ld = x.p.logDomain;
    double logs1[2], logs2[2], cols[3];
    gatherLogSums<2>(x.work, 0, 3, logs1, scratch, static_cast<int>(gridDim.x));
    gatherLogSums<2>(x.work, 1, 7, logs2, scratch, static_cast<int>(gridDim.x));
    gatherSums<3>(x.work, 2, 0, cols, scratch, static_cast<int>(gridDim.x));
    const double s = shiftS(x.p, logs1), t = shiftT(x.p, logs2), targetB = cols[0], mass = cols[2];
    const std::size_t start = blockIdx.x * std::size_t(kThreads) + threadIdx.x, stride = std::size_t(gridDim.x) * kThreads;
    double sums[2] = {0, 0};
    for (std::size_t j = start; j < x.cols; j += stride) {
        double g, marginal, target;
        colFigures(x, w, s, t, j, g, marginal, target);
        sums[0] += fabs(marginal / mass - target / targetB);
        const V out = stored<V>(g, ld);
        sums[1] += usable(out, ld) ? 0.0 : 1.0;
        x.v[j] = out;
    }
    blockReduce<Op::Sum, 2>(sums, scratch);
    if (threadIdx.x == 0) {
        double* out = partialsOf(x.work, 3, blockIdx.x);
        out[0] = sums[0];
        out[1] = sums[1];
    }
}

// The decisions (relaxed_step.cpp and scaling_loop.cpp's accelerated loop), one block.
// `blocks`: the grid of the phases (this kernel runs as one block).
template <typename V>
__global__ void __launch_bounds__(kThreads) stepDecide(StepArgs<V> x, int blocks)
{
    __shared__ double scratch[kWarps][kMaxValues];
    RelaxedState& st = *x.state;
    if (st.stop != kRunning) {
        if (threadIdx.x == 0) *decisionOf(x.work) = 0;  // frozen: undo the pass
        return;
    }
    double rowSums[3], logs1[2], viol2[1], hi2[4], rowLin[2], logs2[2], bad2[1], col[5], hi3[4], col4[2];
    const RelaxedParams& p = x.p;
    gatherSums<3>(x.work, 0, 0, rowSums, scratch, blocks);
    gatherLogSums<2>(x.work, 0, 3, logs1, scratch, blocks);
    gatherSums<1>(x.work, 1, 0, viol2, scratch, blocks);
    gatherMaxes<4>(x.work, 1, 1, hi2, scratch, blocks);
    gatherSums<2>(x.work, 1, 5, rowLin, scratch, blocks);
    gatherLogSums<2>(x.work, 1, 7, logs2, scratch, blocks);
    gatherSums<1>(x.work, 1, 9, bad2, scratch, blocks);
    gatherSums<5>(x.work, 2, 0, col, scratch, blocks);
    gatherMaxes<4>(x.work, 2, 5, hi3, scratch, blocks);
    gatherSums<2>(x.work, 3, 0, col4, scratch, blocks);
    if (threadIdx.x != 0) return;
    const double w = st.omega;
    const double s = shiftS(p, logs1), t = shiftT(p, logs2);
    RelaxedTotals totals;
    totals.logTargetA = logs2[0];
    totals.logTargetB = log(col[0]);
    totals.sumA = rowLin[0];
    totals.sumB = col[3];
    totals.linearA = rowLin[1];
    totals.linearB = col[4];
    totals.mass = col[2];
    totals.dFmax = hi2[0];
    totals.dFmin = -hi2[1];
    totals.fMax = hi2[2];
    totals.fMin = -hi2[3];
    totals.dGmax = hi3[0];
    totals.dGmin = -hi3[1];
    totals.gMax = hi3[2];
    totals.gMin = -hi3[3];
    const RelaxedObjective objective = relaxedObjective(totals, p.eps, p.tauA, p.tauB, p.ra, p.rb, p.translate);
    const double change = relaxedChange(totals);
    const bool finite =
        isfinite(s) && isfinite(t) && isfinite(objective.value) && bad2[0] == 0.0 && col4[1] == 0.0;
    const bool safeguard = p.safeguard && w != 1.0;
    st.passes += p.sweeps;
    int decision = 0;
    if (!finite && !safeguard) {
        st.stop = kNotFinite;
    } else if (safeguard && (!finite || (st.haveLast && !objectiveAcceptable(st.lastObjective, st.lastScale,
                                                                               objective.value, objective.scale,
                                                                               p.slack)))) {
        st.rule.rejected();  // undo: the next pass runs from the same iterate with a smaller omega
        st.omega = st.rule.omega;
    } else {
        decision = 1;
        st.iterations += 1;
        st.lastObjective = objective.value;
        st.lastScale = objective.scale;
        st.haveLast = 1;
        st.rule.accepted(change);
        st.omega = st.rule.omega;
        // The criterion of StoppingRule::Potentials, as the CPU loop's (relaxed_rules.h).
        const bool unbalanced = isfinite(p.tauA) || isfinite(p.tauB);
        st.error = relaxedError(change, viol2[0], col4[0], relaxedMassViolation(totals, p.ra, p.rb, unbalanced));
        st.marginalA = rowSums[2];
        st.marginalB = col[1];
        if (p.tolerance > 0 && st.error < p.tolerance) st.stop = kConverged;
        else if (st.iterations >= p.maxIterations) st.stop = kIterationCap;
    }
    *decisionOf(x.work) = decision;
}

// Keeps the iterate (accepted) or puts the saved one back (rejected, frozen).
template <typename V>
__global__ void __launch_bounds__(kThreads) stepCommit(StepArgs<V> x)
{
    const bool accept = *decisionOf(x.work) != 0;
    const std::size_t start = blockIdx.x * std::size_t(kThreads) + threadIdx.x, stride = std::size_t(gridDim.x) * kThreads;
    for (std::size_t i = start; i < x.rows; i += stride) {
        if (accept) x.uSaved[i] = x.u[i];
        else x.u[i] = x.uSaved[i];
    }
    for (std::size_t j = start; j < x.cols; j += stride) {
        if (accept) x.vSaved[j] = x.v[j];
        else x.v[j] = x.vSaved[j];
    }
}

}  // namespace

std::size_t relaxedWorkDoubles() { return std::size_t(4) * kMaxBlocks * kSlots + 1; }

template <typename V>
void launchRelaxedStep(V* u, V* v, V* uSaved, V* vSaved, std::size_t rows, std::size_t cols, const double* a,
                       const double* b, const double* logA, const double* logB, const RelaxedParams& params,
                       RelaxedState* state, double* work, cudaStream_t stream)
{
    const StepArgs<V> x{u, v, uSaved, vSaved, rows, cols, a, b, logA, logB, params, state, work};
    const std::size_t longest = std::max(rows, cols);
    const int blocks = static_cast<int>(std::clamp<std::size_t>((longest + kThreads - 1) / kThreads, 1, kMaxBlocks));
    stepPhase1<V><<<blocks, kThreads, 0, stream>>>(x);
    UOT_CUDA_CHECK_LAUNCH();
    stepPhase2<V><<<blocks, kThreads, 0, stream>>>(x);
    UOT_CUDA_CHECK_LAUNCH();
    stepPhase3<V><<<blocks, kThreads, 0, stream>>>(x);
    UOT_CUDA_CHECK_LAUNCH();
    stepPhase4<V><<<blocks, kThreads, 0, stream>>>(x);
    UOT_CUDA_CHECK_LAUNCH();
    stepDecide<V><<<1, kThreads, 0, stream>>>(x, blocks);
    UOT_CUDA_CHECK_LAUNCH();
    stepCommit<V><<<blocks, kThreads, 0, stream>>>(x);
    UOT_CUDA_CHECK_LAUNCH();
}

template void launchRelaxedStep<float>(float*, float*, float*, float*, std::size_t, std::size_t, const double*,
                                       const double*, const double*, const double*, const RelaxedParams&,
                                       RelaxedState*, double*, cudaStream_t);
template void launchRelaxedStep<double>(double*, double*, double*, double*, std::size_t, std::size_t, const double*,
                                        const double*, const double*, const double*, const RelaxedParams&,
                                        RelaxedState*, double*, cudaStream_t);

}  // namespace uot::gpu::detail
