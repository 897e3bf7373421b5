// `uot-studio`: the desktop application. Scriptable for demos, docs and tests:
//   uot-studio [--source FILE] [--reference FILE] [--device cpu|gpu|gpu:N]
//              [--run] [--compare] [--screenshot FILE] [--size WxH] [--quit]
//              [--reference FILE ...] [--mask FILE | --mask-luminance LOW:HIGH | --mask-sky]
//              [--mask-stroke X1,Y1,X2,Y2,...] [--scope waveform|parade|vectorscope]
//              [--region MASK=REFERENCE ...] [--scopes] [--mask-tool brush|eraser|pick]
//              [--frame N] [--look-frame N] [--export-clip OUT]
// loads the images (a repeated --reference pools several references; a mask or
// regions open the Mask or Regions dock; a clip as --source shows --frame N), runs, waits for the
// result (and exports the clip), saves a screenshot of the
// window and quits (exit code 0 on success, 1 when a step failed, 2 for a bad
// argument, e.g. a --size beyond 16384 a side, 3 when --device names a GPU that
// this machine does not have).

#include <QApplication>
#include <QComboBox>
#include <QCommandLineParser>
#include <QDockWidget>
#include <QDir>
#include <QFileInfo>
#include <QImage>
#include <QLabel>
#include <QPixmap>
#include <QTableWidget>
#include <QTimer>

#include <algorithm>
#include <cstdio>
#include <functional>
#include <memory>

#include "ui/pipeline_jobs.h"
#include "ui/comparison_view.h"
#include "ui/main_window.h"
#include "ui/mask_editor.h"
#include "ui/scopes_dock.h"
#include "ui/screenshot_file.h"
#include "ui/statistics_panel.h"
#include "ui/studio_parameters.h"

namespace {

struct Script {
    QString source, reference, screenshot;
    bool run = false, compare = false, quit = false;
    QSize size;
    QStringList extraReferences;  // --reference after the first
    QString mask;                 // --mask FILE
    double lumaLow = -1, lumaHigh = -1;  // --mask-luminance LOW:HIGH (-1: none)
    bool sky = false;             // --mask-sky
    QStringList regions;          // --region MASK=REFERENCE
    bool scopes = false;          // --scopes
    QString maskTool;             // --mask-tool
    QVector<QPointF> stroke;      // --mask-stroke
    int scope = 0;                // --scope: 0 waveform, 1 parade, 2 vectorscope
    long long frame = -1;         // --frame: the clip's frame shown (-1: the first)
    long long lookFrame = -1;     // --look-frame: the clip's look from this frame (-1: pooled)
    QString exportClip;           // --export-clip OUT
};

// --screenshot FILE is never one of the images the script opens.
QStringList openedImages(const Script& script)
{
    return QStringList{script.source, script.reference} + script.extraReferences;
}

// Runs the scripted steps one after the other, each started by the signal that
// ends the previous one.
class ScriptRunner {
public:
    ScriptRunner(uot::ui::MainWindow& window, Script script) : m_window(window), m_script(std::move(script)) {}

    void start()
    {
        using uot::ui::MainWindow;
        QObject::connect(&m_window, &MainWindow::loadFailed, &m_window, [this](const QString&) { fail("loading"); });
        QObject::connect(&m_window, &MainWindow::sourceLoaded, &m_window, [this] { afterLoad(); });
        QObject::connect(&m_window, &MainWindow::referenceLoaded, &m_window, [this] { afterLoad(); });
        if (!m_script.source.isEmpty()) m_window.openSource(m_script.source);
        if (!m_script.reference.isEmpty()) m_window.openReference(m_script.reference);
        // Nothing to load (or the bundled samples are loading): continue when idle.
        QTimer::singleShot(0, &m_window, [this] { afterLoad(); });
    }

private:
    void afterLoad()
    {
        if (m_loadedStep || m_window.isLoading()) return;
        if ((m_script.run || m_script.compare) &&
            (!m_window.hasSource() || (!m_window.hasReference() && m_script.regions.isEmpty())))
            return;
        m_loadedStep = true;
        regionalStep();
    }

