// The comparison view with two CPU variants (what it offers without a GPU):
// both convergence curves fill, both runs are reported, and the two plans and
// recolored images agree closely, as two exact solvers of one problem must.

#include <QLabel>
#include <QSignalSpy>
#include <QTableWidget>
#include <QTest>

#include <cmath>

#include "core/registry/device_registry.h"
#include "core/registry/solver_registry.h"
#include "ui/comparison_view.h"
#include "ui/live_charts.h"
#include "ui/machine_peaks.h"
#include "ui/pipeline_jobs.h"
#include "tests/support/relocatable_path.h"

using namespace uot::ui;

namespace {

const QString kSamples = uot::test::relocatablePath("UOT_SAMPLES_DIR", QStringLiteral(UOT_SAMPLES_DIR));

StudioParameters problem()
{
    StudioParameters p;
    p.paletteSize = 256;
    p.maxIterations = 5000;
    p.tolerance = 1e-6;
    p.eps = 0.01;
    p.precision = uot::Precision::Fp64;
    p.smoothing = 0;
    return p;
}

bool hasCpuVariant(const std::string& name)
{
    for (const uot::SolverInfo& info : uot::listSolvers())
        if (info.name == name && info.caps.device == uot::DeviceKind::Cpu) return true;
    return false;
}

}  // namespace

class TestComparisonView : public QObject {
    Q_OBJECT
private slots:
    void twoCpuVariantsGiveTwoCurvesThatAgree_data()
    {
        QTest::addColumn<bool>("concurrent");
        QTest::newRow("one after the other") << false;
        QTest::newRow("at the same time") << true;
    }

    void twoCpuVariantsGiveTwoCurvesThatAgree()
    {
        QFETCH(bool, concurrent);
        if (!hasCpuVariant("pot-style") || !hasCpuVariant("fused")) QSKIP("needs the pot-style and fused CPU variants");
        const LoadedImage source = loadImageFile(kSamples + "/home.jpg");
        const LoadedImage reference = loadImageFile(kSamples + "/starry_night.jpg");
        SolveWorker worker;
        ComparisonView view(&worker);
        view.setJobFactory([&](const QString& a, const QString& b, bool together) {
            return makeComparisonJob(source, reference, problem(), a, b, together);
        });
        view.setVariants("pot-style", "fused");
        view.setConcurrent(concurrent);
        QSignalSpy finished(&view, &ComparisonView::comparisonFinished);
        view.start();
        QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 1, 60000);

        QVERIFY(view.charts()->errorPointCount(0) > 0);
        QVERIFY(view.charts()->errorPointCount(1) > 0);
        QVERIFY(view.charts()->timePointCount(0) > 0);
        QVERIFY(view.charts()->timePointCount(1) > 0);
        const ComparisonOutput* output = view.lastOutput();
        QVERIFY(output);
        QCOMPARE(int(output->runs.size()), 2);
        QVERIFY(output->runs[0].solver.contains("pot-style"));
        QVERIFY(output->runs[1].solver.contains("fused"));
        QVERIFY2(output->runs[0].result.converged && output->runs[1].result.converged,
                 qPrintable(QString("iterations %1 / %2").arg(output->runs[0].result.iterations).arg(output->runs[1].result.iterations)));
        QVERIFY(std::isfinite(output->planMaxRelDiff));
        QVERIFY2(output->planMaxRelDiff < 1e-3, qPrintable(QString::number(output->planMaxRelDiff)));
        QVERIFY(std::isfinite(output->imageMaxRelDiff));
        QVERIFY2(output->imageMaxRelDiff <= 2.0 / 255, qPrintable(QString::number(output->imageMaxRelDiff)));
        QVERIFY(!output->runs[0].image.isNull() && !output->runs[1].image.isNull());

        // Both sides' set-up and iteration times, each in its own row.
        auto* table = view.findChild<QTableWidget*>();
        QVERIFY(table);
        auto rowNamed = [table](const QString& name) {
            for (int row = 0; row < table->rowCount(); ++row)
                if (table->verticalHeaderItem(row) && table->verticalHeaderItem(row)->text() == name) return row;
            return -1;
        };
        const int setupRow = rowNamed("set-up"), iterateRow = rowNamed("iterating");
        QVERIFY2(setupRow >= 0 && iterateRow >= 0, "no set-up or iterating row");
        for (int k = 0; k < 2; ++k) {
            const uot::SolveTimings& t = output->runs[std::size_t(k)].result.timings;
            QVERIFY(t.setupSeconds > 0 && t.iterateSeconds > 0);
            QCOMPARE(table->item(setupRow, k)->text(), durationText(t.setupSeconds));
            QCOMPARE(table->item(iterateRow, k)->text(), durationText(t.iterateSeconds));
        }
        QVERIFY2(view.findChildren<QLabel*>().size() > 0, "no summary");
        bool summaryTellsTimes = false;
        for (QLabel* label : view.findChildren<QLabel*>())
            summaryTellsTimes = summaryTellsTimes || label->text().contains(
                QString("Set-up %1 and %2").arg(durationText(output->runs[0].result.timings.setupSeconds),
                                                durationText(output->runs[1].result.timings.setupSeconds)));
        QVERIFY(summaryTellsTimes);
    }

    // Found by trying the studio as a new user: without a GPU the notice was the
    // CUDA runtime's sentence about driver versions, three lines above the controls.
    void withoutAGpuTheNoticeIsOneShortLine()
    {
        const std::string reason = uot::gpuUnavailableReason();
        if (reason.empty()) QSKIP("a usable GPU is present: no notice");
        SolveWorker worker;
        ComparisonView view(&worker);
        QCOMPARE(view.gpuNotice(), QStringLiteral("No GPU here: comparing two CPU variants."));
        QLabel* notice = nullptr;
        for (QLabel* label : view.findChildren<QLabel*>())
            if (label->text() == view.gpuNotice()) notice = label;
        QVERIFY(notice);
        QVERIFY2(notice->toolTip().contains(QString::fromStdString(reason)), qPrintable(notice->toolTip()));
    }

    void differentProblemsAreToldApart()
    {
        // The agreement figure is not vacuous: two eps give plans far apart.
        const LoadedImage source = loadImageFile(kSamples + "/home.jpg");
        const LoadedImage reference = loadImageFile(kSamples + "/starry_night.jpg");
        const uot::RecolorSettings settings = recolorSettingsFor(problem());
        uot::RecolorPipeline pipeline(settings);
        pipeline.setSource(*source.image);
        pipeline.setReference(*reference.image);
        pipeline.solve();
        const uot::SolveResult first = *pipeline.stats().solve;
        uot::RecolorSettings other = settings;
        other.transport.eps = 0.05;
        pipeline.setSettings(other);
        pipeline.solve();
        const uot::SolveResult second = *pipeline.stats().solve;
        pipeline.setSettings(settings);
        const auto p = pipeline.transportProblem();
        QVERIFY(p.has_value());
        QVERIFY(planMaxRelativeDifference(*p, first, second) > 0.1);
        QCOMPARE(planMaxRelativeDifference(*p, first, first), 0.0);
    }
};

QTEST_MAIN(TestComparisonView)
#include "test_comparison_view.moc"
