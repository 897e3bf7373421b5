// gpu-nccl: gpu-fused with the rows split over several GPUs and the column sums
// all-reduced by NCCL (contract: gpu/nccl_solver.h).

#include "gpu/nccl_solver.h"

#include <nccl.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <functional>
#include <limits>
#include <sstream>
#include <type_traits>
#include <variant>

#include "core/registry/multi_gpu.h"
#include "core/transport/solve_setup.h"
#include "core/transport/traffic_model.h"
#include "core/transport/uot_error.h"
#include "gpu/cublas_library.h"
#include "gpu/cuda_support.h"
#include "gpu/device_loop.h"
#include "gpu/gpu_backend.h"
#include "gpu/gpu_kernels.h"
#include "gpu/relaxed_passes.h"
#include "gpu/translation_kernels.h"

#define UOT_NCCL_CHECK(call)                                                                              \
    do {                                                                                                  \
        const ncclResult_t uot_nccl_status = (call);                                                      \
        if (uot_nccl_status != ncclSuccess)                                                               \
            throw ::uot::Error(::uot::ErrorCode::Device,                                                  \
                               std::string("NCCL: ") + #call + ": " + ncclGetErrorString(uot_nccl_status)); \
    } while (0)

namespace uot::gpu {

namespace detail {
namespace {

constexpr const char* kName = "gpu-nccl";
using Clock = std::chrono::steady_clock;
double secondsSince(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

// v_j = (b_j / sum_c reduced[c][j])^fb: the column update from the all-reduced sums of the chunks.
__global__ void combineColumnsKernel(const float* __restrict__ reduced, int chunks, std::size_t pitch, std::size_t cols,
                                     const double* __restrict__ b, double fb, float* __restrict__ v)
{
    const std::size_t j = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x;
    if (j >= cols) return;
    double s = 0;
    for (int c = 0; c < chunks; ++c) s += reduced[c * pitch + j];
    v[j] = static_cast<float>(fb == 1.0 ? b[j] / s : pow(b[j] / s, fb));
}

std::size_t roundUp(std::size_t x, std::size_t m) { return (x + m - 1) / m * m; }

template <typename T>
void upload(T* dst, const T* src, std::size_t count, cudaStream_t stream)
{
    if (count) UOT_CUDA_CHECK(cudaMemcpyAsync(dst, src, count * sizeof(T), cudaMemcpyHostToDevice, stream));
}

// One NCCL communicator per device of a list, in one process.
class Communicators {
public:
    explicit Communicators(const std::vector<int>& devices) : m_devices(devices), m_comms(devices.size(), nullptr)
    {
        UOT_NCCL_CHECK(ncclCommInitAll(m_comms.data(), static_cast<int>(devices.size()), devices.data()));
    }
    ~Communicators()
    {
        for (ncclComm_t c : m_comms)
            if (c) ncclCommDestroy(c);
    }
    Communicators(const Communicators&) = delete;
    Communicators& operator=(const Communicators&) = delete;
    const std::vector<int>& devices() const { return m_devices; }
    ncclComm_t operator[](std::size_t k) const { return m_comms[k]; }

private:
    std::vector<int> m_devices;
    std::vector<ncclComm_t> m_comms;
};

// The rows of one GPU and everything it holds for a solve. The first GPU's u, a
// and log a hold every row (its own first): the TI shift and the relaxed step run
// there, over the rows the others send after each iteration.
struct Part {
    int device = 0;
    std::size_t r0 = 0, rows = 0;
    AllocationTracker tracker;
    std::unique_ptr<Stream> compute, comm;
    std::unique_ptr<Event> computed, communicated, gathered, scattered;
    DeviceBuffer<double> omega;       // over-relaxed, GPUs after the first: the step's omega, copied
    const double* omegaRead = nullptr;  // the omega this GPU's relaxed row pass reads (null: plain)
    DeviceBuffer<float> K, u, uPrev, uGood, v, vPrev, vGood, vScratch, partials, send, recv;
    DeviceBuffer<double> a, b, logA, logB;
    DeviceBuffer<unsigned long long> firstBad;
    DeviceBuffer<CheckValues> check;
    PinnedBuffer<CheckValues> hostCheck{1};
    std::vector<std::size_t> chunkBegin, chunkRows;
    std::vector<FusedPlan> plans;
    std::vector<int> partialRows;
    // Rows too wide for the fused pass's shared memory: two cuBLAS passes per
    // chunk (K v, then K^T u), as gpu-fused's own fallback.
    bool wide = false;
    std::unique_ptr<CublasHandle> cublas;
    DeviceBuffer<char> cublasWorkspace;
    DeviceBuffer<float> rowSum;
};

// Partial rows of a chunk's fused pass: gpu-fused's rule (one private row per
// block when cheap, else rows shared through atomics).
int partialRowsFor(const FusedPlan& plan, std::size_t rows)
{
    const int units = plan.blocks / plan.cluster;
    const int wanted = units <= static_cast<int>(rows / 30) ? units : static_cast<int>(std::max<std::size_t>(1, rows / 64));
    return std::min(wanted, units);
}

// The TI shift or the relaxed step of a solve, on the first GPU (translation_kernels.h,
// relaxed_passes.h), over all rows gathered there.
struct Correction {
    bool translate = false, accelerate = false;
    TranslationParams translation;
    DeviceBuffer<double> translationState;
    RelaxedDevice relaxed;
    DeviceBuffer<float> uSaved, vSaved;  // the step kernel's last accepted iterate
    bool active() const { return translate || accelerate; }
};

std::vector<int> resolveDevices(std::vector<int> devices)
{
    if (devices.empty()) devices = multiGpuDevices();
    int count = 0;
    UOT_CUDA_CHECK(cudaGetDeviceCount(&count));
    if (devices.empty())
        for (int d = 0; d < count; ++d) devices.push_back(d);
    for (int d : devices)
        if (d < 0 || d >= count)
            throw Error(ErrorCode::InvalidArgument, "gpu-nccl: GPU " + std::to_string(d) + " does not exist (this machine has " +
                                                        std::to_string(count) + ")");
    return devices;
}

// gpu-nccl's side of the shared check loop (device_loop.h): the rows of u, and a
// copy of v, on every GPU; a check combines the parts' maxima, and the stopping
// test gathers the potentials to the host.
class NcclPasses final : public DevicePasses {
public:
    NcclPasses(std::vector<std::unique_ptr<Part>>& parts, std::size_t cols, std::function<void(int)> iterate)
        : m_parts(parts), m_cols(cols), m_iterate(std::move(iterate))
    {
        forEach([&](Part&) {
            for (auto& slot : m_slices) slot.push_back(std::make_unique<Event>(false));
        });
        keepGood();
    }
    void startChunk() override { m_start = Clock::now(); }
    void launch(int count) override { m_iterate(count); }
    void markSlice(int slot) override
    {
        std::size_t k = 0;
        forEach([&](Part& p) { UOT_CUDA_CHECK(cudaEventRecord(m_slices[slot][k++]->get(), p.compute->get())); });
    }
    void waitSlice(int slot) override
    {
        std::size_t k = 0;
        forEach([&](Part&) { UOT_CUDA_CHECK(cudaEventSynchronize(m_slices[slot][k++]->get())); });
    }
    void snapshot() override
    {
        forEach([&](Part& p) {
            cudaStream_t s = p.compute->get();
            if (p.rows)
                UOT_CUDA_CHECK(cudaMemcpyAsync(p.uPrev.get(), p.u.get(), p.rows * sizeof(float), cudaMemcpyDeviceToDevice, s));
            UOT_CUDA_CHECK(cudaMemcpyAsync(p.vPrev.get(), p.v.get(), m_cols * sizeof(float), cudaMemcpyDeviceToDevice, s));
        });
    }
    DeviceCheck check(bool) override
    {
        forEach([&](Part& p) {
            if (!p.rows) return;
            launchCheck<float>(p.u.get(), p.uPrev.get(), p.rows, p.v.get(), p.vPrev.get(), m_cols, false, p.check.get(),
                               p.compute->get());
            UOT_CUDA_CHECK(cudaMemcpyAsync(p.hostCheck.get(), p.check.get(), sizeof(CheckValues), cudaMemcpyDeviceToHost,
                                           p.compute->get()));
        });
        DeviceCheck all;
        all.marginalA = all.marginalB = std::numeric_limits<double>::quiet_NaN();
        forEach([&](Part& p) {
            UOT_CUDA_CHECK(cudaStreamSynchronize(p.compute->get()));
            if (!p.rows) return;
            const CheckValues& c = *p.hostCheck.get();
            all.diffU = std::max(all.diffU, c.diffU);
            all.scaleU = std::max(all.scaleU, c.scaleU);
            all.diffV = std::max(all.diffV, c.diffV);
            all.scaleV = std::max(all.scaleV, c.scaleV);
            all.bad = all.bad || c.bad;
        });
        all.chunkSeconds = secondsSince(m_start);
        return all;
    }
    void keepGood() override { copyScalings(true, false); }
    void restoreGood() override
    {
        copyScalings(false, true);
        forEach([](Part& p) { UOT_CUDA_CHECK(cudaStreamSynchronize(p.compute->get())); });
    }
    void readLogPotentials(std::vector<double>& f, std::vector<double>& fPrev, std::vector<double>& g,
                           std::vector<double>& gPrev) override
    {
        std::size_t M = 0;
        for (const auto& p : m_parts) M = std::max(M, p->r0 + p->rows);
        f.resize(M);
        fPrev.resize(M);
        g.resize(m_cols);
        gPrev.resize(m_cols);
        forEach([&](Part& p) {
            readLogs(p.u.get(), p.rows, f.data() + p.r0);
            readLogs(p.uPrev.get(), p.rows, fPrev.data() + p.r0);
        });
        DeviceGuard guard(m_parts[0]->device);
        readLogs(m_parts[0]->v.get(), m_cols, g.data());
        readLogs(m_parts[0]->vPrev.get(), m_cols, gPrev.data());
    }

private:
    template <typename F>
    void forEach(F&& f)
    {
        for (auto& part : m_parts) {
            DeviceGuard guard(part->device);
            f(*part);
        }
    }
    void copyScalings(bool toGood, bool fromGood)
    {
        forEach([&](Part& p) {
            cudaStream_t s = p.compute->get();
            float* uDst = toGood ? p.uGood.get() : p.u.get();
            const float* uSrc = fromGood ? p.uGood.get() : p.u.get();
            float* vDst = toGood ? p.vGood.get() : p.v.get();
            const float* vSrc = fromGood ? p.vGood.get() : p.v.get();
            if (p.rows) UOT_CUDA_CHECK(cudaMemcpyAsync(uDst, uSrc, p.rows * sizeof(float), cudaMemcpyDeviceToDevice, s));
            UOT_CUDA_CHECK(cudaMemcpyAsync(vDst, vSrc, m_cols * sizeof(float), cudaMemcpyDeviceToDevice, s));
        });
    }
    // log of n floats of the current device (synchronous).
    static void readLogs(const float* src, std::size_t n, double* out)
    {
        std::vector<float> x(n);
        if (n) UOT_CUDA_CHECK(cudaMemcpy(x.data(), src, n * sizeof(float), cudaMemcpyDeviceToHost));
        for (std::size_t i = 0; i < n; ++i) out[i] = std::log(static_cast<double>(x[i]));
    }

    std::vector<std::unique_ptr<Part>>& m_parts;
    std::size_t m_cols;
    std::function<void(int)> m_iterate;
    std::vector<std::unique_ptr<Event>> m_slices[2];
    Clock::time_point m_start = Clock::now();
};

class NcclSolver final : public UotSolver {
public:
    NcclSolver(std::vector<int> devices, int chunks) : m_requested(std::move(devices)), m_chunks(std::max(1, chunks)) {}

    std::string name() const override { return kName; }

    std::uint64_t bytesPerIteration(std::size_t rows, std::size_t cols, Precision precision) const override
    {
        return matrixTrafficBytes(sweeps::kOneRead, entryBytesFor(precision), rows, cols);
    }

    SolveResult solve(const UotProblem& problem, const SolveOptions& options, const SolveControl& control) override
    {
        validateSolveOptions(problem, options);
        if (options.precision != Precision::Fp32)
            throw Error(ErrorCode::InvalidArgument, "gpu-nccl solves in fp32 only (use gpu-fused for fp64)");
        const auto setupStart = Clock::now();
        const std::vector<int> devices = resolveDevices(m_requested);
        if (!m_comms || m_comms->devices() != devices) {
            m_comms.reset();
            m_comms = std::make_unique<Communicators>(devices);
        }
        const std::size_t M = problem.rows(), N = problem.cols(), G = devices.size();
        const std::size_t pitch = roundUp(N, vectorWidth<float>());
        const double fa = problem.exponentA(), fb = problem.exponentB();
        const std::vector<double> u0 = initialScaling(options.warmU, options.warmLogU, M);
        const std::vector<double> v0 = initialScaling(options.warmV, options.warmLogV, N);
        if (!allFiniteAndPositive(u0) || !allFiniteAndPositive(v0))
            throw Error(ErrorCode::InvalidArgument, "gpu-nccl: the warm start leaves the fp32 range");
        std::vector<double> logA(M), logB(N);
        for (std::size_t i = 0; i < M; ++i) logA[i] = std::log(problem.a[i]);
        for (std::size_t j = 0; j < N; ++j) logB[j] = std::log(problem.b[j]);
        const std::vector<float> hv(v0.begin(), v0.end());

        std::vector<std::unique_ptr<Part>> parts;
        for (std::size_t g = 0; g < G; ++g) {
            auto part = std::make_unique<Part>();
            Part& p = *part;
            p.device = devices[g];
            p.r0 = M * g / G;
            p.rows = M * (g + 1) / G - p.r0;
            DeviceGuard guard(p.device);
            p.compute = std::make_unique<Stream>();
            p.comm = std::make_unique<Stream>();
            p.computed = std::make_unique<Event>(false);
            p.communicated = std::make_unique<Event>(false);
            p.gathered = std::make_unique<Event>(false);
            p.scattered = std::make_unique<Event>(false);
            cudaStream_t s = p.compute->get();
            const std::size_t rows = p.rows;
            const std::size_t held = g == 0 ? M : rows;  // rows of u, a, log a kept here
            p.K.allocate(std::max<std::size_t>(1, rows) * pitch, &p.tracker);
            p.u.allocate(std::max<std::size_t>(1, held), &p.tracker);
            p.uPrev.allocate(std::max<std::size_t>(1, rows), &p.tracker);
            p.uGood.allocate(std::max<std::size_t>(1, rows), &p.tracker);
            p.v.allocate(pitch, &p.tracker);
            p.vPrev.allocate(pitch, &p.tracker);
            p.vGood.allocate(pitch, &p.tracker);
            p.vScratch.allocate(pitch, &p.tracker);
            p.send.allocate(std::size_t(m_chunks) * pitch, &p.tracker);
            p.recv.allocate(std::size_t(m_chunks) * pitch, &p.tracker);
            p.a.allocate(std::max<std::size_t>(1, held), &p.tracker);
            p.b.allocate(N, &p.tracker);
            p.logA.allocate(std::max<std::size_t>(1, held), &p.tracker);
            p.logB.allocate(N, &p.tracker);
            p.firstBad.allocate(1, &p.tracker);
            p.check.allocate(1, &p.tracker);
            UOT_CUDA_CHECK(cudaMemsetAsync(p.send.get(), 0, p.send.bytes(), s));
            UOT_CUDA_CHECK(cudaMemsetAsync(p.v.get(), 0, p.v.bytes(), s));
            upload(p.a.get(), problem.a.data() + p.r0, held, s);
            upload(p.b.get(), problem.b.data(), N, s);
            upload(p.logA.get(), logA.data() + p.r0, held, s);
            upload(p.logB.get(), logB.data(), N, s);
            const std::vector<float> hu(u0.begin() + p.r0, u0.begin() + p.r0 + held);
            upload(p.u.get(), hu.data(), held, s);
            upload(p.v.get(), hv.data(), N, s);
            buildRows(problem, p, pitch);
            // Chunks of the local rows, each with its fused plan.
            int maxPartials = 1;
            for (int c = 0; c < m_chunks; ++c) {
                const std::size_t b0 = rows * c / m_chunks, b1 = rows * (c + 1) / m_chunks;
                p.chunkBegin.push_back(b0);
                p.chunkRows.push_back(b1 - b0);
                FusedPlan plan;
                int partials = 0;
                if (b1 > b0) {
                    plan = planFused<float>(b1 - b0, N, pitch, p.device, 1, true);
                    if (plan.usable) {
                        partials = partialRowsFor(plan, b1 - b0);
                        maxPartials = std::max(maxPartials, partials);
                    } else {
                        p.wide = true;
                    }
                }
                p.plans.push_back(plan);
                p.partialRows.push_back(partials);
            }
            if (p.wide) {
                p.cublas = std::make_unique<CublasHandle>();
                p.cublasWorkspace.allocate(kCublasWorkspaceBytes, &p.tracker);
                UOT_CUBLAS_CHECK(cublasLibrary().setStream(p.cublas->get(), s));
                UOT_CUBLAS_CHECK(cublasLibrary().setWorkspace(p.cublas->get(), p.cublasWorkspace.get(), kCublasWorkspaceBytes));
                p.rowSum.allocate(rows, &p.tracker);
            }
            p.partials.allocate(std::size_t(maxPartials) * pitch, &p.tracker);
            UOT_CUDA_CHECK(cudaMemsetAsync(p.partials.get(), 0, p.partials.bytes(), s));
            UOT_CUDA_CHECK(cudaStreamSynchronize(s));
            parts.push_back(std::move(part));
        }

        SolveResult result;
        result.solver = kName;
        const bool wide = std::any_of(parts.begin(), parts.end(), [](const auto& p) { return p->wide; });
        result.bytesPerIteration = matrixTrafficBytes(wide ? sweeps::kTwoReads : sweeps::kOneRead, sizeof(float), M, N);
        const int sweepsPerIteration = wide ? 2 : 1;
        Part& root = *parts[0];
        Correction correction;
        correction.translation = translationCoefficients(problem);
        correction.translate = options.mode == IterationMode::TranslationInvariant && correction.translation.active;
        correction.accelerate = options.acceleration != Acceleration::None;
        result.mode = toString(correction.translate ? IterationMode::TranslationInvariant : IterationMode::Plain);
        result.acceleration = toString(correction.accelerate ? options.acceleration : Acceleration::None);
        if (correction.active()) {
            DeviceGuard guard(root.device);
            if (correction.accelerate) {
                correction.relaxed.configure(problem, options, correction.translation, correction.translate, false,
                                             true, sweepsPerIteration, &root.tracker);
                correction.uSaved.allocate(std::max<std::size_t>(1, M), &root.tracker);
                correction.vSaved.allocate(pitch, &root.tracker);
            } else {
                correction.translationState.allocate(translationStateDoubles(), &root.tracker);
                launchTranslate<float>(root.u.get(), M, root.v.get(), N, root.a.get(), root.b.get(),
                                       correction.translation, false, true, nullptr,
                                       correction.translationState.get(), root.compute->get());
            }
        }
        for (std::size_t g = 0; g < G; ++g) {
            Part& p = *parts[g];
            if (!correction.accelerate) {
                p.omegaRead = nullptr;
            } else if (g == 0) {
                p.omegaRead = correction.relaxed.omega();
            } else {
                DeviceGuard guard(p.device);
                p.omega.allocate(1, &p.tracker);  // set when the relaxed loop starts
                p.omegaRead = p.omega.get();
            }
        }
        result.timings.setupSeconds = secondsSince(setupStart);
        const auto iterate = [&](int count) {
            for (int k = 0; k < count; ++k) {
                enqueueIteration(parts, N, pitch, fa, fb);
                if (correction.active()) enqueueCorrection(parts, correction, M, N);
            }
        };
        if (options.maxIterations > 0 && correction.accelerate) {
            // The step kernel decides on the first GPU; its saved iterate starts as the initial one.
            DeviceGuard guard(root.device);
            cudaStream_t s = root.compute->get();
            UOT_CUDA_CHECK(cudaMemcpyAsync(correction.uSaved.get(), root.u.get(), M * sizeof(float),
                                           cudaMemcpyDeviceToDevice, s));
            UOT_CUDA_CHECK(cudaMemcpyAsync(correction.vSaved.get(), root.v.get(), N * sizeof(float),
                                           cudaMemcpyDeviceToDevice, s));
            correction.relaxed.start(options, s);
            {
                // The relaxed row pass reads omega before the first step has run.
                const double start = correction.relaxed.hostState().omega;
                for (std::size_t g = 1; g < G; ++g) {
                    DeviceGuard other(parts[g]->device);
                    UOT_CUDA_CHECK(cudaMemcpy(parts[g]->omega.get(), &start, sizeof(start), cudaMemcpyHostToDevice));
                }
            }
            RelaxedPasses passes(correction.relaxed, root.device, s, iterate);
            DeviceLoopSetup loop;
            loop.bytesPerIteration = result.bytesPerIteration;
            loop.sweepsPerIteration = sweepsPerIteration;
            loop.markNotFinite = [](SolveResult& r, int iteration) { markUnderflow(r, KernelBuildReport{}, iteration); };
            runDeviceLoop(problem, options, control, passes, loop, 0, result);
            result.omega = correction.relaxed.hostState().omega;
            result.rejectedSteps = correction.relaxed.hostState().rule.rejections;
        } else if (options.maxIterations > 0) {
            NcclPasses passes(parts, N, iterate);
            DeviceLoopSetup loop;
            loop.bytesPerIteration = result.bytesPerIteration;
            loop.sweepsPerIteration = sweepsPerIteration;
            loop.secondsPerIterationEstimate = double(result.bytesPerIteration) / (2.5e12 * double(G)) + 2e-5;
            loop.translate = correction.translate;
            loop.markNotFinite = [](SolveResult& r, int iteration) { markUnderflow(r, KernelBuildReport{}, iteration); };
            runDeviceLoop(problem, options, control, passes, loop, 0, result);
        }
        const auto forEach = [&parts](auto&& f) {
            for (auto& part : parts) {
                DeviceGuard guard(part->device);
                f(*part);
            }
        };
        forEach([](Part& p) { UOT_CUDA_CHECK(cudaStreamSynchronize(p.compute->get())); });
        std::vector<double> hu(M), hvOut(N);
        std::size_t peak = 0;
        forEach([&](Part& p) {
            std::vector<float> tu(p.rows);
            if (p.rows) UOT_CUDA_CHECK(cudaMemcpy(tu.data(), p.u.get(), p.rows * sizeof(float), cudaMemcpyDeviceToHost));
            for (std::size_t i = 0; i < p.rows; ++i) hu[p.r0 + i] = tu[i];
            peak = std::max(peak, p.tracker.peak());
        });
        {
            DeviceGuard guard(parts[0]->device);
            std::vector<float> tv(N);
            UOT_CUDA_CHECK(cudaMemcpy(tv.data(), parts[0]->v.get(), N * sizeof(float), cudaMemcpyDeviceToHost));
            for (std::size_t j = 0; j < N; ++j) hvOut[j] = tv[j];
        }
        result.peakDeviceBytes = peak;
        finishResult(problem, options, hu, hvOut, result);
        return result;
    }

private:
    // K of the part's rows from the problem's cost (dense rows travel in chunks; point clouds as points).
    static void buildRows(const UotProblem& problem, Part& p, std::size_t pitch)
    {
        if (!p.rows) return;
        cudaStream_t s = p.compute->get();
        const std::size_t N = problem.cols();
        BuildParams params;
        params.invEps = 1.0 / problem.eps;
        if (problem.reference == ReferenceMeasure::Product) {
            params.logA = p.logA.get();
            params.logB = p.logB.get();
        }
        if (const auto* dense = std::get_if<DenseCost>(&problem.cost)) {
            UOT_CUDA_CHECK(cudaMemsetAsync(p.firstBad.get(), 0xff, sizeof(unsigned long long), s));
            const auto build = [&](const auto* host) {
                using C = std::remove_const_t<std::remove_pointer_t<decltype(host)>>;
                const std::size_t chunkRows = std::clamp<std::size_t>((std::size_t(64) << 20) / (N * sizeof(C)), 1, p.rows);
                DeviceBuffer<C> staging(chunkRows * N, &p.tracker);
                for (std::size_t r = 0; r < p.rows; r += chunkRows) {
                    const std::size_t n = std::min(chunkRows, p.rows - r);
                    upload(staging.get(), host + (p.r0 + r) * N, n * N, s);
                    launchBuildFromDense<float, C>(staging.get(), r, n, N, pitch, p.K.get(), params, p.firstBad.get(), s);
                    UOT_CUDA_CHECK(cudaStreamSynchronize(s));  // the staging buffer is reused
                }
            };
            if (dense->f32)
                build(dense->f32);
            else
                build(dense->f64);
            unsigned long long bad = 0;
            UOT_CUDA_CHECK(cudaMemcpy(&bad, p.firstBad.get(), sizeof(bad), cudaMemcpyDeviceToHost));
            if (bad != std::numeric_limits<unsigned long long>::max()) {
                std::ostringstream msg;
                msg << "cost matrix entry (" << p.r0 + bad / N << ", " << bad % N << ") is not a finite cost >= 0";
                throw Error(ErrorCode::InvalidArgument, msg.str());
            }
        } else {
            const auto& pc = std::get<PointCloudCost>(problem.cost);
            DeviceBuffer<double> x(p.rows * pc.dim, &p.tracker), y(N * pc.dim, &p.tracker);
            upload(x.get(), pc.x + p.r0 * pc.dim, p.rows * pc.dim, s);
            upload(y.get(), pc.y, N * pc.dim, s);
            launchBuildFromPoints<float>(x.get(), y.get(), p.rows, N, pc.dim, pc.scale, pitch, p.K.get(), params, s);
            UOT_CUDA_CHECK(cudaStreamSynchronize(s));
        }
    }

    // One iteration on every GPU: per chunk, the fused pass and the local column
    // sums, whose all-reduce (communication stream) overlaps the next chunk; then v.
    void enqueueIteration(std::vector<std::unique_ptr<Part>>& parts, std::size_t N, std::size_t pitch, double fa,
                          double fb)
    {
        for (int c = 0; c < m_chunks; ++c) {
            for (auto& part : parts) {
                Part& p = *part;
                DeviceGuard guard(p.device);
                cudaStream_t s = p.compute->get();
                const std::size_t rows = p.chunkRows[c], b0 = p.chunkBegin[c];
                if (rows && p.wide) {
                    const int n = static_cast<int>(N), m = static_cast<int>(rows), ld = static_cast<int>(pitch);
                    const float* K = p.K.get() + b0 * pitch;
                    UOT_CUBLAS_CHECK(gemv(p.cublas->get(), CUBLAS_OP_T, n, m, K, ld, p.v.get(), p.rowSum.get() + b0));
                    launchScalingUpdate<float>(p.rowSum.get() + b0, p.a.get() + b0, p.u.get() + b0, rows, fa, s,
                                               p.omegaRead);
                    UOT_CUBLAS_CHECK(gemv(p.cublas->get(), CUBLAS_OP_N, n, m, K, ld, p.u.get() + b0, p.send.get() + c * pitch));
                } else if (rows) {
                    const FusedPlan& plan = p.plans[c];
                    launchFused<float>(plan, p.K.get() + b0 * pitch, rows, pitch, p.v.get(), p.a.get() + b0, fa,
                                       p.u.get() + b0, p.partials.get(), p.partialRows[c], false, s, p.omegaRead);
                    const bool exclusive = p.partialRows[c] >= plan.blocks / plan.cluster;
                    launchFinalizeColumns<float>(p.partials.get(), exclusive ? -p.partialRows[c] : p.partialRows[c],
                                                 pitch, N, p.b.get(), fb, p.vScratch.get(), p.send.get() + c * pitch, 0,
                                                 false, s);
                }
                UOT_CUDA_CHECK(cudaEventRecord(p.computed->get(), s));
                UOT_CUDA_CHECK(cudaStreamWaitEvent(p.comm->get(), p.computed->get(), 0));
            }
            UOT_NCCL_CHECK(ncclGroupStart());
            for (std::size_t g = 0; g < parts.size(); ++g) {
                Part& p = *parts[g];
                UOT_NCCL_CHECK(ncclAllReduce(p.send.get() + c * pitch, p.recv.get() + c * pitch, N, ncclFloat, ncclSum,
                                             (*m_comms)[g], p.comm->get()));
            }
            UOT_NCCL_CHECK(ncclGroupEnd());
        }
        for (auto& part : parts) {
            Part& p = *part;
            DeviceGuard guard(p.device);
            UOT_CUDA_CHECK(cudaEventRecord(p.communicated->get(), p.comm->get()));
            UOT_CUDA_CHECK(cudaStreamWaitEvent(p.compute->get(), p.communicated->get(), 0));
            combineColumnsKernel<<<static_cast<unsigned>((N + 255) / 256), 256, 0, p.compute->get()>>>(
                p.recv.get(), m_chunks, pitch, N, p.b.get(), fb, p.v.get());
            UOT_CUDA_CHECK_LAUNCH();
        }
    }

    // After an iteration: the rows of u go to the first GPU, which applies the TI
    // shift or the relaxed step to all of them, then sends u's rows, v and omega back.
    static void enqueueCorrection(std::vector<std::unique_ptr<Part>>& parts, Correction& correction, std::size_t M,
                                  std::size_t N)
    {
        Part& root = *parts[0];
        for (std::size_t g = 1; g < parts.size(); ++g) {
            Part& p = *parts[g];
            DeviceGuard guard(p.device);
            if (p.rows)
                UOT_CUDA_CHECK(cudaMemcpyPeerAsync(root.u.get() + p.r0, root.device, p.u.get(), p.device,
                                                   p.rows * sizeof(float), p.compute->get()));
            UOT_CUDA_CHECK(cudaEventRecord(p.gathered->get(), p.compute->get()));
        }
        DeviceGuard guard(root.device);
        cudaStream_t s = root.compute->get();
        for (std::size_t g = 1; g < parts.size(); ++g)
            UOT_CUDA_CHECK(cudaStreamWaitEvent(s, parts[g]->gathered->get(), 0));
        if (correction.accelerate)
            correction.relaxed.enqueueStep<float>(root.u.get(), root.v.get(), correction.uSaved.get(),
                                                  correction.vSaved.get(), M, N, root.a.get(), root.b.get(),
                                                  root.logA.get(), root.logB.get(), s);
        else
            launchTranslate<float>(root.u.get(), M, root.v.get(), N, root.a.get(), root.b.get(), correction.translation,
                                   false, false, nullptr, correction.translationState.get(), s);
        if (parts.size() == 1) return;
        for (std::size_t g = 1; g < parts.size(); ++g) {
            Part& p = *parts[g];
            if (p.rows)
                UOT_CUDA_CHECK(cudaMemcpyPeerAsync(p.u.get(), p.device, root.u.get() + p.r0, root.device,
                                                   p.rows * sizeof(float), s));
            UOT_CUDA_CHECK(cudaMemcpyPeerAsync(p.v.get(), p.device, root.v.get(), root.device, N * sizeof(float), s));
            if (correction.accelerate)
                UOT_CUDA_CHECK(cudaMemcpyPeerAsync(p.omega.get(), p.device, correction.relaxed.omega(), root.device,
                                                   sizeof(double), s));
        }
        UOT_CUDA_CHECK(cudaEventRecord(root.scattered->get(), s));
        for (std::size_t g = 1; g < parts.size(); ++g) {
            DeviceGuard other(parts[g]->device);
            UOT_CUDA_CHECK(cudaStreamWaitEvent(parts[g]->compute->get(), root.scattered->get(), 0));
        }
    }

    std::vector<int> m_requested;
    int m_chunks;
    std::unique_ptr<Communicators> m_comms;
};

}  // namespace
}  // namespace detail

bool builtWithNccl() { return true; }

std::string ncclUnavailableReason() { return unavailableReason(); }

std::unique_ptr<UotSolver> createNcclSolver(std::vector<int> devices, int chunks)
{
    const std::string reason = unavailableReason();
    if (!reason.empty()) throw Error(ErrorCode::Unavailable, reason);
    return std::make_unique<detail::NcclSolver>(std::move(devices), chunks);
}

}  // namespace uot::gpu
