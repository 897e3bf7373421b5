// The studio as a photographer uses it (issue 16's defects 2-13), driven with
// simulated keys, clicks and wheel turns on the offscreen platform. Each test
// names the defect it guards against.

#include <QAction>
#include <QCheckBox>
#include <QDockWidget>
#include <QDoubleSpinBox>
#include <QFile>
#include <QLabel>
#include <QProgressBar>
#include <QPushButton>
#include <QScrollArea>
#include <QScrollBar>
#include <QSettings>
#include <QSignalSpy>
#include <QSlider>
#include <QTemporaryDir>
#include <QTest>
#include <QToolButton>
#include <QWheelEvent>

#include <cmath>

#include "tests/ui/studio_test_options.h"
#include "tests/support/relocatable_path.h"
#include "ui/image_view.h"
#include "ui/main_window.h"
#include "ui/parameters_panel.h"
#include "ui/progress_estimate.h"
#include "ui/statistics_panel.h"

using namespace uot::ui;

namespace {

const QString kSamples = uot::test::relocatablePath("UOT_SAMPLES_DIR", QStringLiteral(UOT_SAMPLES_DIR));

StudioParameters quick()
{
    StudioParameters p;
    p.paletteSize = 128;
    p.maxIterations = 200;
    p.tolerance = 1e-4;
    p.eps = 0.01;
    p.precision = "fp64";
    p.smoothing = 0;
    return p;
}

StudioParameters endless()
{
    StudioParameters p = quick();
    p.paletteSize = 512;
    p.maxIterations = 100000;
    p.tolerance = 0;
    return p;
}

QByteArray bytesOf(const QString& path)
{
    QFile f(path);
    return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
}

// Records what Save As asked, answering from a script.
struct ScriptedPrompts {
    QStringList pathAnswers;  // one per choosePath call; none left = the user cancels
    QString filterAnswer;     // empty: keep the offered filter
    bool replace = true;
    int pathCalls = 0, replaceCalls = 0, optionsCalls = 0;
    QString offeredPath, offeredFilter;

    SavePrompts prompts()
    {
        SavePrompts p;
        p.choosePath = [this](QString& path, QString& filter) {
            ++pathCalls;
            offeredPath = path;
            offeredFilter = filter;
            if (pathAnswers.isEmpty()) return false;
            path = pathAnswers.takeFirst();
            if (!filterAnswer.isEmpty()) filter = filterAnswer;
            return true;
        };
        p.confirmReplace = [this](const QString&) {
            ++replaceCalls;
            return replace;
        };
        p.chooseOptions = [this](const QString&, uot::WriteOptions&) {
            ++optionsCalls;
            return true;
        };
        return p;
    }
};

bool loadPair(MainWindow& window, const QString& source = kSamples + "/home.jpg")
{
    window.openSource(source);
    window.openReference(kSamples + "/starry_night.jpg");
    return QTest::qWaitFor([&] { return window.hasSource() && window.hasReference() && !window.isLoading(); }, 20000);
}

bool runToResult(MainWindow& window)
{
    QSignalSpy ready(&window, &MainWindow::resultReady);
    window.run();
    return QTest::qWaitFor([&] { return ready.count() >= 1 && !window.isRunning(); }, 60000);
}

bool showActive(MainWindow& window, QSize size = {1280, 720})
{
    window.resize(size);
    window.show();
    window.activateWindow();
    return QTest::qWaitForWindowActive(&window);
}

// True when `w` is shown and lies entirely inside the window (no scrolling needed).
bool fullyVisibleIn(QWidget* w, QWidget* window)
{
    if (!w->isVisible()) return false;
    const QRect r(w->mapTo(window, QPoint(0, 0)), w->size());
    return window->rect().contains(r);
}

// Turns the wheel over `target`; true when the target took the event. Qt hands
// a real (spontaneous) wheel event that a widget leaves unaccepted on to its
// parent, here the panel's scroll area; a synthesized one stops at the target,
// so the tests check acceptance and scroll the area themselves.
bool wheel(QWidget* target, int notches)
{
    const QPointF at = QRectF(target->rect()).center();
    QWheelEvent event(at, target->mapToGlobal(at), QPoint(), QPoint(0, 120 * notches), Qt::NoButton, Qt::NoModifier,
                      Qt::NoScrollPhase, false);
    QApplication::sendEvent(target, &event);
    return event.isAccepted();
}

}  // namespace

