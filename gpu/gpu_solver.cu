// The GPU variants (gpu-pot-style, gpu-mapuot, gpu-fused, gpu-log) behind the
// uot::UotSolver interface, with a device-resident iteration loop: iterations
// are replayed as CUDA graphs, the stopping error is reduced on the device and
// read back only at checks, cancellation is polled between short slices.

#include "gpu/gpu_solver.h"
#include "gpu/cupti_counters.h"


#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstddef>
#include <cstring>
#include <limits>
#include <map>
#include <sstream>
#include <type_traits>
#include <variant>
#include <vector>

#include "core/transport/kernel_matrix.h"
#include "core/transport/solve_setup.h"
#include "gpu/cost_upload.h"
#include "gpu/cublas_library.h"
#include "gpu/cuda_support.h"
#include "gpu/device_loop.h"
#include "gpu/engine_cache.h"
#include "gpu/gpu_kernels.h"
#include "gpu/gpu_plan_evaluation.h"
#include "gpu/cluster_iterations.h"
#include "gpu/relaxed_kernels.h"
#include "gpu/relaxed_passes.h"
#include "gpu/stream_passes.h"
#include "gpu/translation_kernels.h"

namespace uot::gpu::detail {

[[noreturn]] void throwCudaError(cudaError_t status, const char* what, const char* file, int line)
{
    std::ostringstream msg;
    const ErrorCode code = errorCodeFor(status);
    if (code == ErrorCode::OutOfMemory) {
        msg << "the GPU ran out of memory (" << cudaGetErrorString(status) << " in " << what
            << "): use a smaller problem, fp32, or a CPU solver";
    } else if (code == ErrorCode::Unavailable) {
        msg << "no usable GPU: " << cudaGetErrorString(status) << " (" << what
            << "); use a CPU solver or check the NVIDIA driver";
    } else {
        msg << "GPU failure: " << cudaGetErrorName(status) << ": " << cudaGetErrorString(status) << " in " << what
            << " (" << file << ":" << line << ")";
    }
    throw Error(code, msg.str());
}

namespace {


std::size_t roundUp(std::size_t x, std::size_t to) { return (x + to - 1) / to * to; }

template <typename T>
std::vector<T> toDeviceType(const std::vector<double>& x, std::size_t paddedSize)
{
    std::vector<T> out(paddedSize, T(0));
    for (std::size_t k = 0; k < x.size(); ++k) out[k] = static_cast<T>(x[k]);
    return out;
}

template <typename T>
void upload(T* dst, const T* src, std::size_t count, cudaStream_t stream)
{
    if (count) UOT_CUDA_CHECK(cudaMemcpyAsync(dst, src, count * sizeof(T), cudaMemcpyHostToDevice, stream));
}

}  // namespace

// -------------------------------------------------------------------------- engine

template <typename T>
class Engine final : public EngineBase {
public:
    Engine(Variant variant, const Tuning& tuning, int device, std::string name, Storage storage)
        : m_variant(variant), m_tuning(tuning), m_device(device), m_name(std::move(name)),
          m_bf16(storage == Storage::Bf16 && std::is_same_v<T, float>)
    {
    }

    SolveResult solve(const UotProblem& problem, const SolveOptions& options, const SolveControl& control) override;
    std::size_t deviceBytes() const override { return m_tracker.current(); }

private:
    bool isLog() const { return m_variant == Variant::Log; }
    bool needsCublas() const
    {
        return m_variant == Variant::PotStyle || (m_variant == Variant::Fused && !m_fused.usable);
    }
    void prepare(std::size_t rows, std::size_t cols, std::size_t pitch);
    void buildKernel(const UotProblem& problem);
    template <typename C>
    void buildFromDense(const C* host, std::size_t rows, std::size_t cols, const BuildParams& params);
    void enqueueIteration();
    // The accelerated iteration (--accel relax|auto): the step kernel's initial state.
    void startRelaxed(const SolveOptions& options);
    // Device pointer of the omega the relaxed pass reads (null when not accelerating).
    const double* relaxedOmega() const
    {
        return m_accelerate ? reinterpret_cast<const double*>(reinterpret_cast<const char*>(m_relaxedState.get()) +
                                                              offsetof(RelaxedState, omega))
                            : nullptr;
    }
    // The TI correction after a pass (init: only its state for the starting v).
    void enqueueTranslation(bool init);
    // Reads of K per iteration (gpu-fused: 1; two-pass forms, gpu-mapuot's two kernels, gpu-log: 2).
    int sweepsPerIteration() const;
    void launchIterations(int count);
    void sampleCounters(const SolveOptions& options, int& iterations, SolveResult& result);
    void clearGraphs() { m_graphs.clear(); }
    // Calls f with the device pointer of K as stored (T*, or Bf16* for bf16 storage).
    template <typename F>
    decltype(auto) withK(F&& f)
    {
        if constexpr (std::is_same_v<T, float>) {
            if (m_bf16) return f(m_Kb.get());
        }
        return f(m_K.get());
    }
    const void* kData() const { return m_bf16 ? static_cast<const void*>(m_Kb.get()) : m_K.get(); }
    std::size_t kBytes() const { return m_bf16 ? m_Kb.bytes() : m_K.bytes(); }

    // The engine's side of the shared check loop (device_loop.h): the scalings
    // (multiplicative, or log-potentials for gpu-log) stay on the device; the check
    // kernels and O(M + N) copies run only at checks.
    class EnginePasses final : public StreamPasses {
    public:
        explicit EnginePasses(Engine& e)
            : StreamPasses(e.m_stream.get(), e.iterateBuffers(), e.m_check.get(), e.m_hostCheck.get()), m_e(e)
        {
        }
        void launch(int count) override { m_e.launchIterations(count); }

    private:
        void enqueueCheck(bool marginals) override;
        Engine& m_e;
    };
    // The accelerated iteration's side of the shared loop: its step kernel decides
    // on the device (DevicePasses::decidesOnDevice); a check reads its state back.
    class RelaxedPasses final : public DeviceDecidedPasses {
    public:
        explicit RelaxedPasses(Engine& e) : m_e(e) {}
        void startChunk() override { UOT_CUDA_CHECK(cudaEventRecord(m_chunkStart.get(), m_e.m_stream.get())); }
        void launch(int count) override { m_e.launchIterations(count); }
        DeviceCheck check(bool marginals) override;
        bool stopsWithinLaunch() const override { return m_e.m_clusterPlan.usable(); }

