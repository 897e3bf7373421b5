// The window never freezes: while the worker runs a large solve (8192 x 8192,
// the size the issue names), the GUI thread's event loop keeps answering. A
// 5 ms timer on the GUI thread records the largest gap between its ticks from
// the submission (kernel set-up included) to the end of the solve; it must stay under 50 ms.

#include <QElapsedTimer>
#include <QSignalSpy>
#include <QTest>
#include <QThread>
#include <QTimer>

#include <algorithm>
#include <cstdio>

#include "ui/solve_worker.h"
#include "ui/studio_jobs.h"

using namespace uot::ui;

class TestResponsiveness : public QObject {
    Q_OBJECT
private slots:
    void eventLoopAnswersDuringALargeSolve()
    {
        StudioParameters p;
        p.solver = "auto";
        p.precision = "fp32";
        p.eps = 0.1;
        p.tau = 1.0;
        p.maxIterations = 250;
        p.tolerance = 0;  // run every iteration
        const std::size_t n = 8192;

        SolveWorker worker;
        QSignalSpy finished(&worker, &SolveWorker::jobFinished);
        QSignalSpy failed(&worker, &SolveWorker::jobFailed);
        int deliveries = 0;
        bool solving = false;  // from the submission (kernel set-up included) to the result
        connect(&worker, &SolveWorker::progress, this, [&] { ++deliveries; });

        QElapsedTimer clock;
        clock.start();
        qint64 last = -1, maxGap = 0;
        int ticks = 0;
        QTimer timer;
        timer.setTimerType(Qt::PreciseTimer);
        timer.setInterval(5);
        connect(&timer, &QTimer::timeout, this, [&] {
            const qint64 now = clock.nsecsElapsed();
            if (solving && finished.isEmpty()) {
                if (last >= 0) maxGap = std::max(maxGap, now - last);
                ++ticks;
            }
            last = now;
        });
        timer.start();
        // Baseline: the idle event loop on this machine right now. When other
        // processes already starve it, a gap says nothing about this code.
        QTest::qWait(300);
        const qint64 idleGap = [&] {
            qint64 worst = 0, previous = -1;
            QElapsedTimer idle;
            idle.start();
            while (idle.elapsed() < 300) {
                QCoreApplication::processEvents(QEventLoop::AllEvents, 5);
                const qint64 now = clock.nsecsElapsed();
                if (previous >= 0) worst = std::max(worst, now - previous);
                previous = now;
                QThread::usleep(1000);
            }
            return worst;
        }();
        if (idleGap > 25'000'000)
            QSKIP(qPrintable(QString("the machine is overloaded: the idle event loop already stalls %1 ms").arg(idleGap * 1e-6)));
        worker.submit("large", makeSyntheticSolveJob(n, n, p));
        solving = true;
        QTRY_VERIFY_WITH_TIMEOUT(!finished.isEmpty() || !failed.isEmpty(), 120000);
        timer.stop();
        if (!failed.isEmpty()) QFAIL(qPrintable(failed.at(0).at(1).toString()));
        const auto output = finished.at(0).at(1).value<std::shared_ptr<const JobOutput>>();
        QCOMPARE(output->runs.front().result.iterations, 250);
        std::printf("8192x8192 %s: %d iterations, %.1f ms/iteration; GUI thread: %d ticks, largest gap %.1f ms, "
                    "%d progress deliveries\n",
                    qPrintable(output->runs.front().solver), output->runs.front().result.iterations,
                    output->runs.front().result.timings.msPerIteration, ticks, maxGap * 1e-6, deliveries);
        QVERIFY(ticks > 100);
        QVERIFY2(maxGap < 50'000'000, qPrintable(QString("largest gap %1 ms").arg(maxGap * 1e-6)));
    }
};

QTEST_GUILESS_MAIN(TestResponsiveness)
#include "test_responsiveness.moc"