class TestPhotographerWorkflow : public QObject {
    Q_OBJECT
private:
    QTemporaryDir m_settingsDir;

private slots:
    void initTestCase()
    {
        QVERIFY(m_settingsDir.isValid());
        QCoreApplication::setOrganizationName("UOT-test");
        QCoreApplication::setApplicationName("studio-workflow-test");
        QSettings::setDefaultFormat(QSettings::IniFormat);
        QSettings::setPath(QSettings::IniFormat, QSettings::UserScope, m_settingsDir.path());
    }

    void init() { QSettings().clear(); }

    // Defect 2: Ctrl+S wrote another picture's result over an earlier file.
    void ctrlSSavesOnlyToTheFileOfThisSource()
    {
        QTemporaryDir dir;
        MainWindow window(testOptions());
        ScriptedPrompts script;
        script.pathAnswers = {dir.filePath("x.png")};
        window.setSavePrompts(script.prompts());
        QVERIFY(showActive(window));
        QVERIFY(loadPair(window));
        window.setParameters(quick());
        QVERIFY(runToResult(window));

        QSignalSpy saved(&window, &MainWindow::resultSaved);
        QTest::keyClick(&window, Qt::Key_S, Qt::ControlModifier);  // nothing saved yet: Save As
        QTRY_COMPARE_WITH_TIMEOUT(saved.count(), 1, 20000);
        QCOMPARE(script.pathCalls, 1);
        QCOMPARE(window.savePath(), dir.filePath("x.png"));
        QCOMPARE(QImage(dir.filePath("x.png")).size(), QSize(512, 384));

        QTest::keyClick(&window, Qt::Key_S, Qt::ControlModifier);  // same picture: straight to x.png
        QTRY_COMPARE_WITH_TIMEOUT(saved.count(), 2, 20000);
        QCOMPARE(script.pathCalls, 1);

        window.openSource(kSamples + "/fruits.jpg");  // another picture
        QTRY_VERIFY_WITH_TIMEOUT(!window.isLoading() && window.sourceView()->image().size() == QSize(512, 480), 20000);
        QVERIFY(window.savePath().isEmpty());
        QVERIFY(runToResult(window));
        QTest::keyClick(&window, Qt::Key_S, Qt::ControlModifier);  // asks (the script cancels)
        QCOMPARE(script.pathCalls, 2);
        QTest::qWait(200);
        QCOMPARE(saved.count(), 2);
        QCOMPARE(QImage(dir.filePath("x.png")).size(), QSize(512, 384));  // the first picture's result is intact
    }

    // Defect 5: Save As onto the source asked "Replace?" and for options, then refused in CLI words.
    void saveAsOntoTheSourceIsRefusedBeforeAnyQuestion()
    {
        QTemporaryDir dir;
        const QString source = dir.filePath("home.jpg");
        QVERIFY(QFile::copy(kSamples + "/home.jpg", source));
        const QByteArray before = bytesOf(source);
        MainWindow window(testOptions());
        ScriptedPrompts script;
        script.pathAnswers = {source};  // then cancels when the dialog opens again
        window.setSavePrompts(script.prompts());
        QVERIFY(loadPair(window, source));
        window.setParameters(quick());
        QVERIFY(runToResult(window));
        QSignalSpy failed(&window, &MainWindow::saveFailed);
        window.saveAs();
        QCOMPARE(failed.count(), 1);
        const QString message = failed.at(0).at(0).toString();
        QVERIFY2(message.contains("source image") && message.contains("home.jpg"), qPrintable(message));
        QVERIFY2(!message.contains("--") && !message.contains("pass "), qPrintable(message));
        QCOMPARE(script.replaceCalls, 0);
        QCOMPARE(script.optionsCalls, 0);
        QCOMPARE(script.pathCalls, 2);  // the dialog opened again for another name
        QCOMPARE(bytesOf(source), before);
    }