    private:
        Engine& m_e;
        Event m_chunkStart, m_chunkEnd;
    };
    IterateBuffers iterateBuffers()
    {
        IterateBuffers b;
        b.length = {m_rows, m_cols};
        b.logDomain = isLog();
        if (isLog()) {
            b.current = {m_lu.get(), m_lv.get()};
            b.previous = {m_luPrev.get(), m_lvPrev.get()};
            b.good = {m_luGood.get(), m_lvGood.get()};
            b.elementBytes = sizeof(double);
        } else {
            b.current = {m_u.get(), m_v.get()};
            b.previous = {m_uPrev.get(), m_vPrev.get()};
            b.good = {m_uGood.get(), m_vGood.get()};
            b.elementBytes = sizeof(T);
        }
        return b;
    }

    Variant m_variant;
    Tuning m_tuning;
    int m_device;
    std::string m_name;
    AllocationTracker m_tracker;
    Stream m_stream;
    std::unique_ptr<CublasHandle> m_cublas;

    std::size_t m_rows = 0, m_cols = 0, m_pitch = 0;
    bool m_bf16 = false;  // K stored as bfloat16 (gpu-fused-bf16; T = float)
    DeviceBuffer<T> m_K;
    DeviceBuffer<Bf16> m_Kb;  // K when m_bf16 (m_K then stays empty)
    DeviceBuffer<T> m_u, m_v, m_uPrev, m_vPrev, m_uGood, m_vGood;          // multiplicative scalings
    DeviceBuffer<double> m_lu, m_lv, m_luPrev, m_lvPrev, m_luGood, m_lvGood;  // log-domain potentials
    DeviceBuffer<double> m_a, m_b, m_logA, m_logB;
    DeviceBuffer<T> m_rowSum, m_colSum, m_alpha, m_beta, m_partials;
    DeviceBuffer<T> m_uHeld, m_vHeld;  // over-relaxed gpu-mapuot: the scalings its matrix holds
    // Accelerated gpu-fused on a matrix that fits one cluster's shared memory: the
    // iterations of a chunk in one launch (cluster_iterations.h).
    ClusterPlan m_clusterPlan;
    DeviceBuffer<double> m_logPartMax, m_logPartSum;
    DeviceBuffer<double> m_marginScratch;  // column sums (or log band partials) for progress marginals
    DeviceBuffer<CheckValues> m_check;
    DeviceBuffer<double> m_translationState;  // launchTranslate's state and partials (TI mode)
    DeviceBuffer<unsigned long long> m_scratch;  // [0] first bad cost, [1] zero rows | zero cols (2 ints)
    DeviceBuffer<unsigned char> m_cublasWorkspace;
    std::unique_ptr<CostUploader> m_uploader;  // a user-given cost's chunked, overlapped upload
    PinnedBuffer<CheckValues> m_hostCheck{1};

    FusedPlan m_fused;
    int m_partialRows = 0;
    int m_logBands = 0;
    int m_marginBands = 1;
    double m_fa = 1, m_fb = 1;
    TranslationParams m_translation;
    bool m_translate = false;  // translation-invariant mode: launchTranslate after each pass
    bool m_accelerate = false;  // over-relaxed: relaxed row pass, then the step (its own TI shifts):
                                // launchColumnsAndRelaxedStep (gpu-fused) or launchRelaxedStep
    RelaxedParams m_relaxed;
    DeviceBuffer<RelaxedState> m_relaxedState;
    DeviceBuffer<double> m_relaxedWork;  // the step kernels' per-block partials
    PinnedBuffer<RelaxedState> m_hostRelaxed{1};

    std::string m_graphKey;
    IterationGraphs m_graphs;
    bool m_programmatic = false;  // programmatic dependent launch between the fused passes
};

template <typename T>
void Engine<T>::prepare(std::size_t rows, std::size_t cols, std::size_t pitch)
{
    const bool sameShape = rows == m_rows && cols == m_cols && pitch == m_pitch && kData();
    if (!sameShape) {
        // Free everything first so that the peak never holds two matrices.
        clearGraphs();
        m_K.release();
        m_Kb.release();
        m_partials.release();
        m_logPartMax.release();
        m_logPartSum.release();
        m_marginScratch.release();
        m_uploader.reset();  // staging sized for the old matrix
        m_rows = m_cols = m_pitch = 0;
    }
    AllocationTracker* t = &m_tracker;
    if (m_bf16) {
        // Plan first: a shape the one-pass kernel cannot take is refused before K is allocated.
        if constexpr (std::is_same_v<T, float>)
            m_fused = planFused<float, Bf16>(rows, cols, pitch, m_device, m_tuning.fusedCluster,
                                             m_tuning.fusedEvenGroups);
        if (!m_fused.usable) {
            std::ostringstream msg;
            msg << m_name << " cannot take rows of " << cols
                << " columns on this GPU (its one-pass kernel takes rows of up to 16384 entries); use gpu-fused, "
                   "which reads wide rows in two passes";
            throw Error(ErrorCode::InvalidArgument, msg.str());
        }
        m_Kb.ensure(rows * pitch, t);
    } else {
        m_K.ensure(rows * pitch, t);
    }
    m_a.ensure(rows, t);
    m_b.ensure(cols, t);
    m_logA.ensure(rows, t);
    m_logB.ensure(cols, t);
    m_check.ensure(1, t);
    m_scratch.ensure(2, t);
    if (isLog()) {
        m_lu.ensure(rows, t);
        m_lv.ensure(cols, t);
        m_luPrev.ensure(rows, t);
        m_lvPrev.ensure(cols, t);
        m_luGood.ensure(rows, t);
        m_lvGood.ensure(cols, t);
        m_logBands = logColumnBands(rows, cols, m_device);
        m_logPartMax.ensure(std::size_t(m_logBands) * cols, t);
        m_logPartSum.ensure(std::size_t(m_logBands) * cols, t);
    } else {
        m_u.ensure(rows, t);
        m_v.ensure(pitch, t);
        m_uPrev.ensure(rows, t);
        m_vPrev.ensure(pitch, t);
        m_uGood.ensure(rows, t);
        m_vGood.ensure(pitch, t);
    }
    if (m_variant == Variant::Fused) {
        if (!m_bf16)
            m_fused = planFused<T>(rows, cols, pitch, m_device, m_tuning.fusedCluster, m_tuning.fusedEvenGroups);
        int major = 0;
        UOT_CUDA_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, m_device));
        m_programmatic = m_tuning.programmaticLaunch && major >= 9;
        if (m_fused.usable) {
            // Units that write partial rows: blocks, or clusters of blocks.
            const int units = m_fused.blocks / m_fused.cluster;
            int partials = m_tuning.fusedPartials;
            if (partials <= 0) {
                // One private row per unit (no atomics) when that costs under 3.4% of
                // the matrix, else fewer rows shared through atomics.
                partials = units <= static_cast<int>(rows / 30) ? units
                                                                 : static_cast<int>(std::max<std::size_t>(1, rows / 64));
            }
            m_partialRows = std::min(partials, units);
            m_partials.ensure(std::size_t(m_partialRows) * pitch, t);
        }
    }
    if (needsCublas() || m_variant == Variant::MapUot) {
        m_rowSum.ensure(rows, t);
        m_colSum.ensure(pitch, t);
    }
    if (m_variant == Variant::Fused) m_colSum.ensure(pitch, t);  // K^T u (the finalize writes it; progress marginals)
    if (m_variant == Variant::MapUot) {
        m_alpha.ensure(rows, t);
        m_beta.ensure(pitch, t);
        m_uHeld.ensure(rows, t);
        m_vHeld.ensure(pitch, t);
    }
    if (needsCublas() && !m_cublas) {
        m_cublas = std::make_unique<CublasHandle>();
        m_cublasWorkspace.ensure(kCublasWorkspaceBytes, t);
        UOT_CUBLAS_CHECK(cublasLibrary().setStream(m_cublas->get(), m_stream.get()));
        UOT_CUBLAS_CHECK(cublasLibrary().setWorkspace(m_cublas->get(), m_cublasWorkspace.get(), kCublasWorkspaceBytes));
    }
    m_rows = rows;
    m_cols = cols;
    m_pitch = pitch;
}

