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

#include "core/transport/relaxed_rules.h"
#include "core/transport/translation_invariant.h"
#include "core/transport/uot_error.h"
#include "gpu/cuda_support.h"
#include "gpu/device_loop.h"
#include "gpu/gpu_backend.h"
#include "gpu/block_log_sum_exp.cuh"
#include "gpu/relaxed_kernels.h"

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
};

// What the device keeps of each problem between iterations and the host reads at checks.
struct ProblemState {
    OmegaRule rule;
    double logB = 0;        // TI: log B(G) = log sum_j b_j exp(-rb G_j) of the current G
    double rowChange = 0;   // max |F^ + s - F_old| of this iteration's row half-step
    double error = 1;       // max of the row and column changes of the last iteration
    double windowChange = INFINITY;  // the change at the start of the growth test's window
    int iterations = 0;
    int stop = kRunning;    // RelaxedStop (relaxed_kernels.h)
};

// The rules every problem's decisions follow (the shared options).
struct StepRules {
    double tolerance = 0;  // 0: never converged
    int maxIterations = 0;
    int window = 10;       // the residual-growth test's period (the check interval)
    int relax = 0;         // over-relaxed: OmegaRule (relaxed_rules.h) chooses omega
};

// One side (rows or columns) of every problem, concatenated problem by problem.
struct Side {
    const float4* points = nullptr;  // centred coordinates (x, y, z; w unused)
    double* pot = nullptr;           // log-scalings (potentials / eps)
    const double* logW = nullptr;    // log weights
    double* target = nullptr;        // the plain half-step's log-scalings (before the shift and omega)
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

// The largest value of the block (every thread's x), returned to every thread.
__device__ double blockMax(double x, double* shared)
{
    for (int offset = 16; offset > 0; offset >>= 1) x = fmax(x, __shfl_xor_sync(0xffffffffu, x, offset));
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    if (lane == 0) shared[warp] = x;
    __syncthreads();
    double total = -INFINITY;
    for (int w = 0; w < static_cast<int>(blockDim.x / 32); ++w) total = fmax(total, shared[w]);
    __syncthreads();
    return total;
}

// |new - old| with NaN and infinity as infinity (fmax would drop a NaN).
__device__ double changeOf(double x, double old)
{
    const double delta = fabs(x - old);
    return delta <= DBL_MAX ? delta : INFINITY;
}

// The rest of a half-step, one block per problem (O(M + N)): the TI shift of the
// targets (translation_invariant.h: s = cs (log B(G) - log A(F^)) for the rows,
// t = ct (log A(F) - log B(G^)) for the columns), then pot = pot + omega (target +
// shift - pot) and the largest change. After the columns, the problem's
// decisions for the iteration (the device's counterpart of relaxed_kernels.h's
// step, for many small problems): not finite, converged (change <= tolerance),
// the iteration cap, and OmegaRule's omega (shrunk when the change grew over a window).
template <bool ROWS>
__global__ void __launch_bounds__(kThreads)
finishKernel(ProblemDesc* __restrict__ descs, ProblemState* __restrict__ states, Side own, Side other, StepRules rules)
{
    __shared__ double sharedM[32], sharedS[32];
    ProblemDesc& d = descs[blockIdx.x];
    if (!d.active) return;
    ProblemState& st = states[blockIdx.x];
    const int ownCount = ROWS ? d.rows : d.cols;
    const long long ownOffset = ROWS ? d.rowOffset : d.colOffset;
    double shift = 0;
    if (d.translate) {
        Lse target;
        for (int k = threadIdx.x; k < ownCount; k += blockDim.x)
            target.add(own.logW[ownOffset + k] - (ROWS ? d.ra : d.rb) * own.target[ownOffset + k]);
        const double logTarget = blockLogSumExp(target, sharedM, sharedS);
        if (ROWS) {
            shift = d.cs * (st.logB - logTarget);
        } else {
            Lse rowsNew;  // log A(F) of the new rows
            for (int k = threadIdx.x; k < d.rows; k += blockDim.x)
                rowsNew.add(other.logW[d.rowOffset + k] - d.ra * other.pot[d.rowOffset + k]);
            shift = d.ct * (blockLogSumExp(rowsNew, sharedM, sharedS) - logTarget);
        }
    }
    const double w = d.omega;
    double change = 0;
    Lse colsNew;  // log B(G) of the new columns (TI)
    for (int k = threadIdx.x; k < ownCount; k += blockDim.x) {
        const double old = own.pot[ownOffset + k];
        const double x = own.target[ownOffset + k] + shift;
        change = fmax(change, changeOf(x, old));
        const double next = old + w * (x - old);
        own.pot[ownOffset + k] = next;
        if (!ROWS && d.translate) colsNew.add(own.logW[ownOffset + k] - d.rb * next);
    }
    if (!isfinite(shift)) change = INFINITY;
    change = blockMax(change, sharedM);
    if (ROWS) {
        if (threadIdx.x == 0) st.rowChange = change;
        return;
    }
    const double logB = d.translate ? blockLogSumExp(colsNew, sharedM, sharedS) : 0.0;
    if (threadIdx.x != 0) return;
    st.logB = logB;
    st.iterations += 1;
    const double error = fmax(st.rowChange, change);
    st.error = error;
    if (!(error <= DBL_MAX)) {
        st.stop = kNotFinite;
    } else if (rules.tolerance > 0 && error <= rules.tolerance) {
        st.stop = kConverged;
    } else if (st.iterations >= rules.maxIterations) {
        st.stop = kIterationCap;
    } else if (rules.relax) {
        if (st.iterations % rules.window == 0) {
            if (d.omega > 1 && error > st.windowChange) st.rule.rejected();  // the residual grew: relax less
            st.windowChange = error;
        }
        st.rule.accepted(error);  // the rate, while nothing was rejected
        d.omega = st.rule.omega;
    }
    if (st.stop != kRunning) d.active = 0;
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
// the device (finishKernel), so the loop launches chunks of iterations and reads
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
            finishKernel<true><<<problems, kThreads, 0, m_stream>>>(m_descs, m_states, m_rows, m_cols, m_rules);
            UOT_CUDA_CHECK_LAUNCH();
            halfStepKernel<false><<<m_grid, kThreads, 0, m_stream>>>(m_descs, m_cols, m_rows);
            UOT_CUDA_CHECK_LAUNCH();
            finishKernel<false><<<problems, kThreads, 0, m_stream>>>(m_descs, m_states, m_cols, m_rows, m_rules);
            UOT_CUDA_CHECK_LAUNCH();
        }
    }
    DeviceCheck check(bool) override
    {
        UOT_CUDA_CHECK(cudaEventRecord(m_chunkEnd.get(), m_stream));
        readStates();
        float ms = 0;
        UOT_CUDA_CHECK(cudaEventElapsedTime(&ms, m_chunkStart.get(), m_chunkEnd.get()));
        DeviceCheck c;
        c.chunkSeconds = ms * 1e-3;
        c.marginalA = c.marginalB = std::numeric_limits<double>::quiet_NaN();
        bool running = false, capped = false;
        int iterations = 0;
        double worst = 0;
        for (std::size_t p = 0; p < m_count; ++p) {
            const ProblemState& st = m_host[p];
            iterations = std::max(iterations, st.iterations);
            running = running || st.stop == kRunning;
            capped = capped || st.stop == kIterationCap;
            if (st.stop == kRunning) worst = std::max(worst, st.error);
        }
        c.iterations = iterations;
        c.passes = 2LL * iterations;
        c.error = worst;
        // A problem that stopped on a non-finite value stops alone (its result says so).
        c.stop = running ? DeviceStop::Running : capped ? DeviceStop::IterationCap : DeviceStop::Converged;
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
            d.omega = relax ? st.rule.omega : 1.0;
            double massB = 0;  // log B(G) of the cold start G = 0
            for (double w : problem.b) massB += w;
            st.logB = std::log(massB);
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
        UOT_CUDA_CHECK(cudaStreamSynchronize(st));
        const double setupSeconds = secondsSince(setupStart);

        const Side rowSide{state.rowPoints.get(), state.potU.get(), state.logA.get(), state.targetU.get()};
        const Side colSide{state.colPoints.get(), state.potV.get(), state.logB.get(), state.targetV.get()};
        const dim3 grid(static_cast<unsigned>(maxOwnBlocks), static_cast<unsigned>(count));
        StepRules rules;
        rules.tolerance = options.tolerance;
        rules.maxIterations = options.maxIterations;
        rules.window = options.checkEvery;
        rules.relax = relax ? 1 : 0;
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
            if (ps.stop == kRunning && group.cancelled) r.cancelled = true;
            r.passes = 2 * static_cast<std::uint64_t>(r.iterations);
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
        DeviceBuffer<double> logA, logB, potU, potV, targetU, targetV;
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
