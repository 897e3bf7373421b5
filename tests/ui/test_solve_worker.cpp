// The worker thread's contract: results, throttled progress with first and
// last delivered, cancellation, newest request wins, clean shutdown. The
// signals are recorded on the test's thread (QueuedSignalSpy), as the studio
// receives them.

#include <QTest>

#include <chrono>
#include <memory>

#include "tests/support/queued_signal_spy.h"
#include "ui/solve_worker.h"
#include "ui/studio_jobs.h"

using namespace uot::ui;
using uot::test::QueuedSignalSpy;
using namespace std::chrono_literals;

namespace {

StudioParameters quickParameters()
{
    StudioParameters p;
    p.solver = "reference";
    p.eps = 0.05;
    p.tau = 1.0;
    p.maxIterations = 2000;
    p.tolerance = 1e-9;
    return p;
}

// A solve that runs until cancelled (tolerance 0 disables the stopping rule).
StudioParameters longParameters()
{
    StudioParameters p = quickParameters();
    p.maxIterations = 100000;
    p.tolerance = 0;
    return p;
}

QVector<ProgressSample> allSamples(const QueuedSignalSpy& spy)
{
    QVector<ProgressSample> all;
    for (const QList<QVariant>& args : spy) all += args.at(1).value<QVector<ProgressSample>>();
    return all;
}

}  // namespace

