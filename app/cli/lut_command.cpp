// `uot lut SOURCE REFERENCE -o LOOK.cube [--size 17|33|65] [options]`
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <sstream>

#include "app/cli/arg_parser.h"
#include "app/cli/commands.h"
#include "app/cli/json_text.h"
#include "app/cli/lut_export.h"
#include "app/cli/recolor_options.h"
#include "core/imageio/image_io.h"
#include "core/pipeline/input_paths.h"
#include "core/pipeline/look_export.h"
#include "core/pipeline/recolor_pipeline.h"
#include "core/transport/uot_error.h"

namespace uot::cli {

int runLutCommand(const std::vector<std::string>& rawArgs)
{
    ArgParser parser("uot lut SOURCE REFERENCE -o LOOK.cube [--size 17|33|65] [options]",
                     std::string("Exports the colour transfer from REFERENCE onto SOURCE as a 3-D LUT in the "
                                 "Adobe/Resolve .cube format (TITLE, LUT_3D_SIZE, DOMAIN_MIN/MAX 0..1, red fastest), "
                                 "for Resolve, Premiere, Photoshop, OBS, ffmpeg (-vf lut3d=file=LOOK.cube). Input and "
                                 "output are sRGB-encoded values. ") +
                         kLutHoldsGlobalMapOnly +
                         " Exit codes: 0 ok, 1 failed (unreadable image, unwritable file), 2 usage (or bad input "
                         "value), 4 backend unavailable.");
    parser.addPositional("SOURCE", "image whose colours the look is made for (its colour range sets the map's box)");
    parser.addPositional("REFERENCE", "image whose palette is transferred");
    parser.addOption("output", "LOOK.cube", "the LUT file (-o); written atomically");
    parser.addOption("size", "17|33|65", "nodes per axis of the LUT", "33");
    parser.addFlag("overwrite", "replace LOOK.cube if it exists");
    addRecolorOptions(parser, RecolorOptionSet::GlobalMap);
    parser.parse(expandShortOutput(rawArgs));
    if (parser.helpRequested()) {
        std::printf("%s", parser.helpText().c_str());
        return kExitOk;
    }
    if (parser.positionals().size() != 2)
        throw UsageError("expected SOURCE and REFERENCE (got " + std::to_string(parser.positionals().size()) +
                         " arguments)");
    if (!parser.has("output")) throw UsageError("missing -o LOOK.cube (the LUT file)");
    const std::string sourcePath = parser.positionals()[0];
    const std::string referencePath = parser.positionals()[1];
    const std::string outputPath = parser.value("output");
    const int size = readLutSize(parser, "size");
    checkLutOutput(outputPath, {sourcePath, referencePath});
    checkInputPath(sourcePath);
    checkInputPath(referencePath);
    const RecolorCliSettings cli = readRecolorOptions(parser, RecolorOptionSet::GlobalMap);
    AtomicWriteOptions destination;
    destination.overwrite = parser.flag("overwrite");
    checkWritableDestination(outputPath, destination);  // fail before the solve

    const auto start = std::chrono::steady_clock::now();
    RecolorPipeline pipeline(cli.recolor);
    pipeline.setSource(readImage(sourcePath, cli.read));
    pipeline.setReference(readImage(referencePath, cli.read));
    StderrProgress progress(!cli.quiet);
    PipelineControl control;
    control.onProgress = [&progress](const PipelineProgress& p) { progress.update("", p); };
    pipeline.solve(control);
    progress.finish();
    const double prepared = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    const double exportSeconds = exportLookLut(pipeline, outputPath, size, lookTitle(sourcePath, referencePath),
                                               parser.flag("overwrite"), {sourcePath, referencePath});
    const std::string note = deviceNote(cli, pipeline.stats());
    if (cli.json) {
        std::ostringstream o;
        o << "{\"output\": " << jsonString(outputPath) << ", \"size\": " << size << ", \"space\": "
          << jsonString(toString(cli.recolor.space)) << ", \"seconds_solve\": " << jsonNumber(prepared)
          << ", \"seconds_export\": " << jsonNumber(exportSeconds) << ", " << deviceJson(cli, pipeline.stats())
          << "}\n";
        std::printf("%s", o.str().c_str());
    } else if (!cli.quiet) {
        std::fprintf(stderr, "wrote %s (%d^3 LUT) in %.2f s: decode+palettes+solve %.2f, bake+write %.3f\n",
                     outputPath.c_str(), size, prepared + exportSeconds, prepared, exportSeconds);
    }
    if (!note.empty() && !cli.quiet) std::fprintf(stderr, "note: %s\n", note.c_str());
    return kExitOk;
}

}  // namespace uot::cli
