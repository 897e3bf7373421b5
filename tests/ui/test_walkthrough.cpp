// The colourist's walkthrough of the studio (issue 27, item 4), one test per
// defect found:
//  a) the Advanced settings fit the Parameters dock at the default width;
//  b) Save writes the color profile chosen in Save Options (read back by Qt's
//     own image reader, not the project's);
//  c) the zoom in the status bar follows fit, zoom and window resizes;
//  d) the comparison table names the variant that ran on each side, and the
//     one chosen when the pipeline ran another;
//  e) each side of the split view says what it shows;
//  f) the histogram dock leaves the image panes most of the width;
//  g) the user reads "color", never "colour" (studio texts and CLI help);
//  h) a double-click on a slider or spin box resets it to its default, undoably.

#include <QAbstractSpinBox>
#include <QAction>
#include <QCheckBox>
#include <QColorSpace>
#include <QComboBox>
#include <QDockWidget>
#include <QDoubleSpinBox>
#include <QGroupBox>
#include <QLabel>
#include <QLineEdit>
#include <QMenu>
#include <QProcess>
#include <QPushButton>
#include <QScrollArea>
#include <QSettings>
#include <QSignalSpy>
#include <QSlider>
#include <QSpinBox>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QTest>
#include <QToolButton>
#include <QUndoStack>

#include "tests/support/qt_checks.h"
#include "tests/ui/studio_test_options.h"
#include "ui/comparison_view.h"
#include "ui/histogram_view.h"
#include "ui/image_view.h"
#include "ui/main_window.h"
#include "ui/parameters_panel.h"
#include "ui/solve_worker.h"
#include "ui/studio_jobs.h"

using namespace uot::ui;

namespace {

const QString kSamples = QStringLiteral(UOT_SAMPLES_DIR);
const QString kUot = QStringLiteral(UOT_CLI_EXECUTABLE);

bool loadPair(MainWindow& window)
{
    window.openSource(kSamples + "/home.jpg");
    window.openReference(kSamples + "/starry_night.jpg");
    return QTest::qWaitFor([&] { return window.hasSource() && window.hasReference() && !window.isLoading(); }, 20000);
}

bool runToResult(MainWindow& window)
{
    QSignalSpy ready(&window, &MainWindow::resultReady);
    window.setParameters(quickParameters());
    window.run();
    return QTest::qWaitFor([&] { return ready.count() > 0 && !window.isRunning(); }, 60000);
}

// Shows `window` at `size` on screen.
bool showAt(MainWindow& window, const QSize& size)
{
    window.resize(size);
    window.show();
    return QTest::qWaitForWindowExposed(&window);
}

// Every text a user reads in `root`: labels, buttons, group titles, list
// entries, tool tips, window titles, menus and their actions.
QStringList visibleTexts(QWidget* root)
{
    QStringList texts;
    QList<QWidget*> widgets = root->findChildren<QWidget*>();
    widgets << root;
    for (QWidget* w : widgets) {
        texts << w->toolTip() << w->windowTitle() << w->statusTip() << w->whatsThis();
        if (auto* l = qobject_cast<QLabel*>(w)) texts << l->text();
        if (auto* b = qobject_cast<QAbstractButton*>(w)) texts << b->text();
        if (auto* g = qobject_cast<QGroupBox*>(w)) texts << g->title();
        if (auto* c = qobject_cast<QComboBox*>(w))
            for (int i = 0; i < c->count(); ++i) texts << c->itemText(i) << c->itemData(i, Qt::ToolTipRole).toString();
        if (auto* s = qobject_cast<QAbstractSpinBox*>(w)) texts << s->specialValueText();
        if (auto* t = qobject_cast<QTableWidget*>(w)) {
            for (int i = 0; i < t->rowCount(); ++i)
                if (t->verticalHeaderItem(i)) texts << t->verticalHeaderItem(i)->text() << t->verticalHeaderItem(i)->toolTip();
        }
        for (QAction* a : w->actions()) texts << a->text() << a->toolTip() << a->statusTip();
    }
    return texts;
}

// The fields of `panel` the user edits, visible now.
QList<QWidget*> visibleFields(QWidget* panel)
{
    QList<QWidget*> fields;
    for (QWidget* w : panel->findChildren<QWidget*>())
        if ((qobject_cast<QComboBox*>(w) || qobject_cast<QAbstractSpinBox*>(w) || qobject_cast<QCheckBox*>(w)) &&
            w->isVisible())
            fields << w;
    return fields;
}

}  // namespace

