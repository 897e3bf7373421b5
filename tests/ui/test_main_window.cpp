// The main window driven as a user would: load the sample pair, run to a
// result, cancel, supersede a running solve, re-map on a strength change,
// and keep the parameters between sessions.

#include <QCheckBox>
#include <QDoubleSpinBox>
#include <QDragEnterEvent>
#include <QDropEvent>
#include <QMimeData>
#include <QUrl>
#include <QPushButton>
#include <QRegularExpression>
#include <QSettings>
#include <QSignalSpy>
#include <QSlider>
#include <QTemporaryDir>
#include <QTest>
#include <QUndoStack>

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <numeric>
#include <vector>

#include "core/color/color_space.h"
#include "gpu/gpu_backend.h"
#include "tests/ui/studio_test_options.h"
#include "ui/image_view.h"
#include "ui/live_charts.h"
#include "ui/main_window.h"
#include "ui/parameters_panel.h"
#include "ui/pipeline_jobs.h"
#include "ui/statistics_panel.h"
#include "tests/support/relocatable_path.h"

using namespace uot::ui;

namespace {

const QString kSamples = uot::test::relocatablePath("UOT_SAMPLES_DIR", QStringLiteral(UOT_SAMPLES_DIR));


// A solve that only ends when cancelled.
StudioParameters endless()
{
    StudioParameters p = quickParameters();
    p.paletteSize = 512;
    p.maxIterations = 100000;
    p.tolerance = 0;
    return p;
}

bool loadPair(MainWindow& window)
{
    window.openSource(kSamples + "/home.jpg");
    window.openReference(kSamples + "/starry_night.jpg");
    return QTest::qWaitFor([&] { return window.hasSource() && window.hasReference() && !window.isLoading(); }, 20000);
}

QImage rgb(const QImage& image) { return image.convertToFormat(QImage::Format_RGB888); }

// The mean gap between the sorted CIELAB a* (c = 1) or b* (c = 2) values of two
// images at the quantiles 5 %..95 % (float64, from the 8-bit sRGB pixels).
double chromaQuantileGap(const QImage& a, const QImage& b, int c)
{
    const auto values = [c](const QImage& image) {
        const QImage img = rgb(image);
        std::vector<double> v;
        v.reserve(static_cast<std::size_t>(img.width()) * img.height());
        for (int y = 0; y < img.height(); ++y)
            for (int x = 0; x < img.width(); ++x) {
                const QRgb p = img.pixel(x, y);
                double lin[3], lab[3];
                const int channel[3] = {qRed(p), qGreen(p), qBlue(p)};
                for (int k = 0; k < 3; ++k) lin[k] = uot::srgbToLinear(channel[k] / 255.0);
                uot::linearRgbToSpace(uot::WorkingSpace::Lab, lin, lab);
                v.push_back(lab[c]);
            }
        std::sort(v.begin(), v.end());
        return v;
    };
    const std::vector<double> va = values(a), vb = values(b);
    const auto at = [](const std::vector<double>& v, double u) { return v[static_cast<std::size_t>(u * (v.size() - 1))]; };
    double sum = 0;
    int count = 0;
    for (double u = 0.05; u <= 0.951; u += 0.05, ++count) sum += std::abs(at(va, u) - at(vb, u));
    return sum / count;
}

// True when a stage line's "error E" is below `tolerance`.
bool stageErrorBelow(const QString& stageLine, double tolerance)
{
    const QRegularExpressionMatch m = QRegularExpression(R"(error ([0-9.e+-]+))").match(stageLine);
    return m.hasMatch() && m.captured(1).toDouble() < tolerance;
}

}  // namespace

class TestMainWindow : public QObject {
    Q_OBJECT
private:
    QTemporaryDir m_settingsDir;

private slots:
    void initTestCase()
    {
        QVERIFY(m_settingsDir.isValid());
        useIsolatedSettings(m_settingsDir.path(), "studio-test");
    }