    // Defect 8: Ctrl+Shift+S did nothing and Save As showed no shortcut; Ctrl+= did not zoom; Strength had no number.
    void shortcutsAndStrengthValueAreVisible()
    {
        MainWindow window(testOptions());
        ScriptedPrompts script;
        window.setSavePrompts(script.prompts());
        QVERIFY(showActive(window));
        QCOMPARE(window.action("saveAsAction")->shortcut(), QKeySequence(QStringLiteral("Ctrl+Shift+S")));
        QCOMPARE(window.action("saveAction")->shortcut(), QKeySequence(QStringLiteral("Ctrl+S")));
        QVERIFY(window.action("zoomInAction")->shortcuts().contains(QKeySequence(QStringLiteral("Ctrl+="))));
        QVERIFY(loadPair(window));
        window.setParameters(quick());
        QVERIFY(runToResult(window));
        QTest::keyClick(&window, Qt::Key_S, Qt::ControlModifier | Qt::ShiftModifier);
        QCOMPARE(script.pathCalls, 1);

        const double zoom = window.resultView()->zoom();
        QTest::keyClick(&window, Qt::Key_Equal, Qt::ControlModifier);
        QVERIFY(std::abs(window.resultView()->zoom() - zoom * 1.25) < 1e-9);
        QCOMPARE(window.resultView()->zoomText(), QStringLiteral("%1 %").arg(std::lround(zoom * 125)));

        QSlider* strength = window.parametersPanel()->strengthSlider();
        strength->setValue(40);
        QCOMPARE(window.parametersPanel()->strengthValueLabel()->text(), QStringLiteral("40 %"));
        QVERIFY(window.parametersPanel()->strengthValueLabel()->isVisible());
    }

    // Defect 12: the save dialog started in the working directory and forgot folder and format.
    void saveAsRemembersFolderAndFormat()
    {
        QTemporaryDir dir;
        {
            MainWindow window(testOptions());
            ScriptedPrompts script;
            script.pathAnswers = {dir.filePath("first")};  // no suffix: the chosen format's is added
            script.filterAnswer = "JPEG (*.jpg *.jpeg)";
            window.setSavePrompts(script.prompts());
            QVERIFY(loadPair(window));
            window.setParameters(quick());
            QVERIFY(runToResult(window));
            QSignalSpy saved(&window, &MainWindow::resultSaved);
            window.saveAs();
            QTRY_COMPARE_WITH_TIMEOUT(saved.count(), 1, 20000);
            QCOMPARE(saved.at(0).at(0).toString(), dir.filePath("first.jpg"));
        }
        MainWindow again(testOptions());
        ScriptedPrompts script;
        again.setSavePrompts(script.prompts());
        QVERIFY(loadPair(again));
        again.setParameters(quick());
        QVERIFY(runToResult(again));
        again.saveAs();
        QCOMPARE(script.pathCalls, 1);
        QCOMPARE(QFileInfo(script.offeredPath).absolutePath(), QFileInfo(dir.path()).absoluteFilePath());
        QCOMPARE(QFileInfo(script.offeredPath).fileName(), QStringLiteral("home_recolored.jpg"));
        QCOMPARE(script.offeredFilter, QStringLiteral("JPEG (*.jpg *.jpeg)"));
    }

