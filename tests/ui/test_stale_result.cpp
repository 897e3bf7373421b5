// Issue 25, the stale result: after a run, a new source, reference or setting
// left the old picture on screen unmarked, Save stayed enabled, and Ctrl+S wrote
// it as "<new>_recolored.png" with the new photo's metadata. Here the studio
// must mark the result out of date the moment an input changes (a banner on the
// result pane; Save, Save As and Export LUT refused), never save a result under
// inputs it was not made from, and never show an earlier session's result.

#include <QAction>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QMimeData>
#include <QProcess>
#include <QProgressBar>
#include <QSettings>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTest>
#include <QUndoStack>

#include <functional>
#include <vector>

#include "tests/support/relocatable_path.h"
#include "tests/ui/studio_test_options.h"
#include "ui/image_view.h"
#include "ui/lut_actions.h"
#include "ui/main_window.h"

using namespace uot::ui;

namespace {

const QString kSamples = uot::test::relocatablePath("UOT_SAMPLES_DIR", QStringLiteral(UOT_SAMPLES_DIR));


bool loaded(MainWindow& window)
{
    return QTest::qWaitFor([&] { return window.hasSource() && window.hasReference() && !window.isLoading(); }, 20000);
}

bool loadPair(MainWindow& window, const QString& source = kSamples + "/home.jpg",
              const QString& reference = kSamples + "/starry_night.jpg")
{
    window.openSource(source);
    window.openReference(reference);
    return loaded(window);
}

bool waitForSource(MainWindow& window, QSize size)
{
    return QTest::qWaitFor([&] { return !window.isLoading() && window.sourceView()->image().size() == size; }, 20000);
}

bool runToResult(MainWindow& window)
{
    QSignalSpy ready(&window, &MainWindow::resultReady);
    window.run();
    return QTest::qWaitFor([&] { return ready.count() >= 1 && !window.isRunning(); }, 60000);
}

// Save As answered from a script; records the name it offered.
struct Prompts {
    QStringList answers;
    int asked = 0;
    QString offered;
    SavePrompts make()
    {
        SavePrompts p;
        p.choosePath = [this](QString& path, QString&) {
            ++asked;
            offered = path;
            if (answers.isEmpty()) return false;
            path = answers.takeFirst();
            return true;
        };
        p.confirmReplace = [](const QString&) { return true; };
        p.chooseOptions = [](const QString&, uot::ui::StudioSaveOptions&) { return true; };
        return p;
    }
};

// What shows the state: the banner, and the three actions.
bool markedOutOfDate(MainWindow& window)
{
    const QString banner = window.resultView()->banner();
    return window.resultOutOfDate() && banner.contains("Out of date") && banner.contains("Run") &&
           !window.action("saveAction")->isEnabled() && !window.action("saveAsAction")->isEnabled() &&
           !window.lutActions()->exportAction()->isEnabled();
}

bool markedCurrent(MainWindow& window)
{
    return !window.resultOutOfDate() && window.resultView()->banner().isEmpty() &&
           window.action("saveAction")->isEnabled() && window.action("saveAsAction")->isEnabled() &&
           window.lutActions()->exportAction()->isEnabled();
}

// A copy of `sample` in `dir` whose EXIF Artist is `artist` (exiftool).
bool taggedCopy(const QString& sample, const QString& target, const QString& artist)
{
    if (!QFile::copy(sample, target)) return false;
    QFile::setPermissions(target, QFile::ReadOwner | QFile::WriteOwner);
    QProcess tag;
    tag.start("exiftool", {"-overwrite_original", "-EXIF:Artist=" + artist, target});
    return tag.waitForFinished(60000) && tag.exitCode() == 0;
}

QString artistOf(const QString& file)
{
    QProcess read;
    read.start("exiftool", {"-j", "-Artist", file});
    if (!read.waitForFinished(60000) || read.exitCode() != 0) return {};
    return QJsonDocument::fromJson(read.readAllStandardOutput()).array().first().toObject().value("Artist").toString();
}

}  // namespace

