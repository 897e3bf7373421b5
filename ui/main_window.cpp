#include "ui/main_window.h"

#include <QAction>
#include <QApplication>
#include <QCloseEvent>
#include <QComboBox>
#include <QDialog>
#include <QDialogButtonBox>
#include <QDockWidget>
#include <QFile>
#include <QFileDialog>
#include <QFileInfo>
#include <QFormLayout>
#include <QKeySequence>
#include <QLabel>
#include <QMenu>
#include <QMenuBar>
#include <QMessageBox>
#include <QProgressBar>
#include <QScrollArea>
#include <QScrollBar>
#include <QSettings>
#include <QSpinBox>
#include <QSplitter>
#include <QStatusBar>
#include <QtConcurrent/QtConcurrentRun>

#include <cstdio>

#include "core/imageio/image_io.h"
#include "core/perf/bandwidth_probe.h"
#include "core/transport/uot_error.h"
#include "core/registry/device_registry.h"
#include "core/registry/solver_registry.h"
#include "ui/batch_dialog.h"
#include "ui/comparison_view.h"
#include "ui/image_view.h"
#include "ui/live_charts.h"
#include "ui/parameters_panel.h"
#include "ui/statistics_panel.h"

#ifndef UOT_OPENCV_VERSION
#define UOT_OPENCV_VERSION "unknown"
#endif

// Resources of a static library must be registered by name, outside any namespace.
static void initStudioResources()
{
    Q_INIT_RESOURCE(studio);
#ifdef UOT_UI_HAVE_SAMPLES
    Q_INIT_RESOURCE(samples);
#endif
}

namespace uot::ui {

namespace {

constexpr int kMaxRecent = 8;

// The sample pair compiled into the executable (resources/samples.qrc).
const char* const kSampleSource = ":/samples/home.jpg";
const char* const kSampleReference = ":/samples/starry_night.jpg";

LoadedImage loadAny(const QString& path)
{
    if (!path.startsWith(":/")) return loadImageFile(path);
    // A bundled resource: decode from memory.
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly))
        throw uot::Error(ErrorCode::Io, "the bundled sample " + path.toStdString() + " is missing from this build");
    const QByteArray bytes = file.readAll();
    LoadedImage loaded;
    loaded.image = std::make_shared<const Image>(
        decodeImage(std::vector<std::uint8_t>(bytes.begin(), bytes.end()), QFileInfo(path).fileName().toStdString()));
    static std::atomic<quint64> bundledIds{1ull << 62};
    loaded.id = bundledIds.fetch_add(1);
    loaded.path = path;
    return loaded;
}

}  // namespace

