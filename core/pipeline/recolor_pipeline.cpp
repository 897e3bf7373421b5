#include "core/pipeline/recolor_pipeline.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <array>
#include <limits>
#include <exception>
#include <future>
#include <map>
#include <optional>

#include "core/color/float_buffer.h"
#include "core/registry/device_registry.h"
#include "core/registry/solver_registry.h"
#include "core/transport/kernel_matrix.h"
#include "core/transport/point_cloud_cost.h"
#include "core/transport/uot_error.h"

namespace uot {

std::string toString(PipelineStage stage)
{
    switch (stage) {
    case PipelineStage::Decode: return "decode";
    case PipelineStage::Palette: return "palette";
    case PipelineStage::Cost: return "cost";
    case PipelineStage::Solve: return "solve";
    case PipelineStage::Map: return "map";
    case PipelineStage::Encode: return "encode";
    }
    return "?";
}

namespace {

using Clock = std::chrono::steady_clock;
double secondsSince(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

void checkCancel(const PipelineControl& control)
{
    if (control.cancel && control.cancel->load(std::memory_order_relaxed)) throw Cancelled();
}

void report(const PipelineControl& control, PipelineStage stage, double fraction)
{
    if (!control.onProgress) return;
    PipelineProgress p;
    p.stage = stage;
    p.fraction = fraction;
    control.onProgress(p);
}

// The CPU variant standing in for a GPU one (the same algorithm: "gpu-fused" ->
// "fused"; the CPU default when the CPU has no such variant).
std::string cpuFallbackSolver(const std::string& gpuName)
{
    return solverOnDevice(gpuName, DeviceKind::Cpu).value_or("auto");
}


void addNote(std::string& notes, const std::string& note)
{
    if (!notes.empty()) notes += "; ";
    notes += note;
}

bool samePalette(const PaletteSettings& a, const PaletteSettings& b)
{
    return a.method == b.method && a.size == b.size && a.finestBins == b.finestBins && a.seed == b.seed &&
           a.sampleLimit == b.sampleLimit && a.kmeansIterations == b.kmeansIterations;
}

bool sameTransport(const TransportSettings& a, const TransportSettings& b)
{
    const SolveOptions &x = a.options, &y = b.options;
    return a.solver == b.solver && a.eps == b.eps && a.adherence == b.adherence && a.sourceAdherence == b.sourceAdherence &&
           a.reference == b.reference && a.multiscale == b.multiscale && a.coarseSize == b.coarseSize &&
           x.precision == y.precision && x.maxIterations == y.maxIterations &&
           x.tolerance == y.tolerance && x.checkEvery == y.checkEvery && x.device == y.device &&
           x.allowStabilizedFallback == y.allowStabilizedFallback;
}

bool sameSmoothing(const MappingSettings& a, const MappingSettings& b)
{
    return a.lutSize == b.lutSize && a.smooth == b.smooth && a.smoothGuide == b.smoothGuide &&
           a.smoothRadius == b.smoothRadius && a.smoothEps == b.smoothEps && a.smoothSubsample == b.smoothSubsample;
}

}  // namespace

void validateSettings(const RecolorSettings& s)
{
    auto bad = [](const std::string& what) { throw Error(ErrorCode::InvalidArgument, what); };
    if (s.palette.size < 1 || s.palette.size > kMaxPaletteSize)
        bad("palette size must be between 1 and " + std::to_string(kMaxPaletteSize));
    const int bins = s.palette.finestBins;
    if (bins < 8 || bins > 256 || (bins & (bins - 1)) != 0) bad("palette bins must be a power of two between 8 and 256");
    if (!(s.transport.eps > 0) || !std::isfinite(s.transport.eps)) bad("eps must be a positive number");
    if (!(s.transport.adherence > 0)) bad("adherence (tau on the reference side) must be > 0 or inf");
    if (!(s.transport.sourceAdherence > 0)) bad("source adherence (tau on the source side) must be > 0 or inf");
    if (s.transport.options.maxIterations < 1) bad("maximum iterations must be >= 1");
    if (!(s.mapping.strength >= 0) || s.mapping.strength > 2) bad("strength must be between 0 and 2");
    if (s.mapping.lutSize < 9 || s.mapping.lutSize > 129) bad("LUT size must be between 9 and 129");
    if (!(s.mapping.smoothRadius >= 0) || s.mapping.smoothRadius > 0.5) bad("smoothing radius must be between 0 and 0.5");
    if (!(s.mapping.smoothEps > 0)) bad("smoothing eps must be > 0");
    if (s.mapping.smoothSubsample < 0 || s.mapping.smoothSubsample > 64) bad("smoothing subsample must be between 0 and 64");
    if (s.threads < 0) bad("threads must be >= 0");
}

struct RecolorPipeline::State {
    RecolorSettings settings;
    PipelineStats stats;

