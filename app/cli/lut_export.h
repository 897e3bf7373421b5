#pragma once
// LUT export for the image commands: `uot lut` and `uot recolor --export-lut`.
// Checks of the output name and size (usage errors), then the bake and the
// atomic write (core/pipeline/look_export.h).

#include <string>
#include <vector>

#include "app/cli/arg_parser.h"
#include "core/pipeline/recolor_pipeline.h"

namespace uot::cli {

// The value of a size option: 17, 33 or 65. Throws UsageError naming the option.
int readLutSize(const ArgParser& parser, const std::string& option);

// A .cube name that is none of `inputs` (the command's image files, compared as
// files and as paths). Throws UsageError.
void checkLutOutput(const std::string& path, const std::vector<std::string>& inputs);

// Bakes the pipeline's look into a size^3 LUT titled `title` and writes it to
// `path` atomically (an existing file only with `overwrite`). Returns the
// seconds spent (the solve included when it had not run yet). Throws uot::Error.
double exportLookLut(RecolorPipeline& pipeline, const std::string& path, int size, const std::string& title,
                     bool overwrite, const std::vector<std::string>& inputs);

// "source_to_reference" from the two input paths' file names.
std::string lookTitle(const std::string& sourcePath, const std::string& referencePath);

}  // namespace uot::cli
