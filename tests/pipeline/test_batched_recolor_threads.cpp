// The batched recolor engine (core/pipeline/batched_recolor.h) keeps to the CPU
// threads it is given: with settings.threads = N it loads (decodes) at most N - 1
// images at once (one thread of N drives the device), whatever the machine's
// core count, so that several MPI ranks of one node (uot-mpi batch, each given
// its share of the node) do not each start a worker per core of the node.
// A stand-in batched solver (each problem solved alone by the CPU fused solver)
// takes the place of the GPU one.

#include <QtTest/QtTest>
#include <algorithm>
#include <atomic>
#include <chrono>
#include <thread>

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

class TestBatchedRecolorThreads : public QObject {
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
};

QTEST_GUILESS_MAIN(TestBatchedRecolorThreads)
#include "test_batched_recolor_threads.moc"
