// `uot batch REFERENCE INPUT... --out-dir DIR [--pattern {name}_recolored.{ext}]`
#include <cstdio>
#include <string>

#include "app/cli/arg_parser.h"
#include "app/cli/batch_options.h"
#include "app/cli/commands.h"
#include "core/pipeline/batch_engine.h"

namespace uot::cli {

int runBatchCommand(const std::vector<std::string>& args)
{
    ArgParser parser("uot batch REFERENCE INPUT... --out-dir DIR [options]", batchHelpSummary());
    addBatchOptions(parser);
    parser.parse(args);
    if (parser.helpRequested()) {
        std::printf("%s", parser.helpText().c_str());
        return kExitOk;
    }
    const BatchCliSettings batch = readBatchOptions(parser);
    const BatchInputs inputs = scanBatchInputs(batch.inputPaths);
    if (inputs.files.empty() && inputs.skipped.empty())
        throw UsageError("no input images found (supported: .jpg .png .tif .webp .bmp)");
    if (!batch.cli.deviceNote.empty() && !batch.cli.quiet) std::fprintf(stderr, "note: %s\n", batch.cli.deviceNote.c_str());

    BatchProgressPrinter progress(batch.cli);
    const BatchSummary summary = runBatch(batch.reference, inputs, batch.settings, progress.control());
    progress.finish();
    return reportBatch(summary, batch.cli);
}

}  // namespace uot::cli