class TestWalkthrough : public QObject {
    Q_OBJECT
private:
    QTemporaryDir m_settingsDir;

private slots:
    void initTestCase()
    {
        QVERIFY(m_settingsDir.isValid());
        useIsolatedSettings(m_settingsDir.path(), "studio-walkthrough-test");
    }
    void init() { QSettings().clear(); }  // every test starts from a first start

    // a) Opened at the default width, Advanced settings show every field whole,
    // inside the dock (the dock scrolls only vertically).
    void advancedSettingsFitTheDefaultWidth_data()
    {
        QTest::addColumn<QSize>("size");
        QTest::newRow("1600x1000") << QSize(1600, 1000);
        QTest::newRow("1280x720") << QSize(1280, 720);
    }
    void advancedSettingsFitTheDefaultWidth()
    {
        QFETCH(QSize, size);
        MainWindow window(testOptions());
        QVERIFY(showAt(window, size));
        ParametersPanel* panel = window.parametersPanel();
        for (QToolButton* toggle : {panel->advancedToggle(), panel->colourControlsToggle()}) toggle->click();
        QVERIFY(panel->advancedVisible());
        QTest::qWait(50);
        auto* scroll = qobject_cast<QScrollArea*>(window.dock("parametersDock")->widget());
        QVERIFY(scroll);
        const QWidget* viewport = scroll->viewport();
        const QList<QWidget*> fields = visibleFields(panel->advancedSettings()) + visibleFields(panel);
        QVERIFY(fields.size() > 10);
        for (QWidget* field : fields) {
            const int right = field->mapTo(viewport, QPoint(field->width(), 0)).x();
            UOT_QVERIFY_MSG(right <= viewport->width(), qPrintable(field->objectName() + field->toolTip().left(40))
                                                            << ": ends at x " << right << " of a viewport "
                                                            << viewport->width() << " wide");
            UOT_QVERIFY_MSG(field->width() >= field->minimumSizeHint().width(),
                            qPrintable(field->toolTip().left(40)) << ": " << field->width() << " wide, needs "
                                                                  << field->minimumSizeHint().width());
        }
    }

    // b) The profile chosen in Save Options (kept in the settings) is the one
    // the pixels are converted into and the file carries.
    void saveWritesTheChosenProfile()
    {
        QTemporaryDir dir;
        MainWindow window(testOptions());
        QVERIFY(loadPair(window));
        QVERIFY(runToResult(window));
        const QString srgbFile = dir.filePath("srgb.png"), p3File = dir.filePath("p3.png");
        QSignalSpy saved(&window, &MainWindow::resultSaved);
        window.saveResultTo(srgbFile);
        QTRY_COMPARE_WITH_TIMEOUT(saved.count(), 1, 20000);
        QSettings().setValue("save/profile", "display-p3");
        window.saveResultTo(p3File);
        QTRY_COMPARE_WITH_TIMEOUT(saved.count(), 2, 20000);
        const QImage srgb(srgbFile), p3(p3File);
        QVERIFY2(srgb.colorSpace().description().contains("sRGB"), qPrintable(srgb.colorSpace().description()));
        QVERIFY2(p3.colorSpace().description().contains("Display P3"), qPrintable(p3.colorSpace().description()));
        // Converted, not only tagged: the stored values differ, and Qt's own
        // color management brings them back to the sRGB ones (within a level or two).
        QVERIFY(srgb.convertToFormat(QImage::Format_RGB888) != p3.convertToFormat(QImage::Format_RGB888));
        QImage back = p3.convertToFormat(QImage::Format_RGB888);
        back.convertToColorSpace(QColorSpace::SRgb);
        const QImage want = srgb.convertToFormat(QImage::Format_RGB888);
        double sum = 0;
        for (int y = 0; y < want.height(); ++y)
            for (int x = 0; x < 3 * want.width(); ++x) sum += std::abs(int(back.constScanLine(y)[x]) - int(want.constScanLine(y)[x]));
        const double mean = sum / (3.0 * want.width() * want.height());
        UOT_QVERIFY_MSG(mean < 1.5, "mean difference " << mean << " levels");
    }

