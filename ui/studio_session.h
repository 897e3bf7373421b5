#pragma once
// The studio's model. StudioSession holds everything a studio session is made
// of: the source and reference images, the parameters, the result with the
// inputs it was made from and whether it is still valid, the undo history,
// presets and named references, where Ctrl+S saves, the SolveWorker and the
// colour pipeline. It announces every change with a typed signal; MainWindow,
// the panels and the LUT actions are views that call it and observe it.
//
// It is also the one door from the views to the solver registry: the solver
// and device lists, what runs on the GPU and the jobs built on the pipeline
// (scripts/check_layering.py keeps the other ui files off core/registry and
// core/transport).
//
// The class is implemented by concern:
//   studio_session.cpp          images, parameters, undo, presets and references
//   studio_session_run.cpp      run, cancel, what the worker reports, result validity, saving
//   studio_session_catalog.cpp  the registry's answers in Qt types (static, no session needed)
//   studio_session_regions.cpp  the mask, the regions, the extra references and the scopes
//   studio_session_clip.cpp     a clip as the source: its frames, its look, its export (ui/clip_model.h)

#include <QFutureWatcher>
#include <QObject>
#include <QString>
#include <QStringList>
#include <QTimer>
#include <QVector>

#include <memory>
#include <optional>

#include "core/color/mask.h"
#include "core/color/scopes.h"
#include "core/imageio/image_io.h"
#include "ui/clip_model.h"
#include "ui/lut_job.h"
#include "ui/machine_peaks.h"
#include "ui/pipeline_jobs.h"
#include "ui/progress_estimate.h"
#include "ui/solve_worker.h"
#include "ui/studio_parameters.h"
#include "ui/studio_result.h"
#include "ui/studio_save_options.h"

QT_BEGIN_NAMESPACE
class QColor;
class QPointF;
class QSettings;
class QUndoStack;
QT_END_NAMESPACE

namespace uot::ui {

// Whether the picture in the result pane is what the current inputs give.
enum class ResultValidity {
    None,       // no result yet
    Current,    // made from the current source, reference and settings
    Updating,   // out of date, and a run of the current inputs is under way
    OutOfDate,  // an input changed since it was made: Save and Export LUT refuse it
};

// A brush of the mask editor, in source pixels.
struct MaskBrush {
    double size = 80;       // diameter
    double hardness = 0.5;  // the inner part of the radius at full strength (0..1); a smooth fall-off outside it
    double opacity = 1.0;   // the strongest a stroke paints (0..1)
    bool erase = false;     // removes from the mask instead of adding to it
};

// One region: a mask, the reference its colours come from and its own settings
// (the panel's when it was made, or when Use Current Settings gave them).
struct StudioRegion {
    QString name;
    std::shared_ptr<const Mask> mask;
    LoadedImage reference;
    StudioParameters parameters;
};

// A region as kept between sessions (StudioSession::saveRegionalSession).
struct SavedRegion {
    QString name;
    QString maskFile;
    QString referencePath;
    StudioParameters parameters;
    std::shared_ptr<const Mask> mask;  // once read (StudioSession::restoreRegionalSession)
};

// A reference pooled with the main one (several references), with its weight.
struct ExtraReference {
    LoadedImage image;
    double weight = 1.0;
};

// The mask, the regions and the extra references: the inputs of a run besides
// the images and the parameters. Compared by identity (an undo gives back the same objects).
struct RegionalInputs {
    std::shared_ptr<const Mask> mask;
    QVector<StudioRegion> regions;
    double mainWeight = 1.0;  // the weight of the main reference when extra references are pooled with it
    QVector<ExtraReference> references;
    bool operator==(const RegionalInputs& other) const;
};

// What the session's pipeline holds besides its images: the palettes a run with
// a mask or several references set (touched by one job at a time, on the worker).
struct RegionalPipelineState {
    std::shared_ptr<const Mask> mask;  // whose weighted palette is the source palette (null: the source's own)
    quint64 sourceId = 0;
    StudioParameters parameters;       // the settings those palettes were built with
    bool pooled = false;               // the reference palette is pooled from several images
    QVector<quint64> referenceIds;
    QVector<double> weights;
};

enum class ScopeImage { Source, Reference, Result };
enum class ScopeKind { Waveform, Parade, Vectorscope };

// A solver variant as the views list it.
struct SolverChoice {
    QString name;         // registry name ("fused", "gpu-fused")
    QString label;        // "CPU fused", "GPU gpu-fused"
    QString description;
    bool gpu = false;
    bool available = true;
};

// A GPU the studio can solve on.
struct GpuChoice {
    int ordinal = 0;
    QString name;
};

// The roofs of the roofline chart for the device a variant runs on.
struct Roof {
    double gbps = 0;
    double gflops = 0;  // 0 = unknown
    bool gpu = false;
};

class StudioSession final : public QObject {
    Q_OBJECT
public:
    explicit StudioSession(QObject* parent = nullptr);
    ~StudioSession() override;
    Q_DISABLE_COPY_MOVE(StudioSession)

