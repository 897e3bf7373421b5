#pragma once
// Jobs that drive the color pipeline (core/pipeline) on the worker thread:
// recolor (palettes -> solve -> map, reusing every cached stage), comparison of
// two variants on the same palettes, and batch recolor through the batch engine.
// Nothing here re-implements the pipeline: it converts settings and images and
// forwards progress and cancellation.

#include <QImage>
#include <QString>
#include <QStringList>

#include <functional>
#include <memory>
#include <optional>

#include "core/color/image.h"
#include "core/color/mask.h"
#include "core/pipeline/batch_engine.h"
#include "core/pipeline/recolor_pipeline.h"
#include "ui/studio_jobs.h"

namespace uot::ui {

// The pipeline of the main window with the identity of the images it holds.
// Created on the GUI thread, then used only by jobs (one at a time, on the worker).
struct PipelineSession {
    RecolorPipeline pipeline;
    quint64 sourceId = 0;
    quint64 referenceId = 0;
};

// An image loaded for the session; id changes whenever the file does.
struct LoadedImage {
    std::shared_ptr<const Image> image;
    quint64 id = 0;
    QString path;
    QString profile;  // description of the file's colour profile ("sRGB (assumed)" when none)
};

// What a recolor hands back: the picture, and the solve when one ran.
struct RecolorOutput final : JobOutput {
    bool remapped = false;                // the plan came from the cache: only the mapping is new
    std::optional<RunOutcome> solve;      // the solve, when one ran
    QImage image;                         // the recolored image at full resolution
    std::shared_ptr<const Image> pixels;  // the same at the source's depth, for saving
    QString notice;                       // shown to the user (e.g. a GPU failure fell back to the CPU)
    QString timings;                      // phase timings, one line
};

// What a batch hands back.
struct BatchOutput final : JobOutput {
    QStringList written;
    QStringList failures;  // "file: why"
    int skipped = 0;
    QString timings;       // "12 files in 3.40 s"
};

// Gives the session's pipeline these images (only those that changed since the
// last job). On the worker thread.
void useSessionImages(PipelineSession& session, const LoadedImage& source, const LoadedImage& reference);

// The pipeline settings the studio parameters describe.
RecolorSettings recolorSettingsFor(const StudioParameters& parameters);

// The statistics panel's figures of a pipeline's last solve: the run (solve()
// took wallSeconds) and the phase timings in one line.
RunOutcome outcomeOf(const PipelineStats& stats, const RecolorSettings& settings, double wallSeconds);
QString timingsText(const PhaseTimings& timings);
// max |a - b| / full scale over two images' samples (NaN when their shapes differ).
double imageMaxRelativeDifference(const Image& a, const Image& b);

// The status line for a run whose stats carry a GPU note (empty when none): which
// part ran where, so a GPU solve whose mapping moved to the CPU is not reported
// as "the GPU could not be used".
QString gpuNotice(const PipelineStats& stats);

// Recolors the source with the reference's palette. Only the stages whose
// inputs changed run again (a strength change only re-maps). A GPU failure
// falls back to the CPU with a notice in the output.
JobFunction makeRecolorJob(std::shared_ptr<PipelineSession> session, LoadedImage source, LoadedImage reference,
                           const StudioParameters& parameters);

// What a comparison runs besides the plain recolor (the studio's mask and pooled
// references: ui/studio_session_regions.cpp). Called on the worker with side A's
// pipeline, its images set: sets its palettes (side B takes the same ones) and
// returns the mask, at the source's size, that both sides' images are blended
// with the source through (null: none).
using ComparisonLook = std::function<std::shared_ptr<const Mask>(JobContext& context, RecolorPipeline& pipeline)>;

// Runs the current problem with two variants (channels 0 and 1), concurrently
// or one after the other, and reports both runs, the largest relative plan
// difference and the largest difference of the two recolored images. `look`
// (may be empty) gives both sides the same palettes and mask.
JobFunction makeComparisonJob(LoadedImage source, LoadedImage reference, const StudioParameters& parameters,
                              const QString& variantA, const QString& variantB, bool concurrent,
                              ComparisonLook look = {});

// Batch recolor through the batch engine; per-file progress as steps.
JobFunction makeBatchJob(const QString& referencePath, const QStringList& inputs, const BatchSettings& settings);

// Reads an image file (for loading on a background thread). Throws uot::Error.
LoadedImage loadImageFile(const QString& path);
// A LoadedImage id never given before (a file read, a clip's frame decoded).
quint64 newImageId();
// The largest image (pixels, 0 = no limit) loadImageFile accepts: uot-studio's
// --max-pixels, the same limit and default as the command line's.
void setImagePixelLimit(std::uint64_t pixels);
// Why `path` cannot be opened as an image file (a symbolic link loop, a dangling
// link, a folder...), or empty (a missing file is left to the reader).
QString unusableImagePath(const QString& path);
// A signal during a save leaves no temporary file (core/io/pending_temporaries.h).
void removeTemporaryFilesOnSignals();
std::uint64_t imagePixelLimit();

// A QImage that shows `image` (8-bit RGB/RGBA/gray, 16-bit as 64-bit RGBA).
QImage toQImage(const Image& image);

}  // namespace uot::ui
