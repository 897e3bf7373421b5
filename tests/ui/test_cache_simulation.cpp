// Simulated cache figures (ui/cache_simulation): cachegrind on a scaled-down
// copy of the problem. The figures are checked against the traffic model of
// docs/ALGORITHMS.md section 3, which is independent of cachegrind: a matrix
// four times the simulated last-level cache misses once per 64-byte line per
// sweep, a matrix that fits misses (almost) never. Also: the plan of the copy,
// the message when valgrind is missing, cancel, and the Statistics panel's
// one-line reason for hidden counters.

#include <QLabel>
#include <QPushButton>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>

#include <cerrno>

#include "core/perf/cache_counters.h"
#include "core/perf/roofline.h"
#include "core/registry/solver_registry.h"
#include "tests/support/relocatable_path.h"
#include "ui/cache_simulation.h"
#include "ui/cache_simulation_row.h"
#include "ui/statistics_panel.h"

using namespace uot;
using namespace uot::ui;

namespace {

const QString kUot = uot::test::relocatablePath("UOT_CLI", QStringLiteral(UOT_CLI_EXECUTABLE));

// Small caches, so that tiny problems are "bigger than the LL".
CacheSimulationRequest tinyRequest(const QString& solver, Precision precision, int n, qint64 llBytes)
{
    CacheSimulationRequest r;
    r.solver = solver;
    r.precision = precision;
    r.rows = r.cols = std::size_t(n);
    r.maxSize = n;
    r.d1 = {16384, 4, 64};
    r.ll = {llBytes, 8, 64};
    return r;
}

struct Outcome {
    bool finished = false;
    CacheSimulationResult result;
    QString message;
};

Outcome simulate(const CacheSimulationRequest& request, int timeoutMs = 240000)
{
    CacheSimulation simulation;
    Outcome outcome;
    bool done = false;
    QObject::connect(&simulation, &CacheSimulation::finished, [&](const CacheSimulationResult& r) {
        outcome.finished = true;
        outcome.result = r;
        done = true;
    });
    QObject::connect(&simulation, &CacheSimulation::failed, [&](const QString& m) {
        outcome.message = m;
        done = true;
    });
    simulation.start(request);
    if (!QTest::qWaitFor([&] { return done; }, timeoutMs)) outcome.message = QStringLiteral("timed out");
    return outcome;
}

}  // namespace

class TestCacheSimulation : public QObject {
    Q_OBJECT
private slots:
    void initTestCase();
    void plansAScaledCopyInTheSameRegime();
    void refusesWhatItCannotSimulate();
    void simulatedMissesMatchTheTrafficModel_data();
    void simulatedMissesMatchTheTrafficModel();
    void missingValgrindIsAClearMessage();
    void cancelStopsTheSimulation();
    void panelShowsTheReasonInOneLineAndSimulatesOnRequest();

private:
    bool m_haveValgrind = false;
};

void TestCacheSimulation::initTestCase()
{
    qputenv("UOT_CLI", kUot.toLocal8Bit());
    QVERIFY2(!findUotCli().isEmpty(), qPrintable("uot not found at " + kUot));
    m_haveValgrind = !findValgrind().isEmpty();
}

void TestCacheSimulation::plansAScaledCopyInTheSameRegime()
{
    // A 4096 x 4096 fp32 problem (64 MiB) against a 32 MiB, 16-way host LL: the
    // 512 x 512 copy (1 MiB) is 64 times smaller, so is its LL (512 KiB) and the
    // copy stays "twice the LL" like the real problem.
    CacheSimulationRequest r;
    r.solver = QStringLiteral("fused");
    r.rows = r.cols = 4096;
    r.maxSize = 512;
    r.d1 = {49152, 12, 64};
    QString error;
    CacheSimulationRequest plan = plannedSimulation(r, &error);
    QVERIFY2(error.isEmpty(), qPrintable(error));
    QCOMPARE(plan.maxSize, 512);
    QVERIFY(plan.ll.valid());
    const CacheGeometry host = hostCache(0);
    if (host.valid()) {
        const double expected = double(host.bytes) / 64;  // 4096^2 / 512^2
        QVERIFY(plan.ll.bytes <= host.bytes);
        if (expected >= 4.0 * plan.d1.bytes) {
            // Rounded down to a power-of-two number of sets: within a factor 2.
            QVERIFY2(plan.ll.bytes <= expected && plan.ll.bytes > expected / 2,
                     qPrintable(QStringLiteral("LL %1 for %2").arg(plan.ll.bytes).arg(expected)));
        }
        const qint64 sets = plan.ll.bytes / (qint64(plan.ll.ways) * plan.ll.lineBytes);
        QVERIFY(sets > 0 && (sets & (sets - 1)) == 0);  // valgrind's requirement
    }
    // A problem smaller than the cap is copied at its own size, LL unscaled.
    r.rows = 200;
    r.cols = 120;
    plan = plannedSimulation(r, &error);
    QCOMPARE(plan.maxSize, 200);
    if (host.valid()) QVERIFY(plan.ll.bytes > host.bytes / 2);
}

