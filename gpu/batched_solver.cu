// gpu-batched: many point-cloud UOT problems in one launch sequence
// (contract: gpu/batched_solver.h).

#include "gpu/batched_solver.h"

#include <algorithm>
#include <cfloat>
#include <chrono>
#include <cmath>
#include <cstring>
#include <limits>
#include <span>
#include <string>
#include <variant>
#include <vector>

#include "core/transport/potential_check.h"
#include "core/transport/relaxed_rules.h"
#include "core/transport/translation_invariant.h"
#include "core/transport/uot_error.h"
#include "gpu/cuda_support.h"
#include "gpu/device_loop.h"
#include "gpu/gpu_backend.h"
#include "gpu/block_log_sum_exp.cuh"
#include "gpu/relaxed_decision.cuh"
#include "gpu/relaxed_kernels.h"
#include "gpu/relaxed_passes.h"

namespace uot::gpu {

namespace detail {
namespace {

constexpr int kThreads = 256;  // own points per block, and other points per shared-memory tile
constexpr double kLn2 = 0.69314718055994530942;
constexpr double kLog2e = 1.44269504088896340736;
constexpr int kMaxDim = 3;
constexpr int kMaxProblems = 65535;  // grid.y
constexpr const char* kName = "gpu-batched";

// One problem of the batch, as the kernels read it.
struct ProblemDesc {
    long long rowOffset = 0;  // into the concatenated row arrays
    long long colOffset = 0;  // into the concatenated column arrays
    int rows = 0;
    int cols = 0;
    float s2 = 0;             // scale / eps * log2(e): -C_ij / eps in log2 units is -s2 |x_i - y_j|^2
    int productReference = 0; // K_ij also carries a_i b_j
    double fa = 1, fb = 1;    // exponents of the row and column updates
    double omega = 1;         // over-relaxation of both half-steps (set on the device)
    int active = 0;           // 0: converged, stopped or failed: its blocks return at once (set on the device)
    int translate = 0;        // TI half-steps (translation_invariant.h) with these coefficients
    double ra = 0, rb = 0, cs = 0, ct = 0;
    double eps = 1, tauA = 1, tauB = 1;  // the dual objective's (relaxedObjective)
    double sumA = 0, sumB = 0;           // |a|, |b|
};

// What the device keeps of each problem between iterations and the host reads at
// checks: the decisions of relaxed_kernels.h's step (RelaxedState), per problem,
// and the row half-step's figures the column half-step's decision needs.
struct ProblemState {
    OmegaRule rule;
    double logB = 0;           // log B(G) = log sum_j b_j exp(-rb G_j) of the accepted G
    double lastObjective = 0;  // dual objective and its scale of the last accepted iterate
    double lastScale = 0;
    int haveLast = 0;
    int iterations = 0;        // accepted iterations
    long long passes = 0;      // passes over the points (undone iterations included)
    int stop = kRunning;       // RelaxedStop (relaxed_kernels.h)
    double error = 1;          // the stopping figure (relaxedError) of the last checked iteration
    // This iteration's row half-step (finishRowsKernel):
    double rowShift = 0;       // s
    double logA = 0;           // log A(F) of the new F
    double violationA = 0;     // the rows' shape violation of the input plan
    double linearA = 0;        // <a, F>
    double dFmax = 0, dFmin = 0, fMax = 0, fMin = 0;
    int rowsFinite = 1;
};

// A problem's stop beyond RelaxedStop: its stopping figure fell below the tolerance
// while its potentials are too large for the fp32 log-sum-exp to hold the plan within
// kFp32PlanAccuracy (belowPlanAccuracy): not converged, said so.
constexpr int kPrecisionFloor = 4;

// The rules every problem's decisions follow (the shared options).
struct StepRules {
    double tolerance = 0;  // 0: never converged
    int maxIterations = 0;
    int checkEvery = 1;    // accepted iterations between convergence tests (1: every one)
    int safeguard = 1;     // SolveOptions::relaxationSafeguard
    double slack = 1e-5;   // objectiveSlack: the log-sum-exp runs in fp32
    int translatedMass = 1;  // the mass violation also in TI mode (the relaxed step's criterion)
    double resolution = FLT_EPSILON;  // of the log-sum-exp's terms (the precision floor)
    double planAccuracy = 0;          // kFp32PlanAccuracy
};

// One side (rows or columns) of every problem, concatenated problem by problem.
struct Side {
    const float4* points = nullptr;  // centred coordinates (x, y, z; w unused)
    double* pot = nullptr;           // log-scalings (potentials / eps)
    const double* logW = nullptr;    // log weights
    double* target = nullptr;        // the plain half-step's log-scalings (before the shift and omega)
    double* saved = nullptr;         // the last accepted log-scalings (the safeguard's undo)
};

__device__ __forceinline__ float ex2(float x)
{
    float y;
    asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
    return y;
}

// Adds the term t (log2 units) to the online log2-sum-exp (running max m, sum s of 2^(t - m)).
__device__ __forceinline__ void lse2Add(float& m, float& s, float t)
{
    if (t > m) {
        s = fmaf(s, ex2(m - t), 1.f);
        m = t;
    } else {
        s += ex2(t - m);
    }
}

__device__ __forceinline__ float term(const float4& x, const float4& y, float s2)
{
    const float dx = x.x - y.x, dy = x.y - y.y, dz = x.z - y.z;
    return fmaf(-s2, fmaf(dx, dx, fmaf(dy, dy, dz * dz)), y.w);
}

// One plain half-step of every active problem: the own side's target log-scalings
// from the other side's, target_i = f (logW_i - LSE_j(logK_ij + potOther_j)).
// grid = (own blocks of the largest problem, problems).
template <bool ROWS>
__global__ void __launch_bounds__(kThreads)
halfStepKernel(const ProblemDesc* __restrict__ descs, Side own, Side other)
{
    const ProblemDesc d = descs[blockIdx.y];
    if (!d.active) return;
    const int ownCount = ROWS ? d.rows : d.cols;
    const int otherCount = ROWS ? d.cols : d.rows;
    const long long ownOffset = ROWS ? d.rowOffset : d.colOffset;
    const long long otherOffset = ROWS ? d.colOffset : d.rowOffset;
    const int first = blockIdx.x * kThreads;
    if (first >= ownCount) return;  // the whole block: no barrier is skipped by part of it
    const int i = first + threadIdx.x;
    const bool valid = i < ownCount;
    const float4 x = valid ? own.points[ownOffset + i] : make_float4(0.f, 0.f, 0.f, 0.f);
    __shared__ float4 tile[kThreads];
    float m = -FLT_MAX, s = 0.f;
    for (int t0 = 0; t0 < otherCount; t0 += kThreads) {
        __syncthreads();
        const int j = t0 + threadIdx.x;
        if (j < otherCount) {
            float4 y = other.points[otherOffset + j];
            double w = other.pot[otherOffset + j];
            if (d.productReference) w += other.logW[otherOffset + j];
            y.w = static_cast<float>(w * kLog2e);
            tile[threadIdx.x] = y;
        }
        __syncthreads();
        const int n = min(kThreads, otherCount - t0);
        if (n == kThreads) {
#pragma unroll 16
            for (int q = 0; q < kThreads; ++q) lse2Add(m, s, term(x, tile[q], d.s2));
        } else {
            for (int q = 0; q < n; ++q) lse2Add(m, s, term(x, tile[q], d.s2));
        }
    }
    if (!valid) return;
    const double logW = own.logW[ownOffset + i];
    double lse = (double(m) + log2(double(s))) * kLn2;
    if (d.productReference) lse += logW;
    own.target[ownOffset + i] = (ROWS ? d.fa : d.fb) * (logW - lse);
}

// The sum (Sum) or largest value (Max) of every thread's x over the block, returned to every thread.
enum class BlockOp { Sum, Max };
template <BlockOp op>
__device__ double blockReduce(double x, double* shared)
{
    for (int offset = 16; offset > 0; offset >>= 1) {
        const double y = __shfl_xor_sync(0xffffffffu, x, offset);
        x = op == BlockOp::Sum ? x + y : fmax(x, y);
    }
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    if (lane == 0) shared[warp] = x;
    __syncthreads();
    double total = op == BlockOp::Sum ? 0.0 : -INFINITY;
    for (int w = 0; w < static_cast<int>(blockDim.x / 32); ++w)
        total = op == BlockOp::Sum ? total + shared[w] : fmax(total, shared[w]);
    __syncthreads();
    return total;
}

// One side's relaxed update old -> new, summed over the block: the largest rise and fall
// of a potential, its largest and smallest value (falls and minima kept negated, so
// that every extreme is a max), the weighted linear term sum w * new, and how many new
// values are not finite. The row and the column finish kernels both keep these.
struct SideMoves {
    double rise = -INFINITY, fall = -INFINITY, top = -INFINITY, bottom = -INFINITY;
    double linear = 0, bad = 0;