    void runsToAResultWithChartsAndStatistics()
    {
        MainWindow window(testOptions());
        QVERIFY(loadPair(window));
        window.setParameters(quickParameters());
        QSignalSpy ready(&window, &MainWindow::resultReady);
        window.run();
        QVERIFY(window.isRunning());
        QTRY_COMPARE_WITH_TIMEOUT(ready.count(), 1, 60000);
        QTRY_VERIFY_WITH_TIMEOUT(!window.isRunning(), 5000);
        QCOMPARE(window.resultImage().size(), QSize(512, 384));
        QVERIFY(rgb(window.resultImage()) != rgb(QImage(kSamples + "/home.jpg")));  // colors did change
        QVERIFY(window.charts()->errorPointCount(0) > 0);
        QVERIFY(window.charts()->timePointCount(0) > 0);
        QVERIFY(window.charts()->rooflinePointCount() > 0);
        QVERIFY(window.statisticsPanel()->text("run").contains("128"));
        QVERIFY(window.statisticsPanel()->text("status").contains("iterations"));
        QVERIFY(window.statisticsPanel()->text("bytesPerIteration") != "-");
        QVERIFY(window.parametersPanel()->runButton()->isEnabled());
        QVERIFY(!window.parametersPanel()->cancelButton()->isEnabled());
    }

    // Issue 10 item 6: with eps-scaling, the statistics list every stage (eps, iterations,
    // passes, error) and the convergence chart marks where each stage starts, counting
    // iterations across the stages. The eps are the schedule's, worked out by hand:
    // 16 x 0.01 = 0.16 halved down to 0.01.
    void statisticsAndChartShowTheEpsStages()
    {
        MainWindow window(testOptions());
        window.resize(1280, 720);
        window.show();
        QVERIFY(QTest::qWaitForWindowExposed(&window));
        window.setAdvancedPanelsVisible(true);
        QVERIFY(loadPair(window));
        StudioParameters p = quickParameters();
        p.epsScalingRatio = 16;
        p.epsScalingFactor = 0.5;
        p.maxIterations = 5000;
        p.tolerance = 1e-5;
        window.setParameters(p);
        QSignalSpy ready(&window, &MainWindow::resultReady);
        QSignalSpy progress(window.worker(), &SolveWorker::progress);
        window.run();
        QTRY_COMPARE_WITH_TIMEOUT(ready.count(), 1, 60000);
        QTRY_VERIFY_WITH_TIMEOUT(!window.isRunning(), 5000);

        const QList<double> eps = {0.16, 0.08, 0.04, 0.02, 0.01};
        const QStringList lines = window.statisticsPanel()->text("stages").split('\n');
        QCOMPARE(lines.size(), eps.size());
        QList<int> stageIterations;
        const QRegularExpression line(R"(^(\d)\. eps ([0-9.e-]+): (\d+) it, (\d+) passes, error ([0-9.e+-]+) \((.*)\)$)");
        for (int k = 0; k < lines.size(); ++k) {
            const QRegularExpressionMatch m = line.match(lines[k]);
            QVERIFY2(m.hasMatch(), qPrintable(lines[k]));
            QCOMPARE(m.captured(1).toInt(), k + 1);
            QVERIFY2(std::abs(m.captured(2).toDouble() - eps[k]) < 1e-12, qPrintable(lines[k]));
            QVERIFY(m.captured(3).toInt() > 0);
            QVERIFY(m.captured(4).toInt() >= m.captured(3).toInt());  // at least one pass per iteration
            stageIterations << m.captured(3).toInt();
            QCOMPARE(m.captured(6), k + 1 == lines.size() ? QStringLiteral("target, converged") : QStringLiteral("done"));
        }
        QVERIFY(stageErrorBelow(lines.last(), 1e-5));
        const int total = std::accumulate(stageIterations.begin(), stageIterations.end(), 0);
        const QString status = window.statisticsPanel()->text("status");
        QVERIFY2(status.startsWith(QStringLiteral("converged: error")) && status.contains("< tolerance 1e-05") &&
                     status.contains(QStringLiteral("after %1 iterations").arg(total)),
                 qPrintable(status));

        // The chart: one mark per stage, at the iteration where the stage starts (the
        // sum of the earlier stages' iterations), labelled with its eps.
        const QList<LiveCharts::StageMark> marks = window.charts()->stageMarks(0);
        QCOMPARE(marks.size(), eps.size());
        int start = 0;
        for (int k = 0; k < marks.size(); ++k) {
            QCOMPARE(marks[k].stage, k);
            QVERIFY(std::abs(marks[k].eps - eps[k]) < 1e-12);
            QCOMPARE(int(marks[k].iteration), start);
            start += stageIterations[k];
        }
        QCOMPARE(window.charts()->stageLabels(0),
                 (QStringList{"eps 0.16", "eps 0.08", "eps 0.04", "eps 0.02", "eps 0.01"}));
        // Iterations count on across the stages: the samples never go back.
        int last = -1;
        for (const QList<QVariant>& args : progress)
            for (const ProgressSample& sample : args.at(1).value<QVector<ProgressSample>>()) {
                QVERIFY(sample.progress.iteration > last);
                last = sample.progress.iteration;
            }
        QCOMPARE(last, total);

        // Off again: one stage, no marks.
        p.epsScalingRatio = 0;
        window.setParameters(p);
        window.run();
        QTRY_COMPARE_WITH_TIMEOUT(ready.count(), 2, 60000);
        QTRY_VERIFY_WITH_TIMEOUT(!window.isRunning(), 5000);
        QCOMPARE(window.statisticsPanel()->text("stages"), QStringLiteral("one stage at eps 0.01 (eps scaling off)"));
        QVERIFY(window.charts()->stageMarks(0).isEmpty());
    }