class TestSolveWorker : public QObject {
    Q_OBJECT
private slots:
    void runsToResultWithEveryCheckDelivered()
    {
        SolveWorker worker;
        QueuedSignalSpy finished(&worker, &SolveWorker::jobFinished);
        QueuedSignalSpy progress(&worker, &SolveWorker::progress);
        const quint64 generation = worker.submit("solve", makeSyntheticSolveJob(48, 40, quickParameters()));
        QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 1, 20000);
        QCOMPARE(finished.at(0).at(0).toULongLong(), generation);
        const auto output = outputOf<SyntheticSolveOutput>(finished.at(0).at(1).value<std::shared_ptr<const JobOutput>>());
        QVERIFY(output);
        const uot::SolveResult& result = output->run.result;
        QVERIFY(result.converged);
        QVERIFY(result.iterations > 10);
        QCOMPARE(int(result.logU.size()), 48);
        // Every check (one per 10 iterations) reached the GUI thread, in order,
        // the last one included, although the signals were throttled.
        const QVector<ProgressSample> samples = allSamples(progress);
        QVERIFY(!samples.isEmpty());
        QCOMPARE(samples.first().progress.iteration, 10);
        QCOMPARE(samples.last().progress.iteration, result.iterations);
        for (int k = 1; k < samples.size(); ++k)
            QVERIFY(samples[k].progress.iteration > samples[k - 1].progress.iteration);
        QVERIFY(progress.count() <= samples.size());
    }

    void throttleDeliversFirstAndLastOnly()
    {
        // With an interval longer than the solve, exactly two deliveries remain:
        // the first sample at once, everything else batched into the final flush.
        SolveWorker worker;
        worker.setProgressInterval(std::chrono::milliseconds(60000));
        QueuedSignalSpy finished(&worker, &SolveWorker::jobFinished);
        QueuedSignalSpy progress(&worker, &SolveWorker::progress);
        StudioParameters p = quickParameters();
        p.maxIterations = 200;
        p.tolerance = 0;
        worker.submit("solve", makeSyntheticSolveJob(32, 32, p));
        QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 1, 20000);
        QCOMPARE(progress.count(), 2);
        const auto first = progress.at(0).at(1).value<QVector<ProgressSample>>();
        QCOMPARE(first.size(), 1);
        QCOMPARE(first[0].progress.iteration, 10);
        const QVector<ProgressSample> samples = allSamples(progress);
        QCOMPARE(samples.size(), 20);
        QCOMPARE(samples.last().progress.iteration, 200);
    }

    void cancelStopsARunningSolve()
    {
        SolveWorker worker;
        QueuedSignalSpy finished(&worker, &SolveWorker::jobFinished);
        QueuedSignalSpy cancelled(&worker, &SolveWorker::jobCancelled);
        QueuedSignalSpy progress(&worker, &SolveWorker::progress);
        QueuedSignalSpy idle(&worker, &SolveWorker::idle);
        const quint64 generation = worker.submit("long", makeSyntheticSolveJob(64, 64, longParameters()));
        QTRY_VERIFY_WITH_TIMEOUT(progress.count() > 0, 20000);
        QVERIFY(worker.isBusy());
        worker.cancel();
        QTRY_COMPARE_WITH_TIMEOUT(cancelled.count(), 1, 20000);
        QCOMPARE(cancelled.at(0).at(0).toULongLong(), generation);
        QTRY_VERIFY_WITH_TIMEOUT(idle.count() > 0, 5000);
        QCOMPARE(finished.count(), 0);
        QVERIFY(!worker.isBusy());
        // The cancelled run stopped early, far from its 100000 iterations.
        const QVector<ProgressSample> samples = allSamples(progress);
        QVERIFY(samples.last().progress.iteration < 100000);
    }

    void newRequestSupersedesRunningAndPending()
    {
        SolveWorker worker;
        QueuedSignalSpy started(&worker, &SolveWorker::jobStarted);
        QueuedSignalSpy finished(&worker, &SolveWorker::jobFinished);
        QueuedSignalSpy cancelled(&worker, &SolveWorker::jobCancelled);
        QueuedSignalSpy progress(&worker, &SolveWorker::progress);
        const quint64 a = worker.submit("A", makeSyntheticSolveJob(64, 64, longParameters()));
        QTRY_VERIFY_WITH_TIMEOUT(progress.count() > 0, 20000);
        const quint64 b = worker.submit("B", makeSyntheticSolveJob(64, 64, longParameters()));
        const quint64 c = worker.submit("C", makeSyntheticSolveJob(24, 24, quickParameters()));
        QVERIFY(a < b && b < c);
        QCOMPARE(worker.latestGeneration(), c);
        QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 1, 20000);
        QCOMPARE(finished.at(0).at(0).toULongLong(), c);
        // A was cancelled while running and C ran last. B was replaced: usually before it
        // started, but when A stops between the two submits (a slow main thread, e.g.
        // under ThreadSanitizer) B starts and is cancelled at once; it never finishes.
        QList<quint64> startedGenerations;
        for (const auto& args : started) startedGenerations << args.at(0).toULongLong();
        QVERIFY2(startedGenerations == (QList<quint64>{a, c}) || startedGenerations == (QList<quint64>{a, b, c}),
                 "the jobs started were not A then C (or A, B, C)");
        QList<quint64> cancelledGenerations;
        for (const auto& args : cancelled) cancelledGenerations << args.at(0).toULongLong();
        std::sort(cancelledGenerations.begin(), cancelledGenerations.end());
        QCOMPARE(cancelledGenerations, (QList<quint64>{a, b}));
        // No progress of A was delivered after C started.
        bool seenC = false;
        for (const auto& args : progress) {
            const quint64 g = args.at(0).toULongLong();
            if (g == c) seenC = true;
            QVERIFY(!(seenC && g != c));
        }
    }

    void shutdownWhileSolvingJoinsPromptly()
    {
        auto worker = std::make_unique<SolveWorker>();
        QueuedSignalSpy progress(worker.get(), &SolveWorker::progress);
        worker->submit("long", makeSyntheticSolveJob(64, 64, longParameters()));
        QTRY_VERIFY_WITH_TIMEOUT(progress.count() > 0, 20000);
        QVERIFY(worker->isRunning());
        worker.reset();  // cancels and joins; a hang here fails the test by timeout
        QVERIFY(!worker);
    }

    void failureIsReportedWithItsMessage()
    {
        SolveWorker worker;
        QueuedSignalSpy failed(&worker, &SolveWorker::jobFailed);
        StudioParameters p = quickParameters();
        p.solver = "no-such-variant";
        worker.submit("bad", makeSyntheticSolveJob(8, 8, p));
        QTRY_COMPARE_WITH_TIMEOUT(failed.count(), 1, 20000);
        QVERIFY(failed.at(0).at(1).toString().contains("no-such-variant"));
    }
};

QTEST_GUILESS_MAIN(TestSolveWorker)
#include "test_solve_worker.moc"