    // c) The status bar's zoom is the result pane's, after a fit and after the
    // window (so the fitted pane) is resized.
    void statusBarZoomFollowsFitAndResize()
    {
        MainWindow window(testOptions());
        QVERIFY(showAt(window, QSize(1600, 1000)));
        QVERIFY(loadPair(window));
        QVERIFY(runToResult(window));
        auto* label = window.findChild<QLabel*>("zoomLabel");
        QVERIFY(label);
        QTRY_COMPARE(label->text(), window.resultView()->zoomText());
        const QString before = label->text();
        window.resize(1280, 720);
        QTRY_VERIFY(window.resultView()->zoomText() != before);
        QTRY_COMPARE(label->text(), window.resultView()->zoomText());
        window.resultView()->zoomBy(2.0);
        QCOMPARE(label->text(), window.resultView()->zoomText());
        window.resultView()->fit();
        QCOMPARE(label->text(), window.resultView()->zoomText());
    }

    // d) Side A chose pot-style and the pipeline ran log (matrix-free, or its
    // stabilised form); side B ran what it chose. Each column says so.
    void comparisonNamesTheVariantThatRan()
    {
        SolveWorker worker;
        ComparisonView view(&worker);
        view.setJobFactory([](const QString&, const QString&, bool) -> JobFunction {
            return [](JobContext&) {
                auto output = std::make_shared<ComparisonOutput>();
                for (const char* ran : {"log", "fused"}) {
                    RunOutcome run;
                    run.solver = ran;
                    run.label = runLabel(run.solver);
                    run.result.solver = ran;
                    run.result.iterations = 10;
                    run.result.timings.iterateSeconds = 0.01;
                    output->runs.push_back(run);
                }
                return output;
            };
        });
        view.setVariants("pot-style", "fused");
        QSignalSpy finished(&view, &ComparisonView::comparisonFinished);
        view.start();
        QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 1, 10000);
        auto* table = view.findChild<QTableWidget*>();
        QVERIFY(table);
        const QString a = table->horizontalHeaderItem(0)->text(), b = table->horizontalHeaderItem(1)->text();
        QVERIFY2(a.contains("log") && a.contains("pot-style"), qPrintable(a));
        QCOMPARE(b, runLabel("fused"));
    }

    // e) In split view the left side says it is the source, the right side what
    // the pane shows (the result, or the LUT preview).
    void splitViewSaysWhatEachSideShows()
    {
        MainWindow window(testOptions());
        ImageView* view = window.resultView();
        view->setSplitEnabled(true);
        QVERIFY(view->splitLabel(ImageView::SplitSide::Before).contains("Source"));
        QVERIFY(view->splitLabel(ImageView::SplitSide::After).contains("Result"));
        view->setCaption("LUT preview (33^3, 40.0 dB PSNR against the result)");
        QVERIFY2(view->splitLabel(ImageView::SplitSide::After).contains("LUT preview"),
                 qPrintable(view->splitLabel(ImageView::SplitSide::After)));
    }

    // f) Shown, the histogram takes a side strip; the image panes keep most of the width.
    void histogramLeavesTheImagesTheWidth_data() { advancedSettingsFitTheDefaultWidth_data(); }
    void histogramLeavesTheImagesTheWidth()
    {
        QFETCH(QSize, size);
        MainWindow window(testOptions());
        QVERIFY(showAt(window, size));
        QVERIFY(loadPair(window));
        const int panesBefore = window.sourceView()->width() + window.resultView()->width();
        window.dock("histogramDock")->show();
        QTest::qWait(100);
        QVERIFY(window.histogramView()->isVisible());
        const int panes = window.sourceView()->width() + window.resultView()->width();
        const int histogram = window.histogramView()->width();
        UOT_QVERIFY_MSG(histogram <= HistogramView::kMaxWidth && histogram >= window.histogramView()->minimumSizeHint().width(),
                        "histogram " << histogram << " wide");
        UOT_QVERIFY_MSG(panes >= panesBefore - HistogramView::kMaxWidth - 20,
                        "image panes " << panesBefore << " -> " << panes << " wide");
        UOT_QVERIFY_MSG(panes >= 2 * histogram, "image panes " << panes << ", histogram " << histogram);
    }

    // g) One spelling: "color" in every text of the studio and the command line's help.
    void oneSpellingOfColor()
    {
        MainWindow window(testOptions());
        ParametersPanel* panel = window.parametersPanel();
        panel->advancedToggle()->click();
        panel->colourControlsToggle()->click();
        QStringList offenders;
        for (const QString& text : visibleTexts(&window))
            if (text.contains("colour", Qt::CaseInsensitive)) offenders << text;
        for (QMenu* menu : window.findChildren<QMenu*>())
            for (QAction* a : menu->actions())
                if (a->text().contains("colour", Qt::CaseInsensitive) || a->toolTip().contains("colour", Qt::CaseInsensitive))
                    offenders << a->text();
        QVERIFY2(offenders.isEmpty(), qPrintable(offenders.join("\n")));
        for (const QStringList& args : {QStringList{"--help"}, QStringList{"recolor", "--help"}, QStringList{"batch", "--help"},
                                        QStringList{"lut", "--help"}, QStringList{"solve", "--help"}}) {
            QProcess p;
            p.start(kUot, args);
            QVERIFY(p.waitForFinished(30000));
            const QByteArray help = p.readAllStandardOutput() + p.readAllStandardError();
            QVERIFY2(help.size() > 100, qPrintable(args.join(' ')));
            QVERIFY2(!help.toLower().contains("colour"), qPrintable(args.join(' ') + ":\n" + help));
        }
    }

    // h) Double-click: the slider (or spin box) goes back to its default; Undo brings the edit back.
    void doubleClickResetsToTheDefault()
    {
        MainWindow window(testOptions());
        QVERIFY(showAt(window, QSize(1280, 720)));
        ParametersPanel* panel = window.parametersPanel();
        QSlider* fade = panel->strengthSlider();
        const int fadeDefault = fade->value();
        QCOMPARE(fadeDefault, 100);
        fade->setValue(30);
        QUndoStack* undo = window.undoStack();
        QTest::qWait(1600);  // past the window in which edits of one setting merge into one step
        const int steps = undo->count();
        QTest::mouseDClick(fade, Qt::LeftButton, Qt::NoModifier, QPoint(fade->width() / 4, fade->height() / 2));
        QCOMPARE(fade->value(), fadeDefault);
        QTRY_VERIFY(undo->count() > steps);
        undo->undo();
        QCOMPARE(fade->value(), 30);

        QDoubleSpinBox* smoothing = panel->smoothingBox();
        const double smoothingDefault = StudioParameters{}.smoothing;
        smoothing->setValue(smoothingDefault + 1.5);
        auto* edit = smoothing->findChild<QLineEdit*>();
        QVERIFY(edit);
        QTest::mouseDClick(edit, Qt::LeftButton);
        QCOMPARE(smoothing->value(), smoothingDefault);

        panel->advancedToggle()->click();
        QSpinBox* iterations = panel->iterationsBox();
        const int iterationsDefault = StudioParameters{}.maxIterations;
        iterations->setValue(iterationsDefault / 2);
        QTest::mouseDClick(iterations->findChild<QLineEdit*>(), Qt::LeftButton);
        QCOMPARE(iterations->value(), iterationsDefault);
    }
};

QTEST_MAIN(TestWalkthrough)
#include "test_walkthrough.moc"