MainWindow::MainWindow(const MainWindowOptions& options, QWidget* parent)
    : QMainWindow(parent), m_options(options), m_worker(std::make_unique<SolveWorker>()),
      m_session(std::make_shared<PipelineSession>())
{
    initStudioResources();
    setWindowTitle(tr("UOT Color Studio"));
    setWindowIcon(QIcon(QStringLiteral(":/icons/uot-studio.png")));
    setAcceptDrops(false);

    m_sourceView = new ImageView(tr("Source\n\nDrop an image here or use File > Open Source..."));
    m_referenceView = new ImageView(tr("Reference\n\nDrop an image here or use File > Open Reference..."));
    m_resultView = new ImageView(tr("Result\n\nPress Run (Ctrl+R) to recolor the source with the reference's palette."));
    m_sourceView->setCaption(tr("Source"));
    m_referenceView->setCaption(tr("Reference"));
    m_resultView->setCaption(tr("Result"));
    m_sourceView->setToolTip(tr("Source image: its colors are replaced. Drop a file to replace it."));
    m_referenceView->setToolTip(tr("Reference image: its palette is transferred. Drop a file to replace it."));
    m_resultView->setToolTip(tr("Result. Wheel: zoom, drag: pan, double-click: fit. In split view, drag the divider."));
    auto* inputs = new QSplitter(Qt::Vertical);
    inputs->addWidget(m_sourceView);
    inputs->addWidget(m_referenceView);
    auto* central = new QSplitter(Qt::Horizontal);
    central->addWidget(inputs);
    central->addWidget(m_resultView);
    central->setStretchFactor(0, 1);
    central->setStretchFactor(1, 2);
    setCentralWidget(central);
    connect(m_sourceView, &ImageView::fileDropped, this, &MainWindow::openSource);
    connect(m_referenceView, &ImageView::fileDropped, this, &MainWindow::openReference);
    connect(m_resultView, &ImageView::fileDropped, this, &MainWindow::openSource);

    createDocks();
    createActions();

    m_phase = new QLabel(tr("Ready"));
    m_progress = new QProgressBar;
    m_progress->setMaximumWidth(180);
    m_progress->setRange(0, 0);
    m_progress->setVisible(false);
    statusBar()->addWidget(m_phase, 1);
    statusBar()->addPermanentWidget(m_progress);

    SolveWorker* worker = m_worker.get();
    connect(worker, &SolveWorker::jobStarted, this, &MainWindow::onJobStarted);
    connect(worker, &SolveWorker::runStarted, this, &MainWindow::onRunStarted);
    connect(worker, &SolveWorker::progress, this, &MainWindow::onProgress);
    connect(worker, &SolveWorker::jobFinished, this, &MainWindow::onFinished);
    connect(worker, &SolveWorker::jobFailed, this, &MainWindow::onFailed);
    connect(worker, &SolveWorker::jobCancelled, this, [this](quint64 g) { onCancelled(g); });
    connect(worker, &SolveWorker::phaseChanged, this, [this](quint64 g, const QString& text) {
        if (g == m_runGeneration && g == m_worker->latestGeneration()) m_phase->setText(text);
    });
    connect(worker, &SolveWorker::idle, this, [this] {
        if (!m_worker->isBusy()) setBusy(false);
    });

    m_autoRunTimer.setSingleShot(true);
    m_autoRunTimer.setInterval(400);
    connect(&m_autoRunTimer, &QTimer::timeout, this, &MainWindow::run);

    QSettings settings;
    setParameters(StudioParameters::load(settings));
    connect(m_parameters, &ParametersPanel::parametersChanged, this, &MainWindow::onParametersChanged);
    connect(m_parameters, &ParametersPanel::runRequested, this, &MainWindow::run);
    connect(m_parameters, &ParametersPanel::cancelRequested, this, &MainWindow::cancel);
    restoreGeometry(settings.value("window/geometry").toByteArray());
    restoreState(settings.value("window/state").toByteArray());
    updateRecentMenu();

    m_statistics->setCountersUnavailable(cacheCountersUnavailableReason());
    if (m_options.measureBandwidth) {
        // Measured once per process (core/perf and core/registry cache them), off the GUI thread.
        auto* watcher = new QFutureWatcher<MachinePeaks>(this);
        connect(watcher, &QFutureWatcher<MachinePeaks>::finished, this, [this, watcher] {
            m_peaks = watcher->result();
            m_statistics->setMachinePeaks(m_peaks, tr("could not be measured"));
            showRoofFor(m_parameters->parameters());
            m_comparison->setMachinePeaks(m_peaks);
            watcher->deleteLater();
            m_bandwidthKnown = true;
            emit bandwidthMeasured();
        });
        watcher->setFuture(QtConcurrent::run([] { return measureMachinePeaks(true); }));
    } else {
        m_statistics->setMachinePeaks({}, tr("not measured"));
        m_bandwidthKnown = true;
    }

    if (m_options.loadSamplesIfEmpty) {
        // The images of the last session when they still exist, else the bundled sample pair.
        const QString lastSource = settings.value("session/source").toString();
        const QString lastReference = settings.value("session/reference").toString();
        if (!lastSource.isEmpty() && QFileInfo::exists(lastSource)) openSource(lastSource);
        else if (QFile::exists(kSampleSource)) openSource(QString::fromLatin1(kSampleSource));
        if (!lastReference.isEmpty() && QFileInfo::exists(lastReference)) openReference(lastReference);
        else if (QFile::exists(kSampleReference)) openReference(QString::fromLatin1(kSampleReference));
    }
    updateTitle();
}

MainWindow::~MainWindow()
{
    m_worker->shutdown();  // before the widgets its queued signals would reach
}

