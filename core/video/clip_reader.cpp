#include "core/video/clip_reader.h"

#include <cstdio>

#include "core/transport/uot_error.h"
#include "core/video/clip_paths.h"
#include "core/video/libav_clip_reader.h"
#include "core/video/sequence_clip_reader.h"

namespace uot {

std::unique_ptr<ClipReader> ClipReader::open(const std::string& path, const ClipReadOptions& options)
{
    if (isImageSequencePattern(path)) return std::make_unique<SequenceClipReader>(path, options);
    if (isVideoFile(path)) return std::make_unique<LibavClipReader>(path, options);
    throw Error(ErrorCode::InvalidArgument,
                path + ": not a clip (a .mp4, .mov, .mkv or .webm video, or an image sequence such as frame_%05d.png)");
}

std::string describeClip(const ClipInfo& info)
{
    std::string text = std::to_string(info.width) + "x" + std::to_string(info.height) + ", ";
    text += info.frameCount >= 0 ? std::to_string(info.frameCount) + " frames" : std::string("frame count unknown");
    char rate[32];
    std::snprintf(rate, sizeof rate, ", %.3g frames/s", double(info.frameRateNum) / info.frameRateDen);
    text += rate;
    if (!info.sequence) text += ", " + info.codec;
    return text;
}

}  // namespace uot