    // --- images ---
    // Loads a file in the background; sourceLoaded/referenceLoaded (with
    // sourceChanged/referenceChanged) or loadFailed follow. One undo step each.
    void openSource(const QString& path);
    void openReference(const QString& path);
    bool isLoading() const;
    const LoadedImage& source() const { return m_source; }
    const LoadedImage& reference() const { return m_reference; }
    bool hasSource() const { return bool(m_source.image); }
    bool hasReference() const { return bool(m_reference.image); }
    // Exchanges source and reference (one undo step).
    void swapImages();

    // --- parameters ---
    const StudioParameters& parameters() const { return m_parameters; }
    // A whole new set (a preset, a paste, a reset, a script): one undo step of its own.
    void setParameters(const StudioParameters& parameters);
    // An edit in the panel: merges with the edits just before it (a slider drag).
    void editParameters(const StudioParameters& parameters);
    // The defaults, keeping auto-run as it is.
    void resetParameters();
    // The parameters saved by the last session (no undo step); the problems
    // found in them, each replaced by its default.
    QStringList restoreSavedParameters();

    // --- runs ---
    // Recolors with the current inputs (the newest request wins). A change that
    // only needs a new mapping re-maps with the last solve.
    void run();
    void cancel();
    bool isBusy() const { return m_busy; }
    SolveWorker* worker() const { return m_worker.get(); }
    // The jobs the comparison dock and the LUT actions submit, on the current inputs.
    JobFunction comparisonJob(const QString& variantA, const QString& variantB, bool concurrent) const;
    JobFunction lutJob(LutRequest request) const;

    // --- the result ---
    const StudioResult& result() const { return m_result; }
    bool hasResult() const { return !m_result.empty(); }
    ResultValidity validity() const;
    // What changed since the result was made ("the source", "the settings"); empty when current.
    QStringList staleInputs() const;
    // False, after failed(title, why), when the result is missing or out of date.
    bool checkResultSaveable(const QString& title);

    // --- saving ---
    // Writes the result (atomically, in the background; never over the source or
    // reference file) with the Save Options `options` (bit depth, output color,
    // color profile, quality); saved or saveFailed follows. Without options: the
    // last ones chosen in Save Options (the settings file's, checked).
    void saveResultTo(const QString& path, const StudioSaveOptions& options);
    void saveResultTo(const QString& path);
    // Where Ctrl+S writes (empty: ask), and with which options; cleared when the source changes.
    QString savePath() const { return m_savePath; }
    const StudioSaveOptions& saveOptions() const { return m_saveOptions; }
    // False with the reason when `path` is the source, the reference or a folder.
    bool checkSaveTarget(const QString& path, QString& why) const;

    // --- history and library ---
    QUndoStack* undoStack() const { return m_undo; }
    void savePreset(const QString& name);
    bool applyPreset(const QString& name);
    void saveNamedReference(const QString& name);
    // Applies the settings and the image; runs once the image is in.
    bool applyNamedReference(const QString& name);
    QString settingsText() const;
    bool pasteSettings(const QString& text);