void MainWindow::createDocks()
{
    m_parameters = new ParametersPanel;
    auto* scroll = new QScrollArea;
    scroll->setWidget(m_parameters);
    scroll->setWidgetResizable(true);
    scroll->setFrameShape(QFrame::NoFrame);
    scroll->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    scroll->setMinimumWidth(m_parameters->sizeHint().width() + scroll->verticalScrollBar()->sizeHint().width());
    auto* parametersDock = new QDockWidget(tr("Parameters"), this);
    parametersDock->setObjectName("parametersDock");
    parametersDock->setWidget(scroll);
    addDockWidget(Qt::LeftDockWidgetArea, parametersDock);

    m_statistics = new StatisticsPanel;
    auto* statisticsDock = new QDockWidget(tr("Statistics"), this);
    statisticsDock->setObjectName("statisticsDock");
    statisticsDock->setWidget(m_statistics);
    addDockWidget(Qt::RightDockWidgetArea, statisticsDock);

    m_charts = new LiveCharts(LiveCharts::Layout::Row);
    auto* chartsDock = new QDockWidget(tr("Charts"), this);
    chartsDock->setObjectName("chartsDock");
    chartsDock->setWidget(m_charts);
    addDockWidget(Qt::BottomDockWidgetArea, chartsDock);

    m_comparison = new ComparisonView(m_worker.get());
    m_comparison->setJobFactory([this](const QString& a, const QString& b, bool concurrent) {
        return makeComparisonJob(m_source, m_reference, parameters(), a, b, concurrent);
    });
    m_comparisonDock = new QDockWidget(tr("Comparison"), this);
    m_comparisonDock->setObjectName("comparisonDock");
    m_comparisonDock->setWidget(m_comparison);
    addDockWidget(Qt::BottomDockWidgetArea, m_comparisonDock);
    tabifyDockWidget(chartsDock, m_comparisonDock);
    chartsDock->raise();
    m_comparisonDock->hide();
    resizeDocks({chartsDock}, {320}, Qt::Vertical);
    resizeDocks({parametersDock, statisticsDock}, {330, 330}, Qt::Horizontal);
}

void MainWindow::createActions()
{
    QMenu* file = menuBar()->addMenu(tr("&File"));
    QAction* openSourceAction = file->addAction(tr("Open &Source..."), this, [this] {
        const QString path = QFileDialog::getOpenFileName(this, tr("Open Source"), QFileInfo(m_source.path).path(),
                                                          tr("Images (*.jpg *.jpeg *.png *.tif *.tiff *.webp *.bmp)"));
        if (!path.isEmpty()) openSource(path);
    });
    openSourceAction->setShortcut(QKeySequence::Open);
    file->addAction(tr("Open &Reference..."), this, [this] {
        const QString path = QFileDialog::getOpenFileName(this, tr("Open Reference"), QFileInfo(m_reference.path).path(),
                                                          tr("Images (*.jpg *.jpeg *.png *.tif *.tiff *.webp *.bmp)"));
        if (!path.isEmpty()) openReference(path);
    })->setShortcut(QKeySequence(tr("Ctrl+Shift+O")));
    m_recentMenu = file->addMenu(tr("Recent Files"));
    file->addSeparator();
    m_saveAction = file->addAction(tr("&Save Result"), this, [this] { saveResult(false); });
    m_saveAction->setShortcut(QKeySequence::Save);
    m_saveAsAction = file->addAction(tr("Save Result &As..."), this, [this] { saveResult(true); });
    m_saveAsAction->setShortcut(QKeySequence::SaveAs);
    m_saveAction->setEnabled(false);
    m_saveAsAction->setEnabled(false);
    file->addSeparator();
    file->addAction(tr("&Batch Recolor..."), this, &MainWindow::openBatchDialog)->setShortcut(QKeySequence(tr("Ctrl+B")));
    file->addSeparator();
    file->addAction(tr("&Quit"), this, &QWidget::close)->setShortcut(QKeySequence::Quit);

    QMenu* edit = menuBar()->addMenu(tr("&Edit"));
    edit->addAction(tr("S&wap Source and Reference"), this, &MainWindow::swapImages)->setShortcut(QKeySequence(tr("Ctrl+W")));
    edit->addAction(tr("&Reset Parameters"), this, &MainWindow::resetParameters);

    QMenu* run = menuBar()->addMenu(tr("&Run"));
    run->addAction(tr("&Run"), this, &MainWindow::run)->setShortcut(QKeySequence(tr("Ctrl+R")));
    run->addAction(tr("&Cancel"), this, &MainWindow::cancel)->setShortcut(QKeySequence(Qt::Key_Escape));
    run->addAction(tr("Co&mpare Variants..."), this, &MainWindow::compare)->setShortcut(QKeySequence(tr("Ctrl+K")));

    QMenu* view = menuBar()->addMenu(tr("&View"));
    view->addAction(tr("Zoom &In"), this, [this] { m_resultView->zoomBy(1.25); })->setShortcut(QKeySequence::ZoomIn);
    view->addAction(tr("Zoom &Out"), this, [this] { m_resultView->zoomBy(0.8); })->setShortcut(QKeySequence::ZoomOut);
    view->addAction(tr("&Fit to Window"), this, [this] {
        for (ImageView* v : {m_sourceView, m_referenceView, m_resultView}) v->fit();
    })->setShortcut(QKeySequence(tr("Ctrl+0")));
    view->addAction(tr("&Actual Size"), this, [this] { m_resultView->zoomActualSize(); })->setShortcut(QKeySequence(tr("Ctrl+1")));
    m_splitAction = view->addAction(tr("&Before/After Split"));
    m_splitAction->setCheckable(true);
    m_splitAction->setShortcut(QKeySequence(tr("Ctrl+D")));
    connect(m_splitAction, &QAction::toggled, m_resultView, &ImageView::setSplitEnabled);
    view->addSeparator();
    for (QDockWidget* dock : findChildren<QDockWidget*>()) view->addAction(dock->toggleViewAction());

    QMenu* help = menuBar()->addMenu(tr("&Help"));
    help->addAction(tr("&About UOT Color Studio"), this, &MainWindow::showAbout);
    help->addAction(tr("About &Qt"), qApp, &QApplication::aboutQt);
}

