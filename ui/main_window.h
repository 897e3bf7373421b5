#pragma once
// The studio's main window: source, reference and result panes, the
// parameters dock, live statistics and charts, and the menus. All work runs on
// the SolveWorker; this class only sends requests and shows what comes back,
// dropping anything from an older generation.
//
// The class is implemented by concern:
//   main_window.cpp           construction, loading images, title, about, batch
//   main_window_docks.cpp     the docks, the toolbar and the default layout
//   main_window_menus.cpp     menus and their actions
//   main_window_run.cpp       run control: run, cancel, progress, results
//   main_window_save.cpp      saving the result (Save / Save As and their checks)
//   main_window_settings.cpp  what persists between sessions (QSettings)
//   main_window_library.cpp   undo history, presets, named references, copy/paste of settings

#include <QFutureWatcher>
#include <QImage>
#include <QMainWindow>
#include <QStringList>
#include <QTimer>

#include <functional>
#include <memory>

#include "core/imageio/image_io.h"
#include "ui/machine_peaks.h"
#include "ui/pipeline_jobs.h"
#include "ui/progress_estimate.h"
#include "ui/solve_worker.h"
#include "ui/studio_parameters.h"
#include "ui/studio_result.h"

QT_BEGIN_NAMESPACE
class QAction;
class QLabel;
class QMenu;
class QProgressBar;
class QDockWidget;
class QToolBar;
class QUndoStack;
QT_END_NAMESPACE

namespace uot::ui {

class ComparisonView;
class HistogramView;
class LibraryPanel;
class ImageView;
class LiveCharts;
class LutActions;
class ParametersPanel;
class StatisticsPanel;

// The questions Save As asks, replaceable by tests. Each returns false when
// the user cancels.
struct SavePrompts {
    // The file to write: starts in `path`, with the format filter `filter`
    // preselected; both are updated with the choice.
    std::function<bool(QString& path, QString& filter)> choosePath;
    // The chosen file exists: replace it?
    std::function<bool(const QString& path)> confirmReplace;
    // Bit depth and quality for the chosen format (options holds the last ones).
    std::function<bool(const QString& path, WriteOptions& options)> chooseOptions;
};

// File > Open Source / Open Reference, replaceable by tests: the file chosen in a
// dialog titled `title` that starts in `folder`; empty when the user cancels.
using OpenPrompt = std::function<QString(const QString& title, const QString& folder)>;

struct MainWindowOptions {
    bool interactive = true;        // false: errors go to the status bar and stderr, never a modal box
    bool measureBandwidth = true;   // measure the host's peak bandwidth once in the background
    bool loadSamplesIfEmpty = true; // at start: the last session's images, else the bundled sample pair
};

class MainWindow final : public QMainWindow {
    Q_OBJECT
public:
    explicit MainWindow(const MainWindowOptions& options = {}, QWidget* parent = nullptr);
    ~MainWindow() override;
    Q_DISABLE_COPY_MOVE(MainWindow)

    // Loads a file in the background; sourceLoaded/referenceLoaded or loadFailed follow.
    void openSource(const QString& path);
    void openReference(const QString& path);
    bool hasSource() const { return bool(m_source.image); }
    bool hasReference() const { return bool(m_reference.image); }
    bool isLoading() const;

    StudioParameters parameters() const;
    void setParameters(const StudioParameters& parameters);

    // Starts a recolor with the current parameters (the newest request wins).
    void run();
    void cancel();
    bool isRunning() const;
    // Opens the comparison dock and starts a comparison.
    void compare();

    // Writes the result (atomically, in the background; never over the source or
    // reference file). depth 0 = the source's; quality for JPEG/WebP.
    // resultSaved or saveFailed follows.
    void saveResultTo(const QString& path, int depth = 0, int quality = 95);
    // File > Save Result (Ctrl+S): writes to the file this result was last
    // saved to; when it has none (a new source since), behaves as Save As.
    void save();
    // File > Save Result As (Ctrl+Shift+S).
    void saveAs();
    // The file Ctrl+S writes to (empty: Ctrl+S asks).
    QString savePath() const { return m_savePath; }
    void setSavePrompts(const SavePrompts& prompts) { m_prompts = prompts; }
    void setOpenPrompt(const OpenPrompt& prompt) { m_openPrompt = prompt; }

