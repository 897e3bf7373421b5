#pragma once
// Reading a clip frame by frame (no Qt; libav* and the image reader stay in the
// .cpp files): a video file through FFmpeg's libraries, or an image sequence
// through core/imageio. Frames come in display order as 8-bit RGB images
// (a video's YUV converted with the matrix and range its stream carries;
// BT.601 where it carries none, as ffmpeg does), numbered from 0.

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/color/image.h"

namespace uot {

// The colour description a video stream carries, as FFmpeg's codes
// (AVColorPrimaries, AVColorTransferCharacteristic, AVColorSpace, AVColorRange;
// 2 and 0 = unspecified). Image sequences carry none.
struct ClipColourTags {
    int primaries = 2;
    int transfer = 2;
    int matrix = 2;
    int range = 0;  // 1 = limited (video), 2 = full
    bool operator==(const ClipColourTags&) const = default;
};

// FFmpeg's names of the codes ("bt709", "tv"; "unknown" for a code it lacks).
std::string colourPrimariesName(int code);
std::string colourTransferName(int code);
std::string colourMatrixName(int code);
std::string colourRangeName(int code);

struct ClipInfo {
    std::string path;
    bool sequence = false;         // an image sequence (else a video file)
    int width = 0, height = 0;
    int frameRateNum = 25, frameRateDen = 1;  // sequences: 25 frames/s (ffmpeg's default)
    long long frameCount = -1;     // -1 when unknown
    long long firstNumber = 0;     // sequences: the number of frame 0's file
    std::string codec;             // video codec name ("" for sequences)
    ClipColourTags colour;
    bool hdr = false;              // PQ or HLG transfer, or more than 8 bits per sample
    int copiedStreams = 0;         // audio streams handed on as packets (ClipReadOptions::copyAudio)
    std::vector<std::string> notes;  // what the reader could not keep (other streams, HDR...)
    // Seconds per frame's time unit: a frame's pts counts 1 / timeBaseDen * timeBaseNum seconds.
    int timeBaseNum = 1, timeBaseDen = 25;
};

// A compressed packet of a stream copied as it is (audio); opaque outside the
// libav reader and writer.
struct CopiedPacket;
struct CopiedPacketDeleter {
    void operator()(CopiedPacket* packet) const;
};
using CopiedPacketPtr = std::unique_ptr<CopiedPacket, CopiedPacketDeleter>;

struct ClipFrame {
    Image image;         // videos: 8-bit RGB; sequences: as the file holds it (gray, RGBA, 16-bit kept)
    long long index = 0;  // 0-based, display order
    long long pts = 0;    // in ClipInfo's time base
};

// One item of a clip in file order: a frame, or a packet of a copied stream.
struct ClipItem {
    std::optional<ClipFrame> frame;
    CopiedPacketPtr packet;
};

struct ClipReadOptions {
    int maxWidth = 0;        // > 0: frames wider than this are scaled down (aspect kept; analysis passes)
    bool copyAudio = false;  // hand on the audio streams' packets (to be copied by a ClipWriter)
    bool countFrames = true; // find the frame count when the container does not say it (reads the packets once)
    int threads = 0;         // decoder threads, 0 = automatic
};

class ClipReader {
public:
    // Opens a video file (clip_paths.h: isVideoFile) or an image sequence
    // (isImageSequencePattern: its frame 0 is the first existing file numbered
    // 0 to 4, the frames run while the numbers are consecutive). Throws
    // uot::Error(Io) naming the file when it cannot be read or holds no video.
    static std::unique_ptr<ClipReader> open(const std::string& path, const ClipReadOptions& options = {});
    virtual ~ClipReader() = default;

    virtual const ClipInfo& info() const = 0;
    // The next frame or copied packet; false at the end. Throws uot::Error naming
    // the frame ("frame 12: ...") when a frame cannot be decoded.
    virtual bool next(ClipItem& item) = 0;
    // Passes over the next frame without converting it (cheaper where the format
    // allows); false at the end. Copied packets met on the way are dropped.
    virtual bool skipFrame() = 0;
    // Moves on so that the next frame is frame `index` (beyond the frames read
    // or skipped so far) by seeking where the format allows: a video whose
    // key frame before `index` comes after the current place seeks to that key
    // frame and decodes forward from it, instead of decoding every frame on
    // the way. Returns false, having moved nowhere, where it cannot; the
    // caller then skips frames. The frames read after it are those skipFrame()
    // would have reached.
    virtual bool seekForwardTo(long long index)
    {
        (void)index;
        return false;
    }
};

// Sequences: frame 0's path, for messages.
std::string describeClip(const ClipInfo& info);

}  // namespace uot