    // The mask, the extra references and the regions, one after the other (each
    // image loads in the background), then the run.
    void regionalStep()
    {
        using uot::ui::StudioSession;
        StudioSession* session = m_window.session();
        if (!m_regionalStarted) {
            m_regionalStarted = true;
            if (!m_script.mask.isEmpty() && !session->loadMask(m_script.mask)) return fail("--mask");
            if (m_script.lumaLow >= 0) session->maskFromLuminance(m_script.lumaLow, m_script.lumaHigh, 0.1);
            if (m_script.sky) session->maskFromSky();
            if (!m_script.stroke.isEmpty()) session->paintMask(m_script.stroke, m_window.maskEditor()->brush());
            showDocks();
        }
        if (!m_script.extraReferences.isEmpty()) {
            const QString path = m_script.extraReferences.takeFirst();
            QObject::connect(session, &StudioSession::referencesChanged, &m_window, [this] { regionalStep(); },
                             Qt::SingleShotConnection);
            session->addReference(path);
            return;
        }
        if (!m_script.regions.isEmpty()) {
            const QString spec = m_script.regions.takeFirst();
            const qsizetype eq = spec.indexOf('=');
            if (!session->loadMask(spec.left(eq))) return fail("--region");
            QObject::connect(session, &StudioSession::regionsChanged, &m_window, [this] { regionalStep(); },
                             Qt::SingleShotConnection);
            session->addRegion(spec.mid(eq + 1));
            return;
        }
        runStep();
    }

    void showDocks()
    {
        auto show = [this](const char* name) {
            QDockWidget* dock = m_window.dock(QString::fromLatin1(name));
            dock->show();
            dock->raise();
        };
        const bool masked = !m_script.mask.isEmpty() || m_script.lumaLow >= 0 || m_script.sky || !m_script.stroke.isEmpty();
        if (masked || !m_script.maskTool.isEmpty()) show("maskDock");
        if (!m_script.regions.isEmpty() || !m_script.extraReferences.isEmpty()) show("regionsDock");
        if (m_script.scopes) {
            show("scopesDock");
            m_window.scopesDock()->select(2, m_script.scope);
            // Tall enough to read the plots.
            QDockWidget* scopes = m_window.dock(QStringLiteral("scopesDock"));
            QTimer::singleShot(0, &m_window, [this, scopes] { m_window.resizeDocks({scopes}, {m_window.height() / 2}, Qt::Vertical); });
        }
        using Tool = uot::ui::MaskEditor::Tool;
        if (m_script.maskTool == "brush") m_window.maskEditor()->setTool(Tool::Brush);
        else if (m_script.maskTool == "eraser") m_window.maskEditor()->setTool(Tool::Eraser);
        else if (m_script.maskTool == "pick") m_window.maskEditor()->setTool(Tool::Eyedropper);
    }

    // A clip: the frame to show and the look frame, before the run.
    void frameStep()
    {
        m_frameDone = true;
        uot::ui::StudioSession* session = m_window.session();
        if (!session->hasClip() || (m_script.frame < 0 && m_script.lookFrame < 0)) return runStep();
        if (m_script.lookFrame >= 0) session->setClipLookFrame(m_script.lookFrame);
        const long long frame = std::max(m_script.frame, 0LL);
        QObject::connect(session, &uot::ui::StudioSession::clipFrameShown, &m_window,
                         [this, frame](long long shown) {
                             if (shown == frame && !m_ranAfterFrame) {
                                 m_ranAfterFrame = true;
                                 runStep();
                             }
                         });
        session->showClipFrame(frame);
    }