    // Defect 3: the wheel changed tolerance and iterations while scrolling the panel.
    void wheelScrollsThePanelAndLeavesUnfocusedFieldsAlone()
    {
        MainWindow window(testOptions());
        QVERIFY(showActive(window, {1000, 560}));  // small enough that the unfolded panel scrolls
        ParametersPanel* panel = window.parametersPanel();
        panel->setAdvancedVisible(true);
        auto* scroll = qobject_cast<QScrollArea*>(window.dock("parametersDock")->widget());
        QVERIFY(scroll);
        QTRY_VERIFY(scroll->verticalScrollBar()->maximum() > 0);
        QDoubleSpinBox* tolerance = panel->toleranceBox();
        scroll->ensureWidgetVisible(tolerance);
        QTest::qWait(50);
        const double before = tolerance->value();
        QSignalSpy changed(panel, &ParametersPanel::parametersChanged);
        QVERIFY(!tolerance->hasFocus());
        for (QWidget* field : std::initializer_list<QWidget*>{tolerance, panel->iterationsBox(), panel->smoothingBox(),
                                                              panel->strengthSlider()}) {
            QVERIFY2(!wheel(field, 1), field->metaObject()->className());   // left for the scroll area
            QVERIFY2(!wheel(field, -1), field->metaObject()->className());
        }
        QCOMPARE(tolerance->value(), before);
        QCOMPARE(changed.count(), 0);
        const int scrolled = scroll->verticalScrollBar()->value();
        wheel(scroll->viewport(), scrolled > 0 ? 1 : -1);  // where Qt sends it on: the panel scrolls
        QVERIFY(scroll->verticalScrollBar()->value() != scrolled);

        tolerance->setFocus();  // clicked into: the wheel steps the value
        QTRY_VERIFY(tolerance->hasFocus());
        QVERIFY(wheel(tolerance, 1));
        QVERIFY(tolerance->value() > before);
        QCOMPARE(changed.count(), 1);
    }

    // Defects 4 and 7: Run, Strength and Preserve luminance were below the fold; charts took 40 %; no Reset Layout.
    void firstStartShowsThePhotographerPanelAtPhotoSizes_data()
    {
        QTest::addColumn<QSize>("size");
        QTest::newRow("1280x720") << QSize(1280, 720);
        QTest::newRow("1066x666") << QSize(1066, 666);
        QTest::newRow("1600x1000") << QSize(1600, 1000);
    }
    void firstStartShowsThePhotographerPanelAtPhotoSizes()
    {
        QFETCH(QSize, size);
        MainWindow window(testOptions());
        QVERIFY(showActive(window, size));
        ParametersPanel* panel = window.parametersPanel();
        for (QWidget* w : std::initializer_list<QWidget*>{panel->runButton(), panel->strengthSlider(),
                                                          panel->strengthValueLabel(), panel->luminanceBox(),
                                                          panel->smoothingBox(), panel->advancedToggle()})
            QVERIFY2(fullyVisibleIn(w, &window), qPrintable(w->metaObject()->className()));
        QVERIFY(!panel->advancedSettings()->isVisible());
        for (const char* name : {"statisticsDock", "chartsDock", "comparisonDock"})
            QVERIFY2(window.dock(name)->isHidden(), name);
        // The images get most of the window.
        QVERIFY(window.resultView()->width() * window.resultView()->height() > size.width() * size.height() / 3);

        // One click opens the advanced panels; Reset Layout puts everything back.
        QAction* advanced = window.action("advancedPanelsAction");
        advanced->trigger();
        QVERIFY(window.dock("statisticsDock")->isVisible());
        QVERIFY(window.dock("chartsDock")->isVisible());
        QTest::mouseClick(panel->advancedToggle(), Qt::LeftButton);
        QVERIFY(panel->advancedSettings()->isVisible());
        window.action("resetLayoutAction")->trigger();
        QVERIFY(window.dock("statisticsDock")->isHidden());
        QVERIFY(window.dock("chartsDock")->isHidden());
        QVERIFY(!advanced->isChecked());
        QVERIFY(!panel->advancedSettings()->isVisible());
        QVERIFY(fullyVisibleIn(panel->runButton(), &window));
    }