    __device__ void add(double before, double after, double logW)
    {
        bad += isfinite(after) ? 0.0 : 1.0;
        rise = fmax(rise, after - before);
        fall = fmax(fall, before - after);
        top = fmax(top, after);
        bottom = fmax(bottom, -after);
        linear += exp(logW) * after;
    }

    __device__ void reduce(double* sharedM)
    {
        linear = blockReduce<BlockOp::Sum>(linear, sharedM);
        bad = blockReduce<BlockOp::Sum>(bad, sharedM);
        rise = blockReduce<BlockOp::Max>(rise, sharedM);
        fall = blockReduce<BlockOp::Max>(fall, sharedM);
        top = blockReduce<BlockOp::Max>(top, sharedM);
        bottom = blockReduce<BlockOp::Max>(bottom, sharedM);
    }
};

// The rest of the row half-step, one block per problem (O(M)), and its figures for
// the decision after the columns (the sweep of the single step, relaxed_step_device.cuh, per problem):
// the TI shift s = cs (log B(G_old) - log A(F^)) (translation_invariant.h), the new
// F = F_old + omega (F^ + s - F_old), its extremes and sums, log A(F), and the rows'
// shape violation of the input plan (F_old, G_old), whose row marginal is
// a e^{-ra F_old} e^{(1 + ra)(F_old - F^)}: both shapes normalised in logs.
__global__ void __launch_bounds__(kThreads)
finishRowsKernel(const ProblemDesc* __restrict__ descs, ProblemState* __restrict__ states, Side rows)
{
    __shared__ double sharedM[32], sharedS[32];
    const ProblemDesc& d = descs[blockIdx.x];
    if (!d.active) return;
    ProblemState& st = states[blockIdx.x];
    const long long o = d.rowOffset;
    Lse hatTarget, inTarget, inMarginal;
    for (int k = threadIdx.x; k < d.rows; k += blockDim.x) {
        const double fOld = rows.pot[o + k], fHat = rows.target[o + k], logW = rows.logW[o + k];
        const double logT = logW - d.ra * fOld;
        hatTarget.add(logW - d.ra * fHat);
        inTarget.add(logT);
        inMarginal.add(logT + (1.0 + d.ra) * (fOld - fHat));
    }
    const double logAHat = blockLogSumExp(hatTarget, sharedM, sharedS);
    const double lt = blockLogSumExp(inTarget, sharedM, sharedS);
    const double lm = blockLogSumExp(inMarginal, sharedM, sharedS);
    const double s = d.translate ? d.cs * (st.logB - logAHat) : 0.0;
    const double w = d.omega;
    double violation = 0;
    SideMoves moves;
    Lse newTarget;
    for (int k = threadIdx.x; k < d.rows; k += blockDim.x) {
        const double fOld = rows.pot[o + k], fHat = rows.target[o + k], logW = rows.logW[o + k];
        const double logT = logW - d.ra * fOld;
        violation += fabs(exp(logT + (1.0 + d.ra) * (fOld - fHat) - lm) - exp(logT - lt));
        const double fNew = fOld + w * (fHat + s - fOld);
        rows.pot[o + k] = fNew;
        moves.add(fOld, fNew, logW);
        newTarget.add(logW - d.ra * fNew);
    }
    violation = blockReduce<BlockOp::Sum>(violation, sharedM);
    moves.reduce(sharedM);
    const double logA = blockLogSumExp(newTarget, sharedM, sharedS);
    if (threadIdx.x != 0) return;
    st.rowShift = s;
    st.logA = logA;
    st.violationA = violation;
    st.linearA = moves.linear;
    st.dFmax = moves.rise;
    st.dFmin = -moves.fall;
    st.fMax = moves.top;
    st.fMin = -moves.bottom;
    st.rowsFinite = moves.bad == 0.0 ? 1 : 0;
}

// The rest of the column half-step and the problem's decision on the iteration, one
// block per problem (O(M + N)): the TI shift t = ct (log A(F) - log B(G^)), the new
// G = G_old + omega (G^ + t - G_old), the columns' shape violation of the new plan
// (its column marginal is b e^{G - G^ / fb}, normalised in logs against b e^{-rb G}),
// then relaxed_kernels.cu's decision with the shared rules (relaxed_rules.h): the
// safeguard's undo and omega (OmegaRule), the stopping figure (relaxedError) every
// rules.checkEvery accepted iterations, not finite, the cap; then the commit (keep
// the iterate, or put the last accepted one back).
__global__ void __launch_bounds__(kThreads)
finishColumnsKernel(ProblemDesc* __restrict__ descs, ProblemState* __restrict__ states, Side cols, Side rows,
                    StepRules rules)
{
    __shared__ double sharedM[32], sharedS[32];
    __shared__ int accept;
    ProblemDesc& d = descs[blockIdx.x];
    if (!d.active) return;
    ProblemState& st = states[blockIdx.x];
    const long long o = d.colOffset;
    Lse hatTarget;
    for (int k = threadIdx.x; k < d.cols; k += blockDim.x) hatTarget.add(cols.logW[o + k] - d.rb * cols.target[o + k]);
    const double logBHat = blockLogSumExp(hatTarget, sharedM, sharedS);
    const double t = d.translate ? d.ct * (st.logA - logBHat) : 0.0;
    const double w = d.omega;
    SideMoves moves;
    Lse colTarget, colMarginal;
    for (int k = threadIdx.x; k < d.cols; k += blockDim.x) {
        const double gOld = cols.pot[o + k], gHat = cols.target[o + k], logW = cols.logW[o + k];
        const double gNew = gOld + w * (gHat + t - gOld);
        cols.pot[o + k] = gNew;
        moves.add(gOld, gNew, logW);
        colTarget.add(logW - d.rb * gNew);
        colMarginal.add(gNew + logW - gHat / d.fb);
    }
    const double logTargetB = blockLogSumExp(colTarget, sharedM, sharedS);
    const double logMass = blockLogSumExp(colMarginal, sharedM, sharedS);
    double violation = 0;
    for (int k = threadIdx.x; k < d.cols; k += blockDim.x) {
        const double g = cols.pot[o + k], gHat = cols.target[o + k], logW = cols.logW[o + k];
        violation += fabs(exp(g + logW - gHat / d.fb - logMass) - exp(logW - d.rb * g - logTargetB));
    }
    violation = blockReduce<BlockOp::Sum>(violation, sharedM);
    moves.reduce(sharedM);
    if (threadIdx.x == 0) {
        RelaxedTotals totals;
        totals.logTargetA = st.logA;
        totals.logTargetB = logTargetB;
        totals.sumA = d.sumA;
        totals.sumB = d.sumB;
        totals.linearA = st.linearA;
        totals.linearB = moves.linear;
        totals.mass = exp(logMass);
        totals.dFmax = st.dFmax;
        totals.dFmin = st.dFmin;
        totals.fMax = st.fMax;
        totals.fMin = st.fMin;
        totals.dGmax = moves.rise;
        totals.dGmin = -moves.fall;
        totals.gMax = moves.top;
        totals.gMin = -moves.bottom;
        const RelaxedObjective objective =
            relaxedObjective(totals, d.eps, d.tauA, d.tauB, d.ra, d.rb, d.translate != 0);
        const double change = relaxedChange(totals);
        const bool finite = isfinite(st.rowShift) && isfinite(t) && isfinite(objective.value) && st.rowsFinite &&
                            moves.bad == 0.0;
        const bool safeguard = rules.safeguard && w != 1.0;
        st.passes += 2;
        const StepDecision decision = decideStep(st, finite, safeguard, objective, change, rules.slack);
        if (decision == StepDecision::Accept) {
            st.logB = logTargetB;
            if (st.iterations % rules.checkEvery == 0) {
                // StoppingRule::Potentials: relaxed_kernels.cu's criterion; the loops without
                // the relaxed step (potential_check.h) leave the mass out in TI mode.
                const bool unbalanced = isfinite(d.tauA) || isfinite(d.tauB);
                const double mass = d.translate && !rules.translatedMass
                                        ? 0.0
                                        : relaxedMassViolation(totals, d.ra, d.rb, unbalanced);
                st.error = relaxedError(change, st.violationA, violation, mass);
                if (rules.tolerance > 0 && st.error < rules.tolerance)
                    st.stop = belowPlanAccuracy(rules.resolution, fmax(fabs(totals.fMax), fabs(totals.fMin)),
                                                fmax(fabs(totals.gMax), fabs(totals.gMin)), rules.planAccuracy)
                                  ? kPrecisionFloor
                                  : kConverged;
            }
            if (st.stop == kRunning && st.iterations >= rules.maxIterations) st.stop = kIterationCap;
        }
        d.omega = st.rule.omega;
        if (st.stop != kRunning) d.active = 0;
        accept = decision == StepDecision::Accept ? 1 : 0;
    }
    __syncthreads();
    const bool keep = accept != 0;
    for (int k = threadIdx.x; k < d.rows; k += blockDim.x) {
        const long long i = d.rowOffset + k;
        if (keep) rows.saved[i] = rows.pot[i];
        else rows.pot[i] = rows.saved[i];
    }
    for (int k = threadIdx.x; k < d.cols; k += blockDim.x) {
        if (keep) cols.saved[o + k] = cols.pot[o + k];
        else cols.pot[o + k] = cols.saved[o + k];
    }
}

using Clock = std::chrono::steady_clock;
double secondsSince(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

void upload(void* dst, const void* src, std::size_t bytes, cudaStream_t stream)
{
    if (bytes) UOT_CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyHostToDevice, stream));
}

// Appends the points of one side, centred on `centre`, as float4 (unused coordinates 0).
void appendPoints(const double* points, std::size_t count, std::size_t dim, const double (&centre)[kMaxDim],
                  std::vector<float4>& out)
{
    for (std::size_t i = 0; i < count; ++i) {
        float c[kMaxDim] = {0.f, 0.f, 0.f};
        for (std::size_t k = 0; k < dim; ++k) c[k] = static_cast<float>(points[i * dim + k] - centre[k]);
        out.push_back(make_float4(c[0], c[1], c[2], 0.f));
    }
}

void appendLogs(std::span<const double> weights, std::vector<double>& out)
{
    for (double w : weights) out.push_back(std::log(w));
}

// The point-cloud cost of problem `index`; throws InvalidArgument naming it when
// the batched solver does not take it.
const PointCloudCost& checkedCloud(const UotProblem& problem, std::size_t index)
{
    const std::string which = "batched solve, problem " + std::to_string(index) + ": ";
    try {
        validateProblem(problem);
    } catch (const Error& e) {
        throw Error(e.code(), which + e.what());
    }
    const auto* cloud = std::get_if<PointCloudCost>(&problem.cost);
    if (!cloud)
        throw Error(ErrorCode::InvalidArgument, which + "gpu-batched takes point-cloud costs only (palette problems)");
    if (cloud->dim < 1 || cloud->dim > static_cast<std::size_t>(kMaxDim))
        throw Error(ErrorCode::InvalidArgument, which + "gpu-batched takes points of dimension 1 to 3, not " +
                                                    std::to_string(cloud->dim));
    if (cloud->rows > static_cast<std::size_t>(std::numeric_limits<int>::max() - kThreads) ||
        cloud->cols > static_cast<std::size_t>(std::numeric_limits<int>::max() - kThreads))
        throw Error(ErrorCode::InvalidArgument, which + "too many points");
    return *cloud;
}

// The group's side of the shared loop (device_loop.h): every problem decides on
// the device (finishColumnsKernel), so the loop launches chunks of iterations and reads
// the problems' states back at checks. The group runs while one of them does.
class GroupPasses final : public DeviceDecidedPasses {
public:
    GroupPasses(cudaStream_t stream, dim3 grid, std::size_t count, ProblemDesc* descs, ProblemState* states,
                ProblemState* host, Side rows, Side cols, StepRules rules)
        : m_stream(stream), m_grid(grid), m_count(count), m_descs(descs), m_states(states), m_host(host), m_rows(rows),
          m_cols(cols), m_rules(rules)
    {
    }
    void startChunk() override { UOT_CUDA_CHECK(cudaEventRecord(m_chunkStart.get(), m_stream)); }
    void launch(int count) override
    {
        const unsigned problems = static_cast<unsigned>(m_count);
        for (int k = 0; k < count; ++k) {
            halfStepKernel<true><<<m_grid, kThreads, 0, m_stream>>>(m_descs, m_rows, m_cols);
            UOT_CUDA_CHECK_LAUNCH();
            finishRowsKernel<<<problems, kThreads, 0, m_stream>>>(m_descs, m_states, m_rows);
            UOT_CUDA_CHECK_LAUNCH();
            halfStepKernel<false><<<m_grid, kThreads, 0, m_stream>>>(m_descs, m_cols, m_rows);
            UOT_CUDA_CHECK_LAUNCH();
            finishColumnsKernel<<<problems, kThreads, 0, m_stream>>>(m_descs, m_states, m_cols, m_rows, m_rules);
            UOT_CUDA_CHECK_LAUNCH();
        }
    }
    DeviceCheck check(bool) override
    {
        UOT_CUDA_CHECK(cudaEventRecord(m_chunkEnd.get(), m_stream));
        readStates();
        float ms = 0;
        UOT_CUDA_CHECK(cudaEventElapsedTime(&ms, m_chunkStart.get(), m_chunkEnd.get()));
        m_checks.resize(m_count);
        for (std::size_t p = 0; p < m_count; ++p) {
            const ProblemState& st = m_host[p];
            ProblemCheck& pc = m_checks[p];
            pc.iterations = st.iterations;
            pc.passes = st.passes;
            pc.error = st.error;
            // The group's stop only says whether it runs on: a problem at the precision floor has stopped.
            pc.stop = st.stop == kPrecisionFloor ? DeviceStop::Converged : deviceStopOf(st.stop);
        }
        DeviceCheck c = groupCheck(m_checks);
        c.chunkSeconds = ms * 1e-3;
        return c;
    }
    void readStates()
    {
        UOT_CUDA_CHECK(cudaMemcpyAsync(m_host, m_states, m_count * sizeof(ProblemState), cudaMemcpyDeviceToHost,
                                       m_stream));
        UOT_CUDA_CHECK(cudaStreamSynchronize(m_stream));
    }

private:
    cudaStream_t m_stream;
    dim3 m_grid;
    std::size_t m_count;
    ProblemDesc* m_descs;
    ProblemState* m_states;
    ProblemState* m_host;
    Side m_rows, m_cols;
    StepRules m_rules;
    Event m_chunkStart, m_chunkEnd;
    std::vector<ProblemCheck> m_checks;
};

class BatchedSolver final : public BatchedUotSolver {
public:
    std::string name() const override { return kName; }