    // Issue 10 item 6: the status says whether the result converged, held against the
    // tolerance, or that the iteration cap was reached.
    // The status line after a run with a GPU note says which part ran where: a GPU
    // solve whose mapping moved to the CPU (the device mapping failed) used the
    // GPU, so it must not read "the GPU could not be used". (The note is the one the
    // pipeline gives when the device mapping fails half-way.)
    void gpuNoticeSaysWhichPartRanWhere()
    {
        uot::PipelineStats stats;
        QVERIFY(gpuNotice(stats).isEmpty());
        stats.gpuNote = "the GPU mapping failed (out of device memory): mapped on the CPU";
        stats.solvedOnGpu = true;
        stats.mappedOnGpu = false;
        const QString mappedOnCpu = gpuNotice(stats);
        QVERIFY2(mappedOnCpu.startsWith("Solved on the GPU, mapped on the CPU"), qPrintable(mappedOnCpu));
        QVERIFY(!mappedOnCpu.contains("could not be used"));
        QVERIFY(mappedOnCpu.contains("GPU mapping failed"));
        stats.solvedOnGpu = false;
        stats.gpuNote = "GPU unavailable (no driver): solved on the CPU with 'fused'";
        QVERIFY(gpuNotice(stats).startsWith("The GPU could not be used: GPU unavailable"));
    }

    void statusSaysConvergedOrCapReached_data()
    {
        QTest::addColumn<int>("maxIterations");
        QTest::addColumn<double>("tolerance");
        QTest::addColumn<QString>("expected");
        QTest::newRow("converged") << 5000 << 1e-4 << "converged: error ";
        QTest::newRow("cap") << 20 << 1e-8 << "NOT converged: cap of 20 iterations reached, error ";
        QTest::newRow("no tolerance") << 30 << 0.0 << "ran the 30 iterations asked (tolerance 0)";
    }
    void statusSaysConvergedOrCapReached()
    {
        QFETCH(int, maxIterations);
        QFETCH(double, tolerance);
        QFETCH(QString, expected);
        MainWindow window(testOptions());
        QVERIFY(loadPair(window));
        StudioParameters p = quickParameters();
        p.maxIterations = maxIterations;
        p.tolerance = tolerance;
        window.setParameters(p);
        QSignalSpy ready(&window, &MainWindow::resultReady);
        window.run();
        QTRY_COMPARE_WITH_TIMEOUT(ready.count(), 1, 60000);
        const QString status = window.statisticsPanel()->text("status");
        QVERIFY2(status.startsWith(expected), qPrintable(status));
        if (tolerance > 0 && maxIterations == 20) {
            // The error shown is above the tolerance it is held against.
            const QRegularExpression e(R"(error ([0-9.e+-]+) > tolerance ([0-9.e+-]+))");
            const QRegularExpressionMatch m = e.match(status);
            QVERIFY2(m.hasMatch() && m.captured(1).toDouble() > m.captured(2).toDouble(), qPrintable(status));
        }
    }

