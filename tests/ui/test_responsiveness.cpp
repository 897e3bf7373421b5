// The window never freezes: while the worker runs a large solve (8192 x 8192,
// the size the issue names), the GUI thread's event loop keeps answering. A
// 5 ms timer on the GUI thread records the largest gap between its ticks from
// the submission (kernel set-up included) until the solve has iterated for a
// while; then the solve is cancelled. The verdict is relative to a control
// measured in the same run: the same timer while as many threads as the solve
// uses spin on pure arithmetic (not our code). What the OS scheduler costs the
// GUI thread on a loaded machine shows in both; what our code costs it shows
// only in the solve's gap, which must stay under max(50 ms, 2 x control + 10 ms).
// Nothing here depends on how fast this machine iterates, and the solve is
// never waited out.

#include <QElapsedTimer>
#include <QSignalSpy>
#include <QTest>
#include <QThread>
#include <QTimer>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <thread>
#include <vector>

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
        p.precision = uot::Precision::Fp32;
        p.eps = 0.1;
        p.tau = 1.0;
        p.maxIterations = 1'000'000;  // still running when it is cancelled
        p.tolerance = 0;              // no stopping test
        const std::size_t n = 8192;

        SolveWorker worker;
        QSignalSpy finished(&worker, &SolveWorker::jobFinished);
        QSignalSpy failed(&worker, &SolveWorker::jobFailed);
        QSignalSpy cancelled(&worker, &SolveWorker::jobCancelled);
        int deliveries = 0;
        bool solving = false;  // from the submission (kernel set-up included) to the cancel
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
            if (solving) {
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
        // Control: the solve's thread count spinning on arithmetic for 1.5 s.
        const qint64 controlGap = [&] {
            std::atomic<bool> stop{false};
            std::vector<std::thread> spinners;
            for (unsigned k = 0; k < std::max(1u, std::thread::hardware_concurrency()); ++k)
                spinners.emplace_back([&stop] {
                    volatile double x = 1;
                    while (!stop.load(std::memory_order_relaxed)) x = x * 1.0000001 + 1e-9;
                });
            maxGap = 0;
            last = -1;
            solving = true;
            QTest::qWait(1500);
            solving = false;
            stop = true;
            for (std::thread& t : spinners) t.join();
            const qint64 gap = maxGap;
            maxGap = 0;
            ticks = 0;
            return gap;
        }();
        const qint64 allowedGap = std::max<qint64>(50'000'000, 2 * controlGap + 10'000'000);

        worker.submit("large", makeSyntheticSolveJob(n, n, p));
        last = -1;
        solving = true;
        // The kernel build is over once iterations are reported; observe 20 deliveries
        // of them (about 1 s at 25 a second). The waits only bound a hung worker.
        QTRY_VERIFY_WITH_TIMEOUT(deliveries > 0 || !failed.isEmpty() || !finished.isEmpty(), 600000);
        const int firstDeliveries = deliveries;
        QTRY_VERIFY_WITH_TIMEOUT(deliveries >= firstDeliveries + 20 || !failed.isEmpty() || !finished.isEmpty(), 600000);
        if (!failed.isEmpty()) QFAIL(qPrintable(failed.at(0).at(1).toString()));
        QVERIFY2(finished.isEmpty(), "the solve ended before it was cancelled");
        worker.cancel();
        QTRY_VERIFY_WITH_TIMEOUT(!cancelled.isEmpty() || !finished.isEmpty() || !failed.isEmpty(), 600000);
        solving = false;
        timer.stop();
        QVERIFY2(failed.isEmpty(), failed.isEmpty() ? "" : qPrintable(failed.at(0).at(1).toString()));
        std::printf("8192x8192: GUI thread %d ticks, largest gap %.1f ms (control with spinning threads: %.1f ms, "
                    "allowed %.1f ms), %d progress deliveries\n",
                    ticks, maxGap * 1e-6, controlGap * 1e-6, allowedGap * 1e-6, deliveries);
        QVERIFY(ticks > 100);
        QVERIFY2(maxGap < allowedGap, qPrintable(QString("largest gap %1 ms, control %2 ms")
                                                     .arg(maxGap * 1e-6)
                                                     .arg(controlGap * 1e-6)));
    }
};

QTEST_GUILESS_MAIN(TestResponsiveness)
#include "test_responsiveness.moc"