    std::vector<SolveResult> solveBatch(std::span<const UotProblem> problems, const SolveOptions& options,
                                        const SolveControl& control) override
    {
        if (problems.empty()) return {};
        if (problems.size() > static_cast<std::size_t>(kMaxProblems))
            throw Error(ErrorCode::InvalidArgument, "gpu-batched takes at most " + std::to_string(kMaxProblems) +
                                                        " problems per call (got " + std::to_string(problems.size()) + ")");
        if (options.maxIterations < 1) throw Error(ErrorCode::InvalidArgument, "maximum iterations must be >= 1");
        if (options.checkEvery < 1) throw Error(ErrorCode::InvalidArgument, "check interval must be >= 1");
        const auto setupStart = Clock::now();
        const std::size_t count = problems.size();
        const bool relax = options.acceleration != Acceleration::None;

        // Host side: descriptors, starting states, centred points and log weights, concatenated.
        std::vector<ProblemDesc> descs(count);
        std::vector<ProblemState> states(count);
        std::vector<float4> rowPoints, colPoints;
        std::vector<double> logA, logB;
        int maxOwnBlocks = 1;
        for (std::size_t p = 0; p < count; ++p) {
            const UotProblem& problem = problems[p];
            const PointCloudCost& cloud = checkedCloud(problem, p);
            double centre[kMaxDim] = {0, 0, 0};
            for (std::size_t k = 0; k < cloud.dim; ++k) {
                double sum = 0;
                for (std::size_t i = 0; i < cloud.rows; ++i) sum += cloud.x[i * cloud.dim + k];
                for (std::size_t j = 0; j < cloud.cols; ++j) sum += cloud.y[j * cloud.dim + k];
                centre[k] = sum / double(cloud.rows + cloud.cols);
            }
            ProblemDesc& d = descs[p];
            d.rowOffset = static_cast<long long>(rowPoints.size());
            d.colOffset = static_cast<long long>(colPoints.size());
            d.rows = static_cast<int>(cloud.rows);
            d.cols = static_cast<int>(cloud.cols);
            d.s2 = static_cast<float>(cloud.scale / problem.eps * kLog2e);
            d.productReference = problem.reference == ReferenceMeasure::Product ? 1 : 0;
            d.fa = problem.exponentA();
            d.fb = problem.exponentB();
            d.active = 1;
            const TranslationCoefficients ti = translationCoefficients(problem);
            d.translate = options.mode == IterationMode::TranslationInvariant && ti.active ? 1 : 0;
            d.ra = ti.ra;
            d.rb = ti.rb;
            d.cs = ti.cs;
            d.ct = ti.ct;
            ProblemState& st = states[p];
            st.rule.start(options.acceleration,
                          options.acceleration == Acceleration::Auto ? options.autoInitialOmega : options.omega);
            d.omega = st.rule.omega;
            d.eps = problem.eps;
            d.tauA = problem.tauA;
            d.tauB = problem.tauB;
            for (double w : problem.a) d.sumA += w;
            for (double w : problem.b) d.sumB += w;
            st.logB = std::log(d.sumB);  // log B(G) of the cold start G = 0
            appendPoints(cloud.x, cloud.rows, cloud.dim, centre, rowPoints);
            appendPoints(cloud.y, cloud.cols, cloud.dim, centre, colPoints);
            appendLogs(problem.a, logA);
            appendLogs(problem.b, logB);
            const int blocks = static_cast<int>((std::max(cloud.rows, cloud.cols) + kThreads - 1) / kThreads);
            maxOwnBlocks = std::max(maxOwnBlocks, blocks);
        }

        DeviceGuard guard(options.device);
        if (!m_state || m_state->device != options.device) {
            m_state.reset();
            m_state = std::make_unique<State>(options.device);
        }
        State& state = *m_state;
        AllocationTracker& tracker = state.tracker;
        tracker.resetPeak();
        const cudaStream_t st = state.stream.get();
        // Buffers grow and are kept between calls: a cudaFree would wait for the
        // whole device (the batch engine's mapping runs on it meanwhile).
        reserve(state.descs, count, tracker);
        reserve(state.states, count, tracker);
        reserve(state.rowPoints, rowPoints.size(), tracker);
        reserve(state.colPoints, colPoints.size(), tracker);
        reserve(state.logA, logA.size(), tracker);
        reserve(state.logB, logB.size(), tracker);
        reserve(state.potU, logA.size(), tracker);
        reserve(state.potV, logB.size(), tracker);
        reserve(state.targetU, logA.size(), tracker);
        reserve(state.targetV, logB.size(), tracker);
        reserve(state.savedU, logA.size(), tracker);
        reserve(state.savedV, logB.size(), tracker);
        if (state.hostStateCount < count) {
            state.hostStates.allocate(count);
            state.hostStateCount = count;
        }
        upload(state.descs.get(), descs.data(), count * sizeof(ProblemDesc), st);
        upload(state.states.get(), states.data(), count * sizeof(ProblemState), st);
        upload(state.rowPoints.get(), rowPoints.data(), rowPoints.size() * sizeof(float4), st);
        upload(state.colPoints.get(), colPoints.data(), colPoints.size() * sizeof(float4), st);
        upload(state.logA.get(), logA.data(), logA.size() * sizeof(double), st);
        upload(state.logB.get(), logB.data(), logB.size() * sizeof(double), st);
        UOT_CUDA_CHECK(cudaMemsetAsync(state.potU.get(), 0, logA.size() * sizeof(double), st));  // u = v = 1
        UOT_CUDA_CHECK(cudaMemsetAsync(state.potV.get(), 0, logB.size() * sizeof(double), st));
        UOT_CUDA_CHECK(cudaMemsetAsync(state.savedU.get(), 0, logA.size() * sizeof(double), st));
        UOT_CUDA_CHECK(cudaMemsetAsync(state.savedV.get(), 0, logB.size() * sizeof(double), st));
        UOT_CUDA_CHECK(cudaStreamSynchronize(st));
        const double setupSeconds = secondsSince(setupStart);

        const Side rowSide{state.rowPoints.get(), state.potU.get(), state.logA.get(), state.targetU.get(),
                           state.savedU.get()};
        const Side colSide{state.colPoints.get(), state.potV.get(), state.logB.get(), state.targetV.get(),
                           state.savedV.get()};
        const dim3 grid(static_cast<unsigned>(maxOwnBlocks), static_cast<unsigned>(count));
        StepRules rules;
        rules.tolerance = options.tolerance;
        rules.maxIterations = options.maxIterations;
        // The single solves' cadence: the relaxed step tests every accepted iteration,
        // the plain loop every checkEvery (device_loop.h).
        rules.checkEvery = relax ? 1 : options.checkEvery;
        rules.safeguard = options.relaxationSafeguard ? 1 : 0;
        rules.slack = objectiveSlack(true);
        rules.translatedMass = relax ? 1 : 0;
        rules.planAccuracy = kFp32PlanAccuracy;
        GroupPasses passes(st, grid, count, state.descs.get(), state.states.get(), state.hostStates.get(), rowSide,
                           colSide, rules);
        SolveResult group;
        DeviceLoopSetup loop;
        loop.sweepsPerIteration = 2;
        loop.markNotFinite = [](SolveResult&, int) {};  // never reported for the group (each problem stops alone)
        runDeviceLoop(problems.front(), options, control, passes, loop, 0, group);
        passes.readStates();
        const double iterateSeconds = group.timings.iterateSeconds;

        std::vector<double> hostU(logA.size()), hostV(logB.size());
        UOT_CUDA_CHECK(cudaMemcpyAsync(hostU.data(), state.potU.get(), hostU.size() * sizeof(double), cudaMemcpyDeviceToHost, st));
        UOT_CUDA_CHECK(cudaMemcpyAsync(hostV.data(), state.potV.get(), hostV.size() * sizeof(double), cudaMemcpyDeviceToHost, st));
        UOT_CUDA_CHECK(cudaStreamSynchronize(st));
        const double nan = std::numeric_limits<double>::quiet_NaN();
        std::vector<SolveResult> results(count);
        for (std::size_t p = 0; p < count; ++p) {
            const ProblemDesc& d = descs[p];
            const ProblemState& ps = state.hostStates.get()[p];
            SolveResult& r = results[p];
            r.solver = kName;
            r.logU.assign(hostU.begin() + d.rowOffset, hostU.begin() + d.rowOffset + d.rows);
            r.logV.assign(hostV.begin() + d.colOffset, hostV.begin() + d.colOffset + d.cols);
            r.iterations = ps.iterations;
            r.error = ps.error;
            r.converged = ps.stop == kConverged;
            if (ps.stop == kNotFinite) {
                r.status = NumericalStatus::NotFinite;
                r.message = "a non-finite log-scaling appeared in the batched solve at iteration " +
                            std::to_string(ps.iterations);
            }
            if (ps.stop == kPrecisionFloor)
                r.message = "stopped at the precision floor of the batched solver's fp32 log-sum-exp after " +
                            std::to_string(ps.iterations) + " iterations (the plan is not within " +
                            std::to_string(kFp32PlanAccuracy) + " of the float64 plan): use a single fp64 solve";
            if (ps.stop == kRunning && group.cancelled) r.cancelled = true;
            r.passes = static_cast<std::uint64_t>(ps.passes);
            r.mode = toString(d.translate ? IterationMode::TranslationInvariant : IterationMode::Plain);
            r.acceleration = toString(relax ? options.acceleration : Acceleration::None);
            r.omega = relax ? ps.rule.omega : 1.0;
            r.rejectedSteps = ps.rule.rejections;
            r.mass = r.marginalErrorA = r.marginalErrorB = r.objective = nan;
            r.peakDeviceBytes = tracker.peak();
            // The batch shares one setup and one loop: each result reports them.
            r.timings.setupSeconds = setupSeconds;
            r.timings.iterateSeconds = iterateSeconds;
            r.timings.msPerIteration = group.iterations > 0 ? 1e3 * iterateSeconds / group.iterations : 0.0;
        }
        return results;
    }

private:
    // Device buffers kept between calls (grown when a batch needs more).
    struct State {
        explicit State(int device) : device(device) {}
        int device;
        AllocationTracker tracker;
        Stream stream;
        DeviceBuffer<ProblemDesc> descs;
        DeviceBuffer<ProblemState> states;
        DeviceBuffer<float4> rowPoints, colPoints;
        DeviceBuffer<double> logA, logB, potU, potV, targetU, targetV, savedU, savedV;
        PinnedBuffer<ProblemState> hostStates;
        std::size_t hostStateCount = 0;
    };

    template <typename T>
    static void reserve(DeviceBuffer<T>& buffer, std::size_t count, AllocationTracker& tracker)
    {
        if (buffer.size() < count) buffer.allocate(count + count / 4, &tracker);
    }

    std::unique_ptr<State> m_state;
};

}  // namespace
}  // namespace detail

std::unique_ptr<BatchedUotSolver> createBatchedSolver()
{
    const std::string reason = unavailableReason();
    if (!reason.empty()) throw Error(ErrorCode::Unavailable, reason);
    return std::make_unique<detail::BatchedSolver>();
}

}  // namespace uot::gpu