    void savesTheResultButNeverOverTheSource()
    {
        QTemporaryDir dir;
        const QString sourceCopy = dir.filePath("home.jpg");
        QVERIFY(QFile::copy(kSamples + "/home.jpg", sourceCopy));
        const QByteArray sourceBytes = [&] {
            QFile f(sourceCopy);
            return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
        }();
        MainWindow window(testOptions());
        window.openSource(sourceCopy);
        window.openReference(kSamples + "/starry_night.jpg");
        QTRY_VERIFY_WITH_TIMEOUT(window.hasSource() && window.hasReference() && !window.isLoading(), 20000);
        window.setParameters(quickParameters());
        QSignalSpy ready(&window, &MainWindow::resultReady);
        window.run();
        QTRY_COMPARE_WITH_TIMEOUT(ready.count(), 1, 60000);

        QSignalSpy saved(&window, &MainWindow::resultSaved);
        QSignalSpy failed(&window, &MainWindow::saveFailed);
        const QString out = dir.filePath("result.png");
        StudioSaveOptions sixteen;
        sixteen.depth = "16";
        window.saveResultTo(out, sixteen);
        QTRY_COMPARE_WITH_TIMEOUT(saved.count(), 1, 20000);
        const QImage written(out);
        QCOMPARE(written.size(), QSize(512, 384));
        QCOMPARE(written.depth(), 64);  // 16 bits per channel, as asked

        window.saveResultTo(sourceCopy);  // refused: it is the source
        QTRY_COMPARE_WITH_TIMEOUT(failed.count(), 1, 20000);
        QVERIFY(failed.at(0).at(0).toString().contains("home.jpg"));
        QFile f(sourceCopy);
        QVERIFY(f.open(QIODevice::ReadOnly));
        QCOMPARE(f.readAll(), sourceBytes);
    }

