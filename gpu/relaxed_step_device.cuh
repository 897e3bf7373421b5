#pragma once
// Internal to gpu/ (CUDA device code): the pieces of the over-relaxed step
// (relaxed_kernels.h) that its two kernels and the one-launch cluster iteration
// (cluster_iterations.h) share: block reductions, the per-block sweep of the
// iterate, the decisions from every block's partials, the commit and the stopping
// figures. Each piece works on a range of rows and columns with a stride, so a
// grid-strided kernel and a block that owns a slice use the same code.

#include <cmath>
#include <cstddef>

#include "gpu/log_sum_exp.cuh"
#include "gpu/relaxed_decision.cuh"
#include "gpu/relaxed_kernels.h"

namespace uot::gpu::detail::relaxed {

constexpr int kThreads = 256;
constexpr int kWarps = kThreads / 32;
constexpr int kMaxValues = 16;  // values reduced together

enum class Op { Sum, Max };

// The thread's index in its block of kThreads threads, 1-D (the step's kernels, the
// cluster iteration) or 32 x 8 (the column finalize that sweeps, relaxed_kernels.cu).
__device__ inline int flatThread() { return static_cast<int>(threadIdx.x + blockDim.x * threadIdx.y); }

// Reduces n values of every thread over its warp (sums or maxima), in place, the
// result in every lane; each value as by a butterfly of its own (the same bits). The
// levels outside, the values inside: a level's n shuffles are issued together. (The
// step's reductions measured the same either way: their time is in the exponentials
// and logarithms around them, one after another; docs/BENCHMARKS.md, issue 26.)
template <Op op, int n, typename V>
__device__ void warpReduce(V (&x)[n])
{
#pragma unroll
    for (int offset = 16; offset > 0; offset >>= 1) {
        V y[n];
#pragma unroll
        for (int k = 0; k < n; ++k) y[k] = __shfl_xor_sync(0xffffffffu, x[k], offset);
#pragma unroll
        for (int k = 0; k < n; ++k) x[k] = op == Op::Sum ? x[k] + y[k] : fmax(x[k], y[k]);
    }
}

// Reduces n values of every thread over the block (sums or maxima), in place,
// the result in every thread. Where only the first warp holds values (the others
// 0 for sums, -inf for maxima) the result is warpReduce's, to the bit.
template <Op op, int n>
__device__ void blockReduce(double (&x)[n], double (*scratch)[kMaxValues])
{
    static_assert(n <= kMaxValues);
    const int warp = flatThread() / 32, lane = flatThread() % 32;
    warpReduce<op, n>(x);
    if (lane == 0)
#pragma unroll
        for (int k = 0; k < n; ++k) scratch[warp][k] = x[k];
    __syncthreads();
#pragma unroll
    for (int k = 0; k < n; ++k) {
        double total = scratch[0][k];
        for (int w = 1; w < kWarps; ++w) total = op == Op::Sum ? total + scratch[w][k] : fmax(total, scratch[w][k]);
        x[k] = total;
    }
    __syncthreads();  // the scratch is reused by the next reduction
}

// blockReduce, or warpReduce where only the first warp takes part (kOneWarp).
template <Op op, int n, bool kOneWarp>
__device__ void reduceValues(double (&x)[n], double (*scratch)[kMaxValues])
{
    if constexpr (kOneWarp)
        warpReduce<op, n>(x);
    else
        blockReduce<op, n>(x, scratch);
}

// The sums, maxima and log-sum-exp states (m, s) of the block reduced, each kind in
// place, the results in every thread (the log of each log-sum's total in m). Two
// block reductions: the maxima with the log-sums' maxima, then the sums with each
// thread's log-sums scaled to those maxima (one exponential a thread, not a chain of
// pairwise merges through the warp and across the warps). Each figure is reduced in
// the same order as on its own. kOneWarp: the first warp's values only (the other
// warps do not call it).
template <int nSum, int nMax, int nLog, bool kOneWarp = false>
__device__ void blockReduceFigures(double (&sums)[nSum], double (&hi)[nMax], double (&m)[nLog], double (&s)[nLog],
                                   double (*scratch)[kMaxValues])
{
    double top[nMax + nLog], add[nSum + nLog];
#pragma unroll
    for (int k = 0; k < nMax; ++k) top[k] = hi[k];
#pragma unroll
    for (int k = 0; k < nLog; ++k) top[nMax + k] = m[k];
    reduceValues<Op::Max, nMax + nLog, kOneWarp>(top, scratch);
#pragma unroll
    for (int k = 0; k < nSum; ++k) add[k] = sums[k];
#pragma unroll
    for (int k = 0; k < nLog; ++k) add[nSum + k] = m[k] == -INFINITY ? 0.0 : s[k] * exp(m[k] - top[nMax + k]);
    reduceValues<Op::Sum, nSum + nLog, kOneWarp>(add, scratch);
#pragma unroll
    for (int k = 0; k < nMax; ++k) hi[k] = top[k];
#pragma unroll
    for (int k = 0; k < nSum; ++k) sums[k] = add[k];
    // The totals' logs one a lane (lane k takes log-sum k) and shuffled to every lane:
    // one log's latency, not nLog's in a row; the same values.
    static_assert(nLog <= 32);
    const int lane = flatThread() % 32;
    double mine = 1.0;
#pragma unroll
    for (int k = 0; k < nLog; ++k) mine = lane == k ? add[nSum + k] : mine;
    const double logged = log(mine);
#pragma unroll
    for (int k = 0; k < nLog; ++k) {
        const double t = top[nMax + k];
        const double logTotal = __shfl_sync(0xffffffffu, logged, k);
        m[k] = t == -INFINITY ? -INFINITY : t + logTotal;
    }
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

// The step runs as two kernels over up to kMaxBlocks blocks (the work is O(M + N) in
// float64 transcendentals). Everything the decision needs is separable in the two
// shifts s and t: the sweep reads the iterate once and accumulates, per block, the
// sums, extremes and log-sums of F~ and of G0 = (1 - w) G_old + w G^pass (then
// F = F~ + w s and G = G0 + c with c = w (t - f_b w s), so every total is its
// partial shifted by a scalar); the last block to finish reduces the partials once
// and decides. The commit writes the iterate and sums the normalised violations
// (which need the totals), and its last block finishes the stopping figures. No
// chain of per-phase gathers: one reduction of the partials per kernel.
constexpr int kMaxBlocks = 128;

enum SweepSum { kMassA, kTargetA, kErrA, kSumA, kLinA, kSumB, kLinB, kNonFinite, kSweepSums };
enum SweepMax { kDfUp, kDfDown, kFUp, kFDown, kDgUp, kDgDown, kGUp, kGDown, kSweepMaxes };

// One potential's move before -> after into a side's sweep figures: its weight and linear
// term (the slots weightSlot and weightSlot + 1), the non-finite count, and its four
// extremes from firstMax on (rise, fall, largest value, negated smallest value).
static_assert(kLinA == kSumA + 1 && kLinB == kSumB + 1 && kFDown == kDfUp + 3 && kGDown == kDgUp + 3);
__device__ inline void addPotentialMove(double* sums, int weightSlot, double* hi, int firstMax, double weight,
                                        double before, double after)
{
    sums[weightSlot] += weight;
    sums[weightSlot + 1] += weight * after;
    sums[kNonFinite] += isfinite(after) ? 0.0 : 1.0;
    hi[firstMax] = fmax(hi[firstMax], after - before);
    hi[firstMax + 1] = fmax(hi[firstMax + 1], before - after);
    hi[firstMax + 2] = fmax(hi[firstMax + 2], after);
    hi[firstMax + 3] = fmax(hi[firstMax + 3], -after);
}
enum SweepLog { kLogAHat, kLogBOld, kLogATilde, kLogBPass, kLogBTarget, kLogMass, kSweepLogs };
enum CommitSum { kViolA, kViolB, kErrB, kBad, kCommitSums };
constexpr int kLogSlot = int(kSweepSums) + int(kSweepMaxes);  // the log-sums follow the sums and maxima
constexpr int kSweepSlots = kLogSlot + int(kSweepLogs);
static_assert(int(kSweepSums) + int(kSweepLogs) <= kMaxValues && int(kSweepMaxes) + int(kSweepLogs) <= kMaxValues &&
              kCommitSums <= kMaxValues);

// What the sweep's last block hands to the commit (one load each).
struct StepScalars {
    double w, s, t, c;  // omega of the pass, the shifts, G = G0 + c
    double massA, targetA;     // of the input plan's rows
    double mass, targetB;      // of the new plan's columns
    double change, massViolation, marginalA;
    int decision;  // 1: accept, 0: put the saved iterate back
};
constexpr std::size_t kScalarDoubles = (sizeof(StepScalars) + sizeof(double) - 1) / sizeof(double);

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
    double* work;  // sweep partials, commit partials, StepScalars
    // G^pass = log v of the pass where it is kept in float64 (the cluster iteration),
    // else null: the log of the stored v.
    const double* gPass = nullptr;
};

// G^pass of column j.
template <typename V>
__device__ double passColumn(const StepArgs<V>& x, std::size_t j)
{
    return x.gPass ? x.gPass[j] : logOf(x.v[j], x.p.logDomain);
}

// The work buffer: the StepScalars, the commit's partials (up to kMaxBlocks), then
// the sweep's (up to kMaxBlocks, or one per 32 columns where the column finalize
// sweeps: relaxedWorkDoubles).
__device__ inline StepScalars& scalarsOf(double* work) { return *reinterpret_cast<StepScalars*>(work); }
__device__ inline double* commitPartials(double* work, int block)
{
    return work + kScalarDoubles + std::size_t(block) * kCommitSums;
}
__device__ inline double* sweepPartials(double* work, int block)
{
    return work + kScalarDoubles + std::size_t(kMaxBlocks) * kCommitSums + std::size_t(block) * kSweepSlots;
}

// After thread 0 wrote this block's partials: true in the block that finished last
// (ticket: a counter of RelaxedState, reset by that block). Its threads may then read
// every block's partials (past L1: __ldcg).
__device__ inline bool lastBlockToFinish(unsigned int* ticket)
{
    __shared__ bool last;
    if (flatThread() == 0) {
        __threadfence();
        last = atomicAdd(ticket, 1u) == gridDim.x - 1;
    }
    __syncthreads();
    if (last) __threadfence();
    return last;
}

// Rows of the input plan: F_old, F~ (pass), F^ behind it; P 1 = a e^(F_old - F^ / f_a) = target e^((1 + ra)(F_old - F^)).
template <typename V>
__device__ void rowFigures(const StepArgs<V>& x, double w, std::size_t i, double& fOld, double& fTilde, double& fHat,
                           double& target, double& marginal)
{
    const bool ld = x.p.logDomain;
    fOld = logOf(x.uSaved[i], ld);
    fTilde = logOf(x.u[i], ld);
    fHat = w == 1.0 ? fTilde : (fTilde - (1.0 - w) * fOld) / w;
    target = x.a[i] * exp(-x.p.ra * fOld);
    marginal = target * exp((1.0 + x.p.ra) * (fOld - fHat));
}

// G0 = (1 - w) G_old + w G^pass: the new G before the shifts (G = G0 + c). One
// function for both kernels, so that they round it alike.
__device__ __forceinline__ double columnBase(double gOld, double gPass, double w)
{
    return __dadd_rn(__dmul_rn(1.0 - w, gOld), __dmul_rn(w, gPass));
}

// A range of indices a thread walks: first, first + step, ... below end.
struct Stride {
    std::size_t first, end, step;
};

// This block's share of the sweep (rows and columns as given): the sums, extremes
// and log-sums of F~ and G0 = (1 - w) G_old + w G^pass, written by thread 0 to `part`
// (kSweepSlots values).
template <typename V>
__device__ void sweepBlock(const StepArgs<V>& x, double w, Stride rows, Stride cols, double* part,
                           double (*scratch)[kMaxValues])
{
    const RelaxedParams& p = x.p;
    const double ra = p.ra, rb = p.rb, fb = p.fb;
    const bool ld = p.logDomain;
    double sums[kSweepSums] = {};
    double hi[kSweepMaxes];
    double lm[kSweepLogs], ls[kSweepLogs] = {};
    for (double& h : hi) h = -INFINITY;
    for (double& m : lm) m = -INFINITY;
    for (std::size_t i = rows.first; i < rows.end; i += rows.step) {
        double fOld, fTilde, fHat, target, marginal;
        rowFigures(x, w, i, fOld, fTilde, fHat, target, marginal);
        sums[kMassA] += marginal;
        sums[kTargetA] += target;
        sums[kErrA] += fabs(marginal - x.a[i]);
        addPotentialMove(sums, kSumA, hi, kDfUp, x.a[i], fOld, fTilde);
        lseAddFirstFree(lm[kLogAHat], ls[kLogAHat], x.logA[i] - ra * fHat);
        lseAddFirstFree(lm[kLogATilde], ls[kLogATilde], x.logA[i] - ra * fTilde);
    }
    for (std::size_t j = cols.first; j < cols.end; j += cols.step) {
        const double gOld = logOf(x.vSaved[j], ld), gPass = passColumn(x, j);
        const double g0 = columnBase(gOld, gPass, w);
        addPotentialMove(sums, kSumB, hi, kDgUp, x.b[j], gOld, g0);
        lseAddFirstFree(lm[kLogBOld], ls[kLogBOld], x.logB[j] - rb * gOld);
        lseAddFirstFree(lm[kLogBPass], ls[kLogBPass], x.logB[j] - rb * gPass);
        lseAddFirstFree(lm[kLogBTarget], ls[kLogBTarget], x.logB[j] - rb * g0);
        lseAddFirstFree(lm[kLogMass], ls[kLogMass], g0 + x.logB[j] - gPass / fb);
    }
    blockReduceFigures(sums, hi, lm, ls, scratch);
    if (flatThread() == 0) {
        for (int k = 0; k < kSweepSums; ++k) part[k] = sums[k];
        for (int k = 0; k < kSweepMaxes; ++k) part[kSweepSums + k] = hi[k];
        for (int k = 0; k < kSweepLogs; ++k) part[kLogSlot + k] = lm[k];
    }
}

// Reads value k of block blk's partials (a Partials of the functions below): here
// from the global work buffer past L1, in the cluster iteration from the blocks'
// shared memory (cluster_iterations.cu).
struct GlobalSweepPartials {
    double* work;
    __device__ double operator()(int blk, int k) const { return __ldcg(sweepPartials(work, blk) + k); }
};
struct GlobalCommitPartials {
    double* work;
    __device__ double operator()(int blk, int k) const { return __ldcg(commitPartials(work, blk) + k); }
};

// The whole block (kOneWarp: its first warp, for up to 32 blocks; the same figures
// to the bit): the sweep partials of `blocks` blocks (value k of block blk is
// part(blk, k)), reduced; then thread 0 takes the decisions (relaxed_step.cpp and
// scaling_loop.cpp's accelerated loop) on `st` and hands the commit its scalars in
// `out`. The omega of the pass is st.omega.
template <bool kOneWarp = false, typename V, typename Partials>
__device__ void decideFromPartials(const StepArgs<V>& x, int blocks, const Partials& part, RelaxedState& st,
                                   StepScalars& out, double (*scratch)[kMaxValues])
{
    if (kOneWarp && flatThread() >= 32) return;
    double sums[kSweepSums] = {};
    double hi[kSweepMaxes];
    double lm[kSweepLogs], ls[kSweepLogs] = {};
    for (double& h : hi) h = -INFINITY;
    for (double& m : lm) m = -INFINITY;
    for (int blk = flatThread(); blk < blocks; blk += kThreads) {
        for (int k = 0; k < kSweepSums; ++k) sums[k] += part(blk, k);
        for (int k = 0; k < kSweepMaxes; ++k) hi[k] = fmax(hi[k], part(blk, kSweepSums + k));
        for (int k = 0; k < kSweepLogs; ++k) lseAddFirstFree(lm[k], ls[k], part(blk, kLogSlot + k));
    }
    blockReduceFigures<kSweepSums, kSweepMaxes, kSweepLogs, kOneWarp>(sums, hi, lm, ls, scratch);
    const int lane = flatThread();
    if (lane >= 32) return;  // the first warp shares out five exponentials, thread 0 decides
    const RelaxedParams& p = x.p;
    const double w = st.omega, ra = p.ra, rb = p.rb, fb = p.fb;
    const bool ld = p.logDomain;
    // s from log A(F^), log B(G_old); t from log A(F), log B(G^) with F = F~ + w s,
    // G^ = G^pass - f_b w s.
    const double s = p.translate ? p.cs * (lm[kLogBOld] - lm[kLogAHat]) : 0.0;
    const double ws = w * s;
    const double logAF = lm[kLogATilde] - ra * ws, logBHat = lm[kLogBPass] + rb * fb * ws;
    const double t = p.translate ? p.ct * (logAF - logBHat) : 0.0;
    const double c = w * (t - fb * ws);
    RelaxedTotals totals;
    totals.logTargetA = logAF;
    totals.logTargetB = lm[kLogBTarget] - rb * c;
    totals.sumA = sums[kSumA];
    totals.sumB = sums[kSumB];
    totals.linearA = sums[kLinA] + ws * sums[kSumA];
    totals.linearB = sums[kLinB] + c * sums[kSumB];
    totals.mass = exp(lm[kLogMass] + c + ws);
    totals.dFmax = hi[kDfUp] + ws;
    totals.dFmin = -hi[kDfDown] + ws;
    totals.fMax = hi[kFUp] + ws;
    totals.fMin = -hi[kFDown] + ws;
    totals.dGmax = hi[kDgUp] + c;
    totals.dGmin = -hi[kDgDown] + c;
    totals.gMax = hi[kGUp] + c;
    totals.gMin = -hi[kGDown] + c;
    // The stored scalings are monotone in F and G: all are usable when the extremes are.
    // The extremes' stored values (lanes 0 to 3) and B(G) = e^(log B(G)) (lane 4), one
    // exponential a lane, side by side; the same values as stored<V> and exp one by one.
    const double extreme = lane == 0 ? totals.fMax : lane == 1 ? totals.fMin : lane == 2 ? totals.gMax : totals.gMin;
    const double power = exp(lane < 4 ? extreme : totals.logTargetB);
    const unsigned usableLanes = __ballot_sync(0xffffffffu, usable(static_cast<V>(ld ? extreme : power), ld));
    const double targetB = __shfl_sync(0xffffffffu, power, 4);
    if (lane != 0) return;
    const RelaxedObjective objective = relaxedObjective(totals, p.eps, p.tauA, p.tauB, ra, rb, p.translate);
    const double change = relaxedChange(totals);
    const bool storable = sums[kNonFinite] == 0.0 && (usableLanes & 0xfu) == 0xfu;
    const bool finite = isfinite(s) && isfinite(t) && isfinite(objective.value) && storable;
    const bool safeguard = p.safeguard && w != 1.0;
    st.passes += p.sweeps;
    st.shiftS = s;
    st.shiftT = t;
    const StepDecision decision = decideStep(st, finite, safeguard, objective, change, p.slack);
    if (decision != StepDecision::Stop) st.omega = st.rule.omega;
    const bool unbalanced = isfinite(p.tauA) || isfinite(p.tauB);
    out = StepScalars{w,
                      s,
                      t,
                      c,
                      sums[kMassA],
                      sums[kTargetA],
                      totals.mass,
                      targetB,
                      change,
                      relaxedMassViolation(totals, ra, rb, unbalanced),
                      sums[kErrA],
                      decision == StepDecision::Accept ? 1 : 0};
}

// This block's share of the commit: keeps the new iterate (accepted) or puts the
// saved one back (rejected, frozen). Accepted: thread 0 writes the normalised
// violations, |P^T 1 - b|_1 and the unusable stored values to `part` (kCommitSums
// values). Returns whether the step was accepted.
template <typename V>
__device__ bool commitBlock(const StepArgs<V>& x, const StepScalars& sc, Stride rows, Stride cols, double* part,
                            double (*scratch)[kMaxValues])
{
    if (sc.decision == 0) {
        for (std::size_t i = rows.first; i < rows.end; i += rows.step) x.u[i] = x.uSaved[i];
        for (std::size_t j = cols.first; j < cols.end; j += cols.step) x.v[j] = x.vSaved[j];
        return false;
    }
    const bool ld = x.p.logDomain;
    const double w = sc.w, ws = sc.w * sc.s, c = sc.c, fb = x.p.fb, rb = x.p.rb;
    double sums[kCommitSums] = {};
    for (std::size_t i = rows.first; i < rows.end; i += rows.step) {
        double fOld, fTilde, fHat, target, marginal;
        rowFigures(x, w, i, fOld, fTilde, fHat, target, marginal);
        sums[kViolA] += fabs(marginal / sc.massA - target / sc.targetA);
        const V value = stored<V>(fTilde + ws, ld);
        sums[kBad] += usable(value, ld) ? 0.0 : 1.0;
        x.u[i] = value;
        x.uSaved[i] = value;
    }
    for (std::size_t j = cols.first; j < cols.end; j += cols.step) {
        const double gPass = passColumn(x, j);
        const double g = columnBase(logOf(x.vSaved[j], ld), gPass, w) + c;
        const double marginal = exp(g + x.logB[j] - gPass / fb + ws);
        const double target = x.b[j] * exp(-rb * g);
        sums[kViolB] += fabs(marginal / sc.mass - target / sc.targetB);
        sums[kErrB] += fabs(marginal - x.b[j]);
        const V value = stored<V>(g, ld);
        sums[kBad] += usable(value, ld) ? 0.0 : 1.0;
        x.v[j] = value;
        x.vSaved[j] = value;
    }
    blockReduce<Op::Sum, kCommitSums>(sums, scratch);
    if (flatThread() == 0)
        for (int k = 0; k < kCommitSums; ++k) part[k] = sums[k];
    return true;
}

// The whole block (kOneWarp: its first warp, as decideFromPartials's), after an
// accepted step: the commit partials of `blocks` blocks (part(blk, k), as
// decideFromPartials's) reduced; thread 0 sets the error and the stop
// (StoppingRule::Potentials) in `st`.
template <bool kOneWarp = false, typename V, typename Partials>
__device__ void finishFromPartials(const StepArgs<V>& x, int blocks, const Partials& part, const StepScalars& sc,
                                   RelaxedState& st, double (*scratch)[kMaxValues])
{
    if (kOneWarp && flatThread() >= 32) return;
    double sums[kCommitSums] = {};
    for (int blk = flatThread(); blk < blocks; blk += kThreads)
        for (int k = 0; k < kCommitSums; ++k) sums[k] += part(blk, k);
    reduceValues<Op::Sum, kCommitSums, kOneWarp>(sums, scratch);
    if (flatThread() != 0) return;
    const RelaxedParams& p = x.p;
    st.violationA = sums[kViolA];
    st.violationB = sums[kViolB];
    st.error = relaxedError(sc.change, sums[kViolA], sums[kViolB], sc.massViolation);
    st.marginalA = sc.marginalA;
    st.marginalB = sums[kErrB];
    if (sums[kBad] != 0.0) st.stop = kNotFinite;  // rounding at the edge of the extremes' test
    else if (p.tolerance > 0 && st.error < p.tolerance) st.stop = kConverged;
    else if (st.iterations >= p.maxIterations) st.stop = kIterationCap;
}

}  // namespace uot::gpu::detail::relaxed
