// The map stage of RecolorPipeline: the displacement LUT from the plan, the
// edge-aware smoothing and the composition of the result, on the CPU or on the
// GPU colour mapper (falling back to the CPU when the GPU fails).
#include "core/pipeline/recolor_pipeline.h"

#include <algorithm>
#include <cmath>
#include <exception>
#include <future>

#include "core/color/lightness_transfer.h"
#include "core/color/look_lattice.h"
#include "core/color/map_regularizer.h"
#include "core/pipeline/pipeline_state.h"
#include "core/transport/uot_error.h"

namespace uot {

using namespace pipeline_detail;

namespace {

// The smoothed field's cache key: the mapping settings with those applied only
// when the result is composed (strength, look controls, luminance, gamut) set
// to their defaults. Everything else, a setting added later included, is an
// input of the field (the residual match is folded into it).
MappingSettings fieldInputs(MappingSettings m)
{
    const MappingSettings composeDefaults;
    m.strength = composeDefaults.strength;
    m.preserveLuminance = composeDefaults.preserveLuminance;
    m.gamut = composeDefaults.gamut;
    m.look = composeDefaults.look;
    return m;
}

// Rounds of the residual match folded into a smoothed field: each samples the
// result of the field so far, builds the match's map from it and refits the field.
// Each round closes part of the gap that the guided filter's smoothing of the shift
// leaves: 1 / 2 / 3 rounds gave tuning medians 0.626 / 0.605 / 0.597 (docs/notes/quality-issue14.md).
constexpr int kResidualRounds = 3;

// The residual match reads the fully transferred colours on a grid of at most
// about 2^18 pixels: every step-th pixel along x and y.
int residualSampleStep(int width, int height)
{
    const double pixels = static_cast<double>(width) * height;
    return std::max(1, static_cast<int>(std::floor(std::sqrt(pixels / 262144.0))));
}

// The per-channel map of the residual match: from the distributions of the
// sampled transferred colours (`quantiles` returns their channelQuantiles for a
// step) to the reference palette's. Empty (no match) when the palette carries no distributions.
template <typename Quantiles>
MarginalMap residualMap(const Palette& reference, int width, int height, const MapBounds& bounds, std::string& note,
                        Quantiles&& quantiles)
{
    if (reference.marginals.empty()) {
        addNote(note, "the reference palette has no color distributions: no residual match");
        return {};
    }
    MarginalMap map(quantiles(residualSampleStep(width, height)), reference.marginals);
    boundResidualMap(map, bounds);
    return map;
}

// Runs work(mapper) on the pipeline's GPU mapper while it has one: false without one, or
// when the device fails it (noted: `what` made on the CPU; the mapper's next call
// decides whether the GPU stays in use).
template <class Work>
bool onGpuMapper(const std::unique_ptr<DeviceColorMapper>& mapper, std::string& note, const char* what, Work&& work)
{
    if (!mapper) return false;
    try {
        return work(*mapper);
    } catch (const Error& e) {
        addNote(note, std::string(what) + " made on the CPU (" + e.what() + ")");
        return false;
    }
}

// The bounds' Lipschitz sweeps (regularizeDisplacementLut) on the GPU mapper: the same lattice bit for bit.
// Empty without a mapper, so that the CPU path keeps its own (boundWithLightnessTransfer then bounds its two
// lattices side by side).
LipschitzSweeper deviceSweeper(const std::unique_ptr<DeviceColorMapper>& mapper, std::string& note)
{
    if (!mapper) return {};
    return [&mapper, &note](float* values, std::size_t nodes, int first, const double bound[3],
                            const std::vector<LatticeEdge>& edges) {
        return onGpuMapper(mapper, note, "the map's bounds", [&](DeviceColorMapper& m) {
            return m.lipschitzSweeps(values, nodes, first, bound, edges);
        });
    };
}

// The entropic map at the lattice's nodes (buildDisplacementLut) on the GPU mapper: the values to float rounding.
// Empty without a mapper, as deviceSweeper.
EntropicLattice deviceEntropicLattice(const std::unique_ptr<DeviceColorMapper>& mapper, std::string& note)
{
    if (!mapper) return {};
    return [&mapper, &note](DisplacementLut& lut, const std::vector<std::size_t>& nodes, const float* yx, const float* yy,
                            const float* yz, const float* logW, std::size_t cols, float factor) {
        return onGpuMapper(mapper, note, "the map's lattice", [&](DeviceColorMapper& m) {
            return m.entropicLattice(lut, nodes, yx, yy, yz, logW, cols, factor);
        });
    };
}

// The subsampling of the fast guided filter's block means for `source` (0: no smoothing).
int blockSubsample(const MappingSettings& ms, const Image& source)
{
    const int radius = smoothingRadiusPixels(ms, source.width, source.height);
    return radius >= 1 ? smoothingSubsample(ms, radius) : 0;
}

}  // namespace

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

// The fitter of the field on the block means s.low, at the current mapping
// settings: kept while the block means, the field's inputs and the thread count
// stay (the colour guide's window statistics depend on nothing else).
const DisplacementFieldFitter& RecolorPipeline::fieldFitter(State& s)
{
    const MappingSettings& ms = s.settings.mapping;
    if (!s.fitter || s.fitterLow != s.low || s.fitterThreads != s.settings.threads ||
        !(fieldInputs(s.fitterSettings) == fieldInputs(ms))) {
        s.fitter = std::make_shared<const DisplacementFieldFitter>(*s.low, s.source->width, s.source->height, ms,
                                                                   s.settings.threads);
        s.fitterLow = s.low;
        s.fitterSettings = ms;
        s.fitterThreads = s.settings.threads;
    }
    return *s.fitter;
}

void RecolorPipeline::prepareSourceInputs()
{
    State& s = *m_state;
    if (!s.source) throw Error(ErrorCode::InvalidArgument, "no source image set");
    const MappingSettings& ms = s.settings.mapping;
    if (ms.strength == 0.0) return;
    const int sub = blockSubsample(ms, *s.source);
    const bool cpuMapping = !runsOnGpu(s.settings.transport.solver) || !gpuUnavailableReason().empty();
    // The GPU mapper holds the source's colours (the fold's samples included); the CPU
    // makes them only if it falls back.
    if (cpuMapping) s.fullSourceColors();
    if (!cpuMapping || sub == 0) return;  // the GPU mapper makes its own block means
    cpuBlockMeans(s, sub);
    if (ms.smoothGuide != SmoothingGuide::Lightness) fieldFitter(s);
}

// The block means of subsampling sub (none for 0) made on the CPU, unless those
// held are of sub and of the working space.
void RecolorPipeline::cpuBlockMeans(State& s, int sub)
{
    const WorkingSpace space = s.settings.space;
    if (sub == s.lowSubsample && (!s.low || s.low->space == space)) return;
    s.low = sub > 0 ? std::make_shared<const LowResolution>(downsampleColors(
                          s.fullSourceColors(), s.source->width, s.source->height, space, sub, s.settings.threads))
                    : nullptr;
    s.lowSubsample = sub;
    s.lutValid = false;
}

Image RecolorPipeline::render(const PipelineControl& control, const float* within)
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
    const int sub = blockSubsample(ms, src);
    // GPU mapping: with a gpu-* solver and a usable device the source is kept on
    // the device in the working space; block means and the composition run there.
    s.mapNote.clear();
    s.stats.gpuSourceSeconds = s.stats.gpuComposeSeconds = 0;
    DeviceColorMapper* mapper = useGpuMapper(s);
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
                    s.low = std::make_shared<const LowResolution>(std::move(pre.low));
                    s.lowSubsample = sub;
                    s.lutValid = false;
                }
            } else if (sub > 0 && sub != s.lowSubsample) {
                s.low = std::make_shared<const LowResolution>(mapper->blockMeans(sub));
                s.lowSubsample = sub;
                s.lutValid = false;
            }
        } catch (const Error& e) {
            mapper = gpuMappingFailed(s, e);
        }
    }
    cpuBlockMeans(s, sub);
    // A field folded into the lattice is composed per pixel at any colour: every node is
    // evaluated (the prior of the fold where no pixel holds a node).
    const LatticeNodes nodes = sub > 0 && ms.lutFaithful ? LatticeNodes::All : LatticeNodes::NextToColors;
    if (!s.lutValid || s.lut.size != ms.lutSize || !(s.lutBounds == ms.bounds) || s.lutNodes != nodes) {
        checkCancel(control);
        const float* at = sub > 0 ? s.low->colors.data() : s.fullSourceColors();
        const std::size_t count = sub > 0 ? s.low->colors.size() / 3 : n;
        const EntropicLattice entropic = deviceEntropicLattice(s.gpuMapper, s.mapNote);
        s.lut = buildDisplacementLut(s.problem, s.plan->logV, *s.referencePalette, at, count, ms.lutSize, threads, nodes,
                                     &entropic);
        const LipschitzSweeper sweeper = deviceSweeper(s.gpuMapper, s.mapNote);
        boundWithLightnessTransfer(s.lut, space, ms.bounds, at, count, nodes, threads, s.lightnessSpans(),
                                   *s.sourcePalette, *s.referencePalette, &sweeper);
        s.lutBounds = ms.bounds;
        s.lutNodes = nodes;
        s.lutValid = true;
        s.fieldValid = false;
    }
    report(control, PipelineStage::Map, 0.3);
    const bool match = ms.residualMatch > 0 || ms.residualLightness > 0;
    if (!s.fieldValid || !(fieldInputs(s.fieldSettings) == fieldInputs(ms))) {
        checkCancel(control);
        s.fieldValid = false;  // a cancellation part-way must not leave a half-made field marked valid
        bool done = false;
        // The device fits the lightness-guided field without a slope floor or bounds; the
        // colour and split guides, the floor and the bounds are fitted here from the block means (low resolution: a small
        // share of the mapping), and the device composes either.
        if (mapper && sub > 0 && ms.smoothGuide == SmoothingGuide::Lightness && !std::isfinite(ms.smoothMinSlope) &&
            !ms.bounds.enabled) {
            try {
                s.field = mapper->computeField(s.lut, ms);
                done = true;
            } catch (const Error& e) {
                mapper = gpuMappingFailed(s, e);
            }
        }
        s.fieldNote.clear();
        if (sub > 0 && (!done || match)) {
            // One fitter and one set of block displacements for the fit and the match's refits.
            const DisplacementFieldFitter& fitter = fieldFitter(s);
            std::vector<float> displacement = blockDisplacements(s.lut, *s.low, threads);
            if (!done) s.field = fitter.fit(displacement.data());
            if (match) mapper = foldResidualMatchIntoField(s, fitter, displacement, mapper, control);
        } else if (!done) {
            s.field = DisplacementField{};
        }
        s.lookLut = DisplacementLut{};
        if (ms.lutFaithful && s.field.smoothed) {
            checkCancel(control);
            mapper = foldFieldIntoLattice(s, mapper);
        }
        s.fieldValid = true;
        s.fieldSettings = ms;
        s.stats.fieldFromCache = false;
    } else {
        s.stats.fieldFromCache = true;
    }
    report(control, PipelineStage::Map, 0.6);
    checkCancel(control);
    Image result = std::move(pre.result);
    if (!s.fieldNote.empty()) addNote(s.mapNote, s.fieldNote);
    // The residual match is in the smoothed field (or the lattice it was folded into). Without smoothing it is left out,
    // as in the exported LUT (globalColorMap): applied per pixel it stretches the
    // source's compression blocks and noise with the map's slope.
    // The look controls are composed on the host (the GPU composes the transfer alone).
    const LookAdjustment look = prepareLookAdjustment(ms.look, space, s.referencePalette.get());
    if (mapper && look.active) {
        addNote(s.mapNote, "look controls: composed on the CPU");
        mapper = nullptr;
    }
    const DisplacementLut& mapLut = s.lookLut.size > 0 ? s.lookLut : s.lut;
    if (mapper) {
        try {
            mapper->compose(mapLut, s.field, ms, result);
            s.stats.gpuComposeSeconds = mapper->lastComposeSeconds();
        } catch (const Error& e) {
            mapper = gpuMappingFailed(s, e);
        }
    }
    if (!mapper) composeMapped(s.fullSourceColors(), mapLut, s.field, space, ms, src, result, threads, &look, within);
    s.stats.mappedOnGpu = mapper != nullptr;
    s.stats.gpuNote = s.solveNote;
    if (!s.mapNote.empty()) addNote(s.stats.gpuNote, s.mapNote);
    s.stats.timings.map = secondsSince(start);
    report(control, PipelineStage::Map, 1.0);
    return result;
}

