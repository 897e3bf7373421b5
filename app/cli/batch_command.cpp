// `uot batch REFERENCE INPUT... --out-dir DIR [--pattern {name}_recolored.{ext}]`
#include <atomic>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <sstream>
#include <string>

#include "app/cli/arg_parser.h"
#include "app/cli/commands.h"
#include "app/cli/json_text.h"
#include "app/cli/recolor_options.h"
#include "app/cli/video_command.h"
#include "app/cli/video_options.h"
#include "core/pipeline/batch_engine.h"
#include "core/registry/solver_registry.h"
#include "core/transport/uot_error.h"

namespace uot::cli {

namespace {

// A message without a leading "PATH: " (errors from reading name their file; the
// report names the input already).
std::string withoutPathPrefix(const std::string& message, const std::string& path)
{
    const std::string prefix = path + ": ";
    return message.rfind(prefix, 0) == 0 ? message.substr(prefix.size()) : message;
}

bool runsOnGpuSolver(const RecolorCliSettings& cli) { return runsOnGpu(cli.recolor.transport.solver); }

}  // namespace

int runBatchCommand(const std::vector<std::string>& args)
{
    ArgParser parser("uot batch REFERENCE INPUT... --out-dir DIR [options]",
                     "Recolors every INPUT (files, or folders of images) with the palette of REFERENCE, computed once. "
                     "A file that fails is reported and skipped; existing outputs are skipped unless --overwrite. "
                     "Options as for `uot recolor` (costs are squared working-space distances divided by D^2, "
                     "D = 100 for Lab). "
                     "Exit codes: 0 all done (or skipped), 1 nothing could be done, 2 usage, 3 some files failed, "
                     "4 backend unavailable.");
    parser.addPositional("REFERENCE", "image whose palette is transferred");
    parser.addPositional("INPUT...", "image files, clips (.mp4/.mov/.mkv/.webm, image sequence patterns; one look per "
                                     "clip, docs/VIDEO.md) and/or folders of them (non-recursive)");
    parser.addOption("out-dir", "DIR", "output folder (created when missing)");
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
    addClipOptions(parser);
    parser.parse(args);
    if (parser.helpRequested()) {
        std::printf("%s", parser.helpText().c_str());
        return kExitOk;
    }
    if (parser.positionals().size() < 2) throw UsageError("expected REFERENCE and at least one INPUT");
    if (!parser.has("out-dir")) throw UsageError("missing --out-dir DIR");
    const RecolorCliSettings cli = readRecolorOptions(parser);
    BatchSettings settings;
    settings.recolor = cli.recolor;
    settings.read = cli.read;
    settings.write = cli.write;
    settings.outDir = parser.value("out-dir");
    settings.pattern = parser.value("pattern");
    settings.overwrite = parser.flag("overwrite");
    settings.overwriteSource = parser.flag("overwrite-source");
    const int gpuBatch = parser.integer("gpu-batch");
    if (gpuBatch < 1 || gpuBatch > 65535)
        throw UsageError("option '--gpu-batch' needs a whole number from 1 to 65535, got " + std::to_string(gpuBatch));
    settings.gpuBatchSize = static_cast<std::size_t>(gpuBatch);
    const RegionCliSettings regions = readRegionOptions(parser, MaskOption::Pattern, 1);
    if (!regions.referenceWeights.empty())
        throw UsageError("option '--reference-weights': uot batch takes one REFERENCE");
    settings.maskPattern = regions.maskPattern;
    settings.maskFeather = regions.maskFeather;
    const std::string reference = parser.positionals()[0];
    std::vector<std::string> imageInputs;
    const std::vector<std::string> clips = splitClipInputs(
        std::vector<std::string>(parser.positionals().begin() + 1, parser.positionals().end()), imageInputs);
    if (!clips.empty()) requireClipSupport();
    if (!clips.empty() && !settings.maskPattern.empty())
        throw UsageError("--mask-pattern does not go with clips (a clip gets one look everywhere in the frame)");
    const BatchInputs inputs = scanBatchInputs(imageInputs);
    if (inputs.files.empty() && inputs.skipped.empty() && clips.empty())
        throw UsageError("no input images or clips found (supported: .jpg .png .tif .webp .bmp; .mp4 .mov .mkv .webm)");
    if (!cli.deviceNote.empty() && !cli.quiet) std::fprintf(stderr, "note: %s\n", cli.deviceNote.c_str());

    StderrProgress progress(!cli.quiet);
    BatchControl control;
    control.onProgress = [&](const BatchProgress& p) {
        if (cli.quiet) return;
        if (p.stage) {
            std::string label(1, '[');
            label += std::to_string(p.index + 1);
            label += '/';
            label += std::to_string(p.total);
            label += "] ";
            progress.update(label, *p.stage);
        } else if (p.finished) {
            progress.finish();
            const BatchItemResult& r = *p.finished;
            if (r.status == BatchItemStatus::Done)
                std::fprintf(stderr, "[%zu/%zu] %s -> %s (%.2f s)%s%s\n", p.index + 1, p.total, r.input.c_str(),
                             r.output.c_str(), r.timings.total(), r.note.empty() ? "" : "; note: ", r.note.c_str());
            else
                std::fprintf(stderr, "[%zu/%zu] %s: %s: %s\n", p.index + 1, p.total, r.input.c_str(),
                             toString(r.status).c_str(), withoutPathPrefix(r.message, r.input).c_str());
        }
    };
    BatchSummary summary;
    if (!inputs.files.empty() || !inputs.skipped.empty()) summary = runBatch(reference, inputs, settings, control);
    progress.finish();
    if (!clips.empty()) {
        std::error_code ec;
        std::filesystem::create_directories(settings.outDir, ec);
        runClipBatch(clips, reference, cli, parser, settings, summary);
    }
    if (cli.json) {
        std::ostringstream o;
        o << "{\n  \"done\": " << summary.done << ", \"skipped\": " << summary.skipped << ", \"failed\": " << summary.failed
          << ", \"cancelled\": " << summary.cancelled << ", \"seconds\": " << summary.seconds
          << ",\n  \"device\": " << jsonString(runsOnGpuSolver(cli) ? "gpu" : "cpu")
          << ", \"device_note\": " << jsonString(cli.deviceNote) << ",\n  \"reference_timings\": " << timingsJson(summary.referenceTimings) << ",\n  \"items\": [";
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