    std::shared_ptr<const Image> source;
    std::shared_ptr<const Image> reference;
    bool externalReferencePalette = false;

    // Source in the working space (n x 3) and the space it is in, converted only
    // when the CPU mapping needs it (fullSourceColors); the palettes convert just
    // the pixels they sample.
    // Not value-initialised: a 12 MP image would spend a pass zeroing 144 MB.
    FloatBuffer sourceColors;
    bool sourceColorsValid = false;
    WorkingSpace sourceColorsSpace = WorkingSpace::Lab;

    // The source at full resolution in settings.space (converted on first use).
    const float* fullSourceColors()
    {
        if (!sourceColorsValid || sourceColorsSpace != settings.space) {
            sourceColors = FloatBuffer(source->pixelCount() * 3);
            imageToSpace(*source, settings.space, sourceColors.data(), settings.threads);
            sourceColorsValid = true;
            sourceColorsSpace = settings.space;
        }
        return sourceColors.data();
    }

    std::shared_ptr<const Palette> sourcePalette, referencePalette;
    PaletteSettings sourcePaletteSettings, referencePaletteSettings;

    UotProblem problem;
    bool problemValid = false;

    std::optional<SolveResult> plan;
    TransportSettings planSettings;
    std::map<std::string, std::unique_ptr<UotSolver>> solvers;

    LowResolution low;      // block means for the fast guided filter
    int lowSubsample = 0;   // 0: none computed
    DisplacementLut lut;
    bool lutValid = false;
    DisplacementField field;  // compact smoothed displacement (guided-filter coefficients)
    bool fieldValid = false;
    MappingSettings fieldSettings;

    // GPU mapping (with a gpu-* solver and a usable device): the source kept on
    // the device in the working space, and its block means.
    std::unique_ptr<DeviceColorMapper> gpuMapper;
    bool gpuMapperFailed = false;     // do not retry creating it for this pipeline
    bool gpuSourceValid = false;
    WorkingSpace gpuSpace = WorkingSpace::Lab;
    std::string solveNote, mapNote;   // why the GPU was not used (empty when it was or was not asked for)

