#pragma once
// The color transfer pipeline on decoded images (no OpenCV, no Qt): the object
// the CLI, the batch engine and the desktop app drive.
//
//   source, reference (Image) -> palettes -> cost -> solve (UOT) -> map -> Image
//
// Every stage caches its result and is recomputed only when its inputs changed:
//   - new solver parameters (eps, adherence, solver, iterations) reuse the palettes
//     and the cost, and warm-start from the previous scalings when the sizes match;
//   - new mapping parameters (strength, preserve luminance, gamut) reuse the plan and
//     the smoothed displacement field (a strength change is one pass over the pixels);
//   - new smoothing parameters reuse the plan and the color-space map.
//
// Threading: one RecolorPipeline is used by one thread at a time (e.g. the app's
// worker thread); it holds no global state, so several pipelines may run at once.
// Progress callbacks are called on the calling thread; cancellation is an atomic
// flag polled between stages, inside the solve (every iteration) and between
// blocks of pixels. A cancelled call throws uot::Cancelled and leaves the caches
// of the stages completed before it valid.

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/color/color_map.h"
#include "core/color/color_space.h"
#include "core/color/image.h"
#include "core/color/palette.h"
#include "core/transport/solve_options.h"
#include "core/transport/solve_result.h"
#include "core/transport/uot_solver.h"

namespace uot {

class Error;
class DeviceColorMapper;

// Thrown when a PipelineControl::cancel flag is observed set.
class Cancelled : public std::runtime_error {
public:
    Cancelled() : std::runtime_error("cancelled") {}
};

struct TransportSettings {
    std::string solver = "auto";  // registry name (core/registry/solver_registry.h)
    // Entropic regularisation relative to the cost scale: costs are
    // |x - y|^2 / D^2 with D = nominalRange(space) (Lab: 100), so eps = 0.01
    // blurs colors over about sqrt(eps) * D = 10 Lab units. Below about 0.005 the
    // fp32 kernel underflows for distant palettes and the solve switches to the
    // (much slower) log-domain variant; with the default 512-point palettes that
    // solve is small. Default 0.003 (about 5.5 Lab units): chosen on the tuning half
    // of the quality bench's broader set (the sharper map keeps more of the
    // reference's spread; 0.002 dropped structure below MKL's; docs/BENCHMARKS.md).
    double eps = 0.003;
    // "Adherence to the reference palette": the marginal penalty tau on the
    // reference side (kInfinity = the result uses the reference colors in exactly
    // their proportions; small values let it drop reference colors the source has
    // no use for). Default: exact (chosen on the tuning half of the quality bench's
    // broader set, bench/quality/data; docs/BENCHMARKS.md).
    double adherence = kInfinity;
    // Marginal penalty on the source side (kInfinity = every source color is moved).
    double sourceAdherence = kInfinity;
    ReferenceMeasure reference = ReferenceMeasure::Ones;
    // Multiscale warm start of a cold solve: first solve between palettes reduced to
    // at most coarseSize points, then start the full solve from those scalings
    // (fewer iterations to the same tolerance). Only with ReferenceMeasure::Ones.
    bool multiscale = true;
    int coarseSize = 512;
    // Precision, iterations, tolerance, threads, device. warmU/warmV are ignored:
    // the pipeline warm-starts by itself.
    SolveOptions options = defaultPipelineSolveOptions();

    static SolveOptions defaultPipelineSolveOptions()
    {
        SolveOptions o;
        // Solved to tolerance: the accelerated iteration (over-relaxation, auto omega)
        // converges in tens to a few hundred passes; the cap is a safety net.
        o.maxIterations = 5000;
        o.tolerance = 1e-5;
        o.acceleration = Acceleration::Auto;
        o.checkEvery = 10;
        o.evaluateFinalPlan = true;
        return o;
    }

