#include "app/cli/batch_options.h"

#include <cstdio>
#include <sstream>

#include "app/cli/commands.h"
#include "app/cli/json_text.h"
#include "app/cli/parameter_flags.h"
#include "app/cli/video_command.h"
#include "app/cli/video_options.h"
#include "core/registry/solver_registry.h"

namespace uot::cli {

namespace {

// A message without a leading "PATH: " (errors from reading name their file; the
// report names the input already).
std::string withoutPathPrefix(const std::string& message, const std::string& path)
{
    const std::string prefix = path + ": ";
    return message.rfind(prefix, 0) == 0 ? message.substr(prefix.size()) : message;
}

}  // namespace

std::string batchHelpSummary()
{
    return "Recolors every INPUT (files, or folders of images) with the palette of REFERENCE (several: --reference, "
           "pooled), computed once. A file that fails is reported and skipped; existing outputs are skipped unless "
           "--overwrite. Options as for `uot recolor` (costs are squared working-space distances divided by D^2, "
           "D = 100 for Lab). "
           "Exit codes: 0 all done (or skipped), 1 nothing could be done, 2 usage, 3 some files failed, "
           "4 backend unavailable.";
}

void addBatchOptions(ArgParser& parser, BatchInputKinds kinds)
{
    const bool clips = kinds == BatchInputKinds::ImagesAndClips;
    parser.addPositional("REFERENCE", "image whose palette is transferred");
    parser.addPositional("INPUT...", clips ? "image files, clips (.mp4/.mov/.mkv/.webm, image sequence patterns; one "
                                             "look per clip, docs/VIDEO.md) and/or folders of them (non-recursive)"
                                           : "image files and/or folders (non-recursive)");
    addParameterOption(parser, params::parameter("out-dir"));
    parser.addOption("reference", "FILE",
                     "a further reference image, pooled with REFERENCE into one reference palette (as `uot recolor` "
                     "pools several REFERENCEs; --reference-weights gives REFERENCE's share first, then these in "
                     "order); repeatable",
                     "", true);
    parser.addOption("pattern", "TEXT",
                     "output file name under DIR; {name} = input name without extension, {ext} = its extension, "
                     "{dir} = the name of its folder. Two inputs with the same output name stop the batch before any "
                     "work (exit 2). An absolute pattern or one with .. writes outside DIR, as asked",
                     "{name}_recolored.{ext}");
    parser.addFlag("overwrite", "replace existing outputs (else they are skipped)");
    parser.addOption("gpu-batch", "N",
                     "with --device gpu: palette problems solved per batched GPU call (decoding, palettes, mapping "
                     "and writing run on worker threads meanwhile); 1 = image by image",
                     "16");
    addRecolorOptions(parser);
    addRegionOptions(parser, MaskOption::Pattern);
    if (clips) addClipOptions(parser);
}

BatchCliSettings readBatchOptions(const ArgParser& parser)
{
    if (parser.positionals().size() < 2) throw UsageError("expected REFERENCE and at least one INPUT");
    if (!parser.has("out-dir")) throw UsageError("missing --out-dir DIR");
    BatchCliSettings out;
    out.cli = readRecolorOptions(parser);
    BatchSettings& settings = out.settings;
    settings.recolor = out.cli.recolor;
    settings.read = out.cli.read;
    settings.write = out.cli.write;
    settings.outDir = parser.value("out-dir");
    settings.pattern = parser.value("pattern");
    settings.overwrite = parser.flag("overwrite");
    settings.overwriteSource = parser.flag("overwrite-source");
    const int gpuBatch = parser.integer("gpu-batch");
    if (gpuBatch < 1 || gpuBatch > 65535)
        throw UsageError("option '--gpu-batch' needs a whole number from 1 to 65535, got " + std::to_string(gpuBatch));
    settings.gpuBatchSize = static_cast<std::size_t>(gpuBatch);
    if (parser.has("reference")) settings.extraReferences = parser.values("reference");
    const RegionCliSettings regions =
        readRegionOptions(parser, MaskOption::Pattern, 1 + settings.extraReferences.size());
    settings.referenceWeights = regions.referenceWeights;
    settings.maskPattern = regions.maskPattern;
    settings.maskFeather = regions.maskFeather;
    out.reference = parser.positionals()[0];
    out.inputPaths.assign(parser.positionals().begin() + 1, parser.positionals().end());
    return out;
}

BatchWork scanBatchWork(const BatchCliSettings& batch)
{
    BatchWork work;
    std::vector<std::string> imageInputs;
    work.clips = splitClipInputs(batch.inputPaths, imageInputs);
    if (!work.clips.empty()) {
        requireClipSupport();
        if (!batch.settings.maskPattern.empty())
            throw UsageError("--mask-pattern does not go with clips (a clip gets one look everywhere in the frame)");
    }
    work.images = scanBatchInputs(imageInputs);
    if (work.images.files.empty() && work.images.skipped.empty() && work.clips.empty())
        throw UsageError("no input images or clips found (supported: .jpg .png .tif .webp .bmp; .mp4 .mov .mkv .webm)");
    return work;
}

BatchProgressPrinter::BatchProgressPrinter(const RecolorCliSettings& cli) : m_quiet(cli.quiet), m_progress(!cli.quiet)
{
}

void BatchProgressPrinter::stage(std::size_t index, std::size_t total, const PipelineProgress& stage)
{
    if (m_quiet) return;
    std::string label(1, '[');
    label += std::to_string(index + 1);
    label += '/';
    label += std::to_string(total);
    label += "] ";
    m_progress.update(label, stage);
}

void BatchProgressPrinter::finished(std::size_t index, std::size_t total, const BatchItemResult& r)
{
    if (m_quiet) return;
    m_progress.finish();
    if (r.status == BatchItemStatus::Done)
        std::fprintf(stderr, "[%zu/%zu] %s -> %s (%.2f s)%s%s\n", index + 1, total, r.input.c_str(), r.output.c_str(),
                     r.timings.total(), r.note.empty() ? "" : "; note: ", r.note.c_str());
    else
        std::fprintf(stderr, "[%zu/%zu] %s: %s: %s\n", index + 1, total, r.input.c_str(), toString(r.status).c_str(),
                     withoutPathPrefix(r.message, r.input).c_str());
}

BatchControl BatchProgressPrinter::control()
{
    BatchControl control;
    control.onProgress = [this](const BatchProgress& p) {
        if (p.stage)
            stage(p.index, p.total, *p.stage);
        else if (p.finished)
            finished(p.index, p.total, *p.finished);
    };
    return control;
}

int reportBatch(const BatchSummary& summary, const RecolorCliSettings& cli)
{
    if (cli.json) {
        std::ostringstream o;
        o << "{\n  \"done\": " << summary.done << ", \"skipped\": " << summary.skipped << ", \"failed\": " << summary.failed
          << ", \"cancelled\": " << summary.cancelled << ", \"seconds\": " << summary.seconds
          << ",\n  \"device\": " << jsonString(runsOnGpu(cli.recolor.transport.solver) ? "gpu" : "cpu")
          << ", \"device_note\": " << jsonString(cli.deviceNote)
          << ",\n  \"reference_timings\": " << timingsJson(summary.referenceTimings) << ",\n  \"items\": [";
        for (std::size_t i = 0; i < summary.items.size(); ++i) {
            const BatchItemResult& r = summary.items[i];
            o << (i ? "," : "") << "\n    {\"input\": " << jsonString(r.input) << ", \"output\": " << jsonString(r.output)
              << ", \"status\": " << jsonString(toString(r.status)) << ", \"message\": " << jsonString(r.message)
              << ", \"note\": " << jsonString(r.note) << ", \"timings\": " << timingsJson(r.timings) << "}";
        }
        o << "\n  ]\n}\n";
        std::printf("%s", o.str().c_str());
    }
    std::fprintf(stderr, "batch: %zu done, %zu skipped, %zu failed, %zu cancelled in %.1f s\n", summary.done,
                 summary.skipped, summary.failed, summary.cancelled, summary.seconds);
    for (const BatchItemResult& r : summary.items) {
        if (r.status == BatchItemStatus::Failed)
            std::fprintf(stderr, "  failed: %s: %s\n", r.input.c_str(), withoutPathPrefix(r.message, r.input).c_str());
        else if (r.status == BatchItemStatus::Skipped && r.output.empty())  // a folder entry that is no image file
            std::fprintf(stderr, "  skipped: %s: %s\n", r.input.c_str(), r.message.c_str());
    }
    if (summary.failed == 0 && summary.cancelled == 0) return kExitOk;
    if (summary.done == 0 && summary.skipped == 0) return kExitFailure;
    return kExitPartial;
}

}  // namespace uot::cli
