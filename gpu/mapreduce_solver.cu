// gpu-mapreduce behind the uot::UotSolver interface: uploads the two point
// clouds once (centred, fp32, packed), then runs row and column passes
// (gpu/mapreduce_kernels.h) in a device-resident loop replayed as CUDA graphs,
// with the stopping error reduced on the device and read back only at checks.

#include "gpu/mapreduce_solver.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <map>
#include <sstream>
#include <variant>
#include <vector>

#include "core/transport/solve_setup.h"
#include "core/transport/traffic_model.h"
#include "gpu/cuda_support.h"
#include "gpu/device_loop.h"
#include "gpu/gpu_kernels.h"
#include "gpu/gpu_plan_evaluation.h"
#include "gpu/mapreduce_kernels.h"
#include "gpu/relaxed_passes.h"
#include "gpu/stream_passes.h"
#include "gpu/translation_kernels.h"

namespace uot::gpu::detail {

namespace {

constexpr const char* kName = "gpu-mapreduce";

// Over-relaxed row half-step (relaxed_kernels.h): the pass left F^ in f; f becomes
// F~ = (1 - omega) F_old + omega F^, with F_old the step kernel's saved iterate.
__global__ void relaxRowsKernel(double* __restrict__ f, const double* __restrict__ fOld, std::size_t n,
                                const double* __restrict__ omega)
{
    const std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x;
    if (i >= n) return;
    const double w = *omega;
    if (w != 1.0) f[i] = (1.0 - w) * fOld[i] + w * f[i];
}

void upload(void* dst, const void* src, std::size_t bytes, cudaStream_t stream)
{
    if (bytes) UOT_CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyHostToDevice, stream));
}

// Centred fp32 coordinates packed with a free slot per point (mapReduceStride),
// padded to whole tiles with zero coordinates and w = -inf, and the float64
// squared norms of the rounded coordinates.
void packPoints(const double* points, std::size_t count, std::size_t dim, const std::vector<double>& centre,
                std::vector<float>& packed, std::vector<double>& norm2)
{
    const std::size_t stride = dim + 1;
    packed.assign(mapReducePadded(count) * stride, 0.f);
    norm2.assign(count, 0.0);
    for (std::size_t i = 0; i < packed.size() / stride; ++i) packed[i * stride + dim] = -INFINITY;
    for (std::size_t i = 0; i < count; ++i) {
        double n = 0;
        for (std::size_t k = 0; k < dim; ++k) {
            const float c = static_cast<float>(points[i * dim + k] - centre[k]);
            packed[i * stride + k] = c;
            n += double(c) * double(c);
        }
        norm2[i] = n;
    }
}

}  // namespace

struct MapReduceSolver::State {
    explicit State(int device) : device(device) {}
    int device;
    AllocationTracker tracker;
    Stream stream;
    std::size_t rows = 0, cols = 0, dim = 0;
    DeviceBuffer<float> packedX, packedY, shiftX, shiftY, partialSum, partialMax;
    DeviceBuffer<double> normX, normY, a, b, logA, logB;
    DeviceBuffer<double> lu, lv, luPrev, lvPrev, luGood, lvGood;
    DeviceBuffer<int> flags;  // [0] row pass, [1] column pass: redo exactly
    DeviceBuffer<CheckValues> check;
    DeviceBuffer<double> translationState;
    PinnedBuffer<CheckValues> hostCheck{1};
    MapReduceSide sideX, sideY;
    MapReduceSchedule rowPlan, colPlan;
    double s2 = 0;
    MapReduceConfig config;
    bool translate = false;
    TranslationParams translation;
    bool accelerate = false;  // over-relaxed: relaxed rows, then the step kernel (its own TI shifts)
    RelaxedDevice relaxed;
    std::string graphKey;
    IterationGraphs graphs;

    void prepare(std::size_t m, std::size_t n, std::size_t d)
    {
        if (m != rows || n != cols || d != dim) {
            graphs.clear();
            rows = cols = dim = 0;
        }
        AllocationTracker* t = &tracker;
        const std::size_t stride = d + 1;
        packedX.ensure(mapReducePadded(m) * stride, t);
        packedY.ensure(mapReducePadded(n) * stride, t);
        shiftX.ensure(m, t);
        shiftY.ensure(n, t);
        for (auto* buffer : {&normX, &a, &logA, &lu, &luPrev, &luGood}) buffer->ensure(m, t);
        for (auto* buffer : {&normY, &b, &logB, &lv, &lvPrev, &lvGood}) buffer->ensure(n, t);
        flags.ensure(2, t);
        check.ensure(1, t);
        rowPlan = planMapReducePass(static_cast<int>(d), m, n, config, device);
        colPlan = planMapReducePass(static_cast<int>(d), n, m, config, device);
        const std::size_t partials =
            std::max(std::size_t(rowPlan.maxSegments) * m, std::size_t(colPlan.maxSegments) * n);
        partialSum.ensure(partials, t);
        partialMax.ensure(partials, t);
        rows = m;
        cols = n;
        dim = d;
    }