    // Edit > Swap Source and Reference.
    void swapImages();
    // View > Reset Layout: the docks and panels as at first start.
    void resetLayout();
    // Shows or hides the advanced docks (Statistics, Charts, Comparison).
    void setAdvancedPanelsVisible(bool visible);

    // Undo history of parameter changes, loads and swaps (Edit > Undo/Redo).
    QUndoStack* undoStack() const { return m_undo; }
    // Presets (settings under a name) and named references (a reference image
    // with its settings), listed in the Library dock and applied with one click.
    void savePreset(const QString& name);
    bool applyPreset(const QString& name);
    void saveNamedReference(const QString& name);
    bool applyNamedReference(const QString& name);
    // Edit > Copy Settings / Paste Settings: the clipboard holds them as text.
    void copySettings();
    bool pasteSettings();

    // The menus, for adding actions (one line each, see main_window_menus.cpp).
    enum class Menu { File, Edit, Run, View, Help };
    QMenu* menu(Menu which) const;
    // The action a menu entry runs, by its object name (e.g. "saveAsAction").
    QAction* action(const QString& objectName) const;

    const QImage& resultImage() const { return m_result.image; }
    bool hasResult() const { return !m_result.image.isNull(); }
    // The result with the inputs it was made from.
    const StudioResult& result() const { return m_result; }
    // True when a result is shown and the current source, reference or settings
    // differ from those it was made from (any change that gives another picture):
    // the pane says so, and Save, Save As and Export LUT refuse until a new run.
    bool resultOutOfDate() const;
    QString lastError() const { return m_lastError; }
    // True once the start-up bandwidth measurement has finished (or was not asked for).
    bool bandwidthKnown() const { return m_bandwidthKnown; }

    // For tests.
    ParametersPanel* parametersPanel() const { return m_parameters; }
    StatisticsPanel* statisticsPanel() const { return m_statistics; }
    LiveCharts* charts() const { return m_charts; }
    ComparisonView* comparisonView() const { return m_comparison; }
    SolveWorker* worker() const { return m_worker.get(); }
    ImageView* resultView() const { return m_resultView; }
    ImageView* sourceView() const { return m_sourceView; }
    ImageView* referenceView() const { return m_referenceView; }
    QProgressBar* progressBar() const { return m_progress; }
    QLabel* phaseLabel() const { return m_phase; }
    QLabel* imageInfoLabel() const { return m_imageInfo; }  // bit depth and colour profile of the source
    QDockWidget* dock(const QString& objectName) const;
    LibraryPanel* libraryPanel() const { return m_library; }
    HistogramView* histogramView() const { return m_histogram; }
    LutActions* lutActions() const { return m_lut; }

signals:
    void sourceLoaded();
    void referenceLoaded();
    void loadFailed(const QString& message);
    void resultReady();
    void runFailed(const QString& message);
    void runCancelled();
    void busyChanged(bool busy);
    void bandwidthMeasured();
    void resultSaved(const QString& path);
    void saveFailed(const QString& message);

protected:
    void closeEvent(QCloseEvent* event) override;

private:
    void createActions();
    void createDocks();
    void createToolBar();
    void createStatusBar();
    void connectWorker();
    void restoreSettings();
    void saveSettings();
    void rememberSession();
    QString openDialog(const QString& title, const QString& key);
    // Where a file dialog starts: `remembered` (the folder it was last used in),
    // else the folder of `imagePath`, else Pictures, else home; never a folder that
    // does not exist (the dialog would fall back to "/").
    static QString startFolder(const QString& remembered, const QString& imagePath);
    bool checkSaveTarget(const QString& path, QString& why) const;
    // The inputs a run started now would use.
    ResultInputs currentInputs() const;
    // Marks the result out of date (banner, Save and Export LUT) or current; after
    // every change of an input, a new result and a change of the busy state.
    void updateResultState();
    // False, after saying why, when the result is out of date (Save, Export LUT).
    bool refuseOutOfDateResult(const QString& title);
    SavePrompts defaultPrompts();
    void loadFile(const QString& path, bool source);
    void onLoaded(bool source, QFutureWatcher<LoadedImage>* watcher, const QString& path);
    // Shows `image` as the source or reference (loads, undo and redo come here).
    void applyImage(bool source, const LoadedImage& image);
    void exchangeImages();
    // Undo history of the parameters.
    void recordParameters();
    void restoreParameters(const StudioParameters& parameters);
    void askAndSavePreset();
    void askAndSaveReference();
    void onJobStarted(quint64 generation);
    void onRunStarted(quint64 generation, const RunInfo& info);
    void onProgress(quint64 generation, const QVector<ProgressSample>& samples);
    void onFinished(quint64 generation, std::shared_ptr<const JobOutput> output);
    void onFailed(quint64 generation, const QString& message);
    void onCancelled(quint64 generation);
    void onParametersChanged();
    void showRoofFor(const StudioParameters& parameters);
    void setBusy(bool busy);
    void showError(const QString& title, const QString& message);
    void resetParameters();
    void addRecentFile(const QString& path);
    void updateRecentMenu();
    void showAbout();
    void openBatchDialog();
    void updateTitle();

