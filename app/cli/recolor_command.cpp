// `uot recolor SOURCE REFERENCE -o OUT [options]`
#include <chrono>
#include <cmath>
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
#include "core/imageio/image_io.h"
#include "core/io/atomic_file.h"
#include "core/pipeline/input_paths.h"
#include "core/pipeline/look_export.h"
#include "core/pipeline/recolor_pipeline.h"
#include "core/pipeline/region_mask_file.h"
#include "core/pipeline/region_recolor.h"
#include "core/transport/uot_error.h"

namespace uot::cli {

namespace {
using Clock = std::chrono::steady_clock;
double secondsSince(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

}  // namespace

int runRecolorCommand(const std::vector<std::string>& rawArgs)
{
    ArgParser parser("uot recolor SOURCE REFERENCE... -o OUT [options]",
                     "Transfers the color palette of REFERENCE onto SOURCE by unbalanced optimal transport between "
                     "their palettes, then maps every pixel smoothly. Costs are squared distances in the working space "
                     "divided by D^2 (D = 100 for Lab, 1 for Oklab and linear RGB), so --eps 0.01 blurs colors over "
                     "about 10 Lab units. Several REFERENCEs are pooled into one reference palette (--reference-weights); --mask "
                     "recolors a region only, --region up to four regions each with its own reference (docs/REGIONS.md). Exit codes: 0 ok, 1 failed, 2 usage (or bad input value), 4 backend unavailable.");
    parser.addPositional("SOURCE", "image to recolor (JPEG, PNG, TIFF, WebP, BMP; 8/16-bit; gray; alpha kept), or a "
                                   "clip: a .mp4/.mov/.mkv/.webm video or an image sequence such as frame_%05d.png "
                                   "(one look for the whole clip; docs/VIDEO.md)");
    parser.addPositional("REFERENCE...", "image(s) whose palette is transferred (several: pooled into one palette)");
    parser.addOption("output", "OUT", "output file (-o); format from the extension; written atomically (for a clip: "
                                       "a video file or an image sequence pattern)");
    parser.addFlag("overwrite", "replace OUT if it exists");
    parser.addOption("export-lut", "LOOK.cube|LOOK.png",
                     std::string("also write the look as a 3-D LUT (.cube, or a Hald CLUT of level 8 for .png; like "
                                 "`uot lut`). ") + kLutHoldsGlobalMapOnly);
    parser.addOption("export-lut-size", "17|33|65", "nodes per axis of the exported LUT", "33");
    addRecolorOptions(parser);
    addRegionOptions(parser, MaskOption::File);
    addClipOptions(parser);
    parser.parse(expandShortOutput(rawArgs));
    if (parser.helpRequested()) {
        std::printf("%s", parser.helpText().c_str());
        return kExitOk;
    }
    if (!parser.positionals().empty() && isClipArgument(parser.positionals()[0])) return runClipRecolor(parser);
    const bool regionMode = parser.has("region");
    if (regionMode && parser.positionals().size() != 1)
        throw UsageError("with --region, give SOURCE only (each region names its reference)");
    if (!regionMode && parser.positionals().size() < 2)
        throw UsageError("expected SOURCE and at least one REFERENCE (got " + std::to_string(parser.positionals().size()) +
                         " arguments)");
    if (!parser.has("output")) throw UsageError("missing -o OUT (the output file)");
    const std::string sourcePath = parser.positionals()[0];
    const std::vector<std::string> referencePaths(parser.positionals().begin() + 1, parser.positionals().end());
    const std::string outputPath = parser.value("output");
    RecolorCliSettings cli = readRecolorOptions(parser);
    const RegionCliSettings regions = readRegionOptions(parser, MaskOption::File, referencePaths.size());
    if (regionMode && !regions.mask.empty()) throw UsageError("--mask and --region do not go together");
    // Every file read: the references, the mask, the regions' masks and references.
    std::vector<std::string> inputs = referencePaths;
    if (!regions.mask.empty()) inputs.push_back(regions.mask);
    for (const RegionSpec& r : regions.regions) inputs.insert(inputs.end(), {r.mask, r.reference});
    cli.write.overwrite = parser.flag("overwrite") || parser.flag("overwrite-source");
    cli.write.protectedPaths = inputs;  // never replaced
    if (!parser.flag("overwrite-source")) cli.write.protectedPaths.push_back(sourcePath);
    checkInputPath(sourcePath);
    for (const std::string& path : inputs) {
        checkInputPath(path);
        checkImageOutput(outputPath, sourcePath, path, cli.write.overwrite, parser.flag("overwrite-source"));
    }
    const std::string lutPath = parser.has("export-lut") ? parser.value("export-lut") : std::string();
    if (!lutPath.empty() && (!regions.mask.empty() || regionMode))
        throw UsageError("--export-lut does not go with --mask or --region: a LUT applies to every pixel, it cannot hold a mask");
    const std::string referencePath = regionMode ? regions.regions.front().reference : referencePaths.front();
    const int lutSize = readLutNodes(parser, lutPath, "export-lut-size", "");
    if (!lutPath.empty()) {
        checkLutOutput(lutPath, {sourcePath, referencePath, outputPath});
        AtomicWriteOptions destination;
        destination.overwrite = parser.flag("overwrite");
        checkWritableDestination(lutPath, destination);  // fail before the solve
    }

    {  // a source profile that cannot be written is said before the work
        WriteOptions profileCheck = cli.write;
        profileCheck.metadataFrom = sourcePath;
        chosenOutputProfile(profileCheck);
    }

    PhaseTimings timings;
    auto t0 = Clock::now();
    Image source = readImage(sourcePath, cli.read);
    std::vector<Image> references;
    for (const std::string& path : referencePaths) references.push_back(readImage(path, cli.read));
    std::vector<Image> regionReferences;
    for (const RegionSpec& r : regions.regions) regionReferences.push_back(readImage(r.reference, cli.read));
    timings.decode = secondsSince(t0);
    // Metadata the output cannot take from the source is said now, before the work (and not again).
    if (const std::string warning = metadataCopyWarning(sourcePath, outputPath); !warning.empty()) {
        std::fprintf(stderr, "uot recolor: warning: %s\n", warning.c_str());
        cli.write.warn = [](const std::string&) {};
    }

    // The masks, ready for the source (resized, feathered), and the regions' reference palettes: counted as decoding.
    t0 = Clock::now();
    const Mask mask = regions.mask.empty() ? Mask{}
                                           : readMaskFor(regions.mask, source, regions.maskFeather, cli.recolor.space,
                                                         cli.read, cli.recolor.threads);
    timings.decode += secondsSince(t0);
    std::vector<RecolorRegion> regionList;
    for (std::size_t r = 0; r < regions.regions.size(); ++r) {
        RecolorRegion region;
        region.settings = cli.recolor;
        region.mask = readMaskFor(regions.regions[r].mask, source, regions.maskFeather, cli.recolor.space, cli.read,
                                  cli.recolor.threads);
        region.reference = computePalette(regionReferences[r], cli.recolor);
        regionList.push_back(std::move(region));
    }
    timings.decode += secondsSince(t0);
    RecolorPipeline pipeline(cli.recolor);
    StderrProgress progress(!cli.quiet);
    PipelineControl control;
    control.onProgress = [&progress](const PipelineProgress& p) { progress.update("", p); };
    Image result;
    PipelineStats stats;
    if (regionMode) {
        std::vector<PipelineStats> regionStats;
        result = recolorRegions(source, regionList, control, &regionStats);
        for (const PipelineStats& rs : regionStats) {  // the regions' phases added up, the last one's solve shown
            stats.timings.palette += rs.timings.palette;
            stats.timings.cost += rs.timings.cost;
            stats.timings.solve += rs.timings.solve;
            stats.timings.map += rs.timings.map;
            stats.sourcePaletteSize = rs.sourcePaletteSize;
            stats.referencePaletteSize = rs.referencePaletteSize;
            stats.solve = rs.solve;
            stats.gpuNote = rs.gpuNote;
        }
    } else {
        pipeline.setSource(std::move(source));
        setReferences(pipeline, std::move(references), regions);
        result = mask.empty() ? pipeline.run(control) : recolorMasked(pipeline, mask, control);
        stats = pipeline.stats();
    }
    progress.finish();
    timings.palette = stats.timings.palette;
    timings.cost = stats.timings.cost;
    timings.solve = stats.timings.solve;
    timings.map = stats.timings.map;

    t0 = Clock::now();
    WriteOptions write = cli.write;
    write.metadataFrom = sourcePath;  // the photo's EXIF/XMP/IPTC travel with it
    // write.profile (--output-profile, sRGB by default): the pixels are sRGB, converted into it on writing
    writeImage(outputPath, result, write);
    timings.encode = secondsSince(t0);
    LutExportReport lut;
    if (!lutPath.empty()) {
        lut = exportLookLut(pipeline, lutPath, lutSize, lookTitle(sourcePath, referencePath), parser.flag("overwrite"),
                            {sourcePath, referencePath, outputPath}, LookLutSource::Rendered, &result);
    }

    if (cli.json) {
        std::ostringstream o;
        o << "{\n  \"output\": " << jsonString(outputPath) << ",\n  \"width\": " << result.width
          << ", \"height\": " << result.height << ",\n  \"timings\": " << timingsJson(timings)
          << ",\n  \"palette\": {\"source\": " << stats.sourcePaletteSize << ", \"reference\": " << stats.referencePaletteSize
          << ", \"method\": " << jsonString(toString(cli.recolor.palette.method))
          << ", \"space\": " << jsonString(toString(cli.recolor.space)) << "},\n  " << deviceJson(cli, stats);
        if (!lutPath.empty())
            o << ",\n  \"lut\": {\"file\": " << jsonString(lutPath) << ", \"size\": " << lutSize
              << ", \"seconds\": " << jsonNumber(lut.seconds) << ", \"psnr_vs_result\": " << jsonNumber(lut.psnr)
              << ", \"global_map_psnr_vs_result\": " << jsonNumber(lut.globalMapPsnr) << "}";
        if (stats.solve) {
            const SolveResult& r = *stats.solve;
            o << ",\n  \"solver\": {\"name\": " << jsonString(r.solver) << ", \"iterations\": " << r.iterations
              << ", \"passes\": " << r.passes << ", \"mode\": " << jsonString(r.mode)
              << ", \"acceleration\": " << jsonString(r.acceleration) << ", \"converged\": " << (r.converged ? "true" : "false") << ", \"error\": " << jsonNumber(r.error)
              << ", \"status\": " << jsonString(toString(r.status)) << ", \"mass\": " << jsonNumber(r.mass)
              << ", \"marginal_error_a\": " << jsonNumber(r.marginalErrorA)
              << ", \"marginal_error_b\": " << jsonNumber(r.marginalErrorB) << ", \"objective\": " << jsonNumber(r.objective)
              << ", \"ms_per_iteration\": " << jsonNumber(r.timings.msPerIteration) << ", \"eps\": "
              << jsonNumber(cli.recolor.transport.eps) << ", \"tau_a\": " << jsonNumber(cli.recolor.transport.sourceAdherence)
              << ", \"tau_b\": " << jsonNumber(cli.recolor.transport.adherence) << "}";
        }
        o << "\n}\n";
        std::printf("%s", o.str().c_str());
    } else if (!cli.quiet) {
        std::fprintf(stderr, "wrote %s (%dx%d) in %.2f s: decode %.2f, palette %.2f, cost %.3f, solve %.2f, map %.2f, encode %.2f\n",
                     outputPath.c_str(), result.width, result.height, timings.total(), timings.decode, timings.palette,
                     timings.cost, timings.solve, timings.map, timings.encode);
        if (!lutPath.empty())
            std::fprintf(stderr, "wrote %s in %.2f s; %s\n", lutPath.c_str(), lut.seconds,
                         describeLutExport(lutPath, lut, LookLutSource::Rendered).c_str());
        if (stats.solve && !stats.solve->message.empty())
            std::fprintf(stderr, "solver note: %s\n", stats.solve->message.c_str());
    }
    if (const std::string note = deviceNote(cli, stats); !note.empty() && !cli.quiet)
        std::fprintf(stderr, "note: %s\n", note.c_str());
    return kExitOk;
}

}  // namespace uot::cli
