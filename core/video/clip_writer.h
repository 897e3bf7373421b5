#pragma once
// Writing a clip (no Qt; libav* and the image writer stay in the .cpp files):
// a video file encoded through FFmpeg's libraries, with the input's audio
// streams copied as they are, its frame rate, timestamps and colour description;
// or an image sequence. Nothing appears under the output's name before
// finish(): a video is written to a temporary file in the output's folder
// (core/io StreamedAtomicFile, removed on Ctrl-C / SIGTERM and when the writer
// is destroyed unfinished) and moved into place; a sequence's frames go to a
// temporary folder there and are moved into place one by one at the end.

#include <memory>
#include <string>
#include <vector>

#include "core/video/clip_reader.h"

namespace uot {

// The encoder's speed presets, fastest first (libx264's names; libvpx-vp9's
// cpu-used follows the position): what ClipWriteOptions::preset takes.
inline const std::vector<std::string>& encoderPresets()
{
    static const std::vector<std::string> names{"ultrafast", "superfast", "veryfast", "faster", "fast",
                                                "medium",    "slow",      "slower",   "veryslow"};
    return names;
}

struct ClipWriteOptions {
    bool overwrite = false;                   // replace existing outputs
    std::vector<std::string> protectedPaths;  // never replaced (the source, the references)
    // Video: the encoder's speed preset (libx264: ultrafast ... veryslow; libvpx-vp9:
    // its cpu-used is derived from it) and quality (x264/vp9 CRF).
    std::string preset = "veryfast";
    int crf = 18;
    int threads = 0;  // encoder threads, 0 = automatic
};

class ClipWriter {
public:
    // Opens OUTPUT (a video file or a sequence pattern) for frames of `input`'s
    // size and rate; with a libav input, its audio streams (read with
    // ClipReadOptions::copyAudio) are copied where the container takes their codec.
    // Throws uot::Error(Io) naming the output when it cannot be written.
    static std::unique_ptr<ClipWriter> open(const std::string& output, const ClipReader& input,
                                            const ClipWriteOptions& options);
    virtual ~ClipWriter() = default;
    // A frame (RGB, RGBA or gray, 8 or 16 bits; a video gets 8-bit YUV), or a copied packet.
    virtual void write(ClipItem& item) = 0;
    // Flushes, finishes the file(s) and moves them into place.
    virtual void finish() = 0;
    // What the output could not keep (metadata, streams), said once.
    virtual const std::vector<std::string>& notes() const = 0;
};

// Checks before any work that OUTPUT may be written (core/io checkWritableDestination;
// for a sequence its folder and its first frame's name). Throws uot::Error(Io).
void checkClipOutput(const std::string& output, const ClipWriteOptions& options);

}  // namespace uot
