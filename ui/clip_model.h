#pragma once
// The clip the studio shows as its source (docs/VIDEO.md, "In the studio"): a
// video file or an image sequence read through core/video one frame at a time
// for the scrubber, the look of the whole clip (core/video/clip_look.h, as
// `uot recolor CLIP` computes it) applied to each frame shown, and the export
// of the clip through the command line's own engine (core/video/clip_recolor.h,
// applyClipLook: the same temporary file and rename, nothing left on a cancel).
// Session-side: StudioSession owns it and starts its look job; the views read
// its description and export progress and ask the session for the rest.
//
// Threads (QtConcurrent, as everywhere in the studio):
//  - frames are decoded on the model's own one-thread pool, one at a time; a
//    request made while one decodes replaces the waiting one, so scrubbing
//    stays responsive and the frame shown last is the one asked for last;
//  - the look is a job of the session's SolveWorker (lookJob);
//  - the export runs on a second one-thread pool with its own cancel flag: a
//    run started meanwhile neither waits for it nor cancels it.
// Without FFmpeg in the build (UOT_VIDEO off) supported() is false and open()
// fails with unsupportedReason().

#include <QFutureWatcher>
#include <QImage>
#include <QObject>
#include <QString>
#include <QStringList>
#include <QThreadPool>

#include <atomic>
#include <memory>

#include "ui/lut_job.h"

namespace uot {
struct ClipLook;
}

namespace uot::ui {

struct ClipDescription {
    QString path;
    bool sequence = false;
    int width = 0, height = 0;
    long long frames = 0;
    double framesPerSecond = 25;
    QString summary;  // "320x240, 30 frames at 25 frames/s, h264"
};

// A frame decoded for the scrubber, and the look applied to it.
struct ClipFrameOutput {
    quint64 clipId = 0;  // the clip it belongs to (a frame of a clip closed since is dropped)
    long long index = -1;
    LoadedImage frame;
    QImage mapped;                              // null when no look was there
    std::shared_ptr<const Image> mappedPixels;
    quint64 lookId = 0;                         // the look it was mapped with (0: none)
    QString error;
};

// A look of the clip, with the frame it was computed from (-1: sampled frames pooled).
struct ClipLookState {
    std::shared_ptr<const ClipLook> look;
    quint64 id = 0;
    long long lookFrame = -1;
    QString sampledFrames;  // "frames 1, 5, 9" or "frame 12"
};

// What the look job hands back.
struct ClipLookOutput final : JobOutput {
    quint64 clipId = 0;
    ClipLookState state;
};

struct ClipExportProgress {
    long long frame = 0;
    long long frames = -1;       // -1 when unknown
    double framesPerSecond = 0;
    double secondsLeft = -1;     // -1 when unknown
};

class ClipModel final : public QObject {
    Q_OBJECT
public:
    explicit ClipModel(QObject* parent = nullptr);
    ~ClipModel() override;
    Q_DISABLE_COPY_MOVE(ClipModel)

    // Whether this build reads clips (FFmpeg's libraries, UOT_VIDEO), and why not.
    static bool supported();
    static QString unsupportedReason();
    // A video file (.mp4, .mov, .mkv, .webm) or an image sequence pattern ("frame_%05d.png").
    static bool isClipPath(const QString& path);
    // A file chosen in a dialog: a video file as it is; a numbered image
    // ("shots/frame_00012.png") as the pattern of its sequence ("shots/frame_%05d.png").
    static QString clipPathFor(const QString& file);

    // Opens a clip in the background: opened, then frameReady of frame 0, or openFailed.
    void open(const QString& path);
    void close();
    bool isOpen() const { return m_clipId != 0 && !m_description.path.isEmpty(); }
    bool isOpening() const { return m_openWatcher != nullptr; }
    quint64 clipId() const { return m_clipId; }
    const ClipDescription& description() const { return m_description; }
    // The seconds of frame `index` from the clip's start.
    double secondsOf(long long index) const;

    // Decodes frame `index` (clamped to the clip) and maps it with the look;
    // frameReady follows. The newest request replaces one that waits.
    void showFrame(long long index);
    // The frame last asked for.
    long long requestedFrame() const { return m_requested; }

    // The frame the look is computed from; -1: sampled frames pooled (the default).
    long long lookFrame() const { return m_lookFrame; }
    void setLookFrame(long long index);

    // The look frames are mapped with (null look: none), set by the session.
    const ClipLookState& look() const { return m_look; }
    void setLook(const ClipLookState& look);
    // The look of the clip with these settings and reference, on the worker.
    JobFunction lookJob(const LoadedImage& reference, const StudioParameters& parameters, int lutSize = 33) const;
    // The look's LUT written as a .cube file (the LUT job of File > Export LUT on a clip):
    // the current look when it has `request.size` nodes, else the look computed again at that size.
    JobFunction lutJob(const LoadedImage& reference, const StudioParameters& parameters, const LutRequest& request,
                       const LoadedImage& frame) const;

    // Maps every frame into `output` (a video file or a sequence pattern) with the
    // current look, in the background; exportProgress, then exportFinished,
    // exportFailed or exportCancelled. `protectedPaths` are never replaced.
    void exportClip(const QString& output, bool overwrite, const QStringList& protectedPaths);
    void cancelExport();
    bool isExporting() const { return m_exportWatcher && m_exportWatcher->isRunning(); }

signals:
    void opened(const uot::ui::ClipDescription& description);
    void openFailed(const QString& message);
    void closed();
    void frameReady(const uot::ui::ClipFrameOutput& frame);
    void lookFrameChanged(long long index);
    void exportStarted(const QString& output);
    void exportProgress(const uot::ui::ClipExportProgress& progress);
    // `summary`: "120 frames in 3.2 s (37.5 frames/s)" and the notes of the writer.
    void exportFinished(const QString& output, const QString& summary);
    void exportFailed(const QString& message);
    void exportCancelled();

private:
    struct Decoder;  // the open reader and where it stands (one task at a time)
    struct ExportResult {
        bool cancelled = false;
        QString error;
        QString summary;
    };
    void startFrame(long long index);

    quint64 m_clipId = 0;
    ClipDescription m_description;
    std::shared_ptr<Decoder> m_decoder;
    long long m_requested = 0;
    long long m_pending = -1;  // a request waiting for the decoder
    long long m_lookFrame = -1;
    ClipLookState m_look;
    ClipFrameOutput m_lastFrame;  // the last frame decoded, re-mapped without decoding when asked again
    QThreadPool m_framePool;
    QThreadPool m_exportPool;
    QFutureWatcher<ClipDescription>* m_openWatcher = nullptr;
    QFutureWatcher<ClipFrameOutput>* m_frameWatcher = nullptr;
    QFutureWatcher<ExportResult>* m_exportWatcher = nullptr;
    std::shared_ptr<std::atomic<bool>> m_exportCancel;
};

}  // namespace uot::ui

Q_DECLARE_METATYPE(uot::ui::ClipDescription)
Q_DECLARE_METATYPE(uot::ui::ClipFrameOutput)
Q_DECLARE_METATYPE(uot::ui::ClipExportProgress)