    // The solve stage's cache key: a plan serves another request when these agree.
    bool operator==(const TransportSettings&) const = default;
};

struct RecolorSettings {
    WorkingSpace space = WorkingSpace::Lab;
    PaletteSettings palette;          // used for both images
    TransportSettings transport;
    MappingSettings mapping;
    int threads = 0;                  // CPU threads for palettes and mapping, 0 = all

    bool operator==(const RecolorSettings&) const = default;
};

enum class PipelineStage { Decode, Palette, Cost, Solve, Map, Encode };
std::string toString(PipelineStage stage);

// Seconds spent in each phase since the last resetTimings() (run() resets
// first): a stage that ran records its time, a stage found cached leaves the
// figure as it was (0 after a reset), so calling the stages one at a time
// gives the same figures as run(). decode/encode are filled by callers that
// read and write files (CLI, batch).
struct PhaseTimings {
    double decode = 0;
    double palette = 0;
    double cost = 0;
    double solve = 0;
    double map = 0;
    double encode = 0;
    double total() const { return decode + palette + cost + solve + map + encode; }
};

struct PipelineProgress {
    PipelineStage stage = PipelineStage::Palette;
    double fraction = 0;               // of the stage, 0..1
    const SolveProgress* solve = nullptr;  // during PipelineStage::Solve, else null
};

struct PipelineControl {
    std::function<void(const PipelineProgress&)> onProgress;  // may be empty
    const std::atomic<bool>* cancel = nullptr;                // may be null
};

struct PipelineStats {
    PhaseTimings timings;              // of the last run() / stages since resetTimings()
    std::size_t sourcePaletteSize = 0;
    std::size_t referencePaletteSize = 0;
    std::optional<SolveResult> solve;  // of the plan in use (logU/logV included)
    bool paletteFromCache = false;     // last prepare reused both palettes
    bool planFromCache = false;        // last solve reused the plan
    bool fieldFromCache = false;       // last render reused the smoothed displacement field
    // GPU use of the last solve / render: with a gpu-* solver and a usable device,
    // the solve runs on the GPU and the per-pixel mapping (conversion, block means,
    // composition) too (gpu/gpu_color_map.h). When the GPU is unavailable or
    // fails, the CPU path is used and gpuNote says why (empty otherwise).
    bool solvedOnGpu = false;
    bool mappedOnGpu = false;
    std::string gpuNote;
    // Parts of timings.map spent by the GPU mapping in the last render (seconds,
    // host wall clock): upload + conversion + block means (0 when cached), and
    // the composition with the download of the result.
    double gpuSourceSeconds = 0;
    double gpuComposeSeconds = 0;
};

class RecolorPipeline {
public:
    explicit RecolorPipeline(RecolorSettings settings = {});
    ~RecolorPipeline();
    RecolorPipeline(const RecolorPipeline&) = delete;
    RecolorPipeline& operator=(const RecolorPipeline&) = delete;

    // Replaces the settings; caches whose inputs changed are dropped lazily.
    // Throws uot::Error(InvalidArgument) naming the first invalid setting.
    void setSettings(const RecolorSettings& settings);
    const RecolorSettings& settings() const;

    // Sets the images (copied or moved in). Throws uot::Error(InvalidArgument) for
    // an inconsistent Image. Setting an image drops every cache that depends on it.
    void setSource(Image image);
    void setReference(Image image);
    // Uses a palette computed elsewhere (the batch engine computes the reference
    // palette once); it must be in settings().space.
    void setReferencePalette(std::shared_ptr<const Palette> palette);
    // Uses a source palette computed elsewhere (a masked recolor weights the source's
    // pixels by the mask: core/pipeline/region_recolor.h) until the next setSource();
    // it must be in settings().space. Call after setSource().
    void setSourcePalette(std::shared_ptr<const Palette> palette);
    // Takes other's source and what was made from it alone (its colours in the
    // working space, the block means and the field's fitter on them), without a
    // copy: pipelines of one source's regions (core/pipeline/region_recolor.h) make
    // them once. Each still holds its own palettes, plan, field and GPU mapper.
    // Throws uot::Error(InvalidArgument) when other has no source.
    void shareSourceWith(const RecolorPipeline& other);
    // Makes now what render() will need from the source alone at the current
    // settings, for pipelines that share it (shareSourceWith): the source's colours
    // in the working space when the CPU maps or the field is folded into the
    // lattice, and, when the CPU maps, the block means and the colour-guided
    // field's fitter. Optional: render() makes what is missing.
    void prepareSourceInputs();
    bool hasSource() const;
    bool hasReference() const;
    // The source image as set (null before setSource).
    std::shared_ptr<const Image> sourceImage() const;

