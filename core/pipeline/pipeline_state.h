#pragma once
// Internal to core/pipeline: the caches of a RecolorPipeline, and the small
// helpers its stage files share (recolor_pipeline.cpp: settings, inputs and
// caches; pipeline_palettes.cpp: palettes and cost; pipeline_solve.cpp: the
// UOT solve with its warm starts and CPU fallback; pipeline_render.cpp: the
// colour map, smoothing and composition, on the CPU or the GPU mapper).

#include <chrono>
#include <cmath>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include "core/color/float_buffer.h"
#include "core/color/lightness_spans.h"
#include "core/pipeline/recolor_pipeline.h"
#include "core/registry/device_registry.h"
#include "core/registry/solver_registry.h"

namespace uot {
namespace pipeline_detail {

using Clock = std::chrono::steady_clock;
inline double secondsSince(Clock::time_point start)
{
    return std::chrono::duration<double>(Clock::now() - start).count();
}

// Throws Cancelled when the control's flag is set.
inline void checkCancel(const PipelineControl& control)
{
    if (control.cancel && control.cancel->load(std::memory_order_relaxed)) throw Cancelled();
}

// Reports a stage's progress (fraction in [0, 1]) to the control's callback, if any.
inline void report(const PipelineControl& control, PipelineStage stage, double fraction)
{
    if (!control.onProgress) return;
    PipelineProgress p;
    p.stage = stage;
    p.fraction = fraction;
    control.onProgress(p);
}

// The CPU variant standing in for a GPU one (the same algorithm: "gpu-fused" ->
// "fused"; the CPU default when the CPU has no such variant).
inline std::string cpuFallbackSolver(const std::string& gpuName)
{
    return solverOnDevice(gpuName, DeviceKind::Cpu).value_or("auto");
}

// Appends a note to a "; "-separated list of notes.
inline void addNote(std::string& notes, const std::string& note)
{
    if (!notes.empty()) notes += "; ";
    notes += note;
}

}  // namespace pipeline_detail

struct RecolorPipeline::State {
    RecolorSettings settings;
    PipelineStats stats;

    std::shared_ptr<const Image> source;
    std::shared_ptr<const Image> reference;
    bool externalReferencePalette = false;
    bool externalSourcePalette = false;  // setSourcePalette(): kept until setSource()

    // Source in the working space (n x 3) and the space it is in, converted only
    // when the CPU mapping needs it (fullSourceColors); the palettes convert just
    // the pixels they sample. Shared, never changed once made: the pipelines of
    // one source's regions hold the same one (shareSourceWith).
    // Not value-initialised: a 12 MP image would spend a pass zeroing 144 MB.
    std::shared_ptr<const FloatBuffer> sourceColors;
    WorkingSpace sourceColorsSpace = WorkingSpace::Lab;

    // The source at full resolution in settings.space (converted on first use).
    const float* fullSourceColors()
    {
        if (!sourceColors || sourceColorsSpace != settings.space) {
            auto colors = std::make_shared<FloatBuffer>(source->pixelCount() * 3);
            imageToSpace(*source, settings.space, colors->data(), settings.threads);
            sourceColors = std::move(colors);
            sourceColorsSpace = settings.space;
        }
        return sourceColors->data();
    }

    std::shared_ptr<const Palette> sourcePalette, referencePalette;
    PaletteSettings sourcePaletteSettings, referencePaletteSettings;

    UotProblem problem;
    bool problemValid = false;

    std::optional<SolveResult> plan;
    TransportSettings planSettings;
    std::map<std::string, std::unique_ptr<UotSolver>> solvers;

    // Block means for the fast guided filter: they depend on the source, the space
    // and the subsampling alone, so a new palette or plan keeps them (shared like
    // sourceColors).
    std::shared_ptr<const LowResolution> low;
    int lowSubsample = 0;   // 0: none computed

    // The source's lightness spans for the chroma's range along lightness
    // (MapBounds::chromaRangeRadius), from the block means when there are some (else the
    // full image); null when that range is over whole columns or there is none.
    std::shared_ptr<const LightnessSpans> spans;
    int spansRadius = -1, spansBlock = 0;
    const LightnessSpans* lightnessSpans()
    {
        const MapBounds& b = settings.mapping.bounds;
        if (!b.enabled || !std::isfinite(b.chromaLightnessRange) || !std::isfinite(b.chromaRangeRadius)) return nullptr;
        const int radius = static_cast<int>(std::lround(std::max(0.0, b.chromaRangeRadius)));
        const bool blocks = low && low->space == settings.space;
        const int block = blocks ? low->subsample : 1;
        if (!spans || spans->space != settings.space || spansRadius != radius || spansBlock != block) {
            spans = std::make_shared<const LightnessSpans>(
                blocks ? uot::lightnessSpans(low->colors.data(), low->width, low->height, settings.space, block, radius,
                                             settings.threads)
                       : uot::lightnessSpans(fullSourceColors(), source->width, source->height, settings.space, 1, radius,
                                             settings.threads));
            spansRadius = radius;
            spansBlock = block;
        }
        return spans.get();
    }
    // The field's fitter on *fitterLow (its colour guide's window statistics), built
    // for fitterSettings' field inputs and fitterThreads; used while fitterLow is low.
    std::shared_ptr<const DisplacementFieldFitter> fitter;
    std::shared_ptr<const LowResolution> fitterLow;  // keeps the block means the fitter reads alive
    MappingSettings fitterSettings;
    int fitterThreads = 0;
    DisplacementLut lut;
    bool lutValid = false;
    MapBounds lutBounds;  // the bounds the lattice was regularised with
    LatticeNodes lutNodes = LatticeNodes::NextToColors;  // the nodes the lattice was evaluated at
    DisplacementField field;  // compact smoothed displacement (guided-filter coefficients)
    // With MappingSettings::lutFaithful: the field folded into a lattice (look_lattice.h),
    // composed per pixel in place of the field (which is then left empty).
    DisplacementLut lookLut;
    bool fieldValid = false;
    MappingSettings fieldSettings;
    std::string fieldNote;  // what fitting the field found (e.g. no residual match possible), added to every render's note

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
        lutValid = false;
        lut = {};
        fieldValid = false;
        field = {};
        lookLut = {};
    }
    // Drops what was made from the source alone (a new source).
    void dropSourceInputs()
    {
        sourceColors.reset();
        low.reset();
        lowSubsample = 0;
        spans.reset();
        fitter.reset();
        fitterLow.reset();
        gpuSourceValid = false;
    }
};

}  // namespace uot