    // Defect 6: Swap was forgotten at the next start, and sat on Ctrl+W (Close elsewhere).
    void swapIsRememberedAndNotOnCtrlW()
    {
        const QKeySequence close(QStringLiteral("Ctrl+W"));
        {
            MainWindow window(testOptions());
            for (QAction* a : window.findChildren<QAction*>()) QVERIFY2(!a->shortcuts().contains(close), qPrintable(a->text()));
            QVERIFY(!window.action("swapAction")->shortcut().isEmpty());
            QVERIFY(loadPair(window));
            window.action("swapAction")->trigger();
            QCOMPARE(window.sourceView()->image().size(), QSize(752, 600));
        }
        MainWindowOptions options = testOptions();
        options.loadSamplesIfEmpty = true;  // reopens the last session
        MainWindow again(options);
        QTRY_VERIFY_WITH_TIMEOUT(again.hasSource() && again.hasReference() && !again.isLoading(), 20000);
        QCOMPARE(again.sourceView()->image().size(), QSize(752, 600));     // starry_night.jpg
        QCOMPARE(again.referenceView()->image().size(), QSize(512, 384));  // home.jpg
    }

    // Defect 1 (status bar part): the source's bit depth and colour profile are shown.
    void statusBarShowsBitDepthAndProfile()
    {
        MainWindow window(testOptions());
        QVERIFY(showActive(window));
        QVERIFY(loadPair(window));
        const QString info = window.imageInfoLabel()->text();
        QVERIFY2(info.contains("8-bit") && info.contains("sRGB (assumed)"), qPrintable(info));  // home.jpg has no profile
        QVERIFY(window.imageInfoLabel()->isVisible());
    }

    // Defect 9: the statistics kept the last solve's status (e.g. "cancelled") after a re-map.
    void statisticsRefreshAfterARemap()
    {
        MainWindow window(testOptions());
        QVERIFY(loadPair(window));
        window.setParameters(quick());
        QVERIFY(runToResult(window));
        const QString solved = window.statisticsPanel()->text("status");
        QVERIFY2(solved.contains("iterations"), qPrintable(solved));
        StudioParameters p = quick();
        p.strength = 0.5;  // the earlier solve's settings: a re-map
        window.setParameters(p);
        QSignalSpy runs(window.worker(), &SolveWorker::runStarted);
        QVERIFY(runToResult(window));
        QCOMPARE(runs.count(), 0);
        const QString status = window.statisticsPanel()->text("status");
        QVERIFY2(status != solved && status.contains("re-mapped") && status.contains("50 %"), qPrintable(status));
    }

    // Defect 13: the progress bar only said "busy".
    void progressBarCountsIterationsAndShowsTheError()
    {
        MainWindow window(testOptions());
        QVERIFY(showActive(window));
        QVERIFY(loadPair(window));
        window.setParameters(endless());
        QSignalSpy progress(window.worker(), &SolveWorker::progress);
        window.run();
        QTRY_VERIFY_WITH_TIMEOUT(progress.count() >= 3, 60000);
        QProgressBar* bar = window.progressBar();
        QVERIFY(bar->isVisible());
        QCOMPARE(bar->maximum(), 100000);
        QVERIFY(bar->value() > 0);
        const QString text = bar->text();
        QVERIFY2(text.contains(QStringLiteral("iteration %1 of 100000").arg(bar->value())), qPrintable(text));
        QVERIFY2(text.contains("error"), qPrintable(text));
        QVERIFY2(text.contains("left"), qPrintable(text));
        window.cancel();
        QTRY_VERIFY_WITH_TIMEOUT(!window.isRunning(), 20000);
    }