void TestCacheSimulation::refusesWhatItCannotSimulate()
{
    QString error;
    plannedSimulation({}, &error);
    QVERIFY(error.contains("run a solve first"));
    CacheSimulationRequest r;
    r.rows = r.cols = 64;
    r.solver = QStringLiteral("no-such-variant");
    plannedSimulation(r, &error);
    QVERIFY(error.contains("unknown variant"));
    if (solverCapabilities("gpu-fused")) {
        r.solver = QStringLiteral("gpu-fused");
        plannedSimulation(r, &error);
        QVERIFY(error.contains("CPU variants"));
    }
}

void TestCacheSimulation::simulatedMissesMatchTheTrafficModel_data()
{
    QTest::addColumn<QString>("solver");
    QTest::addColumn<int>("precision");
    QTest::addColumn<int>("n");
    QTest::addColumn<qint64>("llBytes");
    QTest::addColumn<bool>("fits");
    // Matrices 8 x the LL: every line of every sweep misses.
    QTest::newRow("fused fp32 512, 1 MiB matrix, 128 KiB LL") << "fused" << 0 << 512 << qint64(131072) << false;
    QTest::newRow("fused fp64 512, 2 MiB matrix, 256 KiB LL") << "fused" << 1 << 512 << qint64(262144) << false;
    QTest::newRow("pot-style fp32 512 (two sweeps)") << "pot-style" << 0 << 512 << qint64(131072) << false;
    QTest::newRow("mapuot fp32 512 (read + write-back)") << "mapuot" << 0 << 512 << qint64(131072) << false;
    // A 256 KiB matrix in a 4 MiB LL: after the first iteration (almost) nothing misses.
    QTest::newRow("fused fp32 256 fits the LL") << "fused" << 0 << 256 << (qint64(4) << 20) << true;
}

void TestCacheSimulation::simulatedMissesMatchTheTrafficModel()
{
    if (!m_haveValgrind) QSKIP("valgrind is not installed here (apt-get install valgrind)");
    QFETCH(QString, solver);
    QFETCH(int, precision);
    QFETCH(int, n);
    QFETCH(qint64, llBytes);
    QFETCH(bool, fits);
    const Precision p = precision == 0 ? Precision::Fp32 : Precision::Fp64;
    const Outcome o = simulate(tinyRequest(solver, p, n, llBytes));
    QVERIFY2(o.finished, qPrintable(o.message));
    const CacheSimulationResult& r = o.result;
    qInfo("%s", qPrintable(r.summary()));
    QCOMPARE(r.label(), QStringLiteral("simulated (cachegrind, %1 x %1)").arg(n));
    const double elem = p == Precision::Fp32 ? 4 : 8;
    QCOMPARE(r.matrixLines, double(n) * n * elem / 64);
    QVERIFY(r.dataReferences > r.matrixLines);
    QVERIFY(r.d1Misses >= 0.99 * r.llMisses);  // what misses the LL missed L1D first
    if (fits) {
        QVERIFY2(r.llMisses < 0.05 * r.matrixLines, qPrintable(r.summary()));
        return;
    }
    // The model: lines read per iteration (a read-write variant writes back what it read).
    const perf::IterationCost cost = perf::iterationCost(solver.toStdString(), std::size_t(n), std::size_t(n), p);
    const double linesRead = (cost.readOnly ? double(cost.bytes) : double(cost.bytes) / 2) / 64;
    // The model counts the matrix only: the vectors and the stop rule's sums add
    // about a thousand misses per iteration (2 % at 1024^2, 8 % here).
    const double ratio = r.llMisses / linesRead;
    QVERIFY2(ratio > 0.97 && ratio < 1.15,
             qPrintable(QStringLiteral("%1 LL misses per iteration, model %2 lines read").arg(r.llMisses).arg(linesRead)));
    QVERIFY(r.d1Misses >= 0.95 * linesRead);
}