// The residual match folded into the smoothed field s.field (kResidualRounds
// rounds of sampling the result, building the match's map and refitting the field
// with `fitter` to the shifted block displacements, which start as the LUT's).
// Samples on the GPU mapper when there is one (the sample's distributions are made
// there too; the refit is on the host, from the block means); returns the mapper still in use.
DeviceColorMapper* RecolorPipeline::foldResidualMatchIntoField(State& s, const DisplacementFieldFitter& fitter,
                                                               std::vector<float>& displacement,
                                                               DeviceColorMapper* mapper, const PipelineControl& control)
{
    const Image& src = *s.source;
    const MappingSettings& ms = s.settings.mapping;
    const int threads = s.settings.threads;
    DisplacementLut matched = s.lut;  // the global map with the match (bounded maps), a copy: s.lut stays the plan's
    std::vector<unsigned char> mark;
    const LipschitzSweeper sweeper = deviceSweeper(s.gpuMapper, s.mapNote);
    for (int round = 0; round < kResidualRounds; ++round) {
        report(control, PipelineStage::Map, 0.3 + 0.3 * (round + 1) / (kResidualRounds + 1));
        checkCancel(control);
        auto quantiles = [&](int step) {
            if (mapper) {
                try {
                    return mapper->sampledQuantiles(s.lut, s.field, step, kQuantileLevels, kQuantileBins);
                } catch (const Error& e) {
                    mapper = gpuMappingFailed(s, e);
                }
            }
            const std::vector<float> mapped = sampleMappedColors(s.fullSourceColors(), s.lut, s.field, s.settings.space,
                                                                 src.width, src.height, step, threads);
            return channelQuantiles(mapped.data(), mapped.size() / 3);
        };
        const MarginalMap residual =
            residualMap(*s.referencePalette, src.width, src.height, ms.bounds, s.fieldNote, quantiles);
        if (residual.empty()) break;
        if (ms.bounds.enabled) {
            // Into the global map, regularised again: the match obeys the map's bounds.
            if (mark.empty()) mark = latticeNodeMask(matched, s.low->colors.data(), s.low->colors.size() / 3,
                                                     LatticeNodes::NextToColors, threads);
            addResidualShiftToLut(matched, mark, s.settings.space, residual, ms);
            regularizeDisplacementLut(matched, s.settings.space, ms.bounds, s.low->colors.data(), s.low->colors.size() / 3,
                                      LatticeNodes::NextToColors, threads, s.lightnessSpans(), &sweeper);
            displacement = blockDisplacements(matched, *s.low, threads);
        } else {
            addResidualShift(displacement, *s.low, s.field, residual, ms, threads);
        }
        s.field = fitter.fit(displacement.data());
    }
    return mapper;
}

