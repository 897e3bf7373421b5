#pragma once
// Which paths name clips (no Qt, no OpenCV): video files by their extension,
// and image sequences by a printf-style frame number in the name
// ("frame_%05d.png"), as ffmpeg writes them.

#include <string>

namespace uot {

// .mp4, .mov, .mkv, .webm (any case).
bool isVideoFile(const std::string& path);
// A file name holding one "%d" or "%0Nd" (N from 1 to 9) and an image extension.
bool isImageSequencePattern(const std::string& path);
// Either of the above.
inline bool isClipPath(const std::string& path) { return isVideoFile(path) || isImageSequencePattern(path); }

// The file of frame `number` of a sequence pattern ("frame_%05d.png", 7 -> "frame_00007.png").
std::string sequenceFramePath(const std::string& pattern, long long number);

}  // namespace uot