class TestStaleResult : public QObject {
    Q_OBJECT
private:
    QTemporaryDir m_settingsDir;

private slots:
    void initTestCase()
    {
        QVERIFY(m_settingsDir.isValid());
        useIsolatedSettings(m_settingsDir.path(), "studio-stale-result-test");
    }

    void init() { QSettings().clear(); }

    // The walkthrough's case: run, open another source, Ctrl+S.
    void anotherSourceIsMarkedAndSavingIsRefusedUntilANewRun()
    {
        QTemporaryDir dir;
        MainWindow window(testOptions());
        Prompts prompts;
        window.setSavePrompts(prompts.make());
        window.resize(1280, 720);
        window.show();
        QVERIFY(QTest::qWaitForWindowExposed(&window));
        QVERIFY(loadPair(window));
        window.setParameters(quickParameters());
        QVERIFY(!window.action("saveAction")->isEnabled());  // nothing to save yet
        QVERIFY(runToResult(window));
        QVERIFY(markedCurrent(window));

        window.openSource(kSamples + "/fruits.jpg");
        QVERIFY(waitForSource(window, QSize(512, 480)));
        QVERIFY(markedOutOfDate(window));
        QVERIFY2(window.resultView()->banner().contains("source"), qPrintable(window.resultView()->banner()));
        QVERIFY(window.action("batchAction")->isEnabled());  // batch reads files, not the result

        QSignalSpy saved(&window, &MainWindow::resultSaved);
        QSignalSpy failed(&window, &MainWindow::saveFailed);
        QTest::keyClick(&window, Qt::Key_S, Qt::ControlModifier);
        QTest::keyClick(&window, Qt::Key_S, Qt::ControlModifier | Qt::ShiftModifier);
        // Called directly (a script, a stale shortcut): refused with a message, nothing asked.
        window.save();
        window.saveAs();
        window.saveResultTo(dir.filePath("direct.png"));
        QCOMPARE(failed.count(), 3);
        QVERIFY2(window.lastError().contains("out of date"), qPrintable(window.lastError()));
        QCOMPARE(prompts.asked, 0);
        QTest::qWait(300);
        QCOMPARE(saved.count(), 0);
        QVERIFY(QDir(dir.path()).entryList(QDir::Files).isEmpty());

        // A new run: saved under the new source's name.
        QVERIFY(runToResult(window));
        QVERIFY(markedCurrent(window));
        prompts.answers = {dir.filePath("fruits_recolored.png")};
        QTest::keyClick(&window, Qt::Key_S, Qt::ControlModifier);
        QTRY_COMPARE_WITH_TIMEOUT(saved.count(), 1, 20000);
        QCOMPARE(QFileInfo(prompts.offered).fileName(), QString("fruits_recolored.png"));
        QCOMPARE(QImage(dir.filePath("fruits_recolored.png")).size(), QSize(512, 480));
    }

    // The name and the metadata come from the photo the result was made from.
    void saveTakesTheNameAndMetadataOfTheResultsSource()
    {
        if (QStandardPaths::findExecutable("exiftool").isEmpty())
            QSKIP("exiftool is not installed (apt-get install libimage-exiftool-perl)");
        QTemporaryDir dir;
        const QString first = dir.filePath("first.jpg"), second = dir.filePath("second.jpg");
        QVERIFY(taggedCopy(kSamples + "/home.jpg", first, "First Photographer"));
        QVERIFY(taggedCopy(kSamples + "/fruits.jpg", second, "Second Photographer"));
        MainWindow window(testOptions());
        Prompts prompts;
        window.setSavePrompts(prompts.make());
        QVERIFY(loadPair(window, first));
        window.setParameters(quickParameters());
        QVERIFY(runToResult(window));
        QSignalSpy saved(&window, &MainWindow::resultSaved);
        QSignalSpy failed(&window, &MainWindow::saveFailed);

        window.openSource(second);
        QVERIFY(waitForSource(window, QSize(512, 480)));
        window.saveResultTo(dir.filePath("stale.jpg"));
        QCOMPARE(failed.count(), 1);
        QVERIFY(!QFileInfo::exists(dir.filePath("stale.jpg")));

        // Undo of the load: the inputs are the result's again, and it saves as first's.
        window.undoStack()->undo();
        QVERIFY(waitForSource(window, QSize(512, 384)));
        QVERIFY(markedCurrent(window));
        prompts.answers = {dir.filePath("a.jpg")};
        window.saveAs();
        QTRY_COMPARE_WITH_TIMEOUT(saved.count(), 1, 20000);
        QCOMPARE(QFileInfo(prompts.offered).fileName(), QString("first_recolored.png"));
        QCOMPARE(artistOf(dir.filePath("a.jpg")), QString("First Photographer"));

        // Redo, run: the new result carries the second photo's name and tags.
        window.undoStack()->redo();
        QVERIFY(waitForSource(window, QSize(512, 480)));
        QVERIFY(markedOutOfDate(window));
        QVERIFY(runToResult(window));
        prompts.answers = {dir.filePath("b.jpg")};
        window.saveAs();
        QTRY_COMPARE_WITH_TIMEOUT(saved.count(), 2, 20000);
        QCOMPARE(QFileInfo(prompts.offered).fileName(), QString("second_recolored.png"));
        QCOMPARE(artistOf(dir.filePath("b.jpg")), QString("Second Photographer"));
        QCOMPARE(QImage(dir.filePath("b.jpg")).size(), QSize(512, 480));
    }