    void gpuFailureFallsBackToTheCpuWithANotice()
    {
        if (uot::gpu::unavailableReason().empty()) QSKIP("a usable GPU is present: nothing falls back");
        SolveWorker worker;
        QSignalSpy finished(&worker, &SolveWorker::jobFinished);
        StudioParameters p = quickParameters();
        p.device = "gpu:0";
        auto session = std::make_shared<PipelineSession>();
        worker.submit("gpu", makeRecolorJob(session, loadImageFile(kSamples + "/home.jpg"),
                                            loadImageFile(kSamples + "/starry_night.jpg"), p));
        QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 1, 60000);
        const auto output = outputOf<RecolorOutput>(finished.at(0).at(1).value<std::shared_ptr<const JobOutput>>());
        QVERIFY(output);
        QVERIFY(output->notice.contains("CPU"));
        QVERIFY(!output->image.isNull());
        QVERIFY(output->solve.has_value());
        QVERIFY(!output->solve->solver.startsWith("gpu-"));
    }

    void strengthChangeRemapsWithoutSolving()
    {
        MainWindow window(testOptions());
        QVERIFY(loadPair(window));
        window.setParameters(quickParameters());
        QSignalSpy ready(&window, &MainWindow::resultReady);
        window.run();
        QTRY_COMPARE_WITH_TIMEOUT(ready.count(), 1, 60000);
        QSignalSpy runs(window.worker(), &SolveWorker::runStarted);
        StudioParameters p = quickParameters();
        p.strength = 0;  // the pipeline returns the source unchanged
        window.setParameters(p);
        window.run();
        QTRY_COMPARE_WITH_TIMEOUT(ready.count(), 2, 60000);
        QCOMPARE(runs.count(), 0);  // no solver run: the plan was reused
        QCOMPARE(rgb(window.resultImage()), rgb(QImage(kSamples + "/home.jpg")));
    }

    void paletteMatchRemapsWithoutSolvingAndFollowsTheReference()
    {
        // The palette match moves the result's chroma distribution to the
        // reference's (measured here in float64 CIELAB from the displayed pixels),
        // without a new solve; with smoothing off the slider is disabled.
        MainWindow window(testOptions());
        QVERIFY(loadPair(window));
        StudioParameters p = quickParameters();
        p.smoothing = 1;
        p.paletteMatch = 0;
        window.setParameters(p);
        QSignalSpy ready(&window, &MainWindow::resultReady);
        window.run();
        QTRY_COMPARE_WITH_TIMEOUT(ready.count(), 1, 60000);
        const QImage unmatched = window.resultImage();
        QSignalSpy runs(window.worker(), &SolveWorker::runStarted);
        window.parametersPanel()->paletteMatchSlider()->setValue(100);
        QCOMPARE(window.parameters().paletteMatch, 1.0);
        window.run();
        QTRY_COMPARE_WITH_TIMEOUT(ready.count(), 2, 60000);
        QCOMPARE(runs.count(), 0);  // the plan was reused
        const QImage reference(kSamples + "/starry_night.jpg");
        for (int c = 1; c <= 2; ++c) {
            const double before = chromaQuantileGap(unmatched, reference, c);
            const double after = chromaQuantileGap(window.resultImage(), reference, c);
            qInfo("channel %d: mean quantile gap to the reference %.2f -> %.2f Lab units", c, before, after);
            // The map's bounds (core/color/map_bounds.h: the match's slopes within
            // 0.5..2, the field within 6 Lab units of the global map) limit how far
            // the match may move the chroma; it must still move it toward the
            // reference (1.30 -> 1.16 on a; without the bounds 1.14 -> 0.20).
            QVERIFY2(after < 0.95 * before, qPrintable(QString("gap %1 -> %2").arg(before).arg(after)));
        }
        window.parametersPanel()->smoothingBox()->setValue(0);
        QVERIFY(!window.parametersPanel()->paletteMatchSlider()->isEnabled());
    }

    // The color range along lightness (MapBounds::chromaLightnessRange) in the Color
    // controls: a number of Lab units, or no bound (inf) through its "unbounded" check
    // box; either goes through a preset and back into the panel, and reaches the pipeline.
    // So does the share of colour edges it may allow (MapBounds::chromaRangeExempt), whose
    // box has no meaning, and is disabled, without a range.
    void colorRangeGoesThroughAPreset()
    {
        MainWindow window(testOptions());
        ParametersPanel* panel = window.parametersPanel();
        const double inf = std::numeric_limits<double>::infinity();
        QCOMPARE(window.parameters().colorRange, 16.0);  // MapBounds' default
        QCOMPARE(window.parameters().colorEdges, 2.0);   // MapBounds' default
        QCOMPARE(window.parameters().recolorSettings().mapping.bounds.chromaRangeExempt, 2.0);
        panel->colorRangeUnboundedBox()->setChecked(true);
        QCOMPARE(window.parameters().colorRange, inf);
        QVERIFY(!panel->colorRangeBox()->isEnabled());
        QVERIFY(!panel->colorEdgesBox()->isEnabled());
        QCOMPARE(window.parameters().recolorSettings().mapping.bounds.chromaLightnessRange, inf);
        window.savePreset(QStringLiteral("split toning"));
        panel->colorRangeUnboundedBox()->setChecked(false);
        panel->colorRangeBox()->setValue(6);
        QVERIFY(panel->colorEdgesBox()->isEnabled());
        panel->colorEdgesBox()->setValue(0.5);
        QCOMPARE(window.parameters().colorRange, 6.0);
        QCOMPARE(window.parameters().recolorSettings().mapping.bounds.chromaLightnessRange, 6.0);
        QCOMPARE(window.parameters().recolorSettings().mapping.bounds.chromaRangeExempt, 0.5);
        window.savePreset(QStringLiteral("portrait"));

        QVERIFY(window.applyPreset(QStringLiteral("split toning")));
        QVERIFY(panel->colorRangeUnboundedBox()->isChecked());
        QVERIFY(!panel->colorRangeBox()->isEnabled());
        QCOMPARE(window.parameters().colorRange, inf);
        QVERIFY(window.applyPreset(QStringLiteral("portrait")));
        QVERIFY(!panel->colorRangeUnboundedBox()->isChecked());
        QCOMPARE(panel->colorRangeBox()->value(), 6.0);
        QCOMPARE(window.parameters().colorRange, 6.0);
        QCOMPARE(panel->colorEdgesBox()->value(), 0.5);
        QCOMPARE(window.parameters().colorEdges, 0.5);
    }

    // The lightness transfer (MapBounds::lightnessTransfer) in the Look panel, a % slider at
    // the table's default (1 = 100 %). Moved to 0 it re-maps without a new solve, and the
    // picture is the core's render of the same pair with the transfer turned off by hand in
    // the pipeline's settings (what `uot recolor --lightness-transfer 0` runs); at 100 % it
    // is the core's default render, and the two differ on this pair (a night painting onto
    // a daylight photo, where the transfer brings the palette nearer). A named reference
    // saved at 0 brings 0 back.
    void lightnessTransferRemapsToTheCoresRenderWithoutIt()
    {
        MainWindow window(testOptions());
        QVERIFY(loadPair(window));
        const StudioParameters p = quickParameters();
        window.setParameters(p);
        QSlider* slider = window.parametersPanel()->lightnessTransferSlider();
        QCOMPARE(slider->value(), 100);
        QSignalSpy ready(&window, &MainWindow::resultReady);
        window.run();
        QTRY_COMPARE_WITH_TIMEOUT(ready.count(), 1, 60000);
        const uot::Image withTransfer = *window.result().pixels;

        uot::RecolorSettings settings = recolorSettingsFor(p);
        QCOMPARE(settings.mapping.bounds.lightnessTransfer, 1.0);  // MapBounds' default
        const auto coreRender = [&window](const uot::RecolorSettings& s) {
            uot::RecolorPipeline pipeline(s);
            pipeline.setSource(*window.session()->source().image);
            pipeline.setReference(*window.session()->reference().image);
            return pipeline.run();
        };
        QVERIFY(withTransfer.data == coreRender(settings).data);

        QSignalSpy runs(window.worker(), &SolveWorker::runStarted);
        slider->setValue(0);
        QCOMPARE(window.parameters().lightnessTransfer, 0.0);
        window.run();
        QTRY_COMPARE_WITH_TIMEOUT(ready.count(), 2, 60000);
        QCOMPARE(runs.count(), 0);  // the plan was reused
        const uot::Image without = *window.result().pixels;
        settings.mapping.bounds.lightnessTransfer = 0;
        QVERIFY(without.data == coreRender(settings).data);
        QVERIFY(without.data != withTransfer.data);

        window.saveNamedReference(QStringLiteral("night colours only"));
        slider->setValue(100);
        QVERIFY(window.applyNamedReference(QStringLiteral("night colours only")));  // and runs
        QCOMPARE(slider->value(), 0);
        QCOMPARE(window.parameters().lightnessTransfer, 0.0);
        QTRY_COMPARE_WITH_TIMEOUT(ready.count(), 3, 60000);
        QCOMPARE(runs.count(), 0);
        QVERIFY(window.result().pixels->data == without.data);
    }

    // The slider goes through undo and redo, a preset (whose file holds the fraction,
    // lightnessTransfer=0.3), a double-click back to the table's default, and the settings
    // kept between sessions; a preset saved before the key existed loads with the default.
    void lightnessTransferGoesThroughPresetsUndoAndSessions()
    {
        StudioParameters kept;
        {
            MainWindow window(testOptions());
            window.setParameters(StudioParameters{});
            ParametersPanel* panel = window.parametersPanel();
            QSlider* slider = panel->lightnessTransferSlider();
            QVERIFY(slider->isEnabled());
            slider->setValue(30);
            QCOMPARE(window.parameters().lightnessTransfer, 0.3);
            QCOMPARE(window.parameters().recolorSettings().mapping.bounds.lightnessTransfer, 0.3);
            QCOMPARE(window.undoStack()->undoText(), QStringLiteral("change lightness transfer"));
            window.undoStack()->undo();
            QCOMPARE(slider->value(), 100);
            window.undoStack()->redo();
            QCOMPARE(slider->value(), 30);
            QVERIFY(window.session()->settingsText().contains(QStringLiteral("lightnessTransfer=0.3")));  // Copy Settings

            window.savePreset(QStringLiteral("soft tones"));
            QSettings file;
            QCOMPARE(file.value("presets/soft tones/parameters/lightnessTransfer").toDouble(), 0.3);
            slider->setValue(100);
            QVERIFY(window.applyPreset(QStringLiteral("soft tones")));
            QCOMPARE(slider->value(), 30);
            QCOMPARE(window.parameters().lightnessTransfer, 0.3);

            // Written before the key existed: everything else as saved, the transfer at its default.
            file.setValue("presets/older look/parameters/strength", 0.5);
            file.sync();
            QVERIFY(window.applyPreset(QStringLiteral("older look")));
            QCOMPARE(window.parameters().strength, 0.5);
            QCOMPARE(window.parameters().lightnessTransfer, 1.0);
            QCOMPARE(slider->value(), 100);

            slider->setValue(45);
            QTest::mouseDClick(slider, Qt::LeftButton);  // back to the default
            QCOMPARE(slider->value(), 100);
            slider->setValue(45);
            // Linear RGB has no lightness axis: nothing to transfer.
            StudioParameters linear = window.parameters();
            linear.colorSpace = uot::WorkingSpace::LinearRgb;
            window.setParameters(linear);
            QVERIFY(!slider->isEnabled());
            kept = window.parameters();
            window.close();
        }
        MainWindow again(testOptions());
        QCOMPARE(again.parameters().lightnessTransfer, 0.45);
        QCOMPARE(again.parameters(), kept);
    }

    void cancelMidRunRestoresTheUiAndKeepsTheResult()
    {
        MainWindow window(testOptions());
        QVERIFY(loadPair(window));
        window.setParameters(quickParameters());
        QSignalSpy ready(&window, &MainWindow::resultReady);
        window.run();
        QTRY_COMPARE_WITH_TIMEOUT(ready.count(), 1, 60000);
        const QImage previous = window.resultImage();

        window.setParameters(endless());
        QSignalSpy cancelled(&window, &MainWindow::runCancelled);
        QSignalSpy progress(window.worker(), &SolveWorker::progress);
        window.parametersPanel()->runButton()->click();
        QTRY_VERIFY_WITH_TIMEOUT(progress.count() > 0, 60000);
        QVERIFY(window.isRunning());
        QVERIFY(!window.parametersPanel()->runButton()->isEnabled());
        QVERIFY(window.parametersPanel()->cancelButton()->isEnabled());
        window.parametersPanel()->cancelButton()->click();
        QTRY_COMPARE_WITH_TIMEOUT(cancelled.count(), 1, 20000);
        QTRY_VERIFY_WITH_TIMEOUT(!window.isRunning(), 5000);
        QVERIFY(window.parametersPanel()->runButton()->isEnabled());
        QVERIFY(!window.parametersPanel()->cancelButton()->isEnabled());
        QCOMPARE(ready.count(), 1);
        QCOMPARE(window.resultImage(), previous);  // nothing lost
        QVERIFY(window.statisticsPanel()->text("status").contains("cancelled"));
    }

    void newRequestSupersedesARunningSolve()
    {
        MainWindow window(testOptions());
        QVERIFY(loadPair(window));
        window.setParameters(endless());
        QSignalSpy ready(&window, &MainWindow::resultReady);
        QSignalSpy progress(window.worker(), &SolveWorker::progress);
        window.run();
        QTRY_VERIFY_WITH_TIMEOUT(progress.count() > 0, 60000);
        StudioParameters p = quickParameters();
        p.maxIterations = 30;
        p.tolerance = 0;
        window.setParameters(p);
        window.run();  // replaces the endless solve
        QTRY_COMPARE_WITH_TIMEOUT(ready.count(), 1, 60000);
        QTRY_VERIFY_WITH_TIMEOUT(!window.isRunning(), 5000);
        // The result and the statistics are those of the second request.
        QVERIFY(window.statisticsPanel()->text("status").contains("30 iterations"));
        QVERIFY(window.statisticsPanel()->text("run").contains("128"));
        QCOMPARE(window.resultImage().size(), QSize(512, 384));
    }

    void closingDuringASolveShutsDownCleanly()
    {
        auto window = std::make_unique<MainWindow>(testOptions());
        QVERIFY(loadPair(*window));
        window->setParameters(endless());
        QSignalSpy progress(window->worker(), &SolveWorker::progress);
        window->run();
        QTRY_VERIFY_WITH_TIMEOUT(progress.count() > 0, 60000);
        QVERIFY(window->worker()->isRunning());
        window->close();  // cancels the solve and joins the worker
        QVERIFY(!window->worker()->isRunning());
        window.reset();
    }

    void autoRunSolvesShortlyAfterAChangeAndTheLatestWins()
    {
        MainWindow window(testOptions());
        QVERIFY(loadPair(window));
        QSignalSpy ready(&window, &MainWindow::resultReady);
        QSignalSpy submitted(window.worker(), &SolveWorker::jobStarted);
        StudioParameters p = quickParameters();
        p.autoRun = true;
        for (int eps : {30, 25, 20}) {  // three quick edits: one solve, with the last value
            p.eps = eps / 1000.0;
            window.setParameters(p);
        }
        QTRY_COMPARE_WITH_TIMEOUT(ready.count(), 1, 60000);
        QCOMPARE(submitted.count(), 1);
        QCOMPARE(window.parameters().eps, 0.02);
        QVERIFY(!window.resultImage().isNull());
    }

    void parametersPersistBetweenSessions()
    {
        StudioParameters p;
        p.colorSpace = uot::WorkingSpace::Oklab;
        p.paletteSize = 777;
        p.eps = 0.0123;
        p.balanced = true;
        p.referenceMeasure = uot::ReferenceMeasure::Product;
        p.maxIterations = 1234;
        p.precision = uot::Precision::Fp64;
        p.strength = 0.4;
        p.preserveLuminance = true;
        p.smoothing = 0.25;
        p.paletteMatch = 0.3;
        p.epsScalingRatio = 64;
        p.epsScalingFactor = 0.25;
        {
            MainWindow window(testOptions());
            window.setParameters(p);
            window.close();
        }
        MainWindow again(testOptions());
        QCOMPARE(again.parameters(), p);
    }

    void invalidValuesCannotBeEnteredOrLoaded()
    {
        ParametersPanel panel;
        panel.epsBox()->setValue(-3);
        QCOMPARE(panel.parameters().eps, uot::params::parameter("eps").min);
        QSettings settings;
        settings.setValue("parameters/paletteSize", 10'000'000);
        settings.setValue("parameters/colorSpace", "no-such-space");
        settings.setValue("parameters/strength", 7.5);
        settings.setValue("parameters/paletteMatch", -2.0);
        settings.setValue("parameters/epsScalingRatio", -5);
        settings.setValue("parameters/epsScalingFactor", 3.0);  // would never reach the target eps
        // Out of range: the default, never the nearest limit (issue 25, D17).
        QStringList problems;
        const StudioParameters loaded = StudioParameters::load(settings, &problems);
        const StudioParameters defaults;
        QCOMPARE(loaded.paletteSize, defaults.paletteSize);
        QVERIFY(loaded.colorSpace == uot::WorkingSpace::Lab);
        QCOMPARE(loaded.strength, defaults.strength);
        QCOMPARE(loaded.paletteMatch, defaults.paletteMatch);
        QCOMPARE(loaded.epsScalingRatio, 0);
        QCOMPARE(loaded.epsScalingFactor, defaults.epsScalingFactor);
        QCOMPARE(problems.size(), 6);
        panel.epsScalingBox()->setValue(-1);
        QCOMPARE(panel.parameters().epsScalingRatio, 0);
    }

    void droppingAFileOnTheReferencePaneLoadsIt()
    {
        MainWindow window(testOptions());
        window.show();
        ImageView* pane = window.referenceView();
        QVERIFY(pane);
        QMimeData mime;
        mime.setUrls({QUrl::fromLocalFile(kSamples + "/fruits.jpg")});
        const QPoint at = pane->rect().center();
        QDragEnterEvent enter(at, Qt::CopyAction, &mime, Qt::LeftButton, Qt::NoModifier);
        QCoreApplication::sendEvent(pane, &enter);
        QVERIFY(enter.isAccepted());
        QDropEvent drop(QPointF(at), Qt::CopyAction, &mime, Qt::LeftButton, Qt::NoModifier);
        QSignalSpy loaded(&window, &MainWindow::referenceLoaded);
        QCoreApplication::sendEvent(pane, &drop);
        QTRY_COMPARE_WITH_TIMEOUT(loaded.count(), 1, 20000);
        QVERIFY(window.hasReference());
        QVERIFY(!window.hasSource());
        QCOMPARE(pane->image().size(), QSize(512, 480));
    }

    void startsWithTheSamplePairThenTheLastSession()
    {
        QSettings().remove("session");
        MainWindowOptions options = testOptions();
        options.loadSamplesIfEmpty = true;
        {
            MainWindow first(options);  // nothing saved: the bundled pair
            QTRY_VERIFY_WITH_TIMEOUT(first.hasSource() && first.hasReference() && !first.isLoading(), 20000);
            QCOMPARE(first.sourceView()->image().size(), QSize(512, 384));     // home.jpg
            QCOMPARE(first.referenceView()->image().size(), QSize(752, 600));  // starry_night.jpg
            first.openSource(kSamples + "/fruits.jpg");
            QTRY_COMPARE_WITH_TIMEOUT(first.sourceView()->image().size(), QSize(512, 480), 20000);
        }
        MainWindow second(options);  // the last session's source, the sample reference
        QTRY_VERIFY_WITH_TIMEOUT(second.hasSource() && second.hasReference() && !second.isLoading(), 20000);
        QCOMPARE(second.sourceView()->image().size(), QSize(512, 480));
        QCOMPARE(second.referenceView()->image().size(), QSize(752, 600));
    }

    void runWithoutImagesExplainsWhatToDo()
    {
        MainWindow window(testOptions());
        QSignalSpy failed(&window, &MainWindow::runFailed);
        window.run();
        QCOMPARE(failed.count(), 1);
        QVERIFY(window.lastError().contains("Open a source"));
        QVERIFY(!window.isRunning());
    }

    void corruptFileGivesAnActionableMessage()
    {
        QTemporaryDir dir;
        const QString bad = dir.filePath("broken.jpg");
        QFile file(bad);
        QVERIFY(file.open(QIODevice::WriteOnly));
        file.write("this is not a JPEG file at all");
        file.close();
        MainWindow window(testOptions());
        QSignalSpy failed(&window, &MainWindow::loadFailed);
        window.openSource(bad);
        QTRY_COMPARE_WITH_TIMEOUT(failed.count(), 1, 20000);
        QVERIFY(failed.at(0).at(0).toString().contains("broken.jpg"));
        QVERIFY(!window.hasSource());
    }
};

QTEST_MAIN(TestMainWindow)
#include "test_main_window.moc"
