// The over-relaxed step on the device (see relaxed_kernels.h). One block walks
// the rows and columns a few times (O(M + N), no read of K): the figures of
// core/transport/relaxed_step.cpp's afterPass, then thread 0 takes the decisions
// with the shared rules of relaxed_rules.h.

#include "gpu/relaxed_kernels.h"

#include <cmath>

#include "gpu/cuda_support.h"
#include "gpu/log_sum_exp.cuh"

namespace uot::gpu::detail {

namespace {

constexpr int kThreads = 512;
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

template <typename V>
__global__ void __launch_bounds__(kThreads)
    relaxedStepKernel(V* __restrict__ u, V* __restrict__ v, V* __restrict__ uSaved, V* __restrict__ vSaved,
                      std::size_t rows, std::size_t cols, const double* __restrict__ a, const double* __restrict__ b,
                      const double* __restrict__ logA, const double* __restrict__ logB, RelaxedParams p,
                      RelaxedState* state)
{
    __shared__ double scratch[kWarps][kMaxValues];
    __shared__ int accept;
    const bool ld = p.logDomain;
    const std::size_t tid = threadIdx.x;
    auto restore = [&]() {
        for (std::size_t i = tid; i < rows; i += kThreads) u[i] = uSaved[i];
        for (std::size_t j = tid; j < cols; j += kThreads) v[j] = vSaved[j];
    };
    if (state->stop != kRunning) {  // frozen: undo the pass
        restore();
        return;
    }
    const double w = state->omega;
    const double ra = p.ra, rb = p.rb, fb = p.fb;
    // Rows of the input plan: F_old, F~ (pass), F^ behind it; P 1 = a e^(F_old - F^ / f_a) = target e^((1 + ra)(F_old - F^)).
    auto rowFigures = [&](std::size_t i, double& fHat, double& target, double& marginal) {
        const double fOld = logOf(uSaved[i], ld), fRelaxed = logOf(u[i], ld);
        fHat = w == 1.0 ? fRelaxed : (fRelaxed - (1.0 - w) * fOld) / w;
        target = a[i] * exp(-ra * fOld);
        marginal = target * exp((1.0 + ra) * (fOld - fHat));
    };

    // Phase 1: log A(F^), log B(G_old), the row masses.
    double lm[2] = {-INFINITY, -INFINITY}, ls[2] = {0, 0};
    double sums[3] = {0, 0, 0};  // massA, targetA, errA
    for (std::size_t i = tid; i < rows; i += kThreads) {
        double fHat, target, marginal;
        rowFigures(i, fHat, target, marginal);
        sums[0] += marginal;
        sums[1] += target;
        sums[2] += fabs(marginal - a[i]);
        lseAdd(lm[0], ls[0], logA[i] - ra * fHat);
    }
    for (std::size_t j = tid; j < cols; j += kThreads) lseAdd(lm[1], ls[1], logB[j] - rb * logOf(vSaved[j], ld));
    blockLogSumExp<2>(lm, ls, scratch);
    blockReduce<Op::Sum, 3>(sums, scratch);
    const double massA = sums[0], targetA = sums[1], errA = sums[2];
    const double s = p.translate ? p.cs * (lm[1] - lm[0]) : 0.0;

    // Phase 2: the row violation; the new F = F~ + w s (written), its extremes and sums;
    // log B(G^) with G^ = G^pass - f_b w s.
    double viol[1] = {0};
    double hi[4] = {-INFINITY, -INFINITY, -INFINITY, -INFINITY};  // dFmax, -dFmin, fMax, -fMin
    double rowSums[2] = {0, 0};                                    // sumA, linearA
    double tm[2] = {-INFINITY, -INFINITY}, ts[2] = {0, 0};          // log A(F), log B(G^)
    int bad = 0;
    for (std::size_t i = tid; i < rows; i += kThreads) {
        double fHat, target, marginal;
        rowFigures(i, fHat, target, marginal);
        viol[0] += fabs(marginal / massA - target / targetA);
        const double fOld = logOf(uSaved[i], ld);
        const double fNew = logOf(u[i], ld) + w * s;
        hi[0] = fmax(hi[0], fNew - fOld);
        hi[1] = fmax(hi[1], fOld - fNew);
        hi[2] = fmax(hi[2], fNew);
        hi[3] = fmax(hi[3], -fNew);
        rowSums[0] += a[i];
        rowSums[1] += a[i] * fNew;
        lseAdd(tm[0], ts[0], logA[i] - ra * fNew);
        const V out = stored<V>(fNew, ld);
        bad |= !usable(out, ld);
        u[i] = out;
    }
    for (std::size_t j = tid; j < cols; j += kThreads)
        lseAdd(tm[1], ts[1], logB[j] - rb * (logOf(v[j], ld) - fb * w * s));
    blockReduce<Op::Sum, 1>(viol, scratch);
    blockReduce<Op::Max, 4>(hi, scratch);
    blockReduce<Op::Sum, 2>(rowSums, scratch);
    blockLogSumExp<2>(tm, ts, scratch);
    const double t = p.translate ? p.ct * (tm[0] - tm[1]) : 0.0;

    // Phase 3: the new G = (1 - w) G_old + w (G^ + t), its column marginal (the pass's
    // column sums times e^(w s)) and target, sums and extremes.
    auto colFigures = [&](std::size_t j, double& g, double& marginal, double& target) {
        const double gPass = logOf(v[j], ld), gOld = logOf(vSaved[j], ld);
        g = (1.0 - w) * gOld + w * (gPass - fb * w * s + t);
        marginal = exp(g + logB[j] - gPass / fb + w * s);
        target = b[j] * exp(-rb * g);
    };
    double colSums[5] = {0, 0, 0, 0, 0};                           // targetB, errB, mass, sumB, linearB
    double colHi[4] = {-INFINITY, -INFINITY, -INFINITY, -INFINITY};  // dGmax, -dGmin, gMax, -gMin
    for (std::size_t j = tid; j < cols; j += kThreads) {
        double g, marginal, target;
        colFigures(j, g, marginal, target);
        const double gOld = logOf(vSaved[j], ld);
        colSums[0] += target;
        colSums[1] += fabs(marginal - b[j]);
        colSums[2] += marginal;
        colSums[3] += b[j];
        colSums[4] += b[j] * g;
        colHi[0] = fmax(colHi[0], g - gOld);
        colHi[1] = fmax(colHi[1], gOld - g);
        colHi[2] = fmax(colHi[2], g);
        colHi[3] = fmax(colHi[3], -g);
    }
    blockReduce<Op::Sum, 5>(colSums, scratch);
    blockReduce<Op::Max, 4>(colHi, scratch);
    const double targetB = colSums[0], mass = colSums[2];

    // Phase 4: the column violation, and G written.
    double violB[2] = {0, static_cast<double>(bad)};
    for (std::size_t j = tid; j < cols; j += kThreads) {
        double g, marginal, target;
        colFigures(j, g, marginal, target);
        violB[0] += fabs(marginal / mass - target / targetB);
        const V out = stored<V>(g, ld);
        violB[1] += usable(out, ld) ? 0.0 : 1.0;
        v[j] = out;
    }
    blockReduce<Op::Sum, 2>(violB, scratch);

    // Decisions (relaxed_step.cpp and scaling_loop.cpp's accelerated loop).
    if (tid == 0) {
        RelaxedTotals totals;
        totals.logTargetA = tm[0];
        totals.logTargetB = log(targetB);
        totals.sumA = rowSums[0];
        totals.sumB = colSums[3];
        totals.linearA = rowSums[1];
        totals.linearB = colSums[4];
        totals.mass = mass;
        totals.dFmax = hi[0];
        totals.dFmin = -hi[1];
        totals.fMax = hi[2];
        totals.fMin = -hi[3];
        totals.dGmax = colHi[0];
        totals.dGmin = -colHi[1];
        totals.gMax = colHi[2];
        totals.gMin = -colHi[3];
        const RelaxedObjective objective = relaxedObjective(totals, p.eps, p.tauA, p.tauB, ra, rb, p.translate);
        const double change = relaxedChange(totals);
        const bool finite = isfinite(s) && isfinite(t) && isfinite(objective.value) && violB[1] == 0.0;
        const bool safeguard = p.safeguard && w != 1.0;
        RelaxedState& st = *state;
        st.passes += p.sweeps;
        int decision = 0;
        if (!finite && !safeguard) {
            st.stop = kNotFinite;
        } else if (safeguard && (!finite || (st.haveLast &&
                                             !objectiveAcceptable(st.lastObjective, st.lastScale, objective.value,
                                                                  objective.scale, p.slack)))) {
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
            st.error = fmax(change, fmax(viol[0] / targetA, violB[0] / targetB));
            st.marginalA = errA;
            st.marginalB = colSums[1];
            if (p.tolerance > 0 && st.error < p.tolerance) st.stop = kConverged;
            else if (st.iterations >= p.maxIterations) st.stop = kIterationCap;
        }
        accept = decision;
    }
    __syncthreads();
    if (accept) {
        for (std::size_t i = tid; i < rows; i += kThreads) uSaved[i] = u[i];
        for (std::size_t j = tid; j < cols; j += kThreads) vSaved[j] = v[j];
    } else {
        restore();
    }
}

}  // namespace

template <typename V>
void launchRelaxedStep(V* u, V* v, V* uSaved, V* vSaved, std::size_t rows, std::size_t cols, const double* a,
                       const double* b, const double* logA, const double* logB, const RelaxedParams& params,
                       RelaxedState* state, cudaStream_t stream)
{
    relaxedStepKernel<V><<<1, kThreads, 0, stream>>>(u, v, uSaved, vSaved, rows, cols, a, b, logA, logB, params,
                                                     state);
    UOT_CUDA_CHECK_LAUNCH();
}

template void launchRelaxedStep<float>(float*, float*, float*, float*, std::size_t, std::size_t, const double*,
                                       const double*, const double*, const double*, const RelaxedParams&,
                                       RelaxedState*, cudaStream_t);
template void launchRelaxedStep<double>(double*, double*, double*, double*, std::size_t, std::size_t, const double*,
                                        const double*, const double*, const double*, const RelaxedParams&,
                                        RelaxedState*, cudaStream_t);

}  // namespace uot::gpu::detail
