// MainWindow: construction, errors, title, about box and the batch dialog.
// The other concerns live in main_window_*.cpp (see main_window.h).
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
#include <QVBoxLayout>

#include <cstdio>

#include "ui/batch_dialog.h"
#include "ui/clip_scrubber.h"
#include "ui/comparison_view.h"
#include "ui/image_view.h"
#include "ui/live_charts.h"
#include "ui/lut_actions.h"
#include "ui/parameters_panel.h"
#include "ui/resource_file.h"
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

// The sample pair compiled into the executable (resources/samples.qrc).
const char* const kSampleSource = ":/samples/home.jpg";
const char* const kSampleReference = ":/samples/starry_night.jpg";

}  // namespace

MainWindow::MainWindow(const MainWindowOptions& options, QWidget* parent)
    : QMainWindow(parent), m_options(options), m_session(new StudioSession(this))
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
    // The clip bar (scrubber, look frame, export progress) under the panes while a clip is the source.
    auto* panes = new QWidget;
    auto* column = new QVBoxLayout(panes);
    column->setContentsMargins(0, 0, 0, 0);
    column->addWidget(central, 1);
    column->addWidget(new ClipScrubber(m_session));
    setCentralWidget(panes);
    connect(m_sourceView, &ImageView::fileDropped, this, &MainWindow::openSource);
    connect(m_referenceView, &ImageView::fileDropped, this, &MainWindow::openReference);
    connect(m_resultView, &ImageView::fileDropped, this, &MainWindow::openSource);

    m_prompts = defaultPrompts();
    createDocks();
    createActions();
    createToolBar();
    createStatusBar();
    connectSession();

    m_defaultLayout = saveState();
    restoreSettings();
    connect(m_parameters, &ParametersPanel::parametersChanged, this,
            [this] { m_session->editParameters(m_parameters->parameters()); });
    connect(m_parameters, &ParametersPanel::runRequested, this, &MainWindow::run);
    connect(m_parameters, &ParametersPanel::cancelRequested, this, &MainWindow::cancel);

    statisticsPanel()->setCountersUnavailable(cacheCountersUnavailableSummary(), cacheCountersUnavailableReason());
    if (m_options.measureBandwidth) m_session->measureMachinePeaks();
    else statisticsPanel()->setMachinePeaks({}, tr("not measured"));

    if (m_options.loadSamplesIfEmpty) {
        // The images of the last session when they still exist, else the bundled sample pair.
        QSettings settings;
        const QString lastSource = settings.value("session/source").toString();
        const QString lastReference = settings.value("session/reference").toString();
        if (!lastSource.isEmpty() && QFileInfo::exists(lastSource)) openSource(lastSource);
        else if (QFile::exists(kSampleSource)) openSource(QString::fromLatin1(kSampleSource));
        if (!lastReference.isEmpty() && QFileInfo::exists(lastReference)) openReference(lastReference);
        else if (QFile::exists(kSampleReference)) openReference(QString::fromLatin1(kSampleReference));
        m_session->restoreRegionalSession(settings);  // once that source has loaded
    }
    updateTitle();
}

MainWindow::~MainWindow()
{
    m_session->worker()->shutdown();  // before the widgets its queued signals would reach
}

bool MainWindow::isLoading() const { return m_session->isLoading(); }
void MainWindow::openSource(const QString& path) { m_session->openSource(path); }
void MainWindow::openReference(const QString& path) { m_session->openReference(path); }

StudioParameters MainWindow::parameters() const { return m_session->parameters(); }
void MainWindow::setParameters(const StudioParameters& p) { m_session->setParameters(p); }

// Every problem the session meets, and the window's own, arrive here (StudioSession::failed).
void MainWindow::showError(const QString& title, const QString& message)
{
    m_phase->setText(QString(message).replace('\n', ' '));
    if (m_options.interactive) QMessageBox::warning(this, title, message);
    else std::fprintf(stderr, "uot-studio: %s\n", qPrintable(QString(message).replace('\n', ' ')));
}

void MainWindow::showAbout()
{
    QString gpuText;
    if (!StudioSession::gpuCompiledIn()) {
        gpuText = tr("built without CUDA");
    } else {
        const QVector<GpuChoice> devices = StudioSession::gpuChoices();
        gpuText = devices.empty() ? tr("built with CUDA; no GPU: %1").arg(StudioSession::gpuUnavailableReason())
                                  : tr("built with CUDA; GPU: %1").arg(devices.front().name);
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
        m_session->reportError(tr("Batch Recolor"), tr("Open a reference image first (File > Open Reference...)."));
        return;
    }
    // The batch reads the reference from disk: the bundled sample gets a copy there.
    QString error;
    const QString reference = diskPathFor(m_session->reference().path, &error);
    if (reference.isEmpty()) {
        m_session->reportError(tr("Batch Recolor"), tr("The reference cannot be read from disk: %1").arg(error));
        return;
    }
    BatchDialog dialog(m_session->worker(), reference, parameters(), this);
    dialog.exec();
}

void MainWindow::updateTitle()
{
    const QString& source = m_session->source().path;
    const QString& reference = m_session->reference().path;
    const QString s = source.isEmpty() ? tr("no source") : QFileInfo(source).fileName();
    const QString r = reference.isEmpty() ? tr("no reference") : QFileInfo(reference).fileName();
    setWindowTitle(tr("%1 with the palette of %2 - UOT Color Studio").arg(s, r));
}

void MainWindow::closeEvent(QCloseEvent* event)
{
    saveSettings();
    m_session->worker()->shutdown();  // cancels a running solve and joins
    event->accept();
}

}  // namespace uot::ui
