// The non-destructive workflow of issue 16: undo/redo of parameter changes,
// loads and swaps; presets; named references (image + settings) applied with
// one click; copy/paste of settings; and the histogram, checked against
// counts worked out by hand.

#include <QAction>
#include <QClipboard>
#include <QDir>
#include <QDockWidget>
#include <QFile>
#include <QGuiApplication>
#include <QListWidget>
#include <QSettings>
#include <QSignalSpy>
#include <QSlider>
#include <QTemporaryDir>
#include <QTest>
#include <QUndoStack>

#include <cmath>

#include "tests/ui/studio_test_options.h"
#include "tests/support/relocatable_path.h"
#include "ui/histogram.h"
#include "ui/histogram_view.h"
#include "ui/image_view.h"
#include "ui/library_panel.h"
#include "ui/main_window.h"
#include "ui/parameters_panel.h"
#include "ui/settings_library.h"

using namespace uot::ui;

namespace {

const QString kSamples = uot::test::relocatablePath("UOT_SAMPLES_DIR", QStringLiteral(UOT_SAMPLES_DIR));

StudioParameters quick()
{
    StudioParameters p;
    p.paletteSize = 128;
    p.maxIterations = 200;
    p.eps = 0.01;
    p.precision = uot::Precision::Fp64;
    p.smoothing = 0;
    return p;
}

bool waitLoaded(MainWindow& window)
{
    return QTest::qWaitFor([&] { return window.hasSource() && window.hasReference() && !window.isLoading(); }, 20000);
}

void clickItem(QListWidget* list, const QString& text)
{
    const auto items = list->findItems(text, Qt::MatchExactly);
    QVERIFY2(items.size() == 1, qPrintable(text));
    const QRect r = list->visualItemRect(items.first());
    QTest::mouseClick(list->viewport(), Qt::LeftButton, Qt::NoModifier, r.center());
}

}  // namespace

class TestNonDestructive : public QObject {
    Q_OBJECT
private:
    QTemporaryDir m_settingsDir;

private slots:
    void initTestCase()
    {
        QVERIFY(m_settingsDir.isValid());
        useIsolatedSettings(m_settingsDir.path(), "studio-history-test");
    }
    void init() { QSettings().clear(); }

    void undoAndRedoParameterChanges()
    {
        MainWindow window(testOptions());
        window.resize(1280, 720);
        window.show();
        QVERIFY(QTest::qWaitForWindowActive(&window));
        QUndoStack* history = window.undoStack();
        QVERIFY(!history->canUndo());
        const StudioParameters start = window.parameters();

        StudioParameters first = start;
        first.eps = 0.02;
        first.preserveLuminance = true;
        window.setParameters(first);  // one step
        QSlider* strength = window.parametersPanel()->strengthSlider();
        for (int v : {90, 70, 50, 30}) strength->setValue(v);  // a drag: one merged step
        StudioParameters dragged = first;
        dragged.strength = 0.3;
        QCOMPARE(window.parameters(), dragged);
        QCOMPARE(history->count(), 2);
        QVERIFY(history->undoText().contains("strength"));

        QTest::keyClick(&window, Qt::Key_Z, Qt::ControlModifier);
        QCOMPARE(window.parameters(), first);
        QTest::keyClick(&window, Qt::Key_Z, Qt::ControlModifier);
        QCOMPARE(window.parameters(), start);
        QVERIFY(!history->canUndo());
        QTest::keyClick(&window, Qt::Key_Z, Qt::ControlModifier | Qt::ShiftModifier);
        QCOMPARE(window.parameters(), first);
        window.action("redoAction")->trigger();
        QCOMPARE(window.parameters(), dragged);
        // Undo and redo are not new steps.
        QCOMPARE(history->count(), 2);
    }

