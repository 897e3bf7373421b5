#pragma once
// The clip options of `uot recolor`, `uot lut` and `uot batch` (docs/VIDEO.md):
// how the clip's look is computed (--look-frames, --look-frame, --per-shot,
// --cross-fade) and how a video is encoded (--video-preset, --crf).

#include <string>

#include "app/cli/arg_parser.h"

namespace uot::cli {

// Which clip options a command takes: all, or only the look's (`uot lut`).
enum class ClipOptionSet { Full, Look };

void addClipOptions(ArgParser& parser, ClipOptionSet set = ClipOptionSet::Full);

struct ClipCliSettings {
    int sampleFrames = 8;
    long long lookFrame = -1;
    bool perShot = false;
    int crossFadeFrames = 6;
    std::string preset = "veryfast";
    int crf = 18;
};

// Reads them (UsageError for a bad value).
ClipCliSettings readClipOptions(const ArgParser& parser, ClipOptionSet set = ClipOptionSet::Full);

// True when `path` names a clip (a .mp4/.mov/.mkv/.webm file or an image
// sequence pattern such as frame_%05d.png; core/video/clip_paths.h).
bool isClipArgument(const std::string& path);

}  // namespace uot::cli
