#include "app/cli/video_options.h"

#include "app/cli/parameter_flags.h"
#include "core/video/clip_paths.h"

namespace uot::cli {

namespace {

// The clip flags of `set`: every entry of the table's Clip group, or the look's (not the encoder's).
bool inSet(const params::Parameter& p, ClipOptionSet set)
{
    return p.cliGroup == params::CliGroup::Clip &&
           (set == ClipOptionSet::Full || (p.name != "video-preset" && p.name != "crf"));
}

double number(const ArgParser& parser, const char* name) { return parameterNumber(parser, params::parameter(name)); }

}  // namespace

void addClipOptions(ArgParser& parser, ClipOptionSet set)
{
    for (const params::Parameter& p : params::parameters())
        if (inSet(p, set)) addParameterOption(parser, p);
}

ClipCliSettings readClipOptions(const ArgParser& parser, ClipOptionSet set)
{
    ClipCliSettings s;
    s.sampleFrames = static_cast<int>(number(parser, "look-frames"));
    if (parser.has("look-frame")) {
        s.lookFrame = static_cast<long long>(number(parser, "look-frame"));
        if (parser.has("look-frames")) throw UsageError("--look-frame and --look-frames do not go together");
    }
    s.perShot = number(parser, "per-shot") != 0;
    if (s.perShot && s.lookFrame >= 0) throw UsageError("--look-frame and --per-shot do not go together");
    s.crossFadeFrames = static_cast<int>(number(parser, "cross-fade"));
    if (set == ClipOptionSet::Look) return s;
    s.preset = parameterText(parser, params::parameter("video-preset"));
    s.crf = static_cast<int>(number(parser, "crf"));
    return s;
}

bool isClipArgument(const std::string& path) { return isClipPath(path); }

}  // namespace uot::cli