    void undoAndRedoLoadsAndSwaps()
    {
        MainWindow window(testOptions());
        window.openSource(kSamples + "/home.jpg");
        window.openReference(kSamples + "/starry_night.jpg");
        QVERIFY(waitLoaded(window));
        QSignalSpy loaded(&window, &MainWindow::sourceLoaded);
        window.openSource(kSamples + "/fruits.jpg");
        QTRY_COMPARE_WITH_TIMEOUT(loaded.count(), 1, 20000);
        QCOMPARE(window.sourceView()->image().size(), QSize(512, 480));
        window.undoStack()->undo();
        QCOMPARE(window.sourceView()->image().size(), QSize(512, 384));  // home.jpg again, without reading the file
        window.undoStack()->redo();
        QCOMPARE(window.sourceView()->image().size(), QSize(512, 480));

        window.swapImages();
        QCOMPARE(window.sourceView()->image().size(), QSize(752, 600));
        QCOMPARE(window.referenceView()->image().size(), QSize(512, 480));
        window.undoStack()->undo();
        QCOMPARE(window.sourceView()->image().size(), QSize(512, 480));
        QCOMPARE(window.referenceView()->image().size(), QSize(752, 600));
    }

    void presetsAreSavedListedAndAppliedWithOneClick()
    {
        StudioParameters soft = quick();
        soft.strength = 0.6;
        soft.preserveLuminance = true;
        soft.smoothing = 0.8;
        {
            MainWindow window(testOptions());
            window.setParameters(soft);
            window.savePreset("Soft light");
        }
        MainWindow window(testOptions());  // presets persist
        window.setParameters(StudioParameters{});
        const StudioParameters before = window.parameters();
        QVERIFY(before != soft);
        QListWidget* list = window.libraryPanel()->presetList();
        QCOMPARE(list->count(), 1);
        window.show();
        QVERIFY(QTest::qWaitForWindowExposed(&window));
        clickItem(list, "Soft light");
        QCOMPARE(window.parameters(), soft);
        window.undoStack()->undo();  // applying a preset is one undo step
        QCOMPARE(window.parameters(), before);
    }

    void namedReferenceBringsBackImageAndSettingsAndRuns()
    {
        MainWindow window(testOptions());
        window.show();
        QVERIFY(QTest::qWaitForWindowExposed(&window));
        window.openSource(kSamples + "/home.jpg");
        window.openReference(kSamples + "/starry_night.jpg");
        QVERIFY(waitLoaded(window));
        StudioParameters night = quick();
        night.strength = 0.7;
        window.setParameters(night);
        window.saveNamedReference("Night sky");

        QSignalSpy loaded(&window, &MainWindow::referenceLoaded);
        window.openReference(kSamples + "/fruits.jpg");
        QTRY_COMPARE_WITH_TIMEOUT(loaded.count(), 1, 20000);
        window.setParameters(quick());
        QCOMPARE(window.libraryPanel()->referenceList()->count(), 1);

        QSignalSpy ready(&window, &MainWindow::resultReady);
        clickItem(window.libraryPanel()->referenceList(), "Night sky");
        QTRY_COMPARE_WITH_TIMEOUT(ready.count(), 1, 60000);  // one click: image, settings and a result
        QCOMPARE(window.referenceView()->image().size(), QSize(752, 600));
        QCOMPARE(window.parameters(), night);
    }

    void namedReferenceWithAMissingImageSaysWhere()
    {
        QTemporaryDir dir;
        const QString copy = dir.filePath("moody.jpg");
        QVERIFY(QFile::copy(kSamples + "/starry_night.jpg", copy));
        MainWindow window(testOptions());
        window.openReference(copy);
        QTRY_VERIFY_WITH_TIMEOUT(window.hasReference() && !window.isLoading(), 20000);
        window.saveNamedReference("Moody");
        QVERIFY(QFile::remove(copy));
        QVERIFY(!window.applyNamedReference("Moody"));
        QVERIFY2(window.lastError().contains(QDir::toNativeSeparators(copy)), qPrintable(window.lastError()));
    }

