#pragma once
// One look for a whole clip (no Qt, no OpenCV): the colour transfer computed
// once, from a palette pooled over frames sampled across the clip (or from one
// chosen frame), and kept as a 3-D LUT (the exported lattice of the look,
// core/pipeline/look_export.h) that every frame is then mapped through. Since
// each frame gets the same function of colour, the clip cannot flicker.
// --per-shot: cuts are found from the colour histograms of consecutive frames,
// each shot gets its own look, and the LUTs are cross-faded over a few frames
// at each cut.

#include <string>
#include <vector>

#include "core/color/cube_lut.h"
#include "core/color/image.h"
#include "core/pipeline/recolor_pipeline.h"
#include "core/video/clip_reader.h"

namespace uot {

struct ClipLookOptions {
    int sampleFrames = 8;       // frames pooled for a look, spread evenly over the clip (or the shot)
    long long lookFrame = -1;   // >= 0: the look of this frame alone (0-based)
    bool perShot = false;       // one look per shot, cross-faded at the cuts
    double cutThreshold = 0.35; // histogram distance (0..1, half the L1 distance) that marks a cut
    int crossFadeFrames = 6;    // frames over which two shots' LUTs blend at a cut (0: switch at the cut)
    int lutSize = 33;           // nodes per axis of the look's LUT
    int analysisWidth = 480;    // sampled frames are scaled to at most this width
    bool seek = true;           // reach sampled frames by seeking where the clip allows (false: decode every frame up to them)
};

struct ClipShotLook {
    long long firstFrame = 0;  // the shot's frames: firstFrame .. endFrame - 1
    long long endFrame = 0;
    std::vector<long long> sampledFrames;
    CubeLut lut;
    double psnr = 0;  // of the LUT against the rendered look of the sampled frames (look_export.h)
};

struct ClipLook {
    std::vector<ClipShotLook> shots;  // one unless per shot
    int crossFadeFrames = 0;

    // The LUT of frame `index`: its shot's, or near a cut a blend of two shots'
    // LUTs written into `blend` (which is then returned).
    const CubeLut& lutFor(long long index, CubeLut& blend) const;
};

// Pooled palette of frames (buildPooledPalette, equal weights) as the source
// palette, the frames stacked into one image as the source to render, and the
// look's LUT fitted to the rendered result (exportPipelineLook). `pipeline`
// holds the settings and the reference (image or palette); its source is
// replaced. Throws uot::Error, uot::Cancelled.
ClipShotLook lookOfFrames(RecolorPipeline& pipeline, const std::vector<Image>& frames, int lutSize,
                          const std::string& title, const PipelineControl& control = {});

// The distance between two frames' colour histograms (8 bins per channel):
// half the L1 distance, 0 for equal histograms, 1 for disjoint ones.
double histogramDistance(const Image& a, const Image& b);

// The frames that start a new shot (never 0) in the clip: where the histogram
// distance of a frame to the one before it is above `threshold` and at least
// twice the distances just before and after it (a fade or a fast pan changes
// every frame and is no cut). Reads the clip once at low resolution. Throws
// uot::Error, uot::Cancelled.
// `frameCount`, when given, receives the number of frames read.
std::vector<long long> detectCuts(const std::string& clip, double threshold, const PipelineControl& control = {},
                                  long long* frameCount = nullptr);

// The look of the clip at `clip` (reads it once or twice at analysis size).
// `info`, when given, receives the clip's description. Throws uot::Error
// (InvalidArgument for a --look-frame beyond the clip), uot::Cancelled.
ClipLook computeClipLook(RecolorPipeline& pipeline, const std::string& clip, const ClipLookOptions& options,
                         const PipelineControl& control = {}, ClipInfo* info = nullptr);

}  // namespace uot