    void anotherReferenceADropAndASwapAreMarked()
    {
        MainWindow window(testOptions());
        window.show();
        QVERIFY(loadPair(window));
        window.setParameters(quickParameters());
        QVERIFY(runToResult(window));

        window.openReference(kSamples + "/butterfly.jpg");
        QTRY_VERIFY_WITH_TIMEOUT(markedOutOfDate(window), 20000);
        QVERIFY2(window.resultView()->banner().contains("reference"), qPrintable(window.resultView()->banner()));
        window.undoStack()->undo();
        QTRY_VERIFY_WITH_TIMEOUT(markedCurrent(window), 20000);

        // A file dropped on the source pane.
        QMimeData mime;
        mime.setUrls({QUrl::fromLocalFile(kSamples + "/fruits.jpg")});
        ImageView* pane = window.sourceView();
        const QPoint at = pane->rect().center();
        QDragEnterEvent enter(at, Qt::CopyAction, &mime, Qt::LeftButton, Qt::NoModifier);
        QCoreApplication::sendEvent(pane, &enter);
        QDropEvent drop(QPointF(at), Qt::CopyAction, &mime, Qt::LeftButton, Qt::NoModifier);
        QCoreApplication::sendEvent(pane, &drop);
        QVERIFY(waitForSource(window, QSize(512, 480)));
        QVERIFY(markedOutOfDate(window));
        window.undoStack()->undo();
        QVERIFY(waitForSource(window, QSize(512, 384)));
        QVERIFY(markedCurrent(window));

        window.swapImages();
        QVERIFY(markedOutOfDate(window));
        window.undoStack()->undo();  // swapped back: the very inputs of the result
        QVERIFY(markedCurrent(window));
    }