    // --export-clip: the clip with its look, in the background; the screenshot shows its end.
    void exportStep()
    {
        if (m_script.exportClip.isEmpty()) return compareStep();
        uot::ui::ClipModel* clip = m_window.session()->clip();
        QObject::connect(clip, &uot::ui::ClipModel::exportFinished, &m_window, [this](const QString& path, const QString& summary) {
            std::printf("uot-studio: exported %s: %s\n", qPrintable(path), qPrintable(summary));
            compareStep();
        }, Qt::SingleShotConnection);
        QObject::connect(clip, &uot::ui::ClipModel::exportFailed, &m_window, [this](const QString&) { fail("--export-clip"); },
                         Qt::SingleShotConnection);
        if (!m_window.session()->exportClip(m_script.exportClip, true)) fail("--export-clip");
    }

    void runStep()
    {
        using uot::ui::MainWindow;
        if (!m_frameDone) return frameStep();
        if ((m_script.run || m_script.compare) && !m_window.bandwidthKnown()) {
            // The start-up bandwidth probe would compete with the solve for memory
            // bandwidth and skew both figures: let it finish first.
            QObject::connect(&m_window, &MainWindow::bandwidthMeasured, &m_window, [this] { runStep(); },
                             Qt::SingleShotConnection);
            return;
        }
        if (!m_script.run) return compareStep();
        QObject::connect(&m_window, &MainWindow::resultReady, &m_window, [this] { exportStep(); },
                         Qt::SingleShotConnection);
        QObject::connect(&m_window, &MainWindow::runFailed, &m_window, [this](const QString&) { fail("the run"); },
                         Qt::SingleShotConnection);
        m_window.run();
    }

    void compareStep()
    {
        if (!m_script.compare) return screenshotStep();
        using uot::ui::ComparisonView;
        ComparisonView* view = m_window.comparisonView();
        QObject::connect(view, &ComparisonView::comparisonFinished, &m_window, [this] { screenshotStep(); },
                         Qt::SingleShotConnection);
        QObject::connect(view, &ComparisonView::comparisonFailed, &m_window,
                         [this](const QString&) { fail("the comparison"); }, Qt::SingleShotConnection);
        m_window.compare();
    }

    void screenshotStep()
    {
        if (m_script.screenshot.isEmpty()) return quitStep();
        if (m_script.scopes && m_script.run && !m_window.session()->hasScopes()) {
            // The scopes of the result are computed after it: wait for them.
            QObject::connect(m_window.session(), &uot::ui::StudioSession::scopesReady, &m_window,
                             [this] { screenshotStep(); }, Qt::SingleShotConnection);
            return;
        }
        if (!m_window.bandwidthKnown()) {
            // The statistics and the roofline show the measured peak: wait for it.
            QObject::connect(&m_window, &uot::ui::MainWindow::bandwidthMeasured, &m_window, [this] { screenshotStep(); },
                             Qt::SingleShotConnection);
            return;
        }
        // Let the last queued updates (charts, panes) paint first.
        QTimer::singleShot(300, &m_window, [this] {
            printFigures();
            const QPixmap shot = m_window.grab();
            if (const QString problem =
                    uot::ui::writeScreenshotFile(shot.toImage(), m_script.screenshot, openedImages(m_script));
                !problem.isEmpty()) {
                std::fprintf(stderr, "uot-studio: could not write the screenshot %s: %s\n",
                             qPrintable(m_script.screenshot), qPrintable(problem));
                m_failed = true;
            } else {
                std::printf("uot-studio: wrote %s (%dx%d)\n", qPrintable(m_script.screenshot), shot.width(), shot.height());
            }
            quitStep();
        });
    }

