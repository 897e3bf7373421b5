#pragma once
// LUT export for the image commands: `uot lut` and `uot recolor --export-lut`.
// Checks of the output name and size (usage errors), then the fit or bake and
// the atomic write (core/pipeline/look_export.h): a .cube file, or a Hald CLUT
// when the name ends in .png.

#include <string>
#include <vector>

#include "app/cli/arg_parser.h"
#include "core/pipeline/look_export.h"
#include "core/pipeline/recolor_pipeline.h"

namespace uot::cli {

// The value of a size option: 17, 33 or 65. Throws UsageError naming the option.
int readLutSize(const ArgParser& parser, const std::string& option);

// The value of a Hald level option: kMinHaldLevel..kMaxHaldLevel. Throws UsageError.
int readHaldLevel(const ArgParser& parser, const std::string& option);

// True when `path` names a Hald CLUT image (.png) rather than a .cube file.
bool isHaldOutput(const std::string& path);

// The nodes per axis of the LUT file `path`: for a Hald CLUT from its level
// (`haldOption`; empty: kDefaultHaldLevel), for a .cube file from `sizeOption`.
// Either option given for the other kind of file is refused, not ignored.
// Throws UsageError naming the option.
int readLutNodes(const ArgParser& parser, const std::string& path, const std::string& sizeOption,
                 const std::string& haldOption);

// A .cube or .png name that is none of `inputs` (the command's image files,
// compared as files and as paths). Throws UsageError.
void checkLutOutput(const std::string& path, const std::vector<std::string>& inputs);

struct LutExportReport {
    int nodesPerAxis = 0;
    double seconds = 0;        // the solve and render included when they had not run yet
    double psnr = 0;           // the LUT against the rendered result (dB)
    double globalMapPsnr = 0;  // the global map alone against the rendered result (dB)
};

// Makes the pipeline's look (fitted to its rendered result, or the global map)
// with `nodesPerAxis` nodes per axis, titled `title`, and writes it to `path`
// atomically (an existing file only with `overwrite`; never one of `inputs`).
// `rendered`: the pipeline's render at its settings, when the caller has it.
// Throws uot::Error.
LutExportReport exportLookLut(RecolorPipeline& pipeline, const std::string& path, int nodesPerAxis,
                              const std::string& title, bool overwrite, const std::vector<std::string>& inputs,
                              LookLutSource source = LookLutSource::Rendered, const Image* rendered = nullptr);

// One line for the user: what the LUT reproduces and how closely.
std::string describeLutExport(const std::string& path, const LutExportReport& report, LookLutSource source);

// "source_to_reference" from the two input paths' file names.
std::string lookTitle(const std::string& sourcePath, const std::string& referencePath);

}  // namespace uot::cli
