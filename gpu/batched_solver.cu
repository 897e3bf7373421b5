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

#include "core/transport/uot_error.h"
#include "gpu/cuda_support.h"
#include "gpu/gpu_backend.h"

namespace uot::gpu {

namespace detail {
namespace {

constexpr int kThreads = 256;  // own points per block, and other points per shared-memory tile
constexpr double kLn2 = 0.69314718055994530942;
constexpr double kLog2e = 1.44269504088896340736;
constexpr int kMaxDim = 3;
constexpr int kMaxProblems = 65535;  // grid.y
constexpr int kUnrelaxedChecks = 3;  // checks at omega = 1 before the rate is read
constexpr double kMaxOmega = 1.9;
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
    double omega = 1;         // over-relaxation of both half-steps
    int active = 0;           // 0: converged, cancelled or failed: its blocks return at once
};

// One side (rows or columns) of every problem, concatenated problem by problem.
struct Side {
    const float4* points = nullptr;  // centred coordinates (x, y, z; w unused)
    double* pot = nullptr;           // log-scalings (potentials / eps)
    const double* logW = nullptr;    // log weights
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

// One half-step of every active problem: the own side's log-scalings from the
// other side's, pot_i <- pot_i + omega (f (logW_i - LSE_j(logK_ij + potOther_j)) - pot_i).
// grid = (own blocks of the largest problem, problems). With `change` set, the
// largest |unrelaxed update - old| of each problem is max-reduced into it
// (non-negative doubles compare as their bit patterns).
template <bool ROWS>
__global__ void __launch_bounds__(kThreads)
halfStepKernel(const ProblemDesc* __restrict__ descs, Side own, Side other, unsigned long long* __restrict__ change)
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
    const double target = (ROWS ? d.fa : d.fb) * (logW - lse);
    const double old = own.pot[ownOffset + i];
    own.pot[ownOffset + i] = old + d.omega * (target - old);
    if (change) {
        double delta = fabs(target - old);
        if (!(delta <= DBL_MAX)) delta = INFINITY;  // NaN or inf: reported as not finite
        atomicMax(change + blockIdx.y, static_cast<unsigned long long>(__double_as_longlong(delta)));
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

        // Host side: descriptors, centred points and log weights, concatenated.
        std::vector<ProblemDesc> descs(count);
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
            d.omega = 1;
            d.active = 1;
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
        reserve(state.rowPoints, rowPoints.size(), tracker);
        reserve(state.colPoints, colPoints.size(), tracker);
        reserve(state.logA, logA.size(), tracker);
        reserve(state.logB, logB.size(), tracker);
        reserve(state.potU, logA.size(), tracker);
        reserve(state.potV, logB.size(), tracker);
        reserve(state.change, count, tracker);
        if (state.hostChangeCount < count) {
            state.hostChange.allocate(count);
            state.hostChangeCount = count;
        }
        DeviceBuffer<ProblemDesc>& deviceDescs = state.descs;
        DeviceBuffer<float4>&devRowPoints = state.rowPoints, &devColPoints = state.colPoints;
        DeviceBuffer<double>&devLogA = state.logA, &devLogB = state.logB, &potU = state.potU, &potV = state.potV;
        DeviceBuffer<unsigned long long>& change = state.change;
        PinnedBuffer<unsigned long long>& hostChange = state.hostChange;
        const std::size_t changeBytes = count * sizeof(unsigned long long);
        upload(deviceDescs.get(), descs.data(), count * sizeof(ProblemDesc), st);
        upload(devRowPoints.get(), rowPoints.data(), rowPoints.size() * sizeof(float4), st);
        upload(devColPoints.get(), colPoints.data(), colPoints.size() * sizeof(float4), st);
        upload(devLogA.get(), logA.data(), logA.size() * sizeof(double), st);
        upload(devLogB.get(), logB.data(), logB.size() * sizeof(double), st);
        UOT_CUDA_CHECK(cudaMemsetAsync(potU.get(), 0, logA.size() * sizeof(double), st));  // u = v = 1
        UOT_CUDA_CHECK(cudaMemsetAsync(potV.get(), 0, logB.size() * sizeof(double), st));
        UOT_CUDA_CHECK(cudaStreamSynchronize(st));
        const double setupSeconds = secondsSince(setupStart);

        const Side rowSide{devRowPoints.get(), potU.get(), devLogA.get()};
        const Side colSide{devColPoints.get(), potV.get(), devLogB.get()};
        const dim3 grid(static_cast<unsigned>(maxOwnBlocks), static_cast<unsigned>(count));

        std::vector<SolveResult> results(count);
        std::vector<double> previousError(count, std::numeric_limits<double>::infinity());
        std::vector<int> checks(count, 0);
        const bool relax = options.acceleration != Acceleration::None;
        std::size_t active = count;
        bool cancelled = false;
        int iteration = 0;
        const auto iterateStart = Clock::now();
        while (active > 0 && iteration < options.maxIterations) {
            if (control.cancel && control.cancel->load(std::memory_order_relaxed)) {
                cancelled = true;
                break;
            }
            const bool check = (iteration + 1) % options.checkEvery == 0 || iteration + 1 == options.maxIterations;
            if (check) UOT_CUDA_CHECK(cudaMemsetAsync(change.get(), 0, changeBytes, st));
            unsigned long long* sink = check ? change.get() : nullptr;
            halfStepKernel<true><<<grid, kThreads, 0, st>>>(deviceDescs.get(), rowSide, colSide, sink);
            UOT_CUDA_CHECK_LAUNCH();
            halfStepKernel<false><<<grid, kThreads, 0, st>>>(deviceDescs.get(), colSide, rowSide, sink);
            UOT_CUDA_CHECK_LAUNCH();
            ++iteration;
            if (!check) continue;
            UOT_CUDA_CHECK(cudaMemcpyAsync(hostChange.get(), change.get(), changeBytes, cudaMemcpyDeviceToHost, st));
            UOT_CUDA_CHECK(cudaStreamSynchronize(st));
            double worst = 0;
            for (std::size_t p = 0; p < count; ++p) {
                ProblemDesc& d = descs[p];
                if (!d.active) continue;
                unsigned long long bits = hostChange.get()[p];
                double error = 0;
                static_assert(sizeof(bits) == sizeof(error));
                std::memcpy(&error, &bits, sizeof(error));
                SolveResult& r = results[p];
                r.iterations = iteration;
                r.error = error;
                worst = std::max(worst, error);
                if (!std::isfinite(error)) {
                    r.status = NumericalStatus::NotFinite;
                    r.message = "a non-finite log-scaling appeared in the batched solve";
                    d.active = 0;
                } else if (options.tolerance > 0 && error <= options.tolerance) {
                    r.converged = true;
                    d.active = 0;
                } else if (relax) {
                    ++checks[p];
                    if (d.omega == 1 && checks[p] == kUnrelaxedChecks && error < previousError[p]) {
                        const double rate = std::pow(error / previousError[p], 1.0 / options.checkEvery);
                        d.omega = options.acceleration == Acceleration::Relax
                                      ? std::clamp(options.omega, 1.0, kMaxOmega)
                                      : std::clamp(2.0 / (1.0 + std::sqrt(1.0 - rate)), 1.0, kMaxOmega);
                    } else if (d.omega > 1 && error > previousError[p]) {
                        d.omega = 1 + (d.omega - 1) / 2;  // the residual grew: relax less
                        ++r.rejectedSteps;
                    }
                }
                previousError[p] = error;
                if (!d.active) --active;
            }
            upload(deviceDescs.get(), descs.data(), count * sizeof(ProblemDesc), st);
            if (control.onProgress) {
                SolveProgress progress;
                progress.iteration = iteration;
                progress.error = worst;
                progress.marginalErrorA = progress.marginalErrorB = std::numeric_limits<double>::quiet_NaN();
                progress.elapsedSeconds = secondsSince(iterateStart);
                progress.secondsPerIteration = progress.elapsedSeconds / iteration;
                control.onProgress(progress);
            }
        }
        UOT_CUDA_CHECK(cudaStreamSynchronize(st));
        const double iterateSeconds = secondsSince(iterateStart);

        std::vector<double> hostU(logA.size()), hostV(logB.size());
        UOT_CUDA_CHECK(cudaMemcpyAsync(hostU.data(), potU.get(), hostU.size() * sizeof(double), cudaMemcpyDeviceToHost, st));
        UOT_CUDA_CHECK(cudaMemcpyAsync(hostV.data(), potV.get(), hostV.size() * sizeof(double), cudaMemcpyDeviceToHost, st));
        UOT_CUDA_CHECK(cudaStreamSynchronize(st));
        const double nan = std::numeric_limits<double>::quiet_NaN();
        for (std::size_t p = 0; p < count; ++p) {
            const ProblemDesc& d = descs[p];
            SolveResult& r = results[p];
            r.solver = kName;
            r.logU.assign(hostU.begin() + d.rowOffset, hostU.begin() + d.rowOffset + d.rows);
            r.logV.assign(hostV.begin() + d.colOffset, hostV.begin() + d.colOffset + d.cols);
            if (d.active) r.iterations = iteration;  // stopped by the cap or by cancellation
            if (d.active && cancelled) r.cancelled = true;
            r.passes = 2 * static_cast<std::uint64_t>(r.iterations);
            r.mode = toString(IterationMode::Plain);
            r.acceleration = toString(relax ? options.acceleration : Acceleration::None);
            r.omega = d.omega;
            r.mass = r.marginalErrorA = r.marginalErrorB = r.objective = nan;
            r.peakDeviceBytes = tracker.peak();
            // The batch shares one setup and one loop: each result reports them.
            r.timings.setupSeconds = setupSeconds;
            r.timings.iterateSeconds = iterateSeconds;
            r.timings.msPerIteration = iteration > 0 ? 1e3 * iterateSeconds / iteration : 0.0;
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
        DeviceBuffer<float4> rowPoints, colPoints;
        DeviceBuffer<double> logA, logB, potU, potV;
        DeviceBuffer<unsigned long long> change;
        PinnedBuffer<unsigned long long> hostChange;
        std::size_t hostChangeCount = 0;
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