template <typename T>
template <typename C>
void Engine<T>::buildFromDense(const C* host, std::size_t rows, std::size_t cols, const BuildParams& params)
{
    // The cost travels in chunks of rows through page-locked staging on a copy
    // stream, the build of one chunk overlapping the upload of the next
    // (gpu/cost_upload.h); at most two chunks are on the device beside K.
    if (!m_uploader) m_uploader = std::make_unique<CostUploader>();
    const std::size_t chunkRows = m_tuning.overlappedUpload
                                      ? CostUploader::chunkRowsFor(cols * sizeof(C), rows, kBytes())
                                      : std::clamp<std::size_t>(std::max(cols * sizeof(C), kBytes() / 100) /
                                                                    (cols * sizeof(C)), 1, rows);
    unsigned long long* firstBad = m_scratch.get();
    UOT_CUDA_CHECK(cudaMemsetAsync(firstBad, 0xff, sizeof(unsigned long long), m_stream.get()));
    m_uploader->upload(host, rows, cols, chunkRows, m_stream.get(), &m_tracker, m_tuning.overlappedUpload,
                       [&](const C* chunk, std::size_t r0, std::size_t n) {
                           withK([&](auto* K) {
                               using S = std::remove_pointer_t<decltype(K)>;
                               launchBuildFromDense<S, C>(chunk, r0, n, cols, m_pitch, K, params, firstBad,
                                                          m_stream.get());
                           });
                       });
    unsigned long long bad = 0;
    UOT_CUDA_CHECK(cudaMemcpyAsync(&bad, firstBad, sizeof(bad), cudaMemcpyDeviceToHost, m_stream.get()));
    UOT_CUDA_CHECK(cudaStreamSynchronize(m_stream.get()));
    if (bad != std::numeric_limits<unsigned long long>::max()) {
        const std::size_t i = bad / cols, j = bad % cols;
        std::ostringstream msg;
        msg << "cost matrix entry (" << i << ", " << j << ") is " << static_cast<double>(host[bad])
            << ": costs must be finite and >= 0";
        throw Error(ErrorCode::InvalidArgument, msg.str());
    }
}

template <typename T>
void Engine<T>::buildKernel(const UotProblem& problem)
{
    BuildParams params;
    params.invEps = 1.0 / problem.eps;
    params.logDomain = isLog();
    if (problem.reference == ReferenceMeasure::Product) {
        params.logA = m_logA.get();
        params.logB = m_logB.get();
    }
    if (const auto* dense = std::get_if<DenseCost>(&problem.cost)) {
        if (dense->f32)
            buildFromDense<float>(dense->f32, m_rows, m_cols, params);
        else
            buildFromDense<double>(dense->f64, m_rows, m_cols, params);
    } else {
        const auto& pc = std::get<PointCloudCost>(problem.cost);
        if (pc.dim == 0 || !pc.x || !pc.y)
            throw Error(ErrorCode::InvalidArgument, "point-cloud cost needs two point sets of dimension >= 1");
        for (std::size_t k = 0; k < (pc.rows + pc.cols) * pc.dim; ++k) {
            const double value = k < pc.rows * pc.dim ? pc.x[k] : pc.y[k - pc.rows * pc.dim];
            if (!std::isfinite(value))
                throw Error(ErrorCode::InvalidArgument, "point-cloud cost: a point coordinate is not finite");
        }
        if (!(pc.scale >= 0) || !std::isfinite(pc.scale))
            throw Error(ErrorCode::InvalidArgument, "point-cloud cost: scale must be finite and >= 0");
        DeviceBuffer<double> x(pc.rows * pc.dim, &m_tracker), y(pc.cols * pc.dim, &m_tracker);
        upload(x.get(), pc.x, pc.rows * pc.dim, m_stream.get());
        upload(y.get(), pc.y, pc.cols * pc.dim, m_stream.get());
        withK([&](auto* K) {
            using S = std::remove_pointer_t<decltype(K)>;
            launchBuildFromPoints<S>(x.get(), y.get(), m_rows, m_cols, pc.dim, pc.scale, m_pitch, K, params,
                                     m_stream.get());
        });
        UOT_CUDA_CHECK(cudaStreamSynchronize(m_stream.get()));
    }
}