    // --- the machine ---
    // Measures the host's and the GPU's peaks once, in the background; peaksMeasured follows.
    void measureMachinePeaks();
    bool peaksKnown() const { return m_peaksKnown; }
    const MachinePeaks& peaks() const { return m_peaks; }
    Roof roofFor(const QString& variant) const;
    // The variant the current parameters solve with.
    QString currentVariant() const;

    // --- errors ---
    // Says a problem to the views (failed) and keeps it as lastError().
    void reportError(const QString& title, const QString& message);
    QString lastError() const { return m_lastError; }

    // --- the mask (studio_session_regions.cpp) ---
    // The mask that limits the transfer (null: the whole image). It restricts the
    // source palette to the region's colours and blends the result with the source.
    std::shared_ptr<const Mask> mask() const { return m_regional.mask; }
    bool hasMask() const { return bool(m_regional.mask); }
    // The mask as an 8-bit gray image (white = full transfer), null without a mask.
    QImage maskImage() const;
    // Each change is one undo step and makes the result out of date (auto-run re-renders).
    void setMask(const Mask& mask, const QString& what);
    void clearMask();
    // A brush stroke through `points` (source pixel coordinates).
    void paintMask(const QVector<QPointF>& points, const MaskBrush& brush);
    // Pixels whose luma Y' (Rec. 709, 0..1) lies in [low, high]; softness: the
    // width of the linear fall-off outside the range.
    void maskFromLuminance(double low, double high, double softness);
    // Pixels within `tolerance` of `color` (distance in encoded RGB, 0..1 per
    // channel), falling off linearly over `softness`.
    void maskFromColor(const QColor& color, double tolerance, double softness);
    // The automatic sky mask (core/color/mask_tools.h: skyMask).
    void maskFromSky();
    // Feathers the mask along the source's color edges (core featherMask, the
    // colour-guided filter of `uot recolor --mask-feather`), in the background:
    // maskChanged follows (one undo step).
    void featherMask(int radius);
    // The source's colour at a pixel (the eyedropper); invalid outside the image.
    QColor sourceColorAt(const QPointF& point) const;
    // Reads a mask file (resized to the source); maskChanged or failed follows.
    bool loadMask(const QString& path);
    // Writes the mask as an 8-bit gray PNG or TIFF, atomically.
    bool saveMask(const QString& path);

    // --- regions: up to kMaxRegions masks, each with its own reference ---
    const QVector<StudioRegion>& regions() const { return m_regional.regions; }
    // The current mask becomes a region with the image at referencePath (loaded
    // in the background) and the current settings; regionsChanged follows. The
    // mask is cleared. While there are regions, a run uses each region's own
    // settings and reference, not the panel's nor the main reference.
    void addRegion(const QString& referencePath);
    // Gives region `index` these settings (one undo step).
    void setRegionParameters(int index, const StudioParameters& parameters);
    // A region from a mask file and a reference file.
    void addRegionFromFiles(const QString& maskPath, const QString& referencePath);
    void removeRegion(int index);

    // --- the mask and the regions kept between sessions ---
    // Writes them to the group "session/regional" of `settings`, each mask as an
    // 8-bit gray PNG in `folder` (mask.png, region1.png...), with the source's path
    // and each region's name, reference path and settings. Without a mask and
    // regions, the group is removed.
    void saveRegionalSession(QSettings& settings, const QString& folder) const;
    // Reads what saveRegionalSession wrote and, when the source open (or being
    // opened) is the one they were made for, sets the mask (maskChanged) and adds
    // the regions in order, each once its reference has loaded (regionsChanged
    // for each); not undo steps. A missing or unusable file leaves that part
    // out and is said once (failed, "Restore the mask and regions").
    void restoreRegionalSession(QSettings& settings);

    // --- several references: pooled into one reference palette ---
    const QVector<ExtraReference>& extraReferences() const { return m_regional.references; }
    double mainReferenceWeight() const { return m_regional.mainWeight; }
    void addReference(const QString& path, double weight = 1.0);
    // index 0 is the main reference, 1.. the extra ones.
    void setReferenceWeight(int index, double weight);
    void removeReference(int index);  // 1..: an extra reference