    // Stages. Each runs the stages before it when their caches are missing.
    void preparePalettes(const PipelineControl& control = {});
    void solve(const PipelineControl& control = {});
    // The recolored source at settings().mapping (strength etc.). The result has
    // the source's size, depth and alpha; gray sources give RGB results (strength 0
    // returns the source image unchanged, gray included). With `within` (weights,
    // one per source pixel, or null), the pixels whose weight is 0 may be left
    // unmapped (the CPU maps only those > 0; their samples are then unspecified):
    // a region's result, used only under its mask.
    Image render(const PipelineControl& control = {}, const float* within = nullptr);
    // All of the above.
    Image run(const PipelineControl& control = {});

    // The global colour map of the current plan, what render() applies per pixel
    // when smoothing is off: the displacement lattice of settings().mapping.lutSize
    // nodes per axis over the bounding box of the source's colours in
    // settings().space, with every node evaluated (LatticeNodes::All) so that it
    // can be read at any colour (for a LUT export: core/color/look_cube.h). Solves
    // first when needed. The edge-aware smoothing is not part of it.
    DisplacementLut globalColorMap(const PipelineControl& control = {});

    std::shared_ptr<const Palette> sourcePalette() const;
    std::shared_ptr<const Palette> referencePalette() const;
    const PipelineStats& stats() const;
    void resetTimings();

    // The transport problem of the current palettes and transport settings (a view
    // into this pipeline's palettes, valid until they or the settings change), for
    // callers that evaluate plans (the app's CPU/GPU comparison); nullopt before
    // preparePalettes().
    std::optional<UotProblem> transportProblem() const;

    // Uses a plan solved elsewhere for the current palettes and transport settings
    // (the batch engine solves the palette problems of many images in one batched
    // GPU call): render() then maps with it instead of solving. Call after
    // preparePalettes(); `solveSeconds` is recorded as the solve time. Throws
    // uot::Error(InvalidArgument) when the palettes are missing or the plan's
    // sizes do not match them.
    void adoptPlan(SolveResult plan, double solveSeconds = 0);

    // Drops every cached result (keeps images and settings).
    void clearCaches();

private:
    struct State;
    static std::vector<double> coarseWarmStart(State& s, UotSolver& solver, const SolveOptions& fineOptions,
                                               const PipelineControl& control);
    void solvePrepared(const PipelineControl& control);  // solve() after preparePalettes()
    static DeviceColorMapper* useGpuMapper(State& s);
    static const DisplacementFieldFitter& fieldFitter(State& s);
    static void cpuBlockMeans(State& s, int sub);
    static DeviceColorMapper* gpuMappingFailed(State& s, const Error& e);
    static DeviceColorMapper* foldResidualMatchIntoField(State& s, const DisplacementFieldFitter& fitter,
                                                         std::vector<float>& displacement, DeviceColorMapper* mapper,
                                                         const PipelineControl& control);
    static DeviceColorMapper* foldFieldIntoLattice(State& s, DeviceColorMapper* mapper);
    std::unique_ptr<State> m_state;
};

// Validates settings (throws uot::Error(InvalidArgument) naming the setting).
void validateSettings(const RecolorSettings& settings);

// Builds the palette of one image in settings.space (what preparePalettes does).
std::shared_ptr<const Palette> computePalette(const Image& image, const RecolorSettings& settings,
                                              const PipelineControl& control = {});

}  // namespace uot