template <typename T>
void Engine<T>::enqueueIteration()
{
    cudaStream_t s = m_stream.get();
    const std::size_t M = m_rows, N = m_cols, P = m_pitch;
    const double* omega = relaxedOmega();
    switch (m_variant) {
    case Variant::Fused:
        if (m_fused.usable) {
            withK([&](const auto* K) {
                launchFused<T>(m_fused, K, M, P, m_v.get(), m_a.get(), m_fa, m_u.get(), m_partials.get(),
                               m_partialRows, m_programmatic, s, omega);
            });
            const bool exclusive = m_partialRows >= m_fused.blocks / m_fused.cluster;
            const int partialRows = exclusive ? -m_partialRows : m_partialRows;
            if (m_accelerate && m_tuning.stepInColumns && N <= kColumnsStepMaxCols) {
                // The step's sweep and decision inside the column half-step, then the commit.
                launchColumnsAndRelaxedStep<T>(m_partials.get(), partialRows, P, m_fb, m_colSum.get(), m_u.get(),
                                               m_v.get(), m_uPrev.get(), m_vPrev.get(), M, N, m_a.get(), m_b.get(),
                                               m_logA.get(), m_logB.get(), m_relaxed, m_relaxedState.get(),
                                               m_relaxedWork.get(), m_programmatic, s);
                return;
            }
            launchFinalizeColumns<T>(m_partials.get(), partialRows, P, N, m_b.get(), m_fb, m_v.get(), m_colSum.get(),
                                     m_tuning.finalizeLanes, m_programmatic, s);
            break;
        }
        [[fallthrough]];  // rows too wide for the on-chip pipeline: two read passes
    case Variant::PotStyle:
        UOT_CUBLAS_CHECK(gemv(m_cublas->get(), CUBLAS_OP_T, static_cast<int>(N), static_cast<int>(M), m_K.get(),
                              static_cast<int>(P), m_v.get(), m_rowSum.get()));
        launchScalingUpdate<T>(m_rowSum.get(), m_a.get(), m_u.get(), M, m_fa, s, omega);
        UOT_CUBLAS_CHECK(gemv(m_cublas->get(), CUBLAS_OP_N, static_cast<int>(N), static_cast<int>(M), m_K.get(),
                              static_cast<int>(P), m_u.get(), m_colSum.get()));
        launchScalingUpdate<T>(m_colSum.get(), m_b.get(), m_v.get(), N, m_fb, s);
        break;
    case Variant::MapUot:
        if (m_accelerate) {
            // Over-relaxed: part 2 scales A by the relaxed row factors (u = F~) and sums its
            // columns; the plain column update (G^pass) goes to v; the step kernels settle
            // (u, v) (TI shifts, relaxed columns, accept or put back); part 4 then brings A
            // to the plan of that (u, v), row and column factors in one read and write
            // (launchMapRealign). docs/TIME_TO_SOLUTION.md, "gpu-mapuot".
            launchMapFactors<T>(m_rowSum.get(), m_a.get(), m_u.get(), m_alpha.get(), M, m_fa, s, omega);
            launchMapApplyRows<T>(m_K.get(), M, P, m_alpha.get(), m_colSum.get(), m_tuning.mapTx, m_tuning.mapTy,
                                  m_tuning.mapNy, s);
            launchMapFactors<T>(m_colSum.get(), m_b.get(), m_v.get(), m_beta.get(), N, m_fb, s);
            launchRelaxedStep<T>(m_u.get(), m_v.get(), m_uPrev.get(), m_vPrev.get(), M, N, m_a.get(), m_b.get(),
                                 m_logA.get(), m_logB.get(), m_relaxed, m_relaxedState.get(), m_relaxedWork.get(), s);
            launchMapRealign<T>(m_u.get(), m_uHeld.get(), m_alpha.get(), M, m_v.get(), m_vHeld.get(), m_beta.get(), N,
                                s);
            launchMapApplyCols<T>(m_K.get(), M, P, m_beta.get(), m_rowSum.get(), m_tuning.rowTx, m_tuning.rowNy, s,
                                  m_alpha.get());
            return;
        }
        // TI: each half-step's shift goes into its factors before they scale the matrix.
        launchMapFactors<T>(m_rowSum.get(), m_a.get(), m_u.get(), m_alpha.get(), M, m_fa, s);
        if (m_translate)
            launchTranslateHalf<T>(m_u.get(), m_alpha.get(), M, N, m_a.get(), m_translation, false,
                                   m_translationState.get(), s);
        launchMapApplyRows<T>(m_K.get(), M, P, m_alpha.get(), m_colSum.get(), m_tuning.mapTx, m_tuning.mapTy,
                              m_tuning.mapNy, s);
        launchMapFactors<T>(m_colSum.get(), m_b.get(), m_v.get(), m_beta.get(), N, m_fb, s);
        if (m_translate)
            launchTranslateHalf<T>(m_v.get(), m_beta.get(), M, N, m_b.get(), m_translation, true,
                                   m_translationState.get(), s);
        launchMapApplyCols<T>(m_K.get(), M, P, m_beta.get(), m_rowSum.get(), m_tuning.rowTx, m_tuning.rowNy, s);
        break;
    case Variant::Log:
        launchLogRows<T>(m_K.get(), M, N, P, m_lv.get(), m_logA.get(), m_fa, m_lu.get(), s, omega);
        launchLogCols<T>(m_K.get(), M, N, P, m_lu.get(), m_logB.get(), m_fb, m_lv.get(), m_logPartMax.get(),
                         m_logPartSum.get(), m_logBands, s);
        break;
    }
    if (m_accelerate) {
        if (isLog())
            launchRelaxedStep<double>(m_lu.get(), m_lv.get(), m_luPrev.get(), m_lvPrev.get(), M, N, m_a.get(),
                                      m_b.get(), m_logA.get(), m_logB.get(), m_relaxed, m_relaxedState.get(),
                                      m_relaxedWork.get(), s);
        else
            launchRelaxedStep<T>(m_u.get(), m_v.get(), m_uPrev.get(), m_vPrev.get(), M, N, m_a.get(), m_b.get(),
                                 m_logA.get(), m_logB.get(), m_relaxed, m_relaxedState.get(), m_relaxedWork.get(), s);
    } else if (m_translate && m_variant != Variant::MapUot) {
        enqueueTranslation(false);
    }
}

