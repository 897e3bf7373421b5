// The GPU set-up: the cost built on the device from the points against the
// host's cost rows, plans from a device-built cost and from an uploaded
// (chunked, overlapped) dense cost against the float64 reference solver, and
// the backend's cache of device contexts: reused by the next solver of the
// same kind, freed (never reused) after a failed solve, sound after a
// cancelled one and after a change of size, empty after releaseDeviceContexts.

#include <QTest>

#include <atomic>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "core/registry/solver_registry.h"
#include "core/transport/kernel_matrix.h"
#include "core/transport/uot_error.h"
#include "tests/gpu/gpu_test_support.h"

using namespace uot;
using namespace uot::test;

namespace {

// A deterministic 3-D point-cloud problem (palette-like: colours in [0, 1]^3).
struct Cloud {
    std::vector<double> x, y, a, b;
    UotProblem problem;
    Cloud(std::size_t m, std::size_t n, double eps, unsigned seed = 3) : x(m * 3), y(n * 3), a(m, 1.0 / m), b(n, 1.2 / n)
    {
        unsigned state = seed * 2654435761u + 7u;
        auto next = [&state]() {
            state = state * 1664525u + 1013904223u;
            return (state >> 8) / double(1u << 24);
        };
        for (double& v : x) v = next();
        for (double& v : y) v = next();
        problem.cost = PointCloudCost{x.data(), y.data(), m, n, 3, 1.0 / 3};
        problem.a = a;
        problem.b = b;
        problem.eps = eps;
    }
    Cloud(const Cloud&) = delete;
    Cloud& operator=(const Cloud&) = delete;
};

// The same problem with its cost written out on the host (row by row, by the CPU code).
struct DenseCopy {
    std::vector<double> cost;
    std::vector<float> cost32;
    UotProblem problem;
    DenseCopy(const UotProblem& p, bool f32) : cost(p.rows() * p.cols())
    {
        for (std::size_t i = 0; i < p.rows(); ++i) fillCostRow(p.cost, i, cost.data() + i * p.cols());
        problem = p;
        if (f32) {
            cost32.assign(cost.begin(), cost.end());
            problem.cost = DenseCost{cost32.data(), nullptr, p.rows(), p.cols()};
        } else {
            problem.cost = DenseCost{nullptr, cost.data(), p.rows(), p.cols()};
        }
    }
};

double tolFor(Precision precision) { return precision == Precision::Fp64 ? 1e-9 : 1e-4; }

SolveResult referenceSolve(const UotProblem& p)
{
    return uot::createSolver("reference")->solve(p, options(Precision::Fp64, 20000, 1e-13));
}

}  // namespace

class TestGpuSetup : public QObject {
    Q_OBJECT
private slots:
    void initTestCase() { UOT_QSKIP_WITHOUT_GPU(); }
    void init() { gpu::releaseDeviceContexts(); }

    void deviceCostEqualsHostCost()
    {
        const Cloud c(257, 131, 0.05);
        const std::vector<double> device = gpu::pointCloudCostOnDevice(std::get<PointCloudCost>(c.problem.cost));
        QCOMPARE(device.size(), std::size_t(257 * 131));
        std::vector<double> row(131);
        double worst = 0;
        for (std::size_t i = 0; i < 257; ++i) {
            fillCostRow(c.problem.cost, i, row.data());
            for (std::size_t j = 0; j < 131; ++j)
                worst = std::max(worst, std::abs(device[i * 131 + j] - row[j]) / std::max(row[j], 1e-300));
        }
        QVERIFY2(worst <= 4 * std::numeric_limits<double>::epsilon(), qPrintable(QString::number(worst)));
    }

    // Device-built cost, uploaded fp64 cost and uploaded fp32 cost: each plan
    // within 1e-9 (fp64) / 1e-4 (fp32) of the float64 reference. The sizes
    // take several upload chunks (and a last, shorter one).
    void plansFromEveryCostPathMatchReference_data()
    {
        QTest::addColumn<int>("rows");
        QTest::addColumn<int>("cols");
        QTest::addColumn<bool>("fp64");
        for (bool fp64 : {true, false}) {
            QTest::addRow("512x512 %s", fp64 ? "fp64" : "fp32") << 512 << 512 << fp64;
            QTest::addRow("1031x777 %s", fp64 ? "fp64" : "fp32") << 1031 << 777 << fp64;
        }
    }
    void plansFromEveryCostPathMatchReference()
    {
        QFETCH(int, rows);
        QFETCH(int, cols);
        QFETCH(bool, fp64);
        const Precision precision = fp64 ? Precision::Fp64 : Precision::Fp32;
        const Cloud c(std::size_t(rows), std::size_t(cols), 0.05);
        const SolveResult ref = referenceSolve(c.problem);
        QVERIFY(ref.converged);
        const DenseCopy dense64(c.problem, false), dense32(c.problem, true);
        const SolveOptions o = options(precision, 20000, fp64 ? 1e-12 : 1e-6);
        const struct {
            const char* name;
            const UotProblem* problem;
        } paths[] = {{"device-built", &c.problem}, {"uploaded fp64", &dense64.problem}, {"uploaded fp32", &dense32.problem}};
        for (const auto& path : paths) {
            if (fp64 && path.problem == &dense32.problem) continue;  // an fp32 cost is not an fp64 problem
            const SolveResult r = gpu::createSolver("gpu-fused")->solve(*path.problem, o);
            QVERIFY2(r.converged, path.name);
            const double d = planRelativeL1(c.problem, r, ref);
            QVERIFY2(d <= tolFor(precision), qPrintable(QString("%1: %2").arg(path.name).arg(d)));
        }
    }