bool MainWindow::isLoading() const
{
    return (m_sourceWatcher && m_sourceWatcher->isRunning()) || (m_referenceWatcher && m_referenceWatcher->isRunning());
}

void MainWindow::openSource(const QString& path) { loadFile(path, true); }
void MainWindow::openReference(const QString& path) { loadFile(path, false); }

void MainWindow::loadFile(const QString& path, bool source)
{
    // Decoding a real photo takes long enough to stall the window: do it off the GUI thread.
    QFutureWatcher<LoadedImage>*& slot = source ? m_sourceWatcher : m_referenceWatcher;
    if (slot) slot->disconnect(this);  // a newer load of the same side wins
    auto* watcher = new QFutureWatcher<LoadedImage>(this);
    slot = watcher;
    connect(watcher, &QFutureWatcher<LoadedImage>::finished, this,
            [this, source, watcher, path] { onLoaded(source, watcher, path); });
    m_phase->setText(tr("Loading %1...").arg(QFileInfo(path).fileName()));
    watcher->setFuture(QtConcurrent::run([path]() -> LoadedImage {
        try {
            return loadAny(path);
        } catch (const std::exception& e) {
            LoadedImage failed;
            failed.path = QString::fromStdString(e.what());  // carries the message back
            return failed;
        }
    }));
}

void MainWindow::onLoaded(bool source, QFutureWatcher<LoadedImage>* watcher, const QString& path)
{
    LoadedImage loaded = watcher->result();
    watcher->deleteLater();
    (source ? m_sourceWatcher : m_referenceWatcher) = nullptr;
    if (!loaded.image) {
        const QString message = tr("Could not open %1:\n%2\n\nChoose a JPEG, PNG, TIFF, WebP or BMP file.")
                                    .arg(QDir::toNativeSeparators(path), loaded.path);
        showError(tr("Open image"), message);
        emit loadFailed(message);
        return;
    }
    const QImage shown = toQImage(*loaded.image);
    if (source) {
        m_source = loaded;
        m_sourceView->setImage(shown);
        m_resultView->setBeforeImage(shown);
    } else {
        m_reference = loaded;
        m_referenceView->setImage(shown);
    }
    if (!path.startsWith(":/")) addRecentFile(path);
    QSettings().setValue(source ? "session/source" : "session/reference",
                         path.startsWith(":/") ? QString() : QFileInfo(path).absoluteFilePath());
    m_phase->setText(tr("Loaded %1 (%2 x %3)").arg(QFileInfo(path).fileName()).arg(shown.width()).arg(shown.height()));
    updateTitle();
    if (source) emit sourceLoaded();
    else emit referenceLoaded();
    if (m_parameters->parameters().autoRun && hasSource() && hasReference()) m_autoRunTimer.start();
}

StudioParameters MainWindow::parameters() const { return m_parameters->parameters(); }
void MainWindow::setParameters(const StudioParameters& p) { m_parameters->setParameters(p); }

bool MainWindow::isRunning() const { return m_busy; }