    // The time-left estimate against a closed form: error = 0.9^k, 10 ms per iteration.
    void timeLeftExtrapolatesGeometricConvergence_data()
    {
        QTest::addColumn<int>("maxIterations");
        QTest::addColumn<double>("tolerance");
        QTest::addColumn<double>("expectedIterationsLeft");
        const double toTolerance = (std::log(1e-4) - std::log(std::pow(0.9, 20))) / std::log(0.9);  // 67.4
        QTest::newRow("tolerance first") << 1000 << 1e-4 << toTolerance;
        QTest::newRow("limit first") << 50 << 1e-4 << 30.0;
        QTest::newRow("no tolerance") << 200 << 0.0 << 180.0;
    }
    void timeLeftExtrapolatesGeometricConvergence()
    {
        QFETCH(int, maxIterations);
        QFETCH(double, tolerance);
        QFETCH(double, expectedIterationsLeft);
        ProgressEstimate estimate;
        estimate.begin(maxIterations, tolerance);
        for (int k : {10, 15, 20}) {
            uot::SolveProgress p;
            p.iteration = k;
            p.error = std::pow(0.9, k);
            p.elapsedSeconds = 0.01 * k;
            estimate.add(p);
        }
        QVERIFY(std::abs(estimate.iterationsLeft() - expectedIterationsLeft) < 1e-9);
        QVERIFY(std::abs(estimate.secondsLeft() - 0.01 * expectedIterationsLeft) < 1e-9);
        QVERIFY(estimate.text().startsWith(QStringLiteral("iteration 20 of %1").arg(maxIterations)));
    }

    // Defect 11: zoomed in, the split divider and its labels scrolled off; no zoom %.
    // Found by trying the studio at 1280x720 under Xvfb: showing the Advanced
    // Panels (Statistics and Charts) grew the window to about 810 pixels, past
    // the bottom of a 720-pixel screen, because the docks would not shrink.
    void advancedPanelsFitA720PixelWindow()
    {
        MainWindow window(testOptions());
        window.resize(1280, 720);
        window.show();
        QVERIFY(QTest::qWaitForWindowExposed(&window));
        window.setAdvancedPanelsVisible(true);
        QTest::qWait(200);
        QVERIFY2(window.minimumSizeHint().height() <= 720 && window.height() <= 720,
                 qPrintable(QStringLiteral("window %1 px tall, at least %2 px")
                                .arg(window.height())
                                .arg(window.minimumSizeHint().height())));
    }

    void dividerStaysOnScreenWhenZoomed()
    {
        ImageView view(QStringLiteral("empty"));
        view.resize(300, 200);
        QImage image(600, 400, QImage::Format_RGB32);
        image.fill(Qt::red);
        QImage before(600, 400, QImage::Format_RGB32);
        before.fill(Qt::blue);
        view.setImage(image);
        view.setBeforeImage(before);
        view.setSplitEnabled(true);
        view.setSplitPosition(0.5);
        view.show();
        QVERIFY(QTest::qWaitForWindowExposed(&view));
        for (double factor : {2.0, 8.0, 30.0}) {
            view.zoomBy(factor);
            QVERIFY(view.dividerX() > 0 && view.dividerX() < view.width());
            QCOMPARE(view.zoomText(), QStringLiteral("%1 %").arg(std::lround(view.zoom() * 100)));
            // What is drawn: blue (before) left of the divider, red (after) right of it.
            const QImage shot = view.grab().toImage();
            const int x = int(view.dividerX());
            QCOMPARE(QColor(shot.pixel(std::max(0, x - 20), 100)), QColor(Qt::blue));
            QCOMPARE(QColor(shot.pixel(std::min(view.width() - 1, x + 20), 100)), QColor(Qt::red));
            view.fit();
        }
    }
};

QTEST_MAIN(TestPhotographerWorkflow)
#include "test_photographer_workflow.moc"
