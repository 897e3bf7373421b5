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

// Declared and read as entries of the parameter table (core/params, group Clip):
// defaults, ranges and messages are its own.
struct ClipCliSettings {
    int sampleFrames = 0;
    long long lookFrame = -1;  // -1: none (--look-frames)
    bool perShot = false;
    int crossFadeFrames = 0;
    std::string preset;
    int crf = 0;
};

// Reads them (UsageError with the table's message for a bad value).
ClipCliSettings readClipOptions(const ArgParser& parser, ClipOptionSet set = ClipOptionSet::Full);

// True when `path` names a clip (a .mp4/.mov/.mkv/.webm file or an image
// sequence pattern such as frame_%05d.png; core/video/clip_paths.h).
bool isClipArgument(const std::string& path);

}  // namespace uot::cli