void MainWindow::run()
{
    m_autoRunTimer.stop();
    if (!hasSource() || !hasReference()) {
        showError(tr("Run"), tr("Open a source image and a reference image first (File menu, or drop files on the panes)."));
        emit runFailed(m_lastError);
        return;
    }
    const StudioParameters p = parameters();
    {
        QSettings settings;
        p.save(settings);
    }
    const bool remapOnly = m_haveSolved && p.sameSolveAs(m_solvedParameters) && m_session->sourceId == m_source.id &&
                           m_session->referenceId == m_reference.id;
    if (!remapOnly) {
        m_charts->archiveRooflinePoints();
    }
    m_runGeneration = m_worker->submit(remapOnly ? tr("Re-map") : tr("Recolor"),
                                       makeRecolorJob(m_session, m_source, m_reference, p));
    m_lastError.clear();
    setBusy(true);
}

void MainWindow::cancel()
{
    m_autoRunTimer.stop();
    m_worker->cancel();
}

void MainWindow::compare()
{
    m_comparisonDock->show();
    m_comparisonDock->raise();
    resizeDocks({m_comparisonDock}, {height() / 2}, Qt::Vertical);
    m_comparison->start();
}

void MainWindow::onJobStarted(quint64 generation)
{
    if (generation != m_runGeneration) return;
    m_phase->setText(tr("Working..."));
}

void MainWindow::onRunStarted(quint64 generation, const RunInfo& info)
{
    if (generation != m_runGeneration) return;
    m_charts->beginRun(0, info.label);
    m_statistics->beginRun(info);
    showRoofFor(m_parameters->parameters());
}

void MainWindow::onProgress(quint64 generation, const QVector<ProgressSample>& samples)
{
    if (generation != m_runGeneration || generation != m_worker->latestGeneration()) return;  // stale
    m_charts->addSamples(samples);
    m_statistics->addSamples(samples);
    m_charts->setRooflinePoint(0, m_statistics->lastOperationalIntensity(), m_statistics->lastGflops());
}

void MainWindow::onFinished(quint64 generation, std::shared_ptr<const JobOutput> output)
{
    if (generation != m_runGeneration || !output) return;
    if (!output->runs.empty()) {
        const RunOutcome& run = output->runs.front();
        m_statistics->finishRun(run, output->timings);
        m_charts->setRooflinePoint(0, m_statistics->lastOperationalIntensity(), m_statistics->lastGflops());
        m_solvedParameters = parameters();
        m_haveSolved = true;
    }
    if (!output->image.isNull()) {
        m_resultImage = output->image;
        m_resultPixels = output->pixels;
        m_resultView->setImage(m_resultImage);
        m_saveAction->setEnabled(true);
        m_saveAsAction->setEnabled(true);
    }
    if (!output->notice.isEmpty()) {
        m_phase->setText(output->notice);
        if (m_options.interactive) QMessageBox::information(this, tr("Solved on the CPU"), output->notice);
    } else {
        m_phase->setText(tr("Done. %1").arg(output->timings));
    }
    emit resultReady();
}

void MainWindow::onFailed(quint64 generation, const QString& message)
{
    if (generation != m_runGeneration) return;
    showError(tr("Recolor failed"), tr("The recolor failed:\n%1\n\nThe previous result is kept.").arg(message));
    emit runFailed(message);
}

void MainWindow::onCancelled(quint64 generation)
{
    if (generation != m_runGeneration) return;
    m_phase->setText(tr("Cancelled. The previous result is kept."));
    m_statistics->setStatus(tr("cancelled"));
    emit runCancelled();
}

void MainWindow::onParametersChanged()
{
    const StudioParameters p = parameters();
    QSettings settings;
    p.save(settings);
    if (p.autoRun && hasSource() && hasReference()) m_autoRunTimer.start();
}

void MainWindow::setBusy(bool busy)
{
    if (busy == m_busy) return;
    m_busy = busy;
    m_parameters->setRunning(busy);
    m_progress->setVisible(busy);
    emit busyChanged(busy);
}

void MainWindow::showError(const QString& title, const QString& message)
{
    m_lastError = message;
    m_phase->setText(QString(message).replace('\n', ' '));
    if (m_options.interactive) QMessageBox::warning(this, title, message);
    else std::fprintf(stderr, "uot-studio: %s\n", qPrintable(QString(message).replace('\n', ' ')));
}