    void enqueueIteration()
    {
        const cudaStream_t s = stream.get();
        const int d = static_cast<int>(dim);
        launchMapReducePass(d, sideX, sideY, s2, rowPlan, {partialSum.get(), partialMax.get(), flags.get()},
                            config, s);
        if (accelerate && rows) {
            relaxRowsKernel<<<static_cast<unsigned>((rows + 255) / 256), 256, 0, s>>>(lu.get(), luPrev.get(), rows,
                                                                                   relaxed.omega());
            UOT_CUDA_CHECK_LAUNCH();
        }
        launchMapReducePass(d, sideY, sideX, s2, colPlan, {partialSum.get(), partialMax.get(), flags.get() + 1},
                            config, s);
        if (accelerate)
            relaxed.enqueueStep<double>(lu.get(), lv.get(), luPrev.get(), lvPrev.get(), rows, cols, a.get(), b.get(),
                                        logA.get(), logB.get(), s);
        else if (translate)
            enqueueTranslation(false);
    }

    void enqueueTranslation(bool init)
    {
        launchTranslate<double>(lu.get(), rows, lv.get(), cols, a.get(), b.get(), translation, true, init, nullptr,
                                translationState.get(), stream.get());
    }

    void launchIterations(int count)
    {
        graphs.launch(count, stream.get(), [this] { enqueueIteration(); });
    }
};

namespace {

// gpu-mapreduce's side of the shared check loop: its kernels hold the potentials
// in float, which sets the precision floor of the stopping test.
class Passes final : public StreamPasses {
public:
    Passes(MapReduceSolver::State& st, const IterateBuffers& iterate)
        : StreamPasses(st.stream.get(), iterate, st.check.get(), st.hostCheck.get()), m_st(st)
    {
    }
    void launch(int count) override { m_st.launchIterations(count); }
    double potentialResolution() const override { return std::numeric_limits<float>::epsilon(); }

private:
    // Progress marginals would cost a further pass per check: not computed (NaN).
    void enqueueCheck(bool) override
    {
        launchCheck<double>(m_st.lu.get(), m_st.luPrev.get(), m_st.rows, m_st.lv.get(), m_st.lvPrev.get(), m_st.cols,
                            true, m_st.check.get(), m_st.stream.get());
    }
    MapReduceSolver::State& m_st;
};

}  // namespace

MapReduceSolver::MapReduceSolver(const MapReduceConfig& config) : m_config(config)
{
    const std::string problem = mapReduceConfigProblem(config);
    if (!problem.empty()) throw Error(ErrorCode::InvalidArgument, problem);
}

MapReduceSolver::~MapReduceSolver() = default;

std::string MapReduceSolver::name() const { return kName; }

std::uint64_t MapReduceSolver::bytesPerIteration(std::size_t rows, std::size_t cols, Precision precision) const
{
    return matrixTrafficBytes(sweeps::kMatrixFree, entryBytesFor(precision), rows, cols);
}