    // A bad entry in a later chunk is found and named, whichever chunk it is in.
    void badEntryInALaterChunkIsNamed()
    {
        TestProblem tp(1031, 777, 0.05, 1.0, 1.0);
        tp.cost[1000 * 777 + 5] = std::numeric_limits<double>::quiet_NaN();
        try {
            gpu::createSolver("gpu-fused")->solve(tp.problem, options(Precision::Fp64, 100, 1e-9));
            QFAIL("a NaN cost was accepted");
        } catch (const Error& e) {
            QCOMPARE(e.code(), ErrorCode::InvalidArgument);
            QVERIFY2(std::string(e.what()).find("(1000, 5)") != std::string::npos, e.what());
        }
    }

    void nextSolverReusesTheParkedContext()
    {
        const Cloud c(512, 512, 0.01);
        const SolveResult ref = referenceSolve(c.problem);
        const SolveOptions o = options(Precision::Fp64, 20000, 1e-12);
        const gpu::DeviceContextStats before = gpu::deviceContextStats();
        QCOMPARE(before.parked, std::size_t(0));
        {
            const SolveResult r = gpu::createSolver("gpu-fused")->solve(c.problem, o);
            QVERIFY(planRelativeL1(c.problem, r, ref) <= 1e-9);
        }
        const gpu::DeviceContextStats parked = gpu::deviceContextStats();
        QCOMPARE(parked.parked, std::size_t(1));
        QVERIFY2(parked.parkedDeviceBytes >= 512 * 512 * sizeof(double), qPrintable(QString::number(parked.parkedDeviceBytes)));
        QCOMPARE(parked.created, before.created + 1);
        {
            const SolveResult r = gpu::createSolver("gpu-fused")->solve(c.problem, o);
            QVERIFY(r.converged);
            const double d = planRelativeL1(c.problem, r, ref);
            QVERIFY2(d <= 1e-9, qPrintable(QString::number(d)));
        }
        const gpu::DeviceContextStats after = gpu::deviceContextStats();
        QCOMPARE(after.reused, before.reused + 1);
        QCOMPARE(after.created, before.created + 1);  // nothing new was created
        QCOMPARE(after.parked, std::size_t(1));
        // Another precision is another context.
        gpu::createSolver("gpu-fused")->solve(c.problem, options(Precision::Fp32, 20000, 1e-6));
        QCOMPARE(gpu::deviceContextStats().created, before.created + 2);
        gpu::releaseDeviceContexts();
        QCOMPARE(gpu::deviceContextStats().parked, std::size_t(0));
        QCOMPARE(gpu::deviceContextStats().parkedDeviceBytes, std::size_t(0));
    }

    void failedSolveIsNeverReused()
    {
        const Cloud good(300, 200, 0.05);
        const SolveResult ref = referenceSolve(good.problem);
        const SolveOptions o = options(Precision::Fp64, 20000, 1e-12);
        gpu::createSolver("gpu-fused")->solve(good.problem, o);
        QCOMPARE(gpu::deviceContextStats().parked, std::size_t(1));
        const gpu::DeviceContextStats before = gpu::deviceContextStats();
        {
            TestProblem bad(300, 200, 0.05, 1.0, 1.0);
            bad.cost[7] = -1.0;
            auto solver = gpu::createSolver("gpu-fused");
            QVERIFY_THROWS_EXCEPTION(Error, solver->solve(bad.problem, o));
        }
        const gpu::DeviceContextStats afterFailure = gpu::deviceContextStats();
        QCOMPARE(afterFailure.discarded, before.discarded + 1);
        QCOMPARE(afterFailure.parked, std::size_t(0));  // taken by the failed solver, freed with it
        const SolveResult r = gpu::createSolver("gpu-fused")->solve(good.problem, o);
        QCOMPARE(gpu::deviceContextStats().created, before.created + 1);
        const double d = planRelativeL1(good.problem, r, ref);
        QVERIFY2(d <= 1e-9, qPrintable(QString::number(d)));
    }

    void cancelledSolveThenSizeChangeStaySound()
    {
        const Cloud big(700, 650, 0.003);
        // Cancelled at the first progress report, with work queued on the device.
        std::atomic<bool> cancel{false};
        SolveControl control;
        control.cancel = &cancel;
        control.onProgress = [&cancel](const SolveProgress&) { cancel = true; };
        {
            const SolveResult r = gpu::createSolver("gpu-fused")->solve(
                big.problem, options(Precision::Fp64, 20000, 1e-14, 1), control);
            QVERIFY(r.cancelled);
            QVERIFY(!r.converged);
        }
        QCOMPARE(gpu::deviceContextStats().parked, std::size_t(1));
        const std::uint64_t reused = gpu::deviceContextStats().reused;
        // Same size after the cancel, then a smaller and a larger one: each from the reused context.
        for (std::size_t m : {700, 123, 900}) {
            const Cloud c(m, m / 2 + 50, 0.05, unsigned(m));
            const SolveResult ref = referenceSolve(c.problem);
            const SolveResult r = gpu::createSolver("gpu-fused")->solve(c.problem, options(Precision::Fp64, 20000, 1e-12));
            const double d = planRelativeL1(c.problem, r, ref);
            QVERIFY2(r.converged && d <= 1e-9, qPrintable(QString("%1 rows: %2").arg(m).arg(d)));
        }
        QCOMPARE(gpu::deviceContextStats().reused, reused + 3);
        QCOMPARE(gpu::deviceContextStats().parked, std::size_t(1));
    }
};

QTEST_APPLESS_MAIN(TestGpuSetup)
#include "test_gpu_setup.moc"