namespace {

// File > Save Result As: bit depth and quality next to the file dialog's format.
bool askWriteOptions(QWidget* parent, const QString& path, WriteOptions& options)
{
    const QString ext = QFileInfo(path).suffix().toLower();
    const bool lossy = ext == "jpg" || ext == "jpeg" || ext == "webp";
    const bool deep = ext == "png" || ext == "tif" || ext == "tiff";
    if (!lossy && !deep) return true;
    QDialog dialog(parent);
    dialog.setWindowTitle(QObject::tr("Save Options"));
    auto* form = new QFormLayout(&dialog);
    QComboBox* depth = nullptr;
    QSpinBox* quality = nullptr;
    if (deep) {
        depth = new QComboBox;
        depth->addItem(QObject::tr("same as the source"), 0);
        depth->addItem(QObject::tr("8 bit"), 8);
        depth->addItem(QObject::tr("16 bit"), 16);
        form->addRow(QObject::tr("Bit depth"), depth);
    }
    if (lossy) {
        quality = new QSpinBox;
        quality->setRange(1, 100);
        quality->setValue(95);
        form->addRow(QObject::tr("Quality"), quality);
    }
    auto* buttons = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel);
    QObject::connect(buttons, &QDialogButtonBox::accepted, &dialog, &QDialog::accept);
    QObject::connect(buttons, &QDialogButtonBox::rejected, &dialog, &QDialog::reject);
    form->addRow(buttons);
    if (dialog.exec() != QDialog::Accepted) return false;
    if (depth) options.depth = depth->currentData().toInt();
    if (quality) options.jpegQuality = options.webpQuality = quality->value();
    return true;
}

}  // namespace

void MainWindow::saveResult(bool askPath)
{
    if (!m_resultPixels) return;
    QString path = m_savePath;
    WriteOptions options = m_saveOptions;
    if (askPath || path.isEmpty()) {
        const QString suggested = QFileInfo(m_source.path).completeBaseName() + "_recolored.png";
        path = QFileDialog::getSaveFileName(this, tr("Save Result As"), suggested,
                                            tr("PNG (*.png);;JPEG (*.jpg);;TIFF (*.tif);;WebP (*.webp);;BMP (*.bmp)"));
        if (path.isEmpty()) return;
        if (QFileInfo(path).suffix().isEmpty()) path += ".png";
        options = WriteOptions{};
        if (!askWriteOptions(this, path, options)) return;
    }
    saveResultTo(path, options.depth, options.jpegQuality);
}

void MainWindow::saveResultTo(const QString& path, int depth, int quality)
{
    if (!m_resultPixels) {
        showError(tr("Save"), tr("There is no result to save yet: press Run first."));
        emit saveFailed(m_lastError);
        return;
    }
    WriteOptions options;
    options.depth = depth;
    options.jpegQuality = options.webpQuality = quality;
    const WriteOptions remembered = options;
    // Never replace the images the result came from.
    if (!m_source.path.startsWith(":/")) options.protectedPaths.push_back(m_source.path.toStdString());
    if (!m_reference.path.startsWith(":/")) options.protectedPaths.push_back(m_reference.path.toStdString());
    auto pixels = m_resultPixels;
    auto* watcher = new QFutureWatcher<QString>(this);
    connect(watcher, &QFutureWatcher<QString>::finished, this, [this, watcher, path, remembered] {
        const QString error = watcher->result();
        watcher->deleteLater();
        if (!error.isEmpty()) {
            showError(tr("Save"), tr("Could not save %1:\n%2\n\nChoose another file name or folder.")
                                      .arg(QDir::toNativeSeparators(path), error));
            emit saveFailed(m_lastError);
            return;
        }
        m_savePath = path;
        m_saveOptions = remembered;
        m_phase->setText(tr("Saved %1").arg(QDir::toNativeSeparators(path)));
        emit resultSaved(path);
    });
    // Encoding a large image takes a while: off the GUI thread (writes are atomic).
    watcher->setFuture(QtConcurrent::run([pixels, path, options]() -> QString {
        try {
            writeImage(path.toStdString(), *pixels, options);
            return {};
        } catch (const std::exception& e) {
            return QString::fromStdString(e.what());
        }
    }));
}

