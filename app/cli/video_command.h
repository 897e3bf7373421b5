#pragma once
// The clip paths of the image commands (docs/VIDEO.md): `uot recolor CLIP
// REFERENCE... -o OUT`, `uot lut CLIP REFERENCE... -o LOOK.cube` and the clips of
// `uot batch`. Each is called by its command once the arguments are parsed and
// the first positional names a clip (video_options.h: isClipArgument).
// Without FFmpeg's libraries in the build they throw uot::Error(Unavailable).

#include <string>
#include <vector>

#include "app/cli/arg_parser.h"
#include "app/cli/batch_options.h"
#include "app/cli/recolor_options.h"
#include "core/pipeline/batch_engine.h"

namespace uot::cli {

// Throws uot::Error(Unavailable) in a build without FFmpeg's libraries (before any work).
void requireClipSupport();

// With --device gpu[:N] (or auto finding a GPU) the look is solved and the
// frames are mapped on that GPU; a GPU that fails while frames run hands the
// rest to the CPU, and the report says so.
int runClipRecolor(const ArgParser& parser);
int runClipLut(const ArgParser& parser);

// `uot batch`'s inputs split: the clips (clip paths given as such, and the video
// files of the folders given, sorted by name) and the rest (returned as given,
// folders included, for the image batch).
std::vector<std::string> splitClipInputs(const std::vector<std::string>& inputs, std::vector<std::string>& others);

// Recolors each clip into out-dir/pattern (expandInputPattern) with the batch's
// reference palette (its references pooled with their weights, as for images),
// one after the other, each with its own look. An existing output is
// skipped without --overwrite; a clip that fails is reported and the rest go on.
// The results are added to `summary` (done / skipped / failed counts included).
// The references are read only when summary.referencePalette is null (no image
// batch ran before): otherwise the clips take the images' palette as it is.
// With --device gpu the frames are mapped on the GPU, as in runClipRecolor.
void runClipBatch(const std::vector<std::string>& clips, const BatchCliSettings& batch, const ArgParser& parser,
                  BatchSummary& summary);

}  // namespace uot::cli