// The field s.field folded into the lattice s.lookLut (bounded like the global map), composed per
// pixel in its place (on the GPU too: a lattice read per pixel). Folded on the GPU mapper when
// there is one (the source's colours are there), else from the source's colours here. Returns
// the mapper still in use.
DeviceColorMapper* RecolorPipeline::foldFieldIntoLattice(State& s, DeviceColorMapper* mapper)
{
    const Image& src = *s.source;
    const MappingSettings& ms = s.settings.mapping;
    const WorkingSpace space = s.settings.space;
    const int threads = s.settings.threads;
    const int step = residualSampleStep(src.width, src.height);
    bool done = false;
    if (mapper) {
        try {
            s.lookLut = mapper->foldLattice(s.lut, s.field, step, ms.fold);
            done = true;
        } catch (const Error& e) {
            mapper = gpuMappingFailed(s, e);
        }
    }
    if (!done)
        s.lookLut = fitLatticeToField(s.lut, s.fullSourceColors(), s.field, space, src.width, src.height, step, ms.fold,
                                      threads);
    const LipschitzSweeper sweeper = deviceSweeper(s.gpuMapper, s.mapNote);
    regularizeDisplacementLut(s.lookLut, space, ms.bounds, s.low->colors.data(), s.low->colors.size() / 3,
                              LatticeNodes::All, threads, s.lightnessSpans(), &sweeper);
    s.field = DisplacementField{};
    return mapper;
}

DisplacementLut RecolorPipeline::globalColorMap(const PipelineControl& control)
{
    solve(control);
    State& s = *m_state;
    checkCancel(control);
    // The box of every source pixel, as render() uses without smoothing, so that
    // the lattice's nodes are the ones that recolor --no-smooth interpolates (the
    // residual match, which lives in the smoothed field, is not in either).
    const MappingSettings& ms = s.settings.mapping;
    DisplacementLut lut = buildDisplacementLut(s.problem, s.plan->logV, *s.referencePalette, s.fullSourceColors(),
                                               s.source->pixelCount(), ms.lutSize, s.settings.threads, LatticeNodes::All);
    boundWithLightnessTransfer(lut, s.settings.space, ms.bounds, s.fullSourceColors(), s.source->pixelCount(),
                               LatticeNodes::All, s.settings.threads, s.lightnessSpans(), *s.sourcePalette,
                               *s.referencePalette);
    return lut;
}

}  // namespace uot
