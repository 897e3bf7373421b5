#include "app/cli/video_options.h"

#include "core/video/clip_paths.h"

namespace uot::cli {

namespace {
const char* const kPresets[] = {"ultrafast", "superfast", "veryfast", "faster", "fast",
                                "medium",    "slow",      "slower",   "veryslow"};
}

void addClipOptions(ArgParser& parser, ClipOptionSet set)
{
    parser.addOption("look-frames", "N",
                     "clips: the look is computed once from a palette pooled over N frames spread evenly over the clip "
                     "(or over each shot with --per-shot)",
                     "8");
    parser.addOption("look-frame", "N", "clips: compute the look from frame N alone (0-based) instead");
    parser.addFlag("per-shot", "clips: detect cuts (color histogram of consecutive frames) and compute one look per "
                               "shot, cross-faded at each cut");
    parser.addOption("cross-fade", "FRAMES", "clips with --per-shot: frames over which two shots' looks blend at a cut "
                                             "(0: switch at the cut)",
                     "6");
    if (set == ClipOptionSet::Look) return;
    parser.addOption("video-preset", "ultrafast|superfast|veryfast|faster|fast|medium|slow|slower|veryslow",
                     "clips written as video: the encoder's speed preset (libx264; libvpx-vp9 for .webm follows it)",
                     "veryfast");
    parser.addOption("crf", "0..51", "clips written as video: the encoder's constant quality (x264 scale; lower is "
                                     "better)",
                     "18");
}

ClipCliSettings readClipOptions(const ArgParser& parser, ClipOptionSet set)
{
    ClipCliSettings s;
    s.sampleFrames = parser.integer("look-frames");
    if (s.sampleFrames < 1 || s.sampleFrames > 1000) throw UsageError("--look-frames takes a whole number from 1 to 1000");
    if (parser.has("look-frame")) {
        s.lookFrame = parser.integer("look-frame");
        if (s.lookFrame < 0) throw UsageError("--look-frame takes a frame number from 0");
        if (parser.has("look-frames")) throw UsageError("--look-frame and --look-frames do not go together");
    }
    s.perShot = parser.flag("per-shot");
    if (s.perShot && s.lookFrame >= 0) throw UsageError("--look-frame and --per-shot do not go together");
    s.crossFadeFrames = parser.integer("cross-fade");
    if (s.crossFadeFrames < 0 || s.crossFadeFrames > 240) throw UsageError("--cross-fade takes a whole number from 0 to 240");
    if (set == ClipOptionSet::Look) return s;
    s.preset = parser.value("video-preset");
    bool known = false;
    for (const char* p : kPresets) known = known || s.preset == p;
    if (!known) throw UsageError("--video-preset takes one of ultrafast, superfast, veryfast, faster, fast, medium, slow, "
                                 "slower, veryslow");
    s.crf = parser.integer("crf");
    if (s.crf < 0 || s.crf > 51) throw UsageError("--crf takes a whole number from 0 to 51");
    return s;
}

bool isClipArgument(const std::string& path) { return isClipPath(path); }

}  // namespace uot::cli
