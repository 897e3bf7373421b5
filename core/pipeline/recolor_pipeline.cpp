// RecolorPipeline itself: settings and their validation, the inputs, and the
// caches they invalidate. The stages live beside it: pipeline_palettes.cpp
// (palettes, cost), pipeline_solve.cpp (the UOT solve), pipeline_render.cpp
// (colour map, smoothing, composition); pipeline_state.h holds what they share.
#include "core/pipeline/recolor_pipeline.h"

#include <cmath>
#include <string>

#include "core/pipeline/pipeline_state.h"
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
    if (const std::string look = lookControlsProblem(s.mapping.look); !look.empty()) bad(look);
    if (s.mapping.lutSize < 9 || s.mapping.lutSize > 129) bad("LUT size must be between 9 and 129");
    if (!(s.mapping.smoothRadius >= 0) || s.mapping.smoothRadius > 0.5) bad("smoothing radius must be between 0 and 0.5");
    if (!(s.mapping.smoothEps > 0)) bad("smoothing eps must be > 0");
    if (!(s.mapping.smoothChromaEps > 0)) bad("smoothing chroma eps must be > 0");
    if (!(s.mapping.residualMatch >= 0) || s.mapping.residualMatch > 1) bad("residual match must be between 0 and 1");
    if (!(s.mapping.residualLightness >= 0) || s.mapping.residualLightness > 1)
        bad("residual lightness match must be between 0 and 1");
    if (std::isnan(s.mapping.smoothMinSlope) || s.mapping.smoothMinSlope > 1)
        bad("smoothing's lightness slope floor must be at most 1 (none: no floor)");
    if (s.mapping.smoothSubsample < 0 || s.mapping.smoothSubsample > 64) bad("smoothing subsample must be between 0 and 64");
    if (s.threads < 0) bad("threads must be >= 0");
}

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
    s.dropSourceInputs();
    s.sourcePalette.reset();
    s.externalSourcePalette = false;
    s.dropFromPalettes();
}

void RecolorPipeline::shareSourceWith(const RecolorPipeline& other)
{
    const State& o = *other.m_state;
    if (!o.source) throw Error(ErrorCode::InvalidArgument, "shareSourceWith: the other pipeline has no source");
    State& s = *m_state;
    s.dropSourceInputs();
    s.source = o.source;
    s.sourceColors = o.sourceColors;
    s.sourceColorsSpace = o.sourceColorsSpace;
    s.low = o.low;
    s.lowSubsample = o.lowSubsample;
    s.fitter = o.fitter;
    s.fitterLow = o.fitterLow;
    s.fitterSettings = o.fitterSettings;
    s.fitterThreads = o.fitterThreads;
    s.sourcePalette.reset();
    s.externalSourcePalette = false;
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

void RecolorPipeline::setSourcePalette(std::shared_ptr<const Palette> palette)
{
    if (!palette || palette->size() == 0)
        throw Error(ErrorCode::InvalidArgument, "setSourcePalette: the palette is empty");
    State& s = *m_state;
    if (!s.source) throw Error(ErrorCode::InvalidArgument, "setSourcePalette: no source image set");
    s.externalSourcePalette = true;
    s.sourcePalette = std::move(palette);
    s.sourcePaletteSettings = s.settings.palette;
    s.dropFromPalettes();
}

bool RecolorPipeline::hasSource() const { return m_state->source != nullptr; }
std::shared_ptr<const Image> RecolorPipeline::sourceImage() const { return m_state->source; }
bool RecolorPipeline::hasReference() const { return m_state->reference != nullptr || m_state->externalReferencePalette; }

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
    s.dropSourceInputs();
    if (!s.externalReferencePalette) s.referencePalette.reset();
    if (!s.externalSourcePalette) s.sourcePalette.reset();
    s.dropFromPalettes();
    s.solvers.clear();
}

}  // namespace uot