    // Anything that gives another picture marks it; auto-run and view changes do not.
    void everySettingOfTheLookMarksTheResult()
    {
        MainWindow window(testOptions());
        window.show();
        QVERIFY(loadPair(window));
        const StudioParameters base = quickParameters();
        window.setParameters(base);
        QVERIFY(runToResult(window));
        const std::vector<std::pair<const char*, std::function<void(StudioParameters&)>>> changes = {
            {"strength", [](StudioParameters& p) { p.strength = 0.5; }},
            {"smoothing", [](StudioParameters& p) { p.smoothing = 2.0; }},
            {"palette match", [](StudioParameters& p) { p.smoothing = 1.0, p.paletteMatch = 0.3; }},
            {"preserve luminance", [](StudioParameters& p) { p.preserveLuminance = true; }},
            {"luminance intensity", [](StudioParameters& p) { p.luminanceIntensity = 0.5; }},
            {"colour intensity", [](StudioParameters& p) { p.colorIntensity = 1.5; }},
            {"neutralize", [](StudioParameters& p) { p.neutralize = true; }},
            {"protect skin tones", [](StudioParameters& p) { p.protectSkin = 0.5; }},
            {"protect neutrals", [](StudioParameters& p) { p.protectNeutrals = 0.5; }},
            {"eps", [](StudioParameters& p) { p.eps = 0.05; }},
            {"palette size", [](StudioParameters& p) { p.paletteSize = 256; }},
            {"colour space", [](StudioParameters& p) { p.colorSpace = uot::WorkingSpace::Oklab; }},
            {"adherence", [](StudioParameters& p) { p.balanced = false, p.tau = 0.5; }},
            {"max iterations", [](StudioParameters& p) { p.maxIterations = 20; }},
            {"tolerance", [](StudioParameters& p) { p.tolerance = 1e-3; }},
            {"precision", [](StudioParameters& p) { p.precision = uot::Precision::Fp32; }},
            {"acceleration", [](StudioParameters& p) { p.acceleration = uot::Acceleration::None; }},
            {"reference measure", [](StudioParameters& p) { p.referenceMeasure = uot::ReferenceMeasure::Product; }},
            {"eps scaling", [](StudioParameters& p) { p.epsScalingRatio = 8; }},
        };
        for (const auto& [name, change] : changes) {
            StudioParameters p = base;
            change(p);
            window.setParameters(p);
            QVERIFY2(markedOutOfDate(window), name);
            QVERIFY2(window.resultView()->banner().contains("settings"), name);
            window.setParameters(base);  // back to the result's own settings
            QVERIFY2(markedCurrent(window), name);
        }
        // Undo and redo of a setting.
        StudioParameters stronger = base;
        stronger.strength = 0.7;
        window.setParameters(stronger);
        QVERIFY(markedOutOfDate(window));
        window.undoStack()->undo();
        QVERIFY(markedCurrent(window));
        window.undoStack()->redo();
        QVERIFY(markedOutOfDate(window));
        window.undoStack()->undo();
        // Not the look: auto-run, zoom, split view, fit.
        StudioParameters p = base;
        p.autoRun = true;
        window.setParameters(p);
        QVERIFY(markedCurrent(window));
        p.autoRun = false;
        window.setParameters(p);
        window.resultView()->zoomBy(2.0);
        window.action("splitAction")->trigger();
        window.action("fitAction")->trigger();
        QVERIFY(markedCurrent(window));
    }

    // Auto-run re-maps a strength change by itself: the result is out of date
    // until the new render is there, not when it starts.
    void anAutomaticRemapIsValidOnlyWhenRendered()
    {
        MainWindow window(testOptions());
        window.show();
        QVERIFY(loadPair(window));
        StudioParameters p = quickParameters();
        window.setParameters(p);
        QVERIFY(runToResult(window));
        p.autoRun = true;
        window.setParameters(p);
        QVERIFY(markedCurrent(window));

        QSignalSpy ready(&window, &MainWindow::resultReady);
        bool currentWhileBusy = false;
        connect(&window, &MainWindow::busyChanged, this, [&](bool busy) {
            if (busy && !window.resultOutOfDate()) currentWhileBusy = true;
        });
        p.strength = 0.4;
        window.setParameters(p);
        QVERIFY(markedOutOfDate(window));  // at once, before the re-map starts
        QTRY_VERIFY_WITH_TIMEOUT(window.isRunning() || ready.count() > 0, 20000);
        QTRY_VERIFY_WITH_TIMEOUT(ready.count() >= 1 && !window.isRunning(), 60000);
        QVERIFY(!currentWhileBusy);
        QVERIFY(markedCurrent(window));
        QCOMPARE(window.result().inputs.parameters.strength, 0.4);
    }

    // A result that arrives after its inputs changed (e.g. the last session's
    // images auto-running at start while another source is opened) is shown as
    // out of date, whichever comes first.
    void aResultOfReplacedInputsArrivesOutOfDate()
    {
        MainWindow window(testOptions());
        window.show();
        QVERIFY(loadPair(window));
        window.setParameters(quickParameters());
        QSignalSpy ready(&window, &MainWindow::resultReady);
        window.run();
        window.openSource(kSamples + "/fruits.jpg");
        QVERIFY(waitForSource(window, QSize(512, 480)));
        QTRY_VERIFY_WITH_TIMEOUT(ready.count() >= 1 && !window.isRunning(), 60000);
        QCOMPARE(window.resultImage().size(), QSize(512, 384));  // home.jpg's result
        QVERIFY(markedOutOfDate(window));
    }