void MainWindow::swapImages()
{
    std::swap(m_source, m_reference);
    m_sourceView->setImage(m_source.image ? toQImage(*m_source.image) : QImage());
    m_referenceView->setImage(m_reference.image ? toQImage(*m_reference.image) : QImage());
    m_resultView->setBeforeImage(m_sourceView->image());
    updateTitle();
    if (parameters().autoRun && hasSource() && hasReference()) m_autoRunTimer.start();
}

void MainWindow::resetParameters()
{
    StudioParameters defaults;
    defaults.autoRun = parameters().autoRun;
    setParameters(defaults);
}

void MainWindow::addRecentFile(const QString& path)
{
    QSettings settings;
    QStringList recent = settings.value("recentFiles").toStringList();
    const QString absolute = QFileInfo(path).absoluteFilePath();
    recent.removeAll(absolute);
    recent.prepend(absolute);
    while (recent.size() > kMaxRecent) recent.removeLast();
    settings.setValue("recentFiles", recent);
    updateRecentMenu();
}

void MainWindow::updateRecentMenu()
{
    m_recentMenu->clear();
    const QStringList recent = QSettings().value("recentFiles").toStringList();
    for (const QString& path : recent) {
        QMenu* entry = m_recentMenu->addMenu(QFileInfo(path).fileName());
        entry->setToolTip(path);
        entry->addAction(tr("Open as Source"), this, [this, path] { openSource(path); });
        entry->addAction(tr("Open as Reference"), this, [this, path] { openReference(path); });
    }
    m_recentMenu->setEnabled(!recent.isEmpty());
}

// The roofline's roofs for the device the current settings solve on.
void MainWindow::showRoofFor(const StudioParameters& parameters)
{
    const std::string variant = solverNameFor(parameters).toStdString();
    const double gbps = m_peaks.bandwidthFor(variant, true), gflops = m_peaks.computeFor(variant);
    const QString where = runsOnGpu(variant) ? tr("GPU") : tr("host");
    m_charts->setBandwidthRoof(gbps, tr("%1 memory roof %2 GB/s").arg(where).arg(gbps, 0, 'f', 1), gflops);
}

void MainWindow::showAbout()
{
    QString gpuText;
    const DeviceBackend* gpu = findDeviceBackend(DeviceKind::Gpu);
    if (!gpu || !gpu->compiledIn()) {
        gpuText = tr("built without CUDA");
    } else {
        const auto devices = gpu->listDevices();
        gpuText = devices.empty() ? tr("built with CUDA; no GPU: %1").arg(QString::fromStdString(gpuUnavailableReason()))
                                  : tr("built with CUDA; GPU: %1").arg(QString::fromStdString(devices.front().name));
    }
    QMessageBox::about(
        this, tr("About UOT Color Studio"),
        tr("<h3>UOT Color Studio %1</h3>"
           "<p>Color transfer by unbalanced optimal transport.</p>"
           "<p>Qt %2<br>OpenCV %3<br>CUDA: %4</p>"
           "<p>Sample images: <i>home.jpg</i> from OpenCV's samples/data (Apache-2.0 / BSD-3-Clause, as shipped by "
           "Debian's opencv-doc package); <i>starry_night.jpg</i>, a reproduction of Vincent van Gogh's "
           "<i>The Starry Night</i> (1889, public domain), from the same collection.</p>")
            .arg(QCoreApplication::applicationVersion(), QString::fromLatin1(qVersion()),
                 QStringLiteral(UOT_OPENCV_VERSION), gpuText));
}

void MainWindow::openBatchDialog()
{
    if (!hasReference() || m_reference.path.startsWith(":/")) {
        showError(tr("Batch Recolor"), tr("Open a reference image from a file first (File > Open Reference...): the batch "
                                          "reads it from disk."));
        return;
    }
    BatchDialog dialog(m_worker.get(), m_reference.path, parameters(), this);
    dialog.exec();
}

void MainWindow::updateTitle()
{
    const QString s = m_source.path.isEmpty() ? tr("no source") : QFileInfo(m_source.path).fileName();
    const QString r = m_reference.path.isEmpty() ? tr("no reference") : QFileInfo(m_reference.path).fileName();
    setWindowTitle(tr("%1 with the palette of %2 - UOT Color Studio").arg(s, r));
}

void MainWindow::closeEvent(QCloseEvent* event)
{
    QSettings settings;
    settings.setValue("window/geometry", saveGeometry());
    settings.setValue("window/state", saveState());
    parameters().save(settings);
    m_worker->shutdown();  // cancels a running solve and joins
    event->accept();
}

}  // namespace uot::ui
