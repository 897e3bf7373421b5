#pragma once
// The studio's main window: source, reference and result panes, the
// parameters dock, live statistics and charts, and the menus. A view of the
// StudioSession (ui/studio_session.h), which holds the images, parameters,
// result, undo history and the worker: the window forwards what the user asks
// to the session and shows what the session announces. Panels, docks, menus
// and status-bar labels that it does not drive are found by object name.
//
// The class is implemented by concern:
//   main_window.cpp           construction, errors, title, about, batch
//   main_window_docks.cpp     the docks, the toolbar and the default layout (mask, regions, scopes too)
//   main_window_menus.cpp     menus and their actions
//   main_window_run.cpp       what the session announces: images, runs, results
//   main_window_save.cpp      Save / Save As: the dialogs (the session writes)
//   main_window_settings.cpp  what persists between sessions (QSettings)
//   main_window_library.cpp   the forwarders to the session's history and library
//   main_window_clip.cpp      File > Open Clip and Export Clip (the clip bar: ui/clip_scrubber.h)

#include <QImage>
#include <QMainWindow>
#include <QStringList>

#include <functional>

#include "ui/studio_session.h"

QT_BEGIN_NAMESPACE
class QAction;
class QLabel;
class QMenu;
class QProgressBar;
class QDockWidget;
class QUndoStack;
QT_END_NAMESPACE

namespace uot::ui {

class ComparisonView;
class HistogramView;
class LibraryPanel;
class ImageView;
class LiveCharts;
class LutActions;
class MaskEditor;
class ParametersPanel;
class RegionsDock;
class ScopesDock;
class StatisticsPanel;

// The questions Save As asks, replaceable by tests. Each returns false when
// the user cancels.
struct SavePrompts {
    // The file to write: starts in `path`, with the format filter `filter`
    // preselected; both are updated with the choice.
    std::function<bool(QString& path, QString& filter)> choosePath;
    // The chosen file exists: replace it?
    std::function<bool(const QString& path)> confirmReplace;
    // The Save Options for the chosen format (options holds the last ones).
    std::function<bool(const QString& path, StudioSaveOptions& options)> chooseOptions;
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
    bool hasSource() const { return m_session->hasSource(); }
    bool hasReference() const { return m_session->hasReference(); }
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
    // reference file) with these Save Options, else the last ones chosen.
    // resultSaved or saveFailed follows.
    void saveResultTo(const QString& path, const StudioSaveOptions& options);
    void saveResultTo(const QString& path);
    // File > Save Result (Ctrl+S): writes to the file this result was last
    // saved to; when it has none (a new source since), behaves as Save As.
    void save();
    // File > Save Result As (Ctrl+Shift+S).
    void saveAs();
    // The file Ctrl+S writes to (empty: Ctrl+S asks).
    QString savePath() const { return m_session->savePath(); }
    void setSavePrompts(const SavePrompts& prompts) { m_prompts = prompts; }
    void setOpenPrompt(const OpenPrompt& prompt) { m_openPrompt = prompt; }

    // Edit > Swap Source and Reference.
    void swapImages();
    // View > Reset Layout: the docks and panels as at first start.
    void resetLayout();
    // Shows or hides the advanced docks (Statistics, Charts, Comparison).
    void setAdvancedPanelsVisible(bool visible);

    // Undo history of parameter changes, loads and swaps (Edit > Undo/Redo).
    QUndoStack* undoStack() const { return m_session->undoStack(); }
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

    const QImage& resultImage() const { return m_session->result().image; }
    bool hasResult() const { return m_session->hasResult(); }
    // The result with the inputs it was made from.
    const StudioResult& result() const { return m_session->result(); }
    // True when a result is shown and the current source, reference or settings
    // differ from those it was made from (any change that gives another picture):
    // the pane says so, and Save, Save As and Export LUT refuse until a new run.
    bool resultOutOfDate() const;
    QString lastError() const { return m_session->lastError(); }
    // True once the start-up bandwidth measurement has finished (or was not asked for).
    bool bandwidthKnown() const { return !m_options.measureBandwidth || m_session->peaksKnown(); }

    // The model this window shows.
    StudioSession* session() const { return m_session; }

    // For tests.
    ParametersPanel* parametersPanel() const { return m_parameters; }
    StatisticsPanel* statisticsPanel() const;
    LiveCharts* charts() const;
    ComparisonView* comparisonView() const;
    SolveWorker* worker() const { return m_session->worker(); }
    ImageView* resultView() const { return m_resultView; }
    ImageView* sourceView() const { return m_sourceView; }
    ImageView* referenceView() const { return m_referenceView; }
    QProgressBar* progressBar() const { return m_progress; }
    QLabel* phaseLabel() const { return m_phase; }
    QLabel* imageInfoLabel() const;  // bit depth and colour profile of the source
    QDockWidget* dock(const QString& objectName) const;
    LibraryPanel* libraryPanel() const;
    HistogramView* histogramView() const;
    LutActions* lutActions() const { return m_lut; }
    MaskEditor* maskEditor() const;
    RegionsDock* regionsDock() const;
    ScopesDock* scopesDock() const;
    // View > Link Source and Result Zoom (on by default): zooming or panning one
    // of the two panes does the same to the other.
    void setZoomLinked(bool linked);
    bool zoomLinked() const;

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
    void createClipActions(QMenu* fileMenu);
    void createDocks();
    void createToolBar();
    void createStatusBar();
    void connectSession();
    void restoreSettings();
    void saveSettings();
    QString openDialog(const QString& title, const QString& key);
    // Where a file dialog starts: `remembered` (the folder it was last used in),
    // else the folder of `imagePath`, else Pictures, else home; never a folder that
    // does not exist (the dialog would fall back to "/").
    static QString startFolder(const QString& remembered, const QString& imagePath);
    SavePrompts defaultPrompts();
    // What the session announces.
    void showSource();
    void showReference();
    void showParameters(const StudioParameters& parameters);
    void showNewResult();
    // The banner of the result pane, Save, Save As and Export LUT, after every
    // change of the result's validity.
    void showResultState();
    void showBusy(bool busy);
    void showEstimate(int iteration, int maximum, const QString& text);
    void showFinished(const QString& status, const QString& notice);
    void showRoof();
    void showError(const QString& title, const QString& message);
    void askAndSavePreset();
    void askAndSaveReference();
    void addRecentFile(const QString& path);
    void updateRecentMenu();
    void showAbout();
    void openBatchDialog();
    void updateTitle();
    // A child found by its object name.
    template <class T>
    T* part(const char* objectName) const
    {
        return findChild<T*>(QString::fromLatin1(objectName));
    }

    MainWindowOptions m_options;
    StudioSession* m_session = nullptr;  // the model (a child of the window)
    SavePrompts m_prompts;
    OpenPrompt m_openPrompt;
    QByteArray m_defaultLayout;  // saveState() of the first-start layout
    ImageView* m_sourceView = nullptr;
    ImageView* m_referenceView = nullptr;
    ImageView* m_resultView = nullptr;
    ParametersPanel* m_parameters = nullptr;
    LutActions* m_lut = nullptr;  // File > Export LUT, View > LUT Preview (ui/lut_actions.h)
    QLabel* m_phase = nullptr;
    QProgressBar* m_progress = nullptr;
};

}  // namespace uot::ui
