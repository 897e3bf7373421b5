// `uot batch REFERENCE INPUT... --out-dir DIR [--pattern {name}_recolored.{ext}]`
#include <cstdio>
#include <filesystem>
#include <string>

#include "app/cli/arg_parser.h"
#include "app/cli/batch_options.h"
#include "app/cli/commands.h"
#include "app/cli/video_command.h"
#include "core/pipeline/batch_engine.h"

namespace uot::cli {

int runBatchCommand(const std::vector<std::string>& args)
{
    ArgParser parser("uot batch REFERENCE INPUT... --out-dir DIR [options]", batchHelpSummary());
    addBatchOptions(parser, BatchInputKinds::ImagesAndClips);
    parser.parse(args);
    if (parser.helpRequested()) {
        std::printf("%s", parser.helpText().c_str());
        return kExitOk;
    }
    const BatchCliSettings batch = readBatchOptions(parser);
    std::vector<std::string> imageInputs;
    const std::vector<std::string> clips = splitClipInputs(batch.inputPaths, imageInputs);
    if (!clips.empty()) {
        requireClipSupport();
        if (!batch.settings.maskPattern.empty())
            throw UsageError("--mask-pattern does not go with clips (a clip gets one look everywhere in the frame)");
    }
    const BatchInputs inputs = scanBatchInputs(imageInputs);
    if (inputs.files.empty() && inputs.skipped.empty() && clips.empty())
        throw UsageError("no input images or clips found (supported: .jpg .png .tif .webp .bmp; .mp4 .mov .mkv .webm)");
    if (!batch.cli.deviceNote.empty() && !batch.cli.quiet) std::fprintf(stderr, "note: %s\n", batch.cli.deviceNote.c_str());

    BatchProgressPrinter progress(batch.cli);
    BatchSummary summary;
    if (!inputs.files.empty() || !inputs.skipped.empty())
        summary = runBatch(batch.reference, inputs, batch.settings, progress.control());
    progress.finish();
    if (!clips.empty()) {
        std::error_code ec;
        std::filesystem::create_directories(batch.settings.outDir, ec);
        runClipBatch(clips, batch, parser, summary);
    }
    return reportBatch(summary, batch.cli);
}

}  // namespace uot::cli
