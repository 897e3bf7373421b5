// The studio as a photographer uses it (issue 16's defects 2-13), driven with
// simulated keys, clicks and wheel turns on the offscreen platform. Each test
// names the defect it guards against.

#include <QAction>
#include <QCheckBox>
#include <QDir>
#include <QDockWidget>
#include <QFileInfo>
#include <QFontMetrics>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QDoubleSpinBox>
#include <QFile>
#include <QLabel>
#include <QProcess>
#include <QProgressBar>
#include <QPushButton>
#include <QScrollArea>
#include <QScrollBar>
#include <QSettings>
#include <QSignalSpy>
#include <QSlider>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTest>
#include <QToolButton>
#include <QWheelEvent>

#include <cmath>

#include "tests/ui/studio_test_options.h"
#include "tests/support/relocatable_path.h"
#include "ui/comparison_view.h"
#include "ui/elided_label.h"
#include "ui/image_view.h"
#include "ui/main_window.h"
#include "ui/parameters_panel.h"
#include "ui/progress_estimate.h"
#include "ui/statistics_panel.h"

using namespace uot::ui;

namespace {

const QString kSamples = uot::test::relocatablePath("UOT_SAMPLES_DIR", QStringLiteral(UOT_SAMPLES_DIR));


StudioParameters endless()
{
    StudioParameters p = quickParameters();
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
        p.chooseOptions = [this](const QString&, uot::ui::StudioSaveOptions&) {
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
        useIsolatedSettings(m_settingsDir.path(), "studio-workflow-test");
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
        window.setParameters(quickParameters());
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
        window.setParameters(quickParameters());
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
        window.setParameters(quickParameters());
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
            window.setParameters(quickParameters());
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
        again.setParameters(quickParameters());
        QVERIFY(runToResult(again));
        again.saveAs();
        QCOMPARE(script.pathCalls, 1);
        QCOMPARE(QFileInfo(script.offeredPath).absolutePath(), QFileInfo(dir.path()).absoluteFilePath());
        QCOMPARE(QFileInfo(script.offeredPath).fileName(), QStringLiteral("home_recolored.jpg"));
        QCOMPARE(script.offeredFilter, QStringLiteral("JPEG (*.jpg *.jpeg)"));
    }

    // Defect 12: the open dialogs started at "/" and Save As in the working directory.
    // Each starts in the folder it was last used in, else the current image's folder;
    // never in a folder that does not exist.
    void openAndSaveDialogsStartInTheLastFolderOrTheImages()
    {
        QTemporaryDir dir;
        const QString picked = dir.filePath("picked.jpg");
        QVERIFY(QFile::copy(kSamples + "/fruits.jpg", picked));
        const QString samples = QFileInfo(kSamples).absoluteFilePath();
        QStringList offered;
        QStringList answers;
        auto prompt = [&](const QString&, const QString& folder) {
            offered << folder;
            return answers.isEmpty() ? QString() : answers.takeFirst();
        };
        {
            MainWindow window(testOptions());
            window.setOpenPrompt(prompt);
            // Nothing open, nothing remembered: an existing folder, not "/" nor the working directory.
            window.action("openSourceAction")->trigger();
            QCOMPARE(offered.size(), 1);
            QVERIFY2(QFileInfo(offered[0]).isDir() && offered[0] != "/", qPrintable(offered[0]));
            QVERIFY(offered[0] != QDir::currentPath() || QDir::currentPath() == QDir::homePath());

            QVERIFY(loadPair(window));
            window.action("openSourceAction")->trigger();  // the source's folder
            window.action("openReferenceAction")->trigger();  // the reference's folder
            QCOMPARE(offered.mid(1), (QStringList{samples, samples}));

            answers = {picked};
            window.action("openSourceAction")->trigger();  // chooses a file elsewhere
            QTRY_VERIFY_WITH_TIMEOUT(!window.isLoading() && window.sourceView()->image().size() == QSize(512, 480), 20000);
            window.action("openSourceAction")->trigger();  // starts where it was last used
            QCOMPARE(offered.last(), QFileInfo(dir.path()).absoluteFilePath());
            window.action("openReferenceAction")->trigger();  // the reference dialog keeps its own folder
            QCOMPARE(offered.last(), samples);

            // Save As: the source's folder when nothing is remembered, not the working directory.
            ScriptedPrompts script;
            window.setSavePrompts(script.prompts());
            window.setParameters(quickParameters());
            QVERIFY(runToResult(window));
            window.saveAs();
            QCOMPARE(script.pathCalls, 1);
            QCOMPARE(QFileInfo(script.offeredPath).absolutePath(), QFileInfo(dir.path()).absoluteFilePath());
            QCOMPARE(QFileInfo(script.offeredPath).fileName(), QStringLiteral("picked_recolored.png"));
        }
        MainWindow again(testOptions());  // the next session remembers the folder
        again.setOpenPrompt(prompt);
        again.action("openSourceAction")->trigger();
        QCOMPARE(offered.last(), QFileInfo(dir.path()).absoluteFilePath());
        // A remembered folder that is gone falls back to an existing one.
        QSettings().setValue("dialogs/source/folder", dir.filePath("gone"));
        again.action("openSourceAction")->trigger();
        QVERIFY2(QFileInfo(offered.last()).isDir() && offered.last() != "/", qPrintable(offered.last()));
    }

    // Defect 7: the Comparison panel reopened at half the window height (its charts asked
    // for so much, and Qt gives a new dock half), and there was no Reset Layout. It takes about a third,
    // however it is opened, keeps its height when closed and reopened, and Reset Layout
    // brings back the first-start layout.
    void comparisonDockTakesAThirdAndResetLayoutRestoresIt_data()
    {
        QTest::addColumn<QSize>("size");
        QTest::newRow("1280x720") << QSize(1280, 720);
        QTest::newRow("1600x1000") << QSize(1600, 1000);
    }
    void comparisonDockTakesAThirdAndResetLayoutRestoresIt()
    {
        QFETCH(QSize, size);
        MainWindow window(testOptions());
        QVERIFY(showActive(window, size));
        QDockWidget* dock = window.dock("comparisonDock");
        QAction* toggle = dock->toggleViewAction();
        // About a third (0.36 leaves room for the window's own height, which the platform may round).
        const auto atMostAThird = [&] { return dock->height() > 0 && dock->height() <= window.height() * 36 / 100; };
        const auto heights = [&] { return QStringLiteral("dock %1 of %2").arg(dock->height()).arg(window.height()); };
        toggle->trigger();  // View > Comparison
        QTRY_VERIFY(dock->isVisible());
        QTest::qWait(50);
        QVERIFY2(atMostAThird(), qPrintable(heights()));
        const int first = dock->height();
        toggle->trigger();
        QTRY_VERIFY(dock->isHidden());
        toggle->trigger();
        QTRY_VERIFY(dock->isVisible());
        QTest::qWait(50);
        QCOMPARE(dock->height(), first);
        // Reset Layout: hidden again; opened by Compare, at most a third again.
        window.action("resetLayoutAction")->trigger();
        QVERIFY(dock->isHidden());
        QVERIFY(window.dock("chartsDock")->isHidden());
        window.compare();
        QTRY_VERIFY(dock->isVisible());
        QTest::qWait(50);
        QVERIFY2(atMostAThird(), qPrintable(heights()));
        window.cancel();
        // The images keep most of the window.
        QVERIFY(window.resultView()->height() > window.height() / 3);
    }

    // Defect 4 (tail): Statistics values were clipped without "…". A value longer than
    // its column ends in "…" and the tooltip holds it whole; a short one is shown as is.
    void longStatisticsValuesEndInAnEllipsis()
    {
        StatisticsPanel panel;
        panel.resize(300, 700);
        panel.show();
        QVERIFY(QTest::qWaitForWindowExposed(&panel));
        const QString token = QStringLiteral("unavailable:perf_event_paranoid=4_forbids_cache_counters_") + QString(40, 'x');
        const QString long_ = QStringLiteral("NOT converged: cap of 5000 iterations reached, error 0.0137 > tolerance 1e-05 - ") +
                              token + QStringLiteral(" and more words after it ") + QString(60, 'y');
        panel.setStatus(long_);
        QApplication::processEvents();
        const ElidedLabel* label = panel.valueLabel("status");
        QVERIFY(label);
        QCOMPARE(panel.text("status"), long_);
        const QString shown = label->text();
        QVERIFY2(shown.endsWith(QStringLiteral("…")), qPrintable(shown));
        QVERIFY(label->isElided());
        QVERIFY2(label->toolTip().contains(long_), qPrintable(label->toolTip()));
        const QFontMetrics fm(label->font());
        for (const QString& line : shown.split('\n'))
            QVERIFY2(fm.horizontalAdvance(line) <= label->contentsRect().width(), qPrintable(line));
        QVERIFY(label->geometry().right() <= panel.width());
        // Wider: more of it shows; a short value is not elided and its tooltip only explains.
        panel.setStatus(QStringLiteral("running"));
        QApplication::processEvents();
        QCOMPARE(label->text(), QStringLiteral("running"));
        QVERIFY(!label->isElided());
        QVERIFY(!label->toolTip().contains(QStringLiteral("running")));
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

    // Defect 1 (studio part): EXIF/XMP were dropped on save and no profile was embedded.
    // Tags written by exiftool into the source come back out of File > Save, read by
    // exiftool, with an sRGB profile (the pixels are sRGB).
    void saveKeepsTheSourceTagsAndEmbedsSrgb()
    {
        if (QStandardPaths::findExecutable("exiftool").isEmpty())
            QSKIP("exiftool is not installed (apt-get install libimage-exiftool-perl)");
        QTemporaryDir dir;
        const QString source = dir.filePath("tagged.jpg");
        QVERIFY(QFile::copy(kSamples + "/home.jpg", source));
        QFile::setPermissions(source, QFile::ReadOwner | QFile::WriteOwner);
        QProcess tag;
        tag.start("exiftool", {"-overwrite_original", "-EXIF:Artist=Ansel Test", "-XMP-dc:Creator=Ansel Test",
                               "-Copyright=CC-BY test", source});
        QVERIFY(tag.waitForFinished(60000) && tag.exitCode() == 0);
        MainWindow window(testOptions());
        QVERIFY(loadPair(window, source));
        window.setParameters(quickParameters());
        QVERIFY(runToResult(window));
        QSignalSpy saved(&window, &MainWindow::resultSaved);
        const QString output = dir.filePath("out.jpg");
        window.saveResultTo(output);
        QTRY_COMPARE_WITH_TIMEOUT(saved.count(), 1, 20000);
        QProcess read;
        read.start("exiftool", {"-j", "-Artist", "-Creator", "-Copyright", "-ProfileDescription", output});
        QVERIFY(read.waitForFinished(60000) && read.exitCode() == 0);
        const QJsonObject tags = QJsonDocument::fromJson(read.readAllStandardOutput()).array().first().toObject();
        QCOMPARE(tags.value("Artist").toString(), QStringLiteral("Ansel Test"));
        QCOMPARE(tags.value("Creator").toString(), QStringLiteral("Ansel Test"));
        QCOMPARE(tags.value("Copyright").toString(), QStringLiteral("CC-BY test"));
        QVERIFY2(tags.value("ProfileDescription").toString().contains("sRGB"),
                 qPrintable(tags.value("ProfileDescription").toString()));
    }

    // Defect 9: the statistics kept the last solve's status (e.g. "cancelled") after a re-map.
    void statisticsRefreshAfterARemap()
    {
        MainWindow window(testOptions());
        QVERIFY(loadPair(window));
        window.setParameters(quickParameters());
        QVERIFY(runToResult(window));
        const QString solved = window.statisticsPanel()->text("status");
        QVERIFY2(solved.contains("iterations"), qPrintable(solved));
        StudioParameters p = quickParameters();
        p.strength = 0.5;  // the earlier solve's settings: a re-map
        window.setParameters(p);
        QSignalSpy runs(window.worker(), &SolveWorker::runStarted);
        QVERIFY(runToResult(window));
        QCOMPARE(runs.count(), 0);
        const QString status = window.statisticsPanel()->text("status");
        QVERIFY2(status != solved && status.contains("re-mapped") && status.contains("50 %"), qPrintable(status));
    }

    // The colour controls in the panel (issue 23): colour intensity 0 re-maps the
    // last solve (no new run) into a grey picture, and the re-map is what is shown.
    void colourControlsRemapTheLastSolve()
    {
        MainWindow window(testOptions());
        QVERIFY(loadPair(window));
        window.setParameters(quickParameters());
        QVERIFY(runToResult(window));
        ParametersPanel* panel = window.parametersPanel();
        QVERIFY(!panel->colorIntensitySlider()->isVisibleTo(panel));  // folded away at the defaults
        panel->colourControlsToggle()->click();
        QVERIFY(panel->colorIntensitySlider()->isVisibleTo(panel));
        panel->colorIntensitySlider()->setValue(0);
        QCOMPARE(window.parameters().colorIntensity, 0.0);
        QSignalSpy runs(window.worker(), &SolveWorker::runStarted);
        QVERIFY(runToResult(window));
        QCOMPARE(runs.count(), 0);
        QVERIFY2(window.statisticsPanel()->text("status").contains("re-mapped"),
                 qPrintable(window.statisticsPanel()->text("status")));
        const QImage shown = window.resultImage().convertToFormat(QImage::Format_RGB888);
        int worst = 0;
        for (int y = 0; y < shown.height(); ++y)
            for (int x = 0; x < shown.width(); ++x) {
                const QColor c = shown.pixelColor(x, y);
                worst = std::max(worst, std::max({c.red(), c.green(), c.blue()}) - std::min({c.red(), c.green(), c.blue()}));
            }
        QVERIFY2(worst <= 1, qPrintable(QStringLiteral("a coloured pixel: spread %1").arg(worst)));
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
            // Pan well to the right: the image's middle (where a divider at 0.5 of the whole
            // image would be) leaves the pane.
            QTest::mousePress(&view, Qt::LeftButton, {}, QPoint(20, 100));
            for (int x = 40; x <= 280; x += 40) QTest::mouseMove(&view, QPoint(x, 100));
            QTest::mouseRelease(&view, Qt::LeftButton, {}, QPoint(280, 100));
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
