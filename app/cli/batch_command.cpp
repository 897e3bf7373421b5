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
    const BatchWork work = scanBatchWork(batch);
    const BatchInputs& inputs = work.images;
    const std::vector<std::string>& clips = work.clips;
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
