#pragma once
// The studio's main window: source, reference and result panes, the
// parameters dock, live statistics and charts, and the menus. All work runs on
// the SolveWorker; this class only sends requests and shows what comes back,
// dropping anything from an older generation.

#include <QFutureWatcher>
#include <QImage>
#include <QMainWindow>
#include <QStringList>
#include <QTimer>

#include <memory>

#include "core/imageio/image_io.h"
#include "ui/machine_peaks.h"
#include "ui/pipeline_jobs.h"
#include "ui/solve_worker.h"
#include "ui/studio_parameters.h"

QT_BEGIN_NAMESPACE
class QAction;
class QLabel;
class QMenu;
class QProgressBar;
class QDockWidget;
QT_END_NAMESPACE

namespace uot::ui {

class ComparisonView;
class ImageView;
class LiveCharts;
class ParametersPanel;
class StatisticsPanel;

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

    const QImage& resultImage() const { return m_resultImage; }
    bool hasResult() const { return !m_resultImage.isNull(); }
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
    void loadFile(const QString& path, bool source);
    void onLoaded(bool source, QFutureWatcher<LoadedImage>* watcher, const QString& path);
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
    void saveResult(bool askPath);
    void swapImages();
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
    QImage m_resultImage;
    std::shared_ptr<const Image> m_resultPixels;
    QString m_savePath;
    WriteOptions m_saveOptions;
    quint64 m_runGeneration = 0;  // generation of the main window's latest recolor
    StudioParameters m_solvedParameters;
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
    QLabel* m_phase = nullptr;
    QProgressBar* m_progress = nullptr;
    QMenu* m_recentMenu = nullptr;
    QAction* m_splitAction = nullptr;
    QAction* m_saveAction = nullptr;
    QAction* m_saveAsAction = nullptr;
};

}  // namespace uot::ui