void TestCacheSimulation::missingValgrindIsAClearMessage()
{
    // No valgrind on PATH (an empty folder), as on a machine without it.
    QTemporaryDir empty;
    const QByteArray path = qgetenv("PATH");
    qputenv("PATH", empty.path().toLocal8Bit());
    const Outcome o = simulate(tinyRequest("fused", Precision::Fp32, 64, 65536), 5000);
    qputenv("PATH", path);
    QVERIFY(!o.finished);
    QVERIFY2(o.message.contains("valgrind is not installed") && o.message.contains("apt-get install valgrind"),
             qPrintable(o.message));
}

void TestCacheSimulation::cancelStopsTheSimulation()
{
    if (!m_haveValgrind) QSKIP("valgrind is not installed here (apt-get install valgrind)");
    CacheSimulationRequest r = tinyRequest("pot-style", Precision::Fp64, 1024, 65536);
    r.iterations1 = 200;  // minutes under cachegrind
    CacheSimulation simulation;
    QSignalSpy failed(&simulation, &CacheSimulation::failed);
    QSignalSpy finished(&simulation, &CacheSimulation::finished);
    simulation.start(r);
    QVERIFY(simulation.running());
    QTest::qWait(1500);  // valgrind is running the solve now
    simulation.cancel();
    QCOMPARE(failed.count(), 1);
    QCOMPARE(failed.at(0).at(0).toString(), QStringLiteral("cancelled"));
    QVERIFY(!simulation.running());
    QTest::qWait(200);
    QCOMPARE(finished.count(), 0);
    // And it can run again afterwards.
    const Outcome again = simulate(tinyRequest("fused", Precision::Fp32, 64, 65536));
    QVERIFY2(again.finished, qPrintable(again.message));
}

void TestCacheSimulation::panelShowsTheReasonInOneLineAndSimulatesOnRequest()
{
    StatisticsPanel panel;
    const QString summary = QString::fromStdString(perf::summarizePerfEventFailure(ENOENT, 2));
    const QString details = QString::fromStdString(perf::describePerfEventFailure(ENOENT, "hardware cache counters", 2));
    panel.setCountersUnavailable(summary, details);
    const QString line = panel.text("l1d");
    QCOMPARE(line, QStringLiteral("unavailable: no PMU in this VM or container"));
    QVERIFY(!details.contains(summary) || details.size() > 2 * line.size());  // the detail is the long one
    QLabel* value = nullptr;
    for (QLabel* l : panel.findChildren<QLabel*>())
        if (l->text() == line) value = l;
    QVERIFY(value);
    QVERIFY2(value->toolTip().contains(details), qPrintable(value->toolTip()));

    CacheSimulationRow* row = panel.cacheSimulation();
    QVERIFY(row);
    auto* button = row->findChild<QPushButton*>("simulateCachesButton");
    QVERIFY(button);
    QVERIFY(!button->isEnabled());  // no run yet
    RunInfo info;
    info.label = QStringLiteral("CPU fused");
    info.variant = QStringLiteral("fused");
    info.rows = 96;
    info.cols = 80;
    panel.beginRun(info);
    QVERIFY(button->isEnabled());
    if (!m_haveValgrind) QSKIP("valgrind is not installed here (apt-get install valgrind)");
    CacheSimulationRequest small;
    small.d1 = {16384, 4, 64};
    small.ll = {65536, 8, 64};
    row->setRequestTemplate(small);
    QSignalSpy done(row, &CacheSimulationRow::simulated);
    QTest::mouseClick(button, Qt::LeftButton);
    QCOMPARE(button->text(), QStringLiteral("Cancel"));
    QVERIFY(QTest::qWaitFor([&] { return done.count() == 1; }, 240000));
    QVERIFY2(row->text().startsWith("simulated (cachegrind, 96 x 96)\nL1D "), qPrintable(row->text()));
    QVERIFY(row->text().contains(" per matrix line"));
    QCOMPARE(button->text(), QStringLiteral("Simulate"));
}

QTEST_MAIN(TestCacheSimulation)
#include "test_cache_simulation.moc"