SolveResult MapReduceSolver::solve(const UotProblem& problem, const SolveOptions& options, const SolveControl& control)
{
    using Clock = std::chrono::steady_clock;
    const auto setupStart = Clock::now();
    int count = 0;
    const cudaError_t status = cudaGetDeviceCount(&count);
    if (status != cudaSuccess || count == 0) {
        (void)cudaGetLastError();
        throw Error(ErrorCode::Unavailable,
                    std::string("no usable GPU: ") +
                        (status != cudaSuccess ? cudaGetErrorString(status) : "the CUDA runtime reports no device") +
                        "; use a CPU solver");
    }
    if (options.device < 0 || options.device >= count) {
        std::ostringstream msg;
        msg << "GPU " << options.device << " does not exist: this machine has " << count
            << " device(s), numbered from 0";
        throw Error(ErrorCode::InvalidArgument, msg.str());
    }
    if (options.precision != Precision::Fp32)
        throw Error(ErrorCode::InvalidArgument,
                    "gpu-mapreduce computes in fp32 only (its speed comes from fp32 exponentials); use --precision "
                    "fp32, or gpu-log / a CPU solver for fp64");
    const auto* pc = std::get_if<PointCloudCost>(&problem.cost);
    if (!pc)
        throw Error(ErrorCode::InvalidArgument,
                    "gpu-mapreduce needs a point-cloud cost (two point sets, e.g. uot solve --x X.npy --y Y.npy); "
                    "for a cost matrix use gpu-fused or gpu-log");
    validateSolveOptions(problem, options);
    if (pc->dim < 1 || pc->dim > kMapReduceMaxDim || !pc->x || !pc->y)
        throw Error(ErrorCode::InvalidArgument, "gpu-mapreduce takes two point sets of dimension 1 to 8");
    if (!(pc->scale >= 0) || !std::isfinite(pc->scale))
        throw Error(ErrorCode::InvalidArgument, "point-cloud cost: scale must be finite and >= 0");
    const std::size_t M = pc->rows, N = pc->cols, d = pc->dim;
    std::vector<double> centre(d, 0.0);
    for (std::size_t k = 0; k < (M + N) * d; ++k) {
        const double value = k < M * d ? pc->x[k] : pc->y[k - M * d];
        if (!std::isfinite(value))
            throw Error(ErrorCode::InvalidArgument, "point-cloud cost: a point coordinate is not finite");
        centre[k % d] += value;
    }
    for (double& c : centre) c /= double(M + N);

    DeviceGuard guard(options.device);
    if (!m_state || m_state->device != options.device) m_state = std::make_unique<State>(options.device);
    State& st = *m_state;
    st.config = m_config;
    try {
        st.prepare(M, N, d);
    } catch (const Error&) {
        m_state.reset();
        throw;
    }
    st.tracker.resetPeak();
    const cudaStream_t s = st.stream.get();

    SolveResult result;
    result.solver = kName;
    result.bytesPerIteration = bytesPerIteration(M, N, options.precision);

    // Points, weights, their logs; then the starting potentials.
    std::vector<float> packedX, packedY;
    std::vector<double> normX, normY;
    packPoints(pc->x, M, d, centre, packedX, normX);
    packPoints(pc->y, N, d, centre, packedY, normY);
    std::vector<double> logA(M), logB(N), lu(M), lv(N);
    for (std::size_t i = 0; i < M; ++i) logA[i] = std::log(problem.a[i]);
    for (std::size_t j = 0; j < N; ++j) logB[j] = std::log(problem.b[j]);
    const std::vector<double> u0 = initialScaling(options.warmU, M);
    const std::vector<double> v0 = initialScaling(options.warmV, N);
    for (std::size_t i = 0; i < M; ++i) lu[i] = std::log(u0[i]);
    for (std::size_t j = 0; j < N; ++j) lv[j] = std::log(v0[j]);
    upload(st.packedX.get(), packedX.data(), packedX.size() * sizeof(float), s);
    upload(st.packedY.get(), packedY.data(), packedY.size() * sizeof(float), s);
    upload(st.normX.get(), normX.data(), M * sizeof(double), s);
    upload(st.normY.get(), normY.data(), N * sizeof(double), s);
    upload(st.a.get(), problem.a.data(), M * sizeof(double), s);
    upload(st.b.get(), problem.b.data(), N * sizeof(double), s);
    upload(st.logA.get(), logA.data(), M * sizeof(double), s);
    upload(st.logB.get(), logB.data(), N * sizeof(double), s);
    upload(st.lu.get(), lu.data(), M * sizeof(double), s);
    upload(st.lv.get(), lv.data(), N * sizeof(double), s);
    UOT_CUDA_CHECK(cudaMemcpyAsync(st.luGood.get(), st.lu.get(), M * sizeof(double), cudaMemcpyDeviceToDevice, s));
    UOT_CUDA_CHECK(cudaMemcpyAsync(st.lvGood.get(), st.lv.get(), N * sizeof(double), cudaMemcpyDeviceToDevice, s));
    const int exact[2] = {1, 1};  // the first pass of each side has no shift yet
    upload(st.flags.get(), exact, sizeof(exact), s);
    UOT_CUDA_CHECK(cudaStreamSynchronize(s));  // the host vectors above go out of scope after this

    const bool product = problem.reference == ReferenceMeasure::Product;
    st.s2 = pc->scale / problem.eps * 1.44269504088896340736;
    st.sideX = {st.packedX.get(), st.normX.get(), st.lu.get(), st.logA.get(), product ? st.logA.get() : nullptr,
                st.shiftX.get(), M, problem.exponentA()};
    st.sideY = {st.packedY.get(), st.normY.get(), st.lv.get(), st.logB.get(), product ? st.logB.get() : nullptr,
                st.shiftY.get(), N, problem.exponentB()};

    st.translation = translationCoefficients(problem);
    st.translate = options.mode == IterationMode::TranslationInvariant && st.translation.active;
    st.accelerate = options.acceleration != Acceleration::None;
    result.mode = toString(st.translate ? IterationMode::TranslationInvariant : IterationMode::Plain);
    result.acceleration = toString(st.accelerate ? options.acceleration : Acceleration::None);
    if (st.accelerate) {
        // A row pass and a column pass per iteration; the potentials are held in float.
        st.relaxed.configure(problem, options, st.translation, st.translate, true, true, 2, &st.tracker);
    } else if (st.translate) {
        st.translationState.ensure(translationStateDoubles(), &st.tracker);
        st.enqueueTranslation(true);
    }
    {
        // Graphs bake pointers and parameters in: keep them while these are unchanged.
        std::ostringstream key;
        key << M << ' ' << N << ' ' << d << ' ' << std::hexfloat << st.s2 << ' ' << st.sideX.exponent << ' '
            << st.sideY.exponent << ' ' << product << ' ' << st.config.polyEvery << ' ' << st.config.prefetch << ' '
            << static_cast<int>(st.config.schedule) << ' ' << st.config.blocks << ' ' << st.translate << ' ' << st.translation.ra << ' '
            << st.translation.rb << ' ' << st.translation.cs << ' ' << st.translation.ct << ' '
            << static_cast<const void*>(st.translationState.get()) << ' ' << st.accelerate;
        if (st.accelerate) key << ' ' << st.relaxed.graphKey();
        if (key.str() != st.graphKey) {
            st.graphs.clear();
            st.graphKey = key.str();
        }
    }
    result.timings.setupSeconds = std::chrono::duration<double>(Clock::now() - setupStart).count();

    if (options.maxIterations > 0 && st.accelerate) {
        // The step kernel decides on the device; its saved iterate starts as the initial one.
        UOT_CUDA_CHECK(cudaMemcpyAsync(st.luPrev.get(), st.lu.get(), M * sizeof(double), cudaMemcpyDeviceToDevice, s));
        UOT_CUDA_CHECK(cudaMemcpyAsync(st.lvPrev.get(), st.lv.get(), N * sizeof(double), cudaMemcpyDeviceToDevice, s));
        st.relaxed.start(options, s);
        RelaxedPasses passes(st.relaxed, st.device, s, [&st](int count) { st.launchIterations(count); });
        DeviceLoopSetup loop;
        loop.bytesPerIteration = result.bytesPerIteration;
        loop.sweepsPerIteration = 2;
        loop.markNotFinite = [](SolveResult& r, int iteration) {
            r.status = NumericalStatus::NotFinite;
            r.message = "gpu-mapreduce produced a non-finite potential at iteration " + std::to_string(iteration) +
                        "; the last accepted iterate is kept";
        };
        runDeviceLoop(problem, options, control, passes, loop, 0, result);
        result.omega = st.relaxed.hostState().omega;
        result.rejectedSteps = st.relaxed.hostState().rule.rejections;
    } else if (options.maxIterations > 0) {
        // The shared check loop (device_loop.h) over the log-potentials on the device.
        IterateBuffers iterate;
        iterate.current = {st.lu.get(), st.lv.get()};
        iterate.previous = {st.luPrev.get(), st.lvPrev.get()};
        iterate.good = {st.luGood.get(), st.lvGood.get()};
        iterate.length = {M, N};
        iterate.logDomain = true;
        Passes passes(st, iterate);
        DeviceLoopSetup loop;
        loop.bytesPerIteration = result.bytesPerIteration;
        loop.sweepsPerIteration = 2;  // a row pass and a column pass
        // Two passes of M N terms at about 3e12 exponentials a second, plus launches.
        loop.secondsPerIterationEstimate = 2.0 * double(M) * double(N) / 3e12 + 2e-5;
        loop.translate = st.translate;
        loop.markNotFinite = [](SolveResult& r, int) {
            // Not expected (the passes are log-domain); the last good iterate is kept.
            r.status = NumericalStatus::NotFinite;
            r.message = "gpu-mapreduce produced a non-finite potential; the last good iterate is kept";
        };
        loop.precisionAdvice = "use gpu-log or a CPU solver in fp64";
        runDeviceLoop(problem, options, control, passes, loop, 0, result);
    }

    std::vector<double> hu(M), hv(N);
    UOT_CUDA_CHECK(cudaMemcpyAsync(hu.data(), st.lu.get(), M * sizeof(double), cudaMemcpyDeviceToHost, s));
    UOT_CUDA_CHECK(cudaMemcpyAsync(hv.data(), st.lv.get(), N * sizeof(double), cudaMemcpyDeviceToHost, s));
    UOT_CUDA_CHECK(cudaStreamSynchronize(s));
    result.peakDeviceBytes = st.tracker.peak();
    // The final plan is evaluated matrix-free on the device (float64, cost from the points).
    const int device = options.device;
    const PlanEvaluator evaluator = [device](const UotProblem& p, std::span<const double> logU,
                                             std::span<const double> logV) {
        return evaluatePlanOnDevice(p, logU, logV, device);
    };
    finishResultFromLogs(problem, options, std::move(hu), std::move(hv), result, evaluator);
    return result;
}

}  // namespace uot::gpu::detail