template <typename T>
void Engine<T>::enqueueTranslation(bool init)
{
    if (isLog())
        launchTranslate<double>(m_lu.get(), m_rows, m_lv.get(), m_cols, m_a.get(), m_b.get(), m_translation, true, init,
                                nullptr, m_translationState.get(), m_stream.get());
    else  // gpu-fused and gpu-pot-style keep K^T u in m_colSum for the progress marginals
        launchTranslate<T>(m_u.get(), m_rows, m_v.get(), m_cols, m_a.get(), m_b.get(), m_translation, false, init,
                           m_colSum.get(), m_translationState.get(), m_stream.get());
}

template <typename T>
int Engine<T>::sweepsPerIteration() const
{
    return m_variant == Variant::Fused && m_fused.usable ? 1 : 2;
}

template <typename T>
void Engine<T>::launchIterations(int count)
{
    if (m_clusterPlan.usable()) {
        launchClusterIterations<T>(m_clusterPlan, m_K.get(), m_rows, m_cols, m_pitch, m_u.get(), m_v.get(),
                                   m_uPrev.get(), m_vPrev.get(), m_a.get(), m_b.get(), m_logA.get(), m_logB.get(),
                                   m_fa, m_relaxed, m_relaxedState.get(), m_relaxedWork.get(), count,
                                   m_stream.get());
        return;
    }
    m_graphs.launch(count, m_stream.get(), [this] { enqueueIteration(); });
}

template <typename T>
void Engine<T>::EnginePasses::enqueueCheck(bool marginals)
{
    Engine& e = m_e;
    cudaStream_t s = e.m_stream.get();
    const std::size_t M = e.m_rows, N = e.m_cols, pitch = e.m_pitch;
    if (e.isLog())
        launchCheck<double>(e.m_lu.get(), e.m_luPrev.get(), M, e.m_lv.get(), e.m_lvPrev.get(), N, true, e.m_check.get(),
                            s);
    else
        launchCheck<T>(e.m_u.get(), e.m_uPrev.get(), M, e.m_v.get(), e.m_vPrev.get(), N, false, e.m_check.get(), s);
    if (!marginals) return;
    // Marginal errors of the current plan for the progress report (two extra reads
    // of the matrix per check, only when someone listens).
    double* out =
        reinterpret_cast<double*>(reinterpret_cast<char*>(e.m_check.get()) + offsetof(CheckValues, marginalA));
    if (e.isLog())
        launchMarginalErrors<T>(e.m_K.get(), M, N, pitch, nullptr, nullptr, e.m_lu.get(), e.m_lv.get(), e.m_a.get(),
                                e.m_b.get(), nullptr, e.m_marginScratch.get(), e.m_logBands, out, s);
    else if (e.m_variant == Variant::MapUot)  // the matrix holds the plan itself
        launchMarginalErrors<T>(e.m_K.get(), M, N, pitch, nullptr, nullptr, nullptr, nullptr, e.m_a.get(), e.m_b.get(),
                                nullptr, e.m_marginScratch.get(), e.m_marginBands, out, s);
    else  // gpu-fused and gpu-pot-style leave K^T u of the last iteration in m_colSum
        e.withK([&](const auto* K) {
            launchMarginalErrors<T>(K, M, N, pitch, e.m_u.get(), e.m_v.get(), nullptr, nullptr, e.m_a.get(),
                                    e.m_b.get(), e.m_colSum.get(), e.m_marginScratch.get(), e.m_marginBands, out, s);
        });
}

// Hardware counters over a few extra iterations, apart from the timed ones: one
// warm-up iteration (so that what fits in L2 is there, as in steady state), then
// kCounterIterations per profiled run, replayed as often as CUPTI needs. They are
// real iterations of the solve and are counted as such.
template <typename T>
void Engine<T>::sampleCounters(const SolveOptions& options, int& iterations, SolveResult& result)
{
    constexpr int kCounterIterations = 4;
    constexpr int kRoomForReplays = 1 + 4 * kCounterIterations;
    if (options.maxIterations - iterations < kRoomForReplays) {
        result.counters.note = "not sampled: fewer than " + std::to_string(kRoomForReplays) + " iterations allowed";
        return;
    }
    launchIterations(1);
    UOT_CUDA_CHECK(cudaStreamSynchronize(m_stream.get()));
    iterations += 1;
    int runs = 0;
    result.counters = profileWorkload(m_device, kCounterIterations, [&] {
        launchIterations(kCounterIterations);
        UOT_CUDA_CHECK(cudaStreamSynchronize(m_stream.get()));
        ++runs;
    });
    iterations += runs * kCounterIterations;
}

// The accelerated iteration. The iteration graph holds the relaxed pass and the
// step kernel, which accepts or undoes the step, updates omega and tests
// convergence on the device; the shared loop (device_loop.h) reads the state back
// only every checkEvery iterations. Iterations the graph runs after the device
// stopped (converged, the cap, a non-finite value) are undone by the step kernel
// and not counted. startRelaxed sets the step kernel's state up.
template <typename T>
void Engine<T>::startRelaxed(const SolveOptions& options)
{
    cudaStream_t s = m_stream.get();
    const std::size_t M = m_rows, N = m_cols;
    // The saved iterate (the step kernel's uSaved, vSaved) starts as the initial one.
    if (isLog()) {
        UOT_CUDA_CHECK(cudaMemcpyAsync(m_luPrev.get(), m_lu.get(), M * sizeof(double), cudaMemcpyDeviceToDevice, s));
        UOT_CUDA_CHECK(cudaMemcpyAsync(m_lvPrev.get(), m_lv.get(), N * sizeof(double), cudaMemcpyDeviceToDevice, s));
    } else {
        UOT_CUDA_CHECK(cudaMemcpyAsync(m_uPrev.get(), m_u.get(), M * sizeof(T), cudaMemcpyDeviceToDevice, s));
        UOT_CUDA_CHECK(cudaMemcpyAsync(m_vPrev.get(), m_v.get(), N * sizeof(T), cudaMemcpyDeviceToDevice, s));
    }
    if (m_variant == Variant::MapUot) {  // its matrix holds the plan of the initial (u, v)
        UOT_CUDA_CHECK(cudaMemcpyAsync(m_uHeld.get(), m_u.get(), M * sizeof(T), cudaMemcpyDeviceToDevice, s));
        UOT_CUDA_CHECK(cudaMemcpyAsync(m_vHeld.get(), m_v.get(), N * sizeof(T), cudaMemcpyDeviceToDevice, s));
    }
    uploadStartingRelaxedState(*m_hostRelaxed.get(), m_relaxedState.get(), options, s);
}