    void copyAndPasteSettings()
    {
        MainWindow window(testOptions());
        StudioParameters look = quick();
        look.colorSpace = uot::WorkingSpace::Oklab;
        look.strength = 0.45;
        look.tau = 3.5;
        window.setParameters(look);
        window.copySettings();
        window.setParameters(StudioParameters{});
        QVERIFY(window.pasteSettings());
        QCOMPARE(window.parameters(), look);

        QGuiApplication::clipboard()->setText("a shopping list");
        QVERIFY(!window.pasteSettings());
        QVERIFY(window.lastError().contains("Copy Settings"));
        // Pasted text out of range is refused as a whole, one message per bad value.
        QStringList problems;
        QVERIFY(!settings_library::fromText("[parameters]\neps=100\nstrength=-2\n", &problems).has_value());
        QCOMPARE(problems.size(), 2);
        QVERIFY(problems[0].startsWith("eps") && problems[1].startsWith("strength"));
    }

    void histogramCountsMatchHandCounts()
    {
        // 4 red pixels and 4 mid-grey ones.
        QImage image(4, 2, QImage::Format_RGB888);
        for (int x = 0; x < 4; ++x) {
            image.setPixelColor(x, 0, QColor(255, 0, 0));
            image.setPixelColor(x, 1, QColor(128, 128, 128));
        }
        const Histogram h = computeHistogram(image);
        QVERIFY(!h.empty);
        const int redLuma = int(std::lround(0.2126 * 255));  // 54
        QCOMPARE(h.bins[Histogram::Luma][redLuma], 0.5);
        QCOMPARE(h.bins[Histogram::Luma][128], 0.5);
        QCOMPARE(h.bins[Histogram::Red][255], 0.5);
        QCOMPARE(h.bins[Histogram::Red][128], 0.5);
        QCOMPARE(h.bins[Histogram::Green][0], 0.5);
        QCOMPARE(h.bins[Histogram::Blue][128], 0.5);
        // A large image is sampled: half black, half white still reads as halves.
        QImage big(3001, 1000, QImage::Format_RGB888);
        big.fill(Qt::black);
        for (int y = 0; y < big.height(); ++y)
            for (int x = big.width() / 2; x < big.width(); ++x) big.setPixelColor(x, y, Qt::white);
        const Histogram s = computeHistogram(big);
        QVERIFY(std::abs(s.bins[Histogram::Luma][0] - 0.5) < 0.01);
        QVERIFY(std::abs(s.bins[Histogram::Luma][255] - 0.5) < 0.01);
    }

    void histogramDockFollowsTheImages()
    {
        MainWindow window(testOptions());
        window.openSource(kSamples + "/home.jpg");
        window.openReference(kSamples + "/starry_night.jpg");
        QVERIFY(waitLoaded(window));
        HistogramView* view = window.histogramView();
        QVERIFY(!view->histogram(HistogramView::Source).empty);
        QVERIFY(!view->histogram(HistogramView::Reference).empty);
        QVERIFY(view->histogram(HistogramView::Result).empty);
        window.setParameters(quick());
        QSignalSpy ready(&window, &MainWindow::resultReady);
        window.run();
        QTRY_COMPARE_WITH_TIMEOUT(ready.count(), 1, 60000);
        const Histogram& result = view->histogram(HistogramView::Result);
        QVERIFY(!result.empty);
        // The recolor moved the colors: the blue channel's distribution changed.
        double moved = 0;
        for (int i = 0; i < 256; ++i)
            moved += std::abs(result.bins[Histogram::Blue][i] - view->histogram(HistogramView::Source).bins[Histogram::Blue][i]);
        QVERIFY(moved > 0.05);
        // One click shows it.
        QVERIFY(window.dock("histogramDock")->isHidden());
        window.action("histogramAction")->trigger();
        QVERIFY(!window.dock("histogramDock")->isHidden());
    }
};

QTEST_MAIN(TestNonDestructive)
#include "test_non_destructive.moc"
