// `uot lut SOURCE REFERENCE -o LOOK.cube|LOOK.png [--size 17|33|65] [--hald-level 4..8] [options]`
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <sstream>

#include "app/cli/arg_parser.h"
#include "app/cli/commands.h"
#include "app/cli/json_text.h"
#include "app/cli/lut_export.h"
#include "app/cli/recolor_options.h"
#include "app/cli/video_command.h"
#include "app/cli/video_options.h"
#include "core/color/hald_clut.h"
#include "core/imageio/image_io.h"
#include "core/pipeline/input_paths.h"
#include "core/pipeline/look_export.h"
#include "core/pipeline/recolor_pipeline.h"
#include "core/transport/uot_error.h"

namespace uot::cli {

int runLutCommand(const std::vector<std::string>& rawArgs)
{
    ArgParser parser("uot lut SOURCE REFERENCE... -o LOOK.cube|LOOK.png [--size 17|33|65] [--hald-level 4..8] [options]",
                     std::string("Exports the color transfer from REFERENCE onto SOURCE as a 3-D LUT: in the "
                                 "Adobe/Resolve .cube format (TITLE, LUT_3D_SIZE, DOMAIN_MIN/MAX 0..1, red fastest), "
                                 "for Resolve, Premiere, Photoshop, OBS, ffmpeg (-vf lut3d=file=LOOK.cube), or, when "
                                 "the name ends in .png, as a 16-bit Hald CLUT image for darktable (lut 3D), "
                                 "RawTherapee (film simulation) and G'MIC. Input and output are sRGB-encoded values. "
                                 "The smoothing and palette-match options are those of `uot recolor`, so the LUT "
                                 "reproduces what `uot recolor` writes with the same options. ") +
                         kLutHoldsGlobalMapOnly +
                         " Exit codes: 0 ok, 1 failed (unreadable image, unwritable file), 2 usage (or bad input "
                         "value), 4 backend unavailable.");
    parser.addPositional("SOURCE", "image whose colors the look is made for (its color range sets the map's box), or a "
                                   "clip (video or image sequence): the LUT is the look `uot recolor` gives the clip");
    parser.addPositional("REFERENCE...", "image(s) whose palette is transferred (several: pooled into one palette)");
    parser.addOption("output", "LOOK.cube|LOOK.png", "the LUT file (-o): .cube, or .png for a Hald CLUT; written atomically");
    parser.addOption("size", "17|33|65", "nodes per axis of a .cube LUT", "33");
    parser.addOption("hald-level", "4..8", "level L of a Hald CLUT (.png): L^2 nodes per axis, L^3 x L^3 pixels",
                     std::to_string(kDefaultHaldLevel));
    parser.addFlag("global-map", "export the plan's global color map (what --no-smooth renders) instead of the LUT "
                                 "fitted to the rendered result");
    parser.addFlag("overwrite", "replace LOOK.cube if it exists");
    addRecolorOptions(parser, RecolorOptionSet::Look);
    addRegionOptions(parser, MaskOption::None);
    addClipOptions(parser, ClipOptionSet::Look);
    parser.parse(expandShortOutput(rawArgs));
    if (parser.helpRequested()) {
        std::printf("%s", parser.helpText().c_str());
        return kExitOk;
    }
    if (!parser.positionals().empty() && isClipArgument(parser.positionals()[0])) return runClipLut(parser);
    if (parser.positionals().size() < 2)
        throw UsageError("expected SOURCE and at least one REFERENCE (got " + std::to_string(parser.positionals().size()) +
                         " arguments)");
    if (!parser.has("output")) throw UsageError("missing -o LOOK.cube (the LUT file)");
    const std::string sourcePath = parser.positionals()[0];
    const std::string referencePath = parser.positionals()[1];
    const std::vector<std::string> referencePaths(parser.positionals().begin() + 1, parser.positionals().end());
    const std::string outputPath = parser.value("output");
    const int size = readLutNodes(parser, outputPath, "size", "hald-level");
    const LookLutSource lookSource = parser.flag("global-map") ? LookLutSource::GlobalMap : LookLutSource::Rendered;
    std::vector<std::string> inputs = referencePaths;
    inputs.insert(inputs.begin(), sourcePath);
    checkLutOutput(outputPath, inputs);
    for (const std::string& path : inputs) checkInputPath(path);
    const RecolorCliSettings cli = readRecolorOptions(parser, RecolorOptionSet::Look);
    const RegionCliSettings regions = readRegionOptions(parser, MaskOption::None, referencePaths.size());
    AtomicWriteOptions destination;
    destination.overwrite = parser.flag("overwrite");
    checkWritableDestination(outputPath, destination);  // fail before the solve

    const auto start = std::chrono::steady_clock::now();
    RecolorPipeline pipeline(cli.recolor);
    pipeline.setSource(readImage(sourcePath, cli.read));
    std::vector<Image> references;
    for (const std::string& path : referencePaths) references.push_back(readImage(path, cli.read));
    setReferences(pipeline, std::move(references), regions);
    StderrProgress progress(!cli.quiet);
    PipelineControl control;
    control.onProgress = [&progress](const PipelineProgress& p) { progress.update("", p); };
    pipeline.solve(control);
    progress.finish();
    const double prepared = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    const LutExportReport report = exportLookLut(pipeline, outputPath, size, lookTitle(sourcePath, referencePath),
                                                 parser.flag("overwrite"), inputs, lookSource);
    const std::string note = deviceNote(cli, pipeline.stats());
    if (cli.json) {
        std::ostringstream o;
        o << "{\"output\": " << jsonString(outputPath) << ", \"size\": " << size << ", \"space\": "
          << jsonString(toString(cli.recolor.space)) << ", \"seconds_solve\": " << jsonNumber(prepared)
          << ", \"seconds_export\": " << jsonNumber(report.seconds) << ", \"fitted\": "
          << (lookSource == LookLutSource::Rendered ? "true" : "false") << ", \"psnr_vs_result\": "
          << jsonNumber(report.psnr) << ", \"global_map_psnr_vs_result\": " << jsonNumber(report.globalMapPsnr)
          << ", " << deviceJson(cli, pipeline.stats())
          << "}\n";
        std::printf("%s", o.str().c_str());
    } else if (!cli.quiet) {
        std::fprintf(stderr, "wrote %s (%d^3 LUT) in %.2f s: decode+palettes+solve %.2f, render+fit+write %.3f\n%s\n",
                     outputPath.c_str(), size, prepared + report.seconds, prepared, report.seconds,
                     describeLutExport(outputPath, report, lookSource).c_str());
    }
    if (!note.empty() && !cli.quiet) std::fprintf(stderr, "note: %s\n", note.c_str());
    return kExitOk;
}

}  // namespace uot::cli