    // The figures the screenshot shows, as text (for logs of scripted runs).
    void printFigures() const
    {
        const uot::ui::StatisticsPanel* stats = m_window.statisticsPanel();
        for (const char* key : {"run", "status", "elapsed", "msPerIteration", "bandwidth", "peak", "memory", "gpuCounters",
                                "timings"})
            std::printf("uot-studio: statistics %s: %s\n", key, qPrintable(stats->text(QLatin1String(key))));
        if (!m_script.compare) return;
        const uot::ui::ComparisonView* view = m_window.comparisonView();
        const QList<QComboBox*> variants = view->findChildren<QComboBox*>();
        if (variants.size() >= 2)
            std::printf("uot-studio: compare A = %s, B = %s\n", qPrintable(variants[0]->currentText()),
                        qPrintable(variants[1]->currentText()));
        if (const QTableWidget* table = view->findChild<QTableWidget*>()) {
            for (int r = 0; r < table->rowCount(); ++r) {
                auto cell = [&](int c) { return table->item(r, c) ? table->item(r, c)->text() : QStringLiteral("-"); };
                std::printf("uot-studio: compare %s: A %s | B %s\n", qPrintable(table->verticalHeaderItem(r)->text()),
                            qPrintable(cell(0)), qPrintable(cell(1)));
            }
        }
        for (const QLabel* label : view->findChildren<QLabel*>())
            if (label->wordWrap() && label->text().size() > 40)
                std::printf("uot-studio: compare: %s\n", qPrintable(label->text().simplified()));
    }

    void quitStep()
    {
        if (m_script.quit || m_failed) {
            if (m_failed || m_script.quit) {
                m_window.close();
                QCoreApplication::exit(m_failed ? 1 : 0);
            }
        }
    }

    void fail(const char* step)
    {
        std::fprintf(stderr, "uot-studio: %s failed: %s\n", step, qPrintable(m_window.lastError()));
        m_failed = true;
        if (m_script.quit) quitStep();
    }

    uot::ui::MainWindow& m_window;
    Script m_script;
    bool m_loadedStep = false;
    bool m_regionalStarted = false;
    bool m_frameDone = false;
    bool m_ranAfterFrame = false;
    bool m_failed = false;
};

// --size: from a usable window up to 16384 pixels a side (a 1 GiB screenshot).
constexpr int kMinWidth = 320, kMinHeight = 240, kMaxSide = 16384;

const QCommandLineOption sourceOption("source", "Load FILE as the source image.", "FILE");
const QCommandLineOption referenceOption("reference",
                                         "Load FILE as the reference image; repeated, the references are pooled "
                                         "into one palette (equal weights).",
                                         "FILE");
const QCommandLineOption maskOption("mask", "Use the mask in FILE (white: the transfer, black: the source kept).", "FILE");
const QCommandLineOption maskLuminanceOption("mask-luminance",
                                             "Mask the pixels whose luma lies in LOW:HIGH (0..1, e.g. 0.6:1).", "LOW:HIGH");
const QCommandLineOption maskStrokeOption("mask-stroke",
                                          "Paint a brush stroke on the mask through the points X1,Y1,X2,Y2,... (source "
                                          "pixels; the Mask dock's brush: 120 px, hardness 50 %).",
                                          "POINTS");
const QCommandLineOption maskSkyOption("mask-sky", "Mask the sky (the automatic sky heuristic).");
const QCommandLineOption regionOption("region",
                                      "A region: the mask in MASK recolored from REFERENCE (up to 4 times).",
                                      "MASK=REFERENCE");
const QCommandLineOption scopesOption("scopes", "Show the Scopes dock (waveform, parade, vectorscope).");
const QCommandLineOption scopeOption("scope", "With --scopes: show KIND of the result: waveform, parade or vectorscope.",
                                     "KIND");
const QCommandLineOption maskToolOption("mask-tool", "Show the Mask dock with TOOL chosen: brush, eraser or pick.",
                                        "TOOL");
const QCommandLineOption deviceOption("device",
                                      "Solve on DEVICE: cpu, gpu (the first GPU) or gpu:N. Exits with code 3, saying "
                                      "why, when that GPU is not usable here.",
                                      "DEVICE");
const QCommandLineOption runOption("run", "Recolor once the images are loaded (the bundled sample pair when no file is given).");
const QCommandLineOption compareOption("compare", "Run the comparison view (CPU vs GPU, or two CPU variants).");
const QCommandLineOption screenshotOption("screenshot", "Save a screenshot of the window to FILE when done.", "FILE");
const QCommandLineOption sizeOption("size",
                                    "Window size WxH, from 320x240 to 16384x16384 (default 1600x1000 with --screenshot).",
                                    "WxH");
const QCommandLineOption maxPixelsOption("max-pixels",
                                         "Refuse images with more than N pixels (0 = no limit; default 200000000).", "N");
const QCommandLineOption frameOption("frame", "With a clip as --source: show frame N (0 is the first).", "N");
const QCommandLineOption lookFrameOption("look-frame",
                                         "With a clip as --source: compute its look from frame N alone (default: "
                                         "sampled frames pooled).",
                                         "N");
const QCommandLineOption exportClipOption("export-clip",
                                          "With a clip as --source and --run: export the clip with its look to OUT "
                                          "(a video file or a pattern such as frame_%05d.png), replacing OUT.",
                                          "OUT");
const QCommandLineOption quitOption("quit", "Quit when done (exit code 1 when a step failed).");

void addOptions(QCommandLineParser& parser)
{
    parser.setApplicationDescription(QStringLiteral("Color transfer by unbalanced optimal transport."));
    parser.addHelpOption();
    parser.addVersionOption();
    parser.addOptions({sourceOption, referenceOption, deviceOption, runOption, compareOption, screenshotOption, sizeOption, maxPixelsOption, quitOption,
                       maskOption, maskLuminanceOption, maskStrokeOption, maskSkyOption, regionOption, scopesOption, scopeOption, maskToolOption,
                       frameOption, lookFrameOption, exportClipOption});
}

void setApplicationNames()
{
    QCoreApplication::setOrganizationName(QStringLiteral("UOT"));
    QCoreApplication::setApplicationName(QStringLiteral("UOT Color Studio"));
    QCoreApplication::setApplicationVersion(QStringLiteral(UOT_STUDIO_VERSION));
}

}  // namespace