    void dropFromPalettes()
    {
        problemValid = false;
        plan.reset();
        dropFromPlan();
    }
    void dropFromPlan()
    {

        low = {};
        lowSubsample = 0;
        lutValid = false;
        lut = {};
        fieldValid = false;
        field = {};
    }
};

RecolorPipeline::RecolorPipeline(RecolorSettings settings) : m_state(std::make_unique<State>())
{
    validateSettings(settings);
    m_state->settings = std::move(settings);
}

RecolorPipeline::~RecolorPipeline() = default;

void RecolorPipeline::setSettings(const RecolorSettings& settings)
{
    validateSettings(settings);
    m_state->settings = settings;  // caches are checked against the settings they were built with
}

const RecolorSettings& RecolorPipeline::settings() const { return m_state->settings; }

void RecolorPipeline::setSource(Image image)
{
    validateImage(image, "source image");
    State& s = *m_state;
    s.source = std::make_shared<const Image>(std::move(image));
    s.sourceColorsValid = false;
    s.sourceColors.reset();
    s.sourcePalette.reset();
    s.gpuSourceValid = false;
    s.dropFromPalettes();
}

void RecolorPipeline::setReference(Image image)
{
    validateImage(image, "reference image");
    State& s = *m_state;
    s.reference = std::make_shared<const Image>(std::move(image));
    s.externalReferencePalette = false;
    s.referencePalette.reset();
    s.dropFromPalettes();
}

void RecolorPipeline::setReferencePalette(std::shared_ptr<const Palette> palette)
{
    if (!palette || palette->size() == 0)
        throw Error(ErrorCode::InvalidArgument, "setReferencePalette: the palette is empty");
    State& s = *m_state;
    s.reference.reset();
    s.externalReferencePalette = true;
    s.referencePalette = std::move(palette);
    s.referencePaletteSettings = s.settings.palette;
    s.dropFromPalettes();
}

bool RecolorPipeline::hasSource() const { return m_state->source != nullptr; }
bool RecolorPipeline::hasReference() const { return m_state->reference != nullptr || m_state->externalReferencePalette; }

std::shared_ptr<const Palette> computePalette(const Image& image, const RecolorSettings& settings,
                                              const PipelineControl& control)
{
    checkCancel(control);
    return std::make_shared<const Palette>(buildImagePalette(image, settings.space, settings.palette, settings.threads));
}

void RecolorPipeline::preparePalettes(const PipelineControl& control)
{
    State& s = *m_state;
    if (!s.source) throw Error(ErrorCode::InvalidArgument, "no source image set");
    if (!hasReference()) throw Error(ErrorCode::InvalidArgument, "no reference image set");
    const RecolorSettings& st = s.settings;
    const auto start = Clock::now();
    bool reused = true;
    report(control, PipelineStage::Palette, 0.0);

    if (!s.sourcePalette || s.sourcePalette->space != st.space || !samePalette(s.sourcePaletteSettings, st.palette)) {
        checkCancel(control);
        // The CPU mapping converts every pixel anyway: the palette then reads those
        // colors; the GPU path converts on the device, and here only the sample.
        const bool cpuMapping = !runsOnGpu(st.transport.solver);
        s.sourcePalette = std::make_shared<const Palette>(
            cpuMapping ? buildPalette(s.fullSourceColors(), s.source->pixelCount(), st.space, st.palette, st.threads)
                       : buildImagePalette(*s.source, st.space, st.palette, st.threads));
        s.sourcePaletteSettings = st.palette;
        s.dropFromPalettes();
        reused = false;
    }
    report(control, PipelineStage::Palette, 0.5);
    if (s.externalReferencePalette) {
        if (s.referencePalette->space != st.space)
            throw Error(ErrorCode::InvalidArgument, "the reference palette was built in " +
                                                        toString(s.referencePalette->space) + ", the settings ask for " +
                                                        toString(st.space));
    } else if (!s.referencePalette || s.referencePalette->space != st.space ||
               !samePalette(s.referencePaletteSettings, st.palette)) {
        s.referencePalette = computePalette(*s.reference, st, control);
        s.referencePaletteSettings = st.palette;
        s.dropFromPalettes();
        reused = false;
    }
    s.stats.sourcePaletteSize = s.sourcePalette->size();
    s.stats.referencePaletteSize = s.referencePalette->size();
    s.stats.paletteFromCache = reused;
    if (!reused) s.stats.timings.palette = secondsSince(start);  // a cached stage keeps its figure since resetTimings()
    report(control, PipelineStage::Palette, 1.0);

    // Cost: the squared distance between palette points divided by D^2 (never stored).
    if (!s.problemValid) {
        const auto costStart = Clock::now();
        const double range = nominalRange(st.space);
        PointCloudCost cost;
        cost.x = s.sourcePalette->points.data();
        cost.y = s.referencePalette->points.data();
        cost.rows = s.sourcePalette->size();
        cost.cols = s.referencePalette->size();
        cost.dim = 3;
        cost.scale = 1.0 / (range * range);
        s.problem = UotProblem{};
        s.problem.cost = cost;
        s.problem.a = s.sourcePalette->weights;
        s.problem.b = s.referencePalette->weights;
        s.problemValid = true;
        s.stats.timings.cost = secondsSince(costStart);
    }
}

std::optional<UotProblem> RecolorPipeline::transportProblem() const
{
    const State& s = *m_state;
    if (!s.problemValid) return std::nullopt;
    UotProblem problem = s.problem;
    const TransportSettings& ts = s.settings.transport;
    problem.eps = ts.eps;
    problem.tauA = ts.sourceAdherence;
    problem.tauB = ts.adherence;
    problem.reference = ts.reference;
    return problem;
}

namespace {

// Weighted grid reduction of a palette to at most `size` points (the finest
// grid over its bounding box that fits), for the coarse solve.
Palette reducePalette(const Palette& fine, int size)
{
    double lo[3] = {1e300, 1e300, 1e300}, hi[3] = {-1e300, -1e300, -1e300};
    for (std::size_t i = 0; i < fine.size(); ++i)
        for (int a = 0; a < 3; ++a) lo[a] = std::min(lo[a], fine.points[3 * i + a]), hi[a] = std::max(hi[a], fine.points[3 * i + a]);
    // Start near the size that fits (cube root of the target, doubled: palettes fill a
    // fraction of their box) and coarsen until it does.
    const int start = std::min(64, 2 * static_cast<int>(std::ceil(std::cbrt(static_cast<double>(size)))) + 2);
    for (int bins = start; bins >= 1; --bins) {
        std::map<std::size_t, std::array<double, 4>> cells;
        for (std::size_t i = 0; i < fine.size(); ++i) {
            std::size_t key = 0;
            for (int a = 0; a < 3; ++a) {
                const double span = hi[a] - lo[a];
                const int q = span > 0 ? std::min(bins - 1, static_cast<int>((fine.points[3 * i + a] - lo[a]) / span * bins)) : 0;
                key = key * static_cast<std::size_t>(bins) + static_cast<std::size_t>(q);
            }
            auto& c = cells[key];
            const double w = fine.weights[i];
            c[0] += w;
            for (int a = 0; a < 3; ++a) c[1 + a] += w * fine.points[3 * i + a];
        }
        if (cells.size() > static_cast<std::size_t>(size) && bins > 1) continue;
        Palette coarse;
        coarse.space = fine.space;
        for (const auto& [key, c] : cells) {
            coarse.weights.push_back(c[0]);
            for (int a = 0; a < 3; ++a) coarse.points.push_back(c[1 + a] / c[0]);
        }
        return coarse;
    }
    return fine;
}

// Threads of the coarse solve of the multiscale warm start.
constexpr int kCoarseSolveThreads = 4;

}  // namespace

// Multiscale warm start: solves the problem between coarse reductions of the two
// palettes, then carries the coarse source scalings to the fine reference points
// through one exact v-update: v_j = (b_j / sum_c u_c exp(-C(x_c, y_j) / eps))^f_b,
// computed in the log domain. Returns an empty vector when it cannot help.
std::vector<double> RecolorPipeline::coarseWarmStart(State& s, UotSolver& solver, const SolveOptions& fineOptions,
                                                     const PipelineControl& control)
{
    const TransportSettings& ts = s.settings.transport;
    const Palette coarseSource = reducePalette(*s.sourcePalette, ts.coarseSize);
    const Palette coarseReference = reducePalette(*s.referencePalette, ts.coarseSize);
    const auto* fineCost = std::get_if<PointCloudCost>(&s.problem.cost);
    if (!fineCost) return {};
    UotProblem coarse = s.problem;
    PointCloudCost cost = *fineCost;
    cost.x = coarseSource.points.data();
    cost.y = coarseReference.points.data();
    cost.rows = coarseSource.size();
    cost.cols = coarseReference.size();
    coarse.cost = cost;
    coarse.a = coarseSource.weights;
    coarse.b = coarseReference.weights;
    SolveOptions options = fineOptions;
    options.warmU = {};
    options.warmV = {};
    options.evaluateFinalPlan = false;
    // A few threads are plenty for a <= 512^2 problem, and fewer threads than
    // cores keep the barriers of the 50 iterations from waiting on a thread that
    // the render's prefetch thread (or anything else) pushed off its core.
    options.threads = std::min(kCoarseSolveThreads, resolveThreadCount(fineOptions.threads));
    SolveControl sc;
    sc.cancel = control.cancel;
    const SolveResult r = solver.solve(coarse, options, sc);
    if (r.cancelled) throw Cancelled();
    if (r.status == NumericalStatus::NotFinite || r.status == NumericalStatus::Underflow) return {};
    const std::size_t cols = s.problem.cols(), rows = coarseSource.size();
    const double fb = s.problem.exponentB();
    const double* y = fineCost->y;
    std::vector<double> v(cols);
    bool finite = true;
    const int threads = resolveThreadCount(s.settings.threads);
#pragma omp parallel for num_threads(threads) schedule(static) reduction(&& : finite)
    for (std::size_t j = 0; j < cols; ++j) {
        double best = -std::numeric_limits<double>::infinity();
        std::vector<double> e(rows);
        for (std::size_t c = 0; c < rows; ++c) {
            double d = 0;
            for (int a = 0; a < 3; ++a) d += (coarseSource.points[3 * c + a] - y[3 * j + a]) * (coarseSource.points[3 * c + a] - y[3 * j + a]);
            e[c] = r.logU[c] - cost.scale * d / s.problem.eps;
            best = std::max(best, e[c]);
        }
        double sum = 0;
        for (std::size_t c = 0; c < rows; ++c) sum += std::exp(e[c] - best);
        const double logKu = best + std::log(sum);
        v[j] = std::exp(fb * (std::log(s.problem.b[j]) - logKu));
        finite = finite && std::isfinite(v[j]) && v[j] > 0;
    }
    if (!finite) return {};
    return v;
}

void RecolorPipeline::solve(const PipelineControl& control)
{
    preparePalettes(control);
    solvePrepared(control);
}

void RecolorPipeline::solvePrepared(const PipelineControl& control)
{
    State& s = *m_state;
    const TransportSettings& ts = s.settings.transport;
    if (s.plan && sameTransport(s.planSettings, ts)) {
        s.stats.planFromCache = true;
        return;
    }
    checkCancel(control);
    const auto start = Clock::now();
    s.problem.eps = ts.eps;
    s.problem.tauA = ts.sourceAdherence;
    s.problem.tauB = ts.adherence;
    s.problem.reference = ts.reference;
    validateProblem(s.problem);

    // A gpu-* solver runs on the GPU when one is usable; otherwise, or when the
    // GPU fails, the same variant on the CPU (with a note in the stats).
    std::string solverName = ts.solver;
    s.solveNote.clear();
    const bool wantGpu = runsOnGpu(ts.solver);
    if (wantGpu) {
        const std::string reason = gpuUnavailableReason();
        if (!reason.empty()) {
            solverName = cpuFallbackSolver(ts.solver);
            s.solveNote = "GPU unavailable (" + reason + "): solved on the CPU with '" + solverName + "'";
        }
    }
    // A CPU solve whose palette matrix would not fit in memory (or, for "auto",
    // is past the measured crossover) runs matrix-free.
    const std::optional<SolverCapabilities> caps = solverCapabilities(solverName);
    if (!runsOnGpu(solverName) && caps && caps->storesMatrix && matrixFreeSolver(DeviceKind::Cpu) &&
        shouldUseMatrixFree(s.problem.rows(), s.problem.cols(), ts.options.precision, ts.solver == "auto")) {
        addNote(s.solveNote, "the " + std::to_string(s.problem.rows()) + " x " + std::to_string(s.problem.cols()) +
                                 " palette matrix is solved matrix-free with '" + *matrixFreeSolver(DeviceKind::Cpu) + "' instead of '" +
                                 solverName + "' (it would not fit in memory, or it is faster at this size)");
        solverName = *matrixFreeSolver(DeviceKind::Cpu);
    }
    SolveOptions baseOptions = ts.options;
    if (baseOptions.threads == 0) baseOptions.threads = s.settings.threads;
    const auto runSolve = [&](const std::string& name) {
        auto& solver = s.solvers[name];
        if (!solver) solver = createSolver(name);
        SolveOptions options = baseOptions;
        // Warm start from the previous plan of the same palettes (new eps / tau / iterations).
        std::vector<double> warmU, warmV;
        if (s.plan && s.plan->logU.size() == s.problem.rows() && s.plan->logV.size() == s.problem.cols()) {
            warmU = s.plan->u();
            warmV = s.plan->v();
            const auto finite = [](const std::vector<double>& v) {
                return std::all_of(v.begin(), v.end(), [](double x) { return std::isfinite(x) && x > 0; });
            };
            if (finite(warmU) && finite(warmV)) {
                options.warmU = warmU;
                options.warmV = warmV;
            }
        } else {
            options.warmU = {};
            options.warmV = {};
            if (ts.multiscale && s.problem.reference == ReferenceMeasure::Ones &&
                s.problem.rows() > 2 * static_cast<std::size_t>(ts.coarseSize) &&
                s.problem.cols() > 2 * static_cast<std::size_t>(ts.coarseSize)) {
                // The coarse solve is small: on the CPU even for a GPU solve, where
                // another problem size would cost the device solver a re-allocation
                // and new CUDA graphs (and it would lose the fine size's buffers).
                auto& coarseSolver = runsOnGpu(name) ? s.solvers[cpuFallbackSolver(name)] : solver;
                if (!coarseSolver) coarseSolver = createSolver(cpuFallbackSolver(name));
                warmV = coarseWarmStart(s, *coarseSolver, options, control);
                if (!warmV.empty()) options.warmV = warmV;
            }
        }
        SolveControl sc;
        sc.cancel = control.cancel;
        if (control.onProgress) {
            const int maxIter = options.maxIterations;
            sc.onProgress = [&control, maxIter](const SolveProgress& p) {
                PipelineProgress pp;
                pp.stage = PipelineStage::Solve;
                pp.fraction = std::min(1.0, static_cast<double>(p.iteration) / maxIter);
                pp.solve = &p;
                control.onProgress(pp);
            };
        }
        report(control, PipelineStage::Solve, 0.0);
        return solver->solve(s.problem, options, sc);
    };
    SolveResult result;
    try {
        result = runSolve(solverName);
    } catch (const Error& e) {
        if (!runsOnGpu(solverName) ||
            (e.code() != ErrorCode::Unavailable && e.code() != ErrorCode::Device && e.code() != ErrorCode::OutOfMemory))
            throw;
        const std::string fallback = cpuFallbackSolver(solverName);
        addNote(s.solveNote, std::string("the GPU solve failed (") + e.what() + "): solved on the CPU with '" + fallback + "'");
        solverName = fallback;
        result = runSolve(solverName);
    }
    if (result.cancelled) throw Cancelled();
    s.stats.solvedOnGpu = runsOnGpu(solverName);
    s.stats.gpuNote = s.solveNote;
    s.dropFromPlan();
    s.plan = std::move(result);
    s.planSettings = ts;
    s.stats.solve = s.plan;
    s.stats.planFromCache = false;
    s.stats.timings.solve = secondsSince(start);
    report(control, PipelineStage::Solve, 1.0);
}

// The GPU mapper of this pipeline when its settings ask for the GPU (a gpu-*
// solver) and a device is usable; null otherwise (the note says why).
DeviceColorMapper* RecolorPipeline::useGpuMapper(State& s)
{
    if (!runsOnGpu(s.settings.transport.solver)) return nullptr;
    if (s.gpuMapper) return s.gpuMapper.get();
    if (s.gpuMapperFailed) {
        s.mapNote = "mapped on the CPU (the GPU mapping failed earlier in this pipeline)";
        return nullptr;
    }
    const std::string reason = gpuUnavailableReason();
    if (!reason.empty()) {
        s.mapNote = "GPU unavailable (" + reason + "): mapped on the CPU";
        return nullptr;
    }
    try {
        s.gpuMapper = findDeviceBackend(DeviceKind::Gpu)->createColorMapper(s.settings.transport.options.device);
    } catch (const Error& e) {
        return gpuMappingFailed(s, e);
    }
    return s.gpuMapper.get();
}

// Drops the GPU mapper after a failure and records why; the caller continues on the CPU.
DeviceColorMapper* RecolorPipeline::gpuMappingFailed(State& s, const Error& e)
{
    addNote(s.mapNote, std::string("the GPU mapping failed (") + e.what() + "): mapped on the CPU");
    s.gpuMapper.reset();
    s.gpuMapperFailed = true;
    s.gpuSourceValid = false;
    return nullptr;
}

Image RecolorPipeline::render(const PipelineControl& control)
{
    State& s = *m_state;
    const MappingSettings& ms = s.settings.mapping;
    if (ms.strength == 0.0) {
        if (!s.source) throw Error(ErrorCode::InvalidArgument, "no source image set");
        s.stats.timings.map = 0;
        return *s.source;  // exactly the source
    }
    if (!s.source) throw Error(ErrorCode::InvalidArgument, "no source image set");
    const Image& src = *s.source;
    const std::size_t n = src.pixelCount();
    const int threads = s.settings.threads;
    // With smoothing, the LUT is read only at the block means of the fast guided
    // filter; without, at every pixel.
    const int radius = smoothingRadiusPixels(ms, src.width, src.height);
    const int sub = radius >= 1 ? smoothingSubsample(ms, radius) : 0;
    // GPU mapping: with a gpu-* solver and a usable device the source is kept on
    // the device in the working space; block means and the composition run there.
    s.mapNote.clear();
    s.stats.gpuSourceSeconds = s.stats.gpuComposeSeconds = 0;
    DeviceColorMapper* mapper = useGpuMapper(s);
    if (mapper && sub > 0 && ms.smoothGuide != SmoothingGuide::Lightness) {
        addNote(s.mapNote, "the colour-guided smoothing runs on the CPU: mapped on the CPU");
        mapper = nullptr;
    }
    const WorkingSpace space = s.settings.space;
    const bool upload = mapper && (!s.gpuSourceValid || s.gpuSpace != space);
    if (upload) s.gpuSourceValid = false;
    // While the solve runs (on the GPU the host thread mostly waits), another
    // thread allocates the result (the first touch of tens of MB) and, on the GPU
    // path, uploads and converts the source (the device work does not depend on
    // the plan). Not during the palettes: the page faults of both slow each other.
    preparePalettes(control);
    struct Prefetch {
        Image result;
        LowResolution low;
        double seconds = 0;
        std::exception_ptr gpuError;
    };
    std::future<Prefetch> prefetch = std::async(std::launch::async, [&src, mapper, upload, space, sub] {
        Prefetch p;
        p.result = Image::allocate(src.width, src.height, src.channels == 4 ? 4 : 3, src.depth);
        if (upload) {
            try {
                p.low = mapper->setSource(src, space, sub);
                p.seconds = mapper->lastSetSourceSeconds();
            } catch (...) {
                p.gpuError = std::current_exception();
            }
        }
        return p;
    });
    solvePrepared(control);  // on an exception the future's destructor waits for the task
    Prefetch pre = prefetch.get();
    const auto start = Clock::now();
    report(control, PipelineStage::Map, 0.0);
    if (mapper) {
        try {
            if (pre.gpuError) std::rethrow_exception(pre.gpuError);
            if (upload) {
                s.stats.gpuSourceSeconds = pre.seconds;
                s.gpuSourceValid = true;
                s.gpuSpace = space;
                if (sub > 0) {
                    s.low = std::move(pre.low);
                    s.lowSubsample = sub;
                    s.lutValid = false;
                }
            } else if (sub > 0 && sub != s.lowSubsample) {
                s.low = mapper->blockMeans(sub);
                s.lowSubsample = sub;
                s.lutValid = false;
            }
        } catch (const Error& e) {
            mapper = gpuMappingFailed(s, e);
        }
    }
    if (sub != s.lowSubsample) {
        s.low = sub > 0 ? downsampleColors(s.fullSourceColors(), src.width, src.height, s.settings.space, sub, threads)
                        : LowResolution{};
        s.lowSubsample = sub;
        s.lutValid = false;
    }
    if (!s.lutValid || s.lut.size != ms.lutSize) {
        checkCancel(control);
        const float* at = sub > 0 ? s.low.colors.data() : s.fullSourceColors();
        const std::size_t count = sub > 0 ? s.low.colors.size() / 3 : n;
        s.lut = buildDisplacementLut(s.problem, s.plan->logV, *s.referencePalette, at, count, ms.lutSize, threads);
        s.lutValid = true;
        s.fieldValid = false;
    }
    report(control, PipelineStage::Map, 0.3);
    if (!s.fieldValid || !sameSmoothing(s.fieldSettings, ms)) {
        checkCancel(control);
        bool done = false;
        if (mapper && sub > 0) {
            try {
                s.field = mapper->computeField(s.lut, ms);
                done = true;
            } catch (const Error& e) {
                mapper = gpuMappingFailed(s, e);
            }
        }
        if (!done)
            s.field = sub > 0 ? computeDisplacementField(s.lut, s.low, src.width, src.height, ms, threads) : DisplacementField{};
        s.fieldValid = true;
        s.fieldSettings = ms;
        s.stats.fieldFromCache = false;
    } else {
        s.stats.fieldFromCache = true;
    }
    report(control, PipelineStage::Map, 0.6);
    checkCancel(control);
    Image result = std::move(pre.result);
    if (mapper) {
        try {
            mapper->compose(s.lut, s.field, ms, result);
            s.stats.gpuComposeSeconds = mapper->lastComposeSeconds();
        } catch (const Error& e) {
            mapper = gpuMappingFailed(s, e);
        }
    }
    if (!mapper) composeMapped(s.fullSourceColors(), s.lut, s.field, s.settings.space, ms, src, result, threads);
    s.stats.mappedOnGpu = mapper != nullptr;
    s.stats.gpuNote = s.solveNote;
    if (!s.mapNote.empty()) addNote(s.stats.gpuNote, s.mapNote);
    s.stats.timings.map = secondsSince(start);
    report(control, PipelineStage::Map, 1.0);
    return result;
}

DisplacementLut RecolorPipeline::globalColorMap(const PipelineControl& control)
{
    solve(control);
    State& s = *m_state;
    checkCancel(control);
    // The box of every source pixel, as render() uses without smoothing, so that
    // the lattice's nodes are the ones that recolor --no-smooth interpolates.
    return buildDisplacementLut(s.problem, s.plan->logV, *s.referencePalette, s.fullSourceColors(),
                                s.source->pixelCount(), s.settings.mapping.lutSize, s.settings.threads, LatticeNodes::All);
}

Image RecolorPipeline::run(const PipelineControl& control)
{
    resetTimings();
    return render(control);
}

std::shared_ptr<const Palette> RecolorPipeline::sourcePalette() const { return m_state->sourcePalette; }
std::shared_ptr<const Palette> RecolorPipeline::referencePalette() const { return m_state->referencePalette; }
const PipelineStats& RecolorPipeline::stats() const { return m_state->stats; }
void RecolorPipeline::resetTimings() { m_state->stats.timings = {}; }

void RecolorPipeline::clearCaches()
{
    State& s = *m_state;
    s.sourceColorsValid = false;
    s.sourceColors.reset();
    s.sourcePalette.reset();
    s.gpuSourceValid = false;
    if (!s.externalReferencePalette) s.referencePalette.reset();
    s.dropFromPalettes();
    s.solvers.clear();
}

}  // namespace uot
