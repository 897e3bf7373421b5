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

#include <QFutureWatcher>
#include <QObject>
#include <QString>
#include <QStringList>
#include <QTimer>
#include <QVector>

#include <memory>
#include <optional>

#include "core/imageio/image_io.h"
#include "ui/lut_job.h"
#include "ui/machine_peaks.h"
#include "ui/pipeline_jobs.h"
#include "ui/progress_estimate.h"
#include "ui/solve_worker.h"
#include "ui/studio_parameters.h"
#include "ui/studio_result.h"

QT_BEGIN_NAMESPACE
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
    // reference file). depth 0 = the source's; quality for JPEG/WebP. saved or
    // saveFailed follows.
    void saveResultTo(const QString& path, int depth = 0, int quality = 95);
    // Where Ctrl+S writes (empty: ask); cleared when the source changes.
    QString savePath() const { return m_savePath; }
    const WriteOptions& saveOptions() const { return m_saveOptions; }
    // The output color profile chosen in Save Options (setting "save/profile",
    // output_profile.h's names; sRGB when unset or not a known name).
    static OutputProfile savedOutputProfile();
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

private:
    void loadFile(const QString& path, bool source);
    void applyImage(bool source, const LoadedImage& image);
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
    WriteOptions m_saveOptions;
    QUndoStack* m_undo = nullptr;
    MachinePeaks m_peaks;
    bool m_peaksKnown = false;
    QString m_lastError;
    QTimer m_autoRunTimer;
};

}  // namespace uot::ui

Q_DECLARE_METATYPE(uot::ui::ResultValidity)
