// MainWindow: construction, loading images, title, about box and the batch
// dialog. The other concerns live in main_window_*.cpp (see main_window.h).
#include "ui/main_window.h"

#include <QApplication>
#include <QCloseEvent>
#include <QDockWidget>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QLabel>
#include <QMessageBox>
#include <QSettings>
#include <QSplitter>
#include <QUndoStack>
#include <QtConcurrent/QtConcurrentRun>

#include <atomic>
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
#include "ui/lut_actions.h"
#include "ui/parameters_panel.h"
#include "ui/resource_file.h"
#include "ui/statistics_panel.h"
#include "ui/undo_commands.h"

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
    m_resultView->setBeforeCaption(tr("Source"));  // the split view's left side
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

    m_prompts = defaultPrompts();
    m_undo = new QUndoStack(this);
    m_undo->setUndoLimit(200);
    createDocks();
    createActions();
    createToolBar();
    createStatusBar();
    connectWorker();

    m_autoRunTimer.setSingleShot(true);
    m_autoRunTimer.setInterval(400);
    connect(&m_autoRunTimer, &QTimer::timeout, this, &MainWindow::run);

    m_defaultLayout = saveState();
    restoreSettings();
    m_recordedParameters = parameters();  // the undo history starts here
    connect(m_parameters, &ParametersPanel::parametersChanged, this, &MainWindow::onParametersChanged);
    connect(m_parameters, &ParametersPanel::runRequested, this, &MainWindow::run);
    connect(m_parameters, &ParametersPanel::cancelRequested, this, &MainWindow::cancel);

    m_statistics->setCountersUnavailable(cacheCountersUnavailableSummary(), cacheCountersUnavailableReason());
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
        QSettings settings;
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
        if (!source) m_runWhenReferenceLoads = false;
        showError(tr("Open image"), message);
        emit loadFailed(message);
        return;
    }
    // One undo step: back to the image shown before.
    const LoadedImage previous = source ? m_source : m_reference;
    applyImage(source, loaded);
    m_undo->push(new FunctionCommand(
        (source ? tr("open source %1") : tr("open reference %1")).arg(QFileInfo(path).fileName()),
        [this, source, loaded] { applyImage(source, loaded); }, [this, source, previous] { applyImage(source, previous); },
        true));
    if (!path.startsWith(":/")) addRecentFile(path);
    m_phase->setText(tr("Loaded %1 (%2 x %3)").arg(QFileInfo(path).fileName()).arg(loaded.image->width).arg(loaded.image->height));
    if (source) emit sourceLoaded();
    else emit referenceLoaded();
    const bool runNow = !source && m_runWhenReferenceLoads && hasSource();
    if (!source) m_runWhenReferenceLoads = false;
    if (runNow) run();
    else if (m_parameters->parameters().autoRun && hasSource() && hasReference()) m_autoRunTimer.start();
}

StudioParameters MainWindow::parameters() const { return m_parameters->parameters(); }
void MainWindow::setParameters(const StudioParameters& p)
{
    m_settingAll = true;  // one undo step of its own
    m_parameters->setParameters(p);
    m_settingAll = false;
}

void MainWindow::showError(const QString& title, const QString& message)
{
    m_lastError = message;
    m_phase->setText(QString(message).replace('\n', ' '));
    if (m_options.interactive) QMessageBox::warning(this, title, message);
    else std::fprintf(stderr, "uot-studio: %s\n", qPrintable(QString(message).replace('\n', ' ')));
}

void MainWindow::resetParameters()
{
    StudioParameters defaults;
    defaults.autoRun = parameters().autoRun;
    setParameters(defaults);
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
    if (!hasReference()) {
        showError(tr("Batch Recolor"), tr("Open a reference image first (File > Open Reference...)."));
        return;
    }
    // The batch reads the reference from disk: the bundled sample gets a copy there.
    QString error;
    const QString reference = diskPathFor(m_reference.path, &error);
    if (reference.isEmpty()) {
        showError(tr("Batch Recolor"), tr("The reference cannot be read from disk: %1").arg(error));
        return;
    }
    BatchDialog dialog(m_worker.get(), reference, parameters(), this);
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
    saveSettings();
    m_worker->shutdown();  // cancels a running solve and joins
    event->accept();
}

}  // namespace uot::ui