    // --- scopes of the source, the reference and the result, after each render ---
    bool hasScopes() const { return m_scopesReady; }
    QImage scopeImage(ScopeImage image, ScopeKind kind, int channel = 0) const;
    const Scopes& scopes(ScopeImage image) const;
    // Milliseconds from the new result to its scopes (the last render).
    double scopesLatencyMs() const { return m_scopesLatencyMs; }

    // --- a clip as the source (studio_session_clip.cpp) ---
    // openSource() of a clip path opens it here; its frame shown is the source.
    ClipModel* clip() const { return m_clip; }
    bool hasClip() const { return m_clip->isOpen(); }
    // Frame `index` becomes the source, and the result with the clip's look applied.
    void showClipFrame(long long index);
    // The look from frame `index` alone (-1: sampled frames pooled, as `uot recolor`);
    // the result is out of date until the next run.
    void setClipLookFrame(long long index);
    // Writes the clip mapped with its look (the result must be current); the clip
    // model's export signals follow. False, after failed(), when refused at once.
    bool exportClip(const QString& path, bool overwrite = false);

    // --- the solver registry, for the views ---
    static QVector<SolverChoice> solverChoices();
    static QVector<GpuChoice> gpuChoices();
    static bool gpuCompiledIn();
    // Why no GPU can be used (empty when one can).
    static QString gpuUnavailableReason();
    // The variant "auto" means on the CPU or the GPU.
    static QString defaultVariant(bool gpu);
    static bool runsOnGpu(const QString& variant);

signals:
    void sourceChanged();     // a load, an undo, a swap
    void referenceChanged();
    void sourceLoaded(const QString& path);
    void referenceLoaded(const QString& path);
    void loadFailed(const QString& message);
    void parametersChanged(const uot::ui::StudioParameters& parameters);
    // A new picture in result() (resultChanged follows).
    void newResult();
    // A new result, or its validity or the inputs it is out of date with changed.
    void resultChanged(uot::ui::ResultValidity validity);
    void busyChanged(bool busy);
    // A run of the session (not a comparison or a LUT job).
    void runStarted(const uot::ui::RunInfo& info);
    void progress(const QVector<uot::ui::ProgressSample>& samples);
    // Iterations done of the limit, and the estimate in words (a re-map: maximum 0).
    void estimateChanged(int iteration, int maximum, const QString& text);
    void solved(const uot::ui::RunOutcome& run, const QString& timings);
    void remapped(const QString& description);
    // The run ended with a result: the status line, and a notice to show (a GPU fallback), may be empty.
    void finished(const QString& status, const QString& notice);
    void cancelled();
    void runFailed(const QString& message);
    // Any problem, with the title of the step that met it.
    void failed(const QString& title, const QString& message);
    void saved(const QString& path);
    void saveFailed(const QString& message);
    void libraryChanged();
    void peaksMeasured();
    // A line for the status bar.
    void status(const QString& text);
    void maskChanged();
    void regionsChanged();
    void referencesChanged();
    void scopesReady();
    // A frame of the clip is the source now (its result follows when a look is there).
    void clipFrameShown(long long index);

private:
    // A file, or a resource bundled into the executable (":/samples/home.jpg"). Throws.
    static LoadedImage loadAnyImage(const QString& path);
    void loadFile(const QString& path, bool source);
    // `clipFrame`: a frame of the clip shown (else a new source closes the clip).
    void applyImage(bool source, const LoadedImage& image, bool clipFrame = false);
    void exchangeImages();
    void changeParameters(const StudioParameters& parameters, bool whole);
    void restoreParameters(const StudioParameters& parameters);
    void parametersApplied();
    void scheduleAutoRun();
    // A preset or named reference read by name: nothing, after saying why, when it
    // is gone (`gone`) or holds values that are not valid (`invalid`, %2 = the problems).
    template <class Entry>
    bool usableEntry(const std::optional<Entry>& entry, const QStringList& problems, const QString& title,
                     const QString& gone, const QString& invalid);
    void connectWorker();
    void onFinished(quint64 generation, const std::shared_ptr<const JobOutput>& job);
    void setBusy(bool busy);
    void announceResult();
    ResultInputs currentInputs() const;
    void rememberImages() const;
    // studio_session_regions.cpp
    void changeRegional(const RegionalInputs& next, const QString& what);
    void applyRegional(const RegionalInputs& inputs);
    JobFunction regionalJob(const StudioParameters& p) const;
    // The comparison dock's job with the mask, the pooled references or the regions.
    JobFunction regionalComparisonJob(const QString& variantA, const QString& variantB, bool concurrent) const;
    void applySavedRegional(const QString& maskFile, QVector<SavedRegion> regions);
    void restoreSavedRegions(QVector<SavedRegion> pending);
    // On the worker, before a job on the session's pipeline: gives it the source
    // palette of `mask` (or the source's own) and the pooled reference palette of
    // the references (or the main one's), each only when it changed; returns the
    // mask at the source's size (in `resized` when it had to be resized), or null.
    using PalettePreparation = std::function<const Mask*(JobContext& context, Mask& resized)>;
    PalettePreparation palettePreparation(const StudioParameters& p, std::shared_ptr<const Mask> mask) const;
    void computeScopes();
    // studio_session_clip.cpp
    void openClip(const QString& path);
    void connectClip();
    void runClip();
    void onClipFrame(const ClipFrameOutput& frame);
    void onClipLook(quint64 generation, const std::shared_ptr<const JobOutput>& job);
    JobFunction clipLutJob(const LutRequest& request) const;
    template <class Then>
    void loadInBackground(const QString& path, Then then);