    MainWindowOptions m_options;
    std::unique_ptr<SolveWorker> m_worker;
    std::shared_ptr<PipelineSession> m_session;
    LoadedImage m_source, m_reference;
    QFutureWatcher<LoadedImage>* m_sourceWatcher = nullptr;
    QFutureWatcher<LoadedImage>* m_referenceWatcher = nullptr;
    StudioResult m_result;     // what the result pane shows (and Save writes)
    ResultInputs m_runInputs;  // what the latest recolor was started with
    QString m_savePath;        // where Ctrl+S writes; cleared when the source changes
    WriteOptions m_saveOptions;
    SavePrompts m_prompts;
    OpenPrompt m_openPrompt;
    QByteArray m_defaultLayout;  // saveState() of the first-start layout
    ProgressEstimate m_estimate;
    QUndoStack* m_undo = nullptr;
    StudioParameters m_recordedParameters;  // the state the last undo step ends in
    bool m_restoringHistory = false;
    bool m_settingAll = false;              // setParameters() is applying a whole set
    bool m_runWhenReferenceLoads = false;   // a named reference was applied
    quint64 m_runGeneration = 0;  // generation of the main window's latest recolor
    StudioParameters m_solvedParameters;   // the parameters of the session's last solve
    bool m_haveSolved = false;
    bool m_busy = false;
    bool m_bandwidthKnown = false;
    MachinePeaks m_peaks;  // host and GPU peaks, measured once at start-up
    QString m_lastError;
    QTimer m_autoRunTimer;

    ImageView* m_sourceView = nullptr;
    ImageView* m_referenceView = nullptr;
    ImageView* m_resultView = nullptr;
    ParametersPanel* m_parameters = nullptr;
    StatisticsPanel* m_statistics = nullptr;
    LiveCharts* m_charts = nullptr;
    ComparisonView* m_comparison = nullptr;
    QDockWidget* m_comparisonDock = nullptr;
    LutActions* m_lut = nullptr;  // File > Export LUT, View > LUT Preview (ui/lut_actions.h)
    QLabel* m_phase = nullptr;
    QProgressBar* m_progress = nullptr;
    QMenu* m_recentMenu = nullptr;
    QMenu* m_fileMenu = nullptr;
    QMenu* m_editMenu = nullptr;
    QMenu* m_runMenu = nullptr;
    QMenu* m_viewMenu = nullptr;
    QMenu* m_helpMenu = nullptr;
    QToolBar* m_toolBar = nullptr;
    QDockWidget* m_parametersDock = nullptr;
    QDockWidget* m_statisticsDock = nullptr;
    QDockWidget* m_chartsDock = nullptr;
    QDockWidget* m_libraryDock = nullptr;
    QDockWidget* m_histogramDock = nullptr;
    LibraryPanel* m_library = nullptr;
    HistogramView* m_histogram = nullptr;
    QAction* m_advancedAction = nullptr;
    QLabel* m_zoomLabel = nullptr;
    QLabel* m_imageInfo = nullptr;
    QAction* m_splitAction = nullptr;
    QAction* m_saveAction = nullptr;
    QAction* m_saveAsAction = nullptr;
};

}  // namespace uot::ui