template <typename T>
DeviceCheck Engine<T>::RelaxedPasses::check(bool)
{
    cudaStream_t s = m_e.m_stream.get();
    UOT_CUDA_CHECK(cudaEventRecord(m_chunkEnd.get(), s));
    UOT_CUDA_CHECK(cudaMemcpyAsync(m_e.m_hostRelaxed.get(), m_e.m_relaxedState.get(), sizeof(RelaxedState),
                                   cudaMemcpyDeviceToHost, s));
    UOT_CUDA_CHECK(cudaStreamSynchronize(s));
    float ms = 0;
    UOT_CUDA_CHECK(cudaEventElapsedTime(&ms, m_chunkStart.get(), m_chunkEnd.get()));
    DeviceCheck c = checkOfRelaxedState(*m_e.m_hostRelaxed.get());
    c.chunkSeconds = ms * 1e-3;
    return c;
}

template <typename T>
SolveResult Engine<T>::solve(const UotProblem& problem, const SolveOptions& options, const SolveControl& control)
{
    using Clock = std::chrono::steady_clock;
    const auto setupStart = Clock::now();
    validateSolveOptions(problem, options);
    const std::size_t M = problem.rows(), N = problem.cols();
    // Rows start 16-byte aligned in the stored type (8 entries for bf16).
    const std::size_t pitch = roundUp(N, m_bf16 ? vectorWidth<Bf16>() : vectorWidth<T>());
    cudaStream_t s = m_stream.get();

    SolveResult result;
    result.solver = m_name;
    prepare(M, N, pitch);
    // What runs: gpu-fused without a usable one-pass plan is the two-pass cuBLAS path.
    result.bytesPerIteration =
        matrixTrafficBytes(sweepsFor(m_variant, m_fused.usable), m_bf16 ? sizeof(Bf16) : sizeof(T), M, N);
    m_tracker.resetPeak();
    m_fa = problem.exponentA();
    m_fb = problem.exponentB();

    // Weights and their logs (float64).
    std::vector<double> logA(M), logB(N);
    for (std::size_t i = 0; i < M; ++i) logA[i] = std::log(problem.a[i]);
    for (std::size_t j = 0; j < N; ++j) logB[j] = std::log(problem.b[j]);
    upload(m_a.get(), problem.a.data(), M, s);
    upload(m_b.get(), problem.b.data(), N, s);
    upload(m_logA.get(), logA.data(), M, s);
    upload(m_logB.get(), logB.data(), N, s);
    UOT_CUDA_CHECK(cudaStreamSynchronize(s));  // host vectors above go out of scope only after this

    buildKernel(problem);

    const std::vector<double> u0 = initialScaling(options.warmU, options.warmLogU, M);
    const std::vector<double> v0 = initialScaling(options.warmV, options.warmLogV, N);

    KernelBuildReport report;
    if (!isLog()) {
        int* counts = reinterpret_cast<int*>(m_scratch.get() + 1);
        withK([&](const auto* K) { launchCountZeroLines(K, M, N, pitch, counts, counts + 1, s); });
        int host[2] = {0, 0};
        UOT_CUDA_CHECK(cudaMemcpyAsync(host, counts, sizeof(host), cudaMemcpyDeviceToHost, s));
        UOT_CUDA_CHECK(cudaStreamSynchronize(s));
        report.zeroRows = static_cast<std::size_t>(host[0]);
        report.zeroCols = static_cast<std::size_t>(host[1]);
    }

    // Initial iterate, the snapshot of the last good one, and variant state.
    if (isLog()) {
        const std::vector<double> lu = initialLogScaling(options.warmU, options.warmLogU, M);
        const std::vector<double> lv = initialLogScaling(options.warmV, options.warmLogV, N);
        upload(m_lu.get(), lu.data(), M, s);
        upload(m_lv.get(), lv.data(), N, s);
        UOT_CUDA_CHECK(cudaMemcpyAsync(m_luGood.get(), m_lu.get(), M * sizeof(double), cudaMemcpyDeviceToDevice, s));
        UOT_CUDA_CHECK(cudaMemcpyAsync(m_lvGood.get(), m_lv.get(), N * sizeof(double), cudaMemcpyDeviceToDevice, s));
        UOT_CUDA_CHECK(cudaStreamSynchronize(s));
    } else {
        const std::vector<T> hu = toDeviceType<T>(u0, M), hv = toDeviceType<T>(v0, pitch);
        upload(m_u.get(), hu.data(), M, s);
        upload(m_v.get(), hv.data(), pitch, s);
        UOT_CUDA_CHECK(cudaMemcpyAsync(m_uGood.get(), m_u.get(), M * sizeof(T), cudaMemcpyDeviceToDevice, s));
        UOT_CUDA_CHECK(cudaMemcpyAsync(m_vGood.get(), m_v.get(), pitch * sizeof(T), cudaMemcpyDeviceToDevice, s));
        UOT_CUDA_CHECK(cudaMemsetAsync(m_vPrev.get(), 0, pitch * sizeof(T), s));
        if (m_partials.get()) UOT_CUDA_CHECK(cudaMemsetAsync(m_partials.get(), 0, m_partials.bytes(), s));
        if (m_colSum.get()) UOT_CUDA_CHECK(cudaMemsetAsync(m_colSum.get(), 0, m_colSum.bytes(), s));
        if (m_variant == Variant::MapUot) {
            UOT_CUDA_CHECK(cudaMemsetAsync(m_beta.get(), 0, m_beta.bytes(), s));
            if (!options.warmU.empty() || !options.warmV.empty() || !options.warmLogU.empty() ||
                !options.warmLogV.empty())
                launchScaleMatrix<T>(m_K.get(), M, pitch, m_u.get(), m_v.get(), s);
            launchRowSums<T>(m_K.get(), M, N, pitch, m_rowSum.get(), s);
        }
        UOT_CUDA_CHECK(cudaStreamSynchronize(s));
    }

    // Translation-invariant mode: every variant (gpu-mapuot shifts its half-step
    // factors, launchTranslateHalf). Over-relaxation: every variant (gpu-mapuot puts
    // its matrix back to the settled iterate inside its part 4, launchMapRealign).
    m_translation = translationCoefficients(problem);
    m_translate = options.mode == IterationMode::TranslationInvariant && m_translation.active;
    m_accelerate = options.acceleration != Acceleration::None;
    result.mode = toString(m_translate ? IterationMode::TranslationInvariant : IterationMode::Plain);
    result.acceleration = toString(m_accelerate ? options.acceleration : Acceleration::None);
    if (m_accelerate) {
        m_relaxedState.ensure(1, &m_tracker);
        m_relaxedWork.ensure(relaxedWorkDoubles(N), &m_tracker);
        m_relaxed = RelaxedParams{};
        m_relaxed.ra = m_translation.ra;
        m_relaxed.rb = m_translation.rb;
        m_relaxed.fb = m_fb;
        m_relaxed.cs = m_translation.cs;
        m_relaxed.ct = m_translation.ct;
        m_relaxed.translate = m_translate;
        m_relaxed.logDomain = isLog();
        m_relaxed.safeguard = options.relaxationSafeguard;
        m_relaxed.eps = problem.eps;
        m_relaxed.tauA = problem.tauA;
        m_relaxed.tauB = problem.tauB;
        m_relaxed.slack = objectiveSlack(std::is_same_v<T, float>);
        m_relaxed.tolerance = options.tolerance;
        m_relaxed.maxIterations = options.maxIterations;
        m_relaxed.sweeps = sweepsPerIteration();
    }
    // Small problems, when asked for (Tuning::clusterIterations): the accelerated gpu-fused
    // iteration in one cluster, a launch a chunk.
    m_clusterPlan = ClusterPlan{};
    if (m_accelerate && m_variant == Variant::Fused && m_fused.usable && !m_bf16 && m_tuning.clusterIterations) {
        m_clusterPlan = planClusterIterations<T>(M, N, m_device);
    }
    if (!m_accelerate && m_translate) {
        m_translationState.ensure(translationStateDoubles(), &m_tracker);
        enqueueTranslation(true);
    }

    // Graphs bake pointers and parameters in: keep them while these are unchanged.
    {
        std::ostringstream key;
        key << M << ' ' << N << ' ' << kData() << ' '
            << static_cast<const void*>(m_partials.get()) << ' ' << std::hexfloat << m_fa << ' ' << m_fb << ' '
            << m_translate << ' ' << m_translation.ra << ' ' << m_translation.rb << ' ' << m_translation.cs << ' '
            << m_translation.ct << ' ' << static_cast<const void*>(m_translationState.get()) << ' ' << m_accelerate;
        if (m_accelerate)
            key << ' ' << static_cast<const void*>(m_relaxedState.get()) << ' '
                << static_cast<const void*>(m_relaxedWork.get()) << ' ' << m_relaxed.fb << ' '
                << m_relaxed.translate << ' ' << m_relaxed.safeguard << ' ' << m_relaxed.eps << ' ' << m_relaxed.tauA
                << ' ' << m_relaxed.tauB << ' ' << m_relaxed.slack << ' ' << m_relaxed.tolerance << ' '
                << m_relaxed.maxIterations << ' ' << m_relaxed.sweeps;
        if (key.str() != m_graphKey) {
            clearGraphs();
            m_graphKey = key.str();
        }
    }
    result.timings.setupSeconds = std::chrono::duration<double>(Clock::now() - setupStart).count();

    int iterations = 0;
    if (!isLog() && report.underflows()) {
        markUnderflow(result, report, 0);
    } else if (options.maxIterations > 0 && m_accelerate) {
        startRelaxed(options);
        if (options.sampleHardwareCounters)
            result.counters.note = "not sampled: the accelerated iteration (--accel none samples them)";
        RelaxedPasses passes(*this);
        DeviceLoopSetup loop;
        loop.bytesPerIteration = result.bytesPerIteration;
        loop.sweepsPerIteration = sweepsPerIteration();
        loop.markNotFinite = [this, &report](SolveResult& r, int iteration) {
            if (isLog()) {
                r.status = NumericalStatus::NotFinite;
                r.message = "a non-finite value appeared in the log-domain iteration at iteration " +
                            std::to_string(iteration) + "; the last finite iterate is kept";
            } else {
                markUnderflow(r, report, iteration);
            }
        };
        runDeviceLoop(problem, options, control, passes, loop, 0, result);
        iterations = result.iterations;
        const RelaxedState& state = *m_hostRelaxed.get();
        result.omega = state.omega;
        result.rejectedSteps = state.rule.rejections;
    } else if (options.maxIterations > 0) {
        const bool wantMarginals = static_cast<bool>(control.onProgress);
        if (wantMarginals) {
            m_marginBands = logColumnBands(M, N, m_device);
            const int bands = isLog() ? m_logBands : m_marginBands;
            m_marginScratch.ensure(isLog() ? 2 * std::size_t(std::max(1, bands)) * N : N, &m_tracker);
        }
        if (options.sampleHardwareCounters) sampleCounters(options, iterations, result);
        EnginePasses passes(*this);
        DeviceLoopSetup loop;
        loop.bytesPerIteration = result.bytesPerIteration;
        loop.sweepsPerIteration = sweepsPerIteration();
        loop.secondsPerIterationEstimate = static_cast<double>(result.bytesPerIteration) / 2.5e12 + 5e-6;
        loop.translate = m_translate;
        loop.wantMarginals = wantMarginals;
        loop.markNotFinite = [&report](SolveResult& r, int iteration) { markUnderflow(r, report, iteration); };
        runDeviceLoop(problem, options, control, passes, loop, iterations, result);
        iterations = result.iterations;
    }
    result.iterations = iterations;

    // Read back the scalings.
    std::vector<double> hu(M), hv(N);
    if (isLog()) {
        UOT_CUDA_CHECK(cudaMemcpyAsync(hu.data(), m_lu.get(), M * sizeof(double), cudaMemcpyDeviceToHost, s));
        UOT_CUDA_CHECK(cudaMemcpyAsync(hv.data(), m_lv.get(), N * sizeof(double), cudaMemcpyDeviceToHost, s));
        UOT_CUDA_CHECK(cudaStreamSynchronize(s));
    } else {
        std::vector<T> tu(M), tv(N);
        UOT_CUDA_CHECK(cudaMemcpyAsync(tu.data(), m_u.get(), M * sizeof(T), cudaMemcpyDeviceToHost, s));
        UOT_CUDA_CHECK(cudaMemcpyAsync(tv.data(), m_v.get(), N * sizeof(T), cudaMemcpyDeviceToHost, s));
        UOT_CUDA_CHECK(cudaStreamSynchronize(s));
        for (std::size_t i = 0; i < M; ++i) hu[i] = static_cast<double>(tu[i]);
        for (std::size_t j = 0; j < N; ++j) hv[j] = static_cast<double>(tv[j]);
    }
    result.peakDeviceBytes = m_tracker.peak();
    // A point-cloud plan is evaluated on the device (float64, the host pass's
    // figures); a dense cost is not kept on the device, so the host evaluates it,
    // as it does when the device evaluation fails.
    const int device = m_device;
    const PlanEvaluator evaluator = [&options, device](const UotProblem& p, std::span<const double> logU,
                                                       std::span<const double> logV) {
        if (std::holds_alternative<PointCloudCost>(p.cost)) {
            try {
                return evaluatePlanOnDevice(p, logU, logV, device);
            } catch (const Error&) {
                // fall through to the host
            }
        }
        return evaluatePlan(p, logU, logV, options.threads);
    };
    if (isLog())
        finishResultFromLogs(problem, options, std::move(hu), std::move(hv), result, evaluator);
    else
        finishResult(problem, options, hu, hv, result, evaluator);
    return result;
}