    std::unique_ptr<SolveWorker> m_worker;
    std::shared_ptr<PipelineSession> m_pipeline;
    LoadedImage m_source, m_reference;
    QFutureWatcher<LoadedImage>* m_loads[2] = {nullptr, nullptr};  // the newest load of the source [0] and the reference [1]
    StudioParameters m_parameters;
    StudioParameters m_recordedParameters;  // the state the last undo step ends in
    bool m_restoringHistory = false;
    bool m_runWhenReferenceLoads = false;   // a named reference was applied
    StudioResult m_result;                  // what the result pane shows (and Save writes)
    ResultInputs m_runInputs;               // what the latest recolor was started with
    ResultValidity m_announced = ResultValidity::None;  // what resultChanged said last
    QStringList m_announcedStale;
    StudioParameters m_solvedParameters;    // the parameters of the pipeline's last solve
    bool m_haveSolved = false;
    quint64 m_runGeneration = 0;
    bool m_remapOnly = false;  // the latest run only re-maps with the last solve
    bool m_busy = false;
    ProgressEstimate m_estimate;
    QString m_savePath;
    StudioSaveOptions m_saveOptions;
    QUndoStack* m_undo = nullptr;
    MachinePeaks m_peaks;
    bool m_peaksKnown = false;
    QString m_lastError;
    QTimer m_autoRunTimer;
    RegionalInputs m_regional;
    RegionalInputs m_runRegional;     // what the latest run was started with
    RegionalInputs m_resultRegional;  // what the result was made with
    RegionalInputs m_solvedRegional;  // what the pipeline's last solve was made with
    std::shared_ptr<RegionalPipelineState> m_regionalState = std::make_shared<RegionalPipelineState>();  // used by the jobs only
    struct ScopeCache {
        Scopes scopes;
        quint64 id = 0;
    } m_scopeCache[3];
    bool m_scopesReady = false;
    quint64 m_scopesGeneration = 0;
    double m_scopesLatencyMs = 0;
    ClipModel* m_clip = nullptr;
    ResultInputs m_clipLookInputs;    // what the clip's look was made from
    long long m_resultLookFrame = -1;  // the look frame of the clip's result
    bool m_clipRunEnding = false;      // a look came in: the run ends with its frame
    bool m_clipFirstFrame = false;     // the clip was just opened
};

}  // namespace uot::ui

Q_DECLARE_METATYPE(uot::ui::ResultValidity)
