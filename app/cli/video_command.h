#pragma once
// The clip paths of the image commands (docs/VIDEO.md): `uot recolor CLIP
// REFERENCE... -o OUT`, `uot lut CLIP REFERENCE... -o LOOK.cube` and the clips of
// `uot batch`. Each is called by its command once the arguments are parsed and
// the first positional names a clip (video_options.h: isClipArgument).
// Without FFmpeg's libraries in the build they throw uot::Error(Unavailable).

#include <string>
#include <vector>

#include "app/cli/arg_parser.h"

namespace uot::cli {

int runClipRecolor(const ArgParser& parser);
int runClipLut(const ArgParser& parser);

}  // namespace uot::cli