// -------------------------------------------------------------------------- solver

std::string GpuSolver::name() const { return m_name; }

std::uint64_t GpuSolver::bytesPerIteration(std::size_t rows, std::size_t cols, Precision precision) const
{
    // The shared memory of the device the solver last ran on (else the current
    // one; the H100's where none answers) decides gpu-fused's one or two passes.
    std::size_t optin = kH100SharedOptinBytes;
    int device = m_engineDevice;
    if (device < 0 && cudaGetDevice(&device) != cudaSuccess) device = -1;
    int value = 0;
    if (device >= 0 && cudaDeviceGetAttribute(&value, cudaDevAttrMaxSharedMemoryPerBlockOptin, device) == cudaSuccess &&
        value > 0)
        optin = static_cast<std::size_t>(value);
    else
        (void)cudaGetLastError();
    return bytesPerIterationFor(m_variant, rows, cols,
                                storedElementBytes(m_storage, precision == Precision::Fp32 ? 4 : 8), optin);
}

GpuSolver::GpuSolver(Variant variant, std::string name, const Tuning& tuning, Storage storage)
    : m_variant(variant), m_name(std::move(name)), m_tuning(tuning), m_storage(storage)
{
}

GpuSolver::~GpuSolver()
{
    // Handed to the backend's cache for the next solver of this kind (gpu/engine_cache.h).
    if (m_engine) EngineCache::instance().park(m_engineKey, std::move(m_engine));
}