    // A solve setting changed while the solve ran: the result is of the old
    // settings, and the next Run is a solve (the window took the new settings
    // for solved and announced a re-map: no iteration count, charts not reset).
    void aSettingChangedDuringASolveIsSolvedAgain()
    {
        MainWindow window(testOptions());
        QVERIFY(loadPair(window));
        StudioParameters p = quickParameters();
        window.setParameters(p);
        QSignalSpy ready(&window, &MainWindow::resultReady);
        window.run();
        p.eps = 0.05;
        window.setParameters(p);  // before the result can arrive: this thread is busy here
        QTRY_VERIFY_WITH_TIMEOUT(ready.count() >= 1 && !window.isRunning(), 60000);
        QCOMPARE(window.result().inputs.parameters.eps, 0.01);
        QVERIFY(markedOutOfDate(window));
        QSignalSpy solves(window.worker(), &SolveWorker::runStarted);
        QSignalSpy again(&window, &MainWindow::resultReady);
        window.run();
        // Shown as a solve (iterations counted), not as a re-map of the eps 0.01 plan.
        QCOMPARE(window.progressBar()->maximum(), p.maxIterations);
        QTRY_VERIFY_WITH_TIMEOUT(again.count() >= 1 && !window.isRunning(), 60000);
        QCOMPARE(solves.count(), 1);
        QVERIFY(markedCurrent(window));
    }

    // After a restart the result pane is empty: no result of an earlier session
    // is shown next to whatever the session reopens.
    void aRestartShowsNoEarlierResult()
    {
        {
            MainWindow window(testOptions());
            QVERIFY(loadPair(window));
            window.setParameters(quickParameters());
            QVERIFY(runToResult(window));
            window.close();
        }
        MainWindowOptions options = testOptions();
        options.loadSamplesIfEmpty = true;  // reopens the last session's images
        MainWindow again(options);
        QVERIFY(loaded(again));
        QVERIFY(!again.hasResult());
        QVERIFY(again.resultView()->image().isNull());
        QVERIFY(!again.action("saveAction")->isEnabled());
        QVERIFY(!again.resultOutOfDate());
    }

    void exportLutIsRefusedWhileOutOfDate()
    {
        QTemporaryDir dir;
        MainWindow window(testOptions());
        QVERIFY(loadPair(window));
        window.setParameters(quickParameters());
        QVERIFY(runToResult(window));
        StudioParameters p = quickParameters();
        p.strength = 0.3;
        window.setParameters(p);
        QSignalSpy failed(window.lutActions(), &LutActions::exportFailed);
        window.lutActions()->exportTo(dir.filePath("look.cube"), 17);
        QCOMPARE(failed.count(), 1);
        QVERIFY2(failed.first().first().toString().contains("out of date"), qPrintable(failed.first().first().toString()));
        QTest::qWait(300);
        QVERIFY(!QFileInfo::exists(dir.filePath("look.cube")));
    }

    // The mark is visible: an amber band across the top of the result pane.
    void theMarkIsDrawnOnThePane()
    {
        MainWindow window(testOptions());
        window.resize(1280, 720);
        window.show();
        QVERIFY(QTest::qWaitForWindowExposed(&window));
        QVERIFY(loadPair(window));
        window.setParameters(quickParameters());
        QVERIFY(runToResult(window));
        auto amberRows = [&] {
            const QImage shot = window.resultView()->grab().toImage();
            int rows = 0;
            for (int y = 0; y < shot.height() / 4; ++y) {
                const QColor c = shot.pixelColor(shot.width() / 2, y);
                if (c.red() > 150 && c.green() > 70 && c.green() < 120 && c.blue() < 40) ++rows;
            }
            return rows;
        };
        QCOMPARE(amberRows(), 0);
        StudioParameters p = quickParameters();
        p.strength = 0.2;
        window.setParameters(p);
        QVERIFY2(amberRows() >= 20, qPrintable(QString::number(amberRows())));
    }
};

QTEST_MAIN(TestStaleResult)
#include "test_stale_result.moc"