int main(int argc, char** argv)
{
    // --help and --version need no display.
    for (int i = 1; i < argc; ++i) {
        const QByteArray arg(argv[i]);
        if (arg == "-h" || arg == "--help" || arg == "--help-all" || arg == "-v" || arg == "--version") {
            QCoreApplication core(argc, argv);
            setApplicationNames();
            QCommandLineParser parser;
            addOptions(parser);
            parser.process(core);  // prints and exits
            return 0;
        }
    }
    QApplication app(argc, argv);
    uot::ui::removeTemporaryFilesOnSignals();  // a SIGTERM mid-save leaves no temporary file
    setApplicationNames();
    QApplication::setWindowIcon(QIcon(QStringLiteral(":/icons/uot-studio.png")));

    QCommandLineParser parser;
    addOptions(parser);
    parser.process(app);

    Script script;
    script.source = parser.value(sourceOption);
    const QStringList references = parser.values(referenceOption);
    script.reference = references.value(0);
    script.extraReferences = references.mid(1);
    script.mask = parser.value(maskOption);
    script.sky = parser.isSet(maskSkyOption);
    script.regions = parser.values(regionOption);
    script.scopes = parser.isSet(scopesOption);
    script.maskTool = parser.value(maskToolOption);
    if (parser.isSet(scopeOption)) {
        script.scope = QStringList{"waveform", "parade", "vectorscope"}.indexOf(parser.value(scopeOption));
        if (script.scope < 0) {
            std::fprintf(stderr, "uot-studio: --scope wants waveform, parade or vectorscope\n");
            return 2;
        }
    }
    if (!script.maskTool.isEmpty() && !QStringList{"brush", "eraser", "pick"}.contains(script.maskTool)) {
        std::fprintf(stderr, "uot-studio: --mask-tool wants brush, eraser or pick, not '%s'\n", qPrintable(script.maskTool.left(40)));
        return 2;
    }
    if (parser.isSet(maskLuminanceOption)) {
        const QStringList range = parser.value(maskLuminanceOption).split(':');
        bool low = false, high = false;
        script.lumaLow = range.size() == 2 ? range[0].toDouble(&low) : -1;
        script.lumaHigh = range.size() == 2 ? range[1].toDouble(&high) : -1;
        if (!low || !high || script.lumaLow < 0 || script.lumaHigh > 1 || script.lumaLow > script.lumaHigh) {
            std::fprintf(stderr, "uot-studio: --mask-luminance wants LOW:HIGH with 0 <= LOW <= HIGH <= 1, e.g. 0.6:1\n");
            return 2;
        }
    }
    if (parser.isSet(maskStrokeOption)) {
        const QStringList numbers = parser.value(maskStrokeOption).split(',');
        for (qsizetype k = 0; k + 1 < numbers.size(); k += 2) script.stroke << QPointF(numbers[k].toDouble(), numbers[k + 1].toDouble());
        if (numbers.size() % 2 != 0 || script.stroke.isEmpty()) {
            std::fprintf(stderr, "uot-studio: --mask-stroke wants X1,Y1,X2,Y2,... (source pixels)\n");
            return 2;
        }
    }
    if (script.regions.size() > 4) {
        std::fprintf(stderr, "uot-studio: at most 4 --region\n");
        return 2;
    }
    QStringList files = references.mid(1);
    if (!script.mask.isEmpty()) files << script.mask;
    for (const QString& region : script.regions) {
        const qsizetype eq = region.indexOf('=');
        if (eq <= 0 || eq == region.size() - 1) {
            std::fprintf(stderr, "uot-studio: --region wants MASK=REFERENCE, not '%s'\n", qPrintable(region.left(80)));
            return 2;
        }
        files << region.left(eq) << region.mid(eq + 1);
    }
    for (const auto& [option, value] : {std::pair{&frameOption, &script.frame}, std::pair{&lookFrameOption, &script.lookFrame}}) {
        if (!parser.isSet(*option)) continue;
        bool ok = false;
        *value = parser.value(*option).toLongLong(&ok);
        if (!ok || *value < 0) {
            std::fprintf(stderr, "uot-studio: --%s wants a frame number >= 0, not '%s'\n", qPrintable(option->names().first()),
                         qPrintable(parser.value(*option).left(40)));
            return 2;
        }
    }
    script.exportClip = parser.value(exportClipOption);
    script.run = parser.isSet(runOption);
    script.compare = parser.isSet(compareOption);
    script.screenshot = parser.value(screenshotOption);
    script.quit = parser.isSet(quitOption);
    files << script.source << script.reference;
    for (const QString& file : std::as_const(files)) {
        const QString* path = &file;
        if (path->isEmpty()) continue;
        if (uot::ui::ClipModel::isClipPath(*path) && path->contains('%')) continue;  // a sequence: the clip checks its frames
        // A symbolic link loop or a dangling link is named as such, not as missing.
        const QString unusable = uot::ui::unusableImagePath(*path);
        if (!unusable.isEmpty() && !QFileInfo(*path).isDir()) {
            std::fprintf(stderr, "uot-studio: %s: %s\n", qPrintable(*path), qPrintable(unusable));
            return 2;
        }
        if (!QFileInfo::exists(*path)) {
            std::fprintf(stderr, "uot-studio: %s does not exist\n", qPrintable(*path));
            return 2;
        }
    }
    // A run needs both images (or neither: the bundled pair); with one it would wait for ever.
    if ((script.run || script.compare) && script.source.isEmpty() != script.reference.isEmpty() &&
        script.regions.isEmpty()) {
        std::fprintf(stderr, "uot-studio: --%s needs both --source and --reference (or neither, for the bundled "
                             "sample pair); only --%s was given\n",
                     script.compare ? "compare" : "run", script.source.isEmpty() ? "reference" : "source");
        return 2;
    }
    if (!script.screenshot.isEmpty()) {
        if (const QString problem = uot::ui::screenshotFileProblem(script.screenshot, openedImages(script));
            !problem.isEmpty()) {
            std::fprintf(stderr, "uot-studio: --screenshot %s: %s\n", qPrintable(script.screenshot), qPrintable(problem));
            return 2;
        }
    }
    QString device;  // empty: the saved choice
    if (parser.isSet(deviceOption)) {
        device = parser.value(deviceOption).trimmed().toLower();
        if (device == "gpu") device = "gpu:0";
        if (const QString problem = uot::ui::StudioParameters::valueProblem("device", device); !problem.isEmpty()) {
            std::fprintf(stderr, "uot-studio: --device '%s': %s (gpu = gpu:0)\n",
                         qPrintable(parser.value(deviceOption).left(40)), qPrintable(problem));
            return 2;
        }
        const QString unavailable = uot::ui::StudioParameters::deviceUnavailableReason(device);
        if (!unavailable.isEmpty()) {
            std::fprintf(stderr, "uot-studio: --device %s: %s\n", qPrintable(device), qPrintable(unavailable));
            return 3;
        }
    }
    if (parser.isSet(maxPixelsOption)) {
        const QString text = parser.value(maxPixelsOption).trimmed();
        if (const QString problem = uot::ui::StudioParameters::valueProblem("max-pixels", text); !problem.isEmpty()) {
            std::fprintf(stderr, "uot-studio: --max-pixels '%s': %s\n", qPrintable(text.left(40)), qPrintable(problem));
            return 2;
        }
        uot::ui::setImagePixelLimit(static_cast<qulonglong>(text.toDouble()));
    }
    QSize size = script.screenshot.isEmpty() ? QSize() : QSize(1600, 1000);
    if (parser.isSet(sizeOption)) {
        // Bounded: a window of 100000x100000 crashed Qt's painting, 40000x40000 took 12 GiB.
        const QStringList parts = parser.value(sizeOption).split('x');
        bool wide = false, high = false;
        const int w = parts.size() == 2 ? parts[0].toInt(&wide) : 0, h = parts.size() == 2 ? parts[1].toInt(&high) : 0;
        if (!wide || !high || w < kMinWidth || h < kMinHeight || w > kMaxSide || h > kMaxSide) {
            std::fprintf(stderr, "uot-studio: --size wants WxH with %d <= W <= %d and %d <= H <= %d, e.g. 1600x1000, not '%s'\n",
                         kMinWidth, kMaxSide, kMinHeight, kMaxSide, qPrintable(parser.value(sizeOption).left(40)));
            return 2;
        }
        size = QSize(w, h);
    }

    uot::ui::MainWindowOptions options;
    options.interactive = !script.quit;  // a scripted run never waits on a message box
    // Scripted runs that name no file use the bundled samples; plain starts show them once.
    const bool scripted = script.run || script.compare || !script.screenshot.isEmpty();
    options.loadSamplesIfEmpty = script.source.isEmpty() && script.reference.isEmpty() && !scripted;
    uot::ui::MainWindow window(options);
    if (!device.isEmpty()) {
        uot::ui::StudioParameters parameters = window.parameters();
        parameters.device = device;
        window.setParameters(parameters);
    }
    if (scripted && script.source.isEmpty() && script.reference.isEmpty()) {
        window.openSource(QStringLiteral(":/samples/home.jpg"));
        window.openReference(QStringLiteral(":/samples/starry_night.jpg"));
    }
    if (size.isValid()) window.resize(size);
    window.show();

    ScriptRunner runner(window, script);
    runner.start();
    return app.exec();
}
