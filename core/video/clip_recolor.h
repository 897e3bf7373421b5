#pragma once
// A clip recolored with one look (no Qt, no OpenCV): the look computed once
// (clip_look.h), then every frame mapped through its 3-D LUT in a pipeline of
// three threads: decode ahead -> map -> encode behind, joined by bounded
// queues, so decoding, mapping and encoding overlap. The map step runs on the
// GPU when asked for (FrameLutRunner, core/color/lut_apply.h): a frame handed to
// the device goes on to the encoder once its output is written, a few frames
// later, in order; without a usable GPU the CPU maps and the report says why. The output appears only
// when complete (clip_writer.h); a cancel, an error or a signal leaves none.
// The entry point of `uot recolor CLIP`, `uot batch` over clips and (later)
// `uot-mpi batch`.

#include <atomic>
#include <functional>
#include <string>
#include <vector>

#include "core/pipeline/recolor_pipeline.h"
#include "core/video/clip_look.h"
#include "core/video/clip_reader.h"
#include "core/video/clip_writer.h"

namespace uot {

struct ClipProgress {
    bool look = false;          // true while the look is computed (frames then counts the analysis)
    long long frame = 0;        // frames mapped so far
    long long frames = -1;      // of the clip, -1 when unknown
    double framesPerSecond = 0; // mapping rate so far (decode, map and encode together)
    double secondsLeft = -1;    // -1 when unknown
};

struct ClipRecolorOptions {
    ClipLookOptions look;
    ClipWriteOptions write;
    int threads = 0;       // CPU threads of the LUT mapping, 0 = all
    bool useGpu = false;   // map the frames on GPU `device` (else, or when it is not usable, on the CPU)
    int device = 0;
    int queueFrames = 4;   // frames each queue holds (decoded ahead, mapped behind)
    std::function<void(const ClipProgress&)> onProgress;  // called on the calling thread
    const std::atomic<bool>* cancel = nullptr;            // polled between frames
};

struct ClipRecolorReport {
    ClipInfo input;
    ClipLook look;
    long long frames = 0;
    double lookSeconds = 0;     // the analysis passes and the solve
    double mapSeconds = 0;      // decode + map + encode, overlapped, until the file is in place
    double framesPerSecond = 0; // frames / mapSeconds
    // Each stage's own time inside mapSeconds (they overlap): reading and decoding,
    // mapping (the LUT, on the GPU uploads and downloads included), encoding and writing.
    double decodeSeconds = 0, mappingSeconds = 0, encodeSeconds = 0;
    std::string mapDevice;  // where the frames were mapped (FrameLutRunner::describe), "" if none was
    std::string mapNote;    // the GPU was asked for and the CPU mapped (some frames): why; "" otherwise
    std::vector<std::string> notes;  // what the output could not keep
};

// computeClipLook with `pipeline` (settings and reference set), then applyClipLook.
// Throws uot::Error (a frame that cannot be decoded is named), uot::Cancelled.
ClipRecolorReport recolorClip(const std::string& input, RecolorPipeline& pipeline, const std::string& output,
                              const ClipRecolorOptions& options);

// Maps every frame of `input` through `look` into `output`.
ClipRecolorReport applyClipLook(const std::string& input, const ClipLook& look, const std::string& output,
                                const ClipRecolorOptions& options);

}  // namespace uot