SolveResult GpuSolver::solve(const UotProblem& problem, const SolveOptions& options, const SolveControl& control)
{
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
    if (m_storage == Storage::Bf16 && options.precision != Precision::Fp32) {
        throw Error(ErrorCode::InvalidArgument,
                    m_name + " stores K as bfloat16 with float arithmetic and runs at fp32 only; use --precision fp32, "
                             "or gpu-fused for fp64");
    }
    DeviceGuard guard(options.device);
    const std::string key = engineKey(m_name, m_variant, m_storage, options.precision, options.device, m_tuning);
    if (!m_engine || m_engineKey != key) {
        m_engine.reset();
        m_engine = EngineCache::instance().take(key);
        if (!m_engine) {
            if (options.precision == Precision::Fp32)
                m_engine = std::make_unique<Engine<float>>(m_variant, m_tuning, options.device, m_name, m_storage);
            else
                m_engine = std::make_unique<Engine<double>>(m_variant, m_tuning, options.device, m_name, m_storage);
            EngineCache::instance().noteCreated();
        }
        m_engineKey = key;
        m_engineDevice = options.device;
    }
    try {
        return m_engine->solve(problem, options, control);
    } catch (...) {
        // A failed solve may leave buffers half-written or the device faulted:
        // the engine is freed, never parked or reused.
        m_engine.reset();
        m_engineKey.clear();
        EngineCache::instance().noteDiscarded();
        throw;
    }
}

std::string engineKey(const std::string& name, Variant variant, Storage storage, Precision precision, int device,
                      const Tuning& t)
{
    const MapReduceConfig& mr = t.mapReduce;
    const char* path = t.clusterIterations ? "cluster" : t.stepInColumns ? "step-in-columns" : "step-kernels";
    std::ostringstream key;
    key << name << ' ' << static_cast<int>(variant) << ' ' << static_cast<int>(storage) << ' '
        << static_cast<int>(precision) << ' ' << device << " | " << path << " | " << t.mapTx << ' ' << t.mapTy << ' '
        << t.mapNy << ' ' << t.rowTx << ' ' << t.rowNy << ' ' << t.fusedPartials << ' ' << t.programmaticLaunch << ' '
        << t.fusedCluster << ' ' << t.finalizeLanes << ' ' << t.fusedEvenGroups << ' ' << t.overlappedUpload << ' '
        << t.clusterIterations << ' ' << t.stepInColumns << " | " << mr.polyEvery << ' ' << mr.prefetch << ' '
        << static_cast<int>(mr.schedule) << ' ' << mr.blocks;
    return key.str();
}

}  // namespace uot::gpu::detail
