// How the batched recolor engine (core/pipeline/batched_recolor.h) schedules its
// images:
// - it keeps to the CPU threads it is given: with settings.threads = N it loads
//   (decodes) at most N - 1 images at once (one thread of N drives the device),
//   whatever the machine's core count, so that several MPI ranks of one node
//   (uot-mpi batch, each given its share of the node) do not each start a worker
//   per core of the node;
// - it asks control.claim about every image once, in order, and does only those
//   it is given (uot-mpi batch's ranks take images from a shared counter);
// - an image job.skip names a reason for is Skipped when its turn comes, never loaded.
// A stand-in batched solver (each problem solved alone by the CPU fused solver)
// takes the place of the GPU one.

#include <QtTest/QtTest>
#include <algorithm>
#include <atomic>
#include <chrono>
#include <mutex>
#include <numeric>
#include <thread>
#include <vector>

#include "core/color/image.h"
#include "core/pipeline/batched_recolor.h"
#include "core/pipeline/recolor_pipeline.h"
#include "core/registry/batched_solver_registry.h"
#include "core/registry/solver_registry.h"
#include "tests/support/qt_checks.h"

namespace {

class OneByOneBatchedSolver final : public uot::BatchedUotSolver {
public:
    std::string name() const override { return "test-one-by-one"; }
    std::vector<uot::SolveResult> solveBatch(std::span<const uot::UotProblem> problems,
                                             const uot::SolveOptions& options,
                                             const uot::SolveControl& control) override
    {
        std::vector<uot::SolveResult> out;
        const auto solver = uot::createSolver("fused");
        for (const uot::UotProblem& p : problems) out.push_back(solver->solve(p, options, control));
        return out;
    }
};

const bool registered = [] {
    uot::BatchedSolverCapabilities caps;
    caps.device = uot::DeviceKind::Cpu;
    caps.fp64 = true;
    return uot::registerBatchedSolver({"test-one-by-one", "each problem alone on the CPU (test stand-in)", caps,
                                       [] { return std::make_unique<OneByOneBatchedSolver>(); },
                                       [] { return std::string(); }});
}();

uot::Image flatImage(int width, int height, unsigned seed)
{
    uot::Image image = uot::Image::allocate(width, height, 3, 8);
    for (std::size_t i = 0; i < image.data.size(); ++i)
        image.data[i] = static_cast<std::uint8_t>((i * 37u + seed * 101u + (i / 3) * 7u) & 0xff);
    return image;
}

}  // namespace

class TestBatchedRecolorScheduling : public QObject {
    Q_OBJECT

private slots:
    // settings.threads = N: N - 1 workers load images side by side, never more.
    void loadsAtOnceFollowTheThreads_data()
    {
        QTest::addColumn<int>("threads");
        QTest::newRow("2 threads") << 2;
        QTest::newRow("3 threads") << 3;
        QTest::newRow("5 threads") << 5;
    }
    void loadsAtOnceFollowTheThreads()
    {
        QFETCH(int, threads);
        QVERIFY(registered);
        uot::RecolorSettings settings;
        settings.transport.solver = "fused";
        settings.threads = threads;
        settings.palette.size = 16;
        const auto reference = uot::computePalette(flatImage(40, 30, 99), settings);
        std::atomic<int> loading{0}, most{0};
        std::atomic<int> stored{0};
        uot::BatchedRecolorJob job;
        job.count = 16;
        job.load = [&](std::size_t k) {
            const int now = ++loading;
            int seen = most.load();
            while (now > seen && !most.compare_exchange_weak(seen, now)) {
            }
            // Long enough for every worker to be loading at once.
            std::this_thread::sleep_for(std::chrono::milliseconds(40));
            --loading;
            return flatImage(40, 30, static_cast<unsigned>(k));
        };
        job.store = [&](std::size_t, const uot::Image&) { ++stored; };
        uot::BatchedRecolorOptions options;
        options.batchedSolver = "test-one-by-one";
        options.groupSize = 4;
        const uot::BatchedRecolorReport report = uot::runBatchedRecolor(reference, settings, job, options);
        QCOMPARE(stored.load(), 16);
        for (const uot::BatchedItemOutcome& item : report.items)
            QVERIFY2(item.status == uot::BatchedItemStatus::Done, item.message.c_str());
        UOT_QVERIFY_MSG(most.load() == threads - 1,
                        "images loaded at once: " << most.load() << ", expected " << threads - 1 << " (threads "
                                                  << threads << ", hardware " << std::thread::hardware_concurrency()
                                                  << ")");
    }

    // Every third image is this process's: the others are never loaded, stored or
    // reported; each image is asked about once, in increasing order.
    void onlyTheClaimedImagesAreDone()
    {
        uot::RecolorSettings settings;
        settings.transport.solver = "fused";
        settings.threads = 4;
        settings.palette.size = 16;
        const auto reference = uot::computePalette(flatImage(40, 30, 99), settings);
        std::mutex seen;
        std::vector<std::size_t> asked, loaded, stored, reported;
        uot::BatchedRecolorJob job;
        job.count = 20;
        job.load = [&](std::size_t k) {
            const std::lock_guard lock(seen);
            loaded.push_back(k);
            return flatImage(40, 30, static_cast<unsigned>(k));
        };
        job.store = [&](std::size_t k, const uot::Image&) {
            const std::lock_guard lock(seen);
            stored.push_back(k);
        };
        job.skip = [](std::size_t k) { return k == 3 ? std::string("output exists") : std::string(); };
        uot::BatchedRecolorOptions options;
        options.batchedSolver = "test-one-by-one";
        options.groupSize = 4;
        uot::BatchedRecolorControl control;
        control.claim = [&](std::size_t k) {
            const std::lock_guard lock(seen);
            asked.push_back(k);
            return k % 3 == 0;
        };
        control.onFinished = [&](std::size_t k, const uot::BatchedItemOutcome&) { reported.push_back(k); };
        const uot::BatchedRecolorReport report = uot::runBatchedRecolor(reference, settings, job, options, control);
        std::vector<std::size_t> everyImage(20), mine, mineDone;
        std::iota(everyImage.begin(), everyImage.end(), std::size_t{0});
        for (std::size_t k = 0; k < 20; k += 3) mine.push_back(k);
        for (const std::size_t k : mine)
            if (k != 3) mineDone.push_back(k);
        QCOMPARE(asked, everyImage);
        std::sort(loaded.begin(), loaded.end());
        std::sort(stored.begin(), stored.end());
        std::sort(reported.begin(), reported.end());
        QCOMPARE(loaded, mineDone);  // image 3 skipped before its load
        QCOMPARE(stored, mineDone);
        QCOMPARE(reported, mine);
        QVERIFY(report.items[3].status == uot::BatchedItemStatus::Skipped);
        QCOMPARE(QString::fromStdString(report.items[3].message), QString("output exists"));
        for (const std::size_t k : mineDone)
            QVERIFY2(report.items[k].status == uot::BatchedItemStatus::Done, report.items[k].message.c_str());
    }
};

QTEST_GUILESS_MAIN(TestBatchedRecolorScheduling)
#include "test_batched_recolor_scheduling.moc"
