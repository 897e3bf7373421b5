// The matrix-free `mapreduce` variant against independent references: the
// float64 stored-matrix `reference` solver (multiplicative, K built from the
// clouds) for ordinary eps, the float64 `log` variant (stored log-kernel) for
// eps 1e-3 and 1e-4, and the host float64 plan evaluation; warm start,
// cancellation, the translation-invariant mode, bad input, and `uot solve
// --x --y` end to end.

#include <QFileInfo>
#include <QProcess>
#include <QTemporaryDir>
#include <QtTest>

#include <atomic>
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "core/npy/npy_io.h"
#include "core/registry/device_registry.h"
#include "core/registry/solver_registry.h"
#include "core/transport/plan_evaluation.h"
#include "core/transport/point_cloud_cost.h"
#include "core/transport/uot_error.h"
#include "tests/support/relocatable_path.h"

using namespace uot;

namespace {

// The `uot` executable: the build tree's, or $UOT_CLI (the test bundle sets it);
// the CLI cases skip, saying why, where neither exists.
QString uotCli()
{
    return uot::test::relocatablePath("UOT_CLI", QStringLiteral(UOT_CLI_PATH));
}


// Random points in the unit cube [0,1]^d, scale 1/d: costs in [0, 1].
struct CloudProblem {
    std::vector<double> x, y, a, b;
    UotProblem problem;

    CloudProblem(std::size_t m, std::size_t n, std::size_t d, unsigned seed, double eps = 0.05, double tauA = 1.0,
                 double tauB = 1.0)
        : x(m * d), y(n * d), a(m), b(n)
    {
        std::mt19937 rng(seed);
        std::uniform_real_distribution<double> unit(0.0, 1.0);
        for (double& v : x) v = unit(rng);
        for (double& v : y) v = 0.8 * unit(rng) + 0.1;
        double sa = 0, sb = 0;
        for (double& v : a) sa += v = 0.5 + unit(rng);
        for (double& v : b) sb += v = 0.5 + unit(rng);
        for (double& v : a) v /= sa;
        for (double& v : b) v *= 1.3 / sb;  // unequal masses
        problem.cost = PointCloudCost{x.data(), y.data(), m, n, d, 1.0 / static_cast<double>(d)};
        problem.a = a;
        problem.b = b;
        problem.eps = eps;
        problem.tauA = tauA;
        problem.tauB = tauB;
    }
};

SolveOptions fixedIterations(int iterations, Precision precision, int threads = 2)
{
    SolveOptions o;
    o.precision = precision;
    o.maxIterations = iterations;
    o.tolerance = 0;
    o.checkEvery = 5;
    o.threads = threads;
    return o;
}

// sum |P - Q| / sum |Q| over the two plans, computed in float64 from the clouds.
double planRelL1(const UotProblem& p, const SolveResult& x, const SolveResult& ref)
{
    std::vector<double> px(p.rows() * p.cols()), py(px.size());
    computePlan(p, x.logU, x.logV, px.data());
    computePlan(p, ref.logU, ref.logV, py.data());
    double diff = 0, norm = 0;
    for (std::size_t k = 0; k < px.size(); ++k) {
        diff += std::abs(px[k] - py[k]);
        norm += std::abs(py[k]);
    }
    return diff / norm;
}

bool allFinite(const std::vector<double>& v)
{
    for (double e : v)
        if (!std::isfinite(e)) return false;
    return true;
}

}  // namespace

class TestMapReduceSolver : public QObject {
    Q_OBJECT

private slots:
    void matchesReference_data()
    {
        QTest::addColumn<int>("m");
        QTest::addColumn<int>("n");
        QTest::addColumn<int>("d");
        QTest::addColumn<double>("tauA");
        QTest::addColumn<double>("tauB");
        QTest::addColumn<bool>("product");
        QTest::newRow("1x7 d3") << 1 << 7 << 3 << 1.0 << 1.0 << false;
        QTest::newRow("7x1 d3 tau inf/2") << 7 << 1 << 3 << kInfinity << 2.0 << false;
        QTest::newRow("37x53 d1") << 37 << 53 << 1 << 0.7 << 2.0 << false;
        QTest::newRow("37x53 d5 balanced") << 37 << 53 << 5 << kInfinity << kInfinity << false;
        QTest::newRow("37x53 d8 product") << 37 << 53 << 8 << 1.0 << kInfinity << true;
        QTest::newRow("37x53 d3 product") << 37 << 53 << 3 << 0.5 << 0.5 << true;
        QTest::newRow("513x1025 d3") << 513 << 1025 << 3 << 1.0 << kInfinity << false;
        QTest::newRow("513x1025 d8") << 513 << 1025 << 8 << 2.0 << 1.0 << false;
    }

    // Iterate for iterate, the plan agrees with the float64 stored-matrix
    // reference to 1e-9 (fp64) and 1e-4 (fp32) relative L1; mass too.
    void matchesReference()
    {
        QFETCH(int, m);
        QFETCH(int, n);
        QFETCH(int, d);
        QFETCH(double, tauA);
        QFETCH(double, tauB);
        QFETCH(bool, product);
        CloudProblem cp(m, n, d, static_cast<unsigned>(m * 131 + n * 7 + d), 0.05, tauA, tauB);
        if (product) cp.problem.reference = ReferenceMeasure::Product;
        const SolveResult ref = createSolver("reference")->solve(cp.problem, fixedIterations(30, Precision::Fp64, 1));
        for (Precision precision : {Precision::Fp64, Precision::Fp32}) {
            const SolveResult r = createSolver("mapreduce")->solve(cp.problem, fixedIterations(30, precision));
            const double tol = precision == Precision::Fp64 ? 1e-9 : 1e-4;
            const double dist = planRelL1(cp.problem, r, ref);
            QVERIFY2(dist <= tol, qPrintable(QString("%1: plan rel L1 %2").arg(toString(precision).c_str()).arg(dist)));
            QCOMPARE(r.iterations, 30);
            QCOMPARE(r.solver, std::string("mapreduce"));
            QVERIFY(r.status == NumericalStatus::Ok);
            QVERIFY(std::abs(r.mass - ref.mass) <= tol * ref.mass);
            QVERIFY(std::abs(r.objective - ref.objective) <= tol * std::max(1.0, std::abs(ref.objective)) ||
                    (std::isinf(ref.objective) && std::isinf(r.objective)));
        }
    }

    void smallEps_data()
    {
        QTest::addColumn<double>("eps");
        QTest::addColumn<int>("d");
        QTest::addColumn<double>("tau");
        QTest::addColumn<double>("fp32Tol");
        // fp32: the scores -C/eps + log v are ~1e3-1e4 here, rounded to float
        // (measured 1e-5 at eps 1e-3, 6e-5 at eps 1e-4).
        QTest::newRow("eps 1e-3 d3") << 1e-3 << 3 << 1.0 << 1e-4;
        QTest::newRow("eps 1e-4 d3") << 1e-4 << 3 << 1.0 << 5e-4;
        QTest::newRow("eps 1e-3 d5 balanced") << 1e-3 << 5 << kInfinity << 1e-4;
        QTest::newRow("eps 1e-4 d1") << 1e-4 << 1 << 0.1 << 5e-4;
    }

    // Where exp(-C/eps) underflows in any precision: no NaN or Inf, and the
    // same iterate as the float64 stored log-kernel (`log`).
    void smallEps()
    {
        QFETCH(double, eps);
        QFETCH(int, d);
        QFETCH(double, tau);
        QFETCH(double, fp32Tol);
        CloudProblem cp(60, 90, d, 11u + static_cast<unsigned>(d), eps, tau, tau);
        const SolveResult ref = createSolver("log")->solve(cp.problem, fixedIterations(40, Precision::Fp64, 1));
        QVERIFY(allFinite(ref.logU) && allFinite(ref.logV));
        for (Precision precision : {Precision::Fp64, Precision::Fp32}) {
            const SolveResult r = createSolver("mapreduce")->solve(cp.problem, fixedIterations(40, precision));
            QVERIFY(r.status == NumericalStatus::Ok);
            QVERIFY(allFinite(r.logU) && allFinite(r.logV));
            QVERIFY(std::isfinite(r.mass) && std::isfinite(r.marginalErrorA) && std::isfinite(r.marginalErrorB));
            const double dist = planRelL1(cp.problem, r, ref);
            const double tol = precision == Precision::Fp64 ? 1e-9 : fp32Tol;
            QVERIFY2(dist <= tol, qPrintable(QString("%1: plan rel L1 %2").arg(toString(precision).c_str()).arg(dist)));
        }
    }

    // Mass, marginal errors and objective (matrix-free) equal the host float64
    // evaluation over the materialised plan.
    void evaluationMatchesHostPlan()
    {
        CloudProblem cp(200, 150, 3, 5, 0.02, 0.8, 3.0);
        for (Precision precision : {Precision::Fp64, Precision::Fp32}) {
            const SolveResult r = createSolver("mapreduce")->solve(cp.problem, fixedIterations(25, precision));
            const PlanEvaluation host = evaluatePlan(cp.problem, r.logU, r.logV, 1);
            QVERIFY(std::abs(r.mass - host.mass) <= 1e-11 * host.mass);
            QVERIFY(std::abs(r.marginalErrorA - host.marginalErrorA) <= 1e-10 * host.mass);
            QVERIFY(std::abs(r.marginalErrorB - host.marginalErrorB) <= 1e-10 * host.mass);
            QVERIFY(std::abs(r.objective - host.objective) <= 1e-10 * std::abs(host.objective));
        }
    }

    // 20 iterations, then 20 more warm-started from u, v: the 40-iteration iterate.
    void warmStartContinues()
    {
        CloudProblem cp(80, 120, 3, 21);
        auto solver = createSolver("mapreduce");
        const SolveResult straight = solver->solve(cp.problem, fixedIterations(40, Precision::Fp64));
        const SolveResult first = solver->solve(cp.problem, fixedIterations(20, Precision::Fp64));
        SolveOptions rest = fixedIterations(20, Precision::Fp64);
        const std::vector<double> u = first.u(), v = first.v();
        rest.warmU = u;
        rest.warmV = v;
        const SolveResult second = solver->solve(cp.problem, rest);
        QVERIFY(planRelL1(cp.problem, second, straight) <= 1e-12);
    }

    // The same from the logs (warmLogU/V: how eps-scaling stages and the fallback
    // hand over, and the only form that carries a start whose e^(log u) overflows):
    // the logs were ignored and the second solve started over from zero.
    void warmLogStartContinues()
    {
        CloudProblem cp(80, 120, 3, 22, 1e-3);
        auto solver = createSolver("mapreduce");
        const SolveResult straight = solver->solve(cp.problem, fixedIterations(40, Precision::Fp64));
        const SolveResult first = solver->solve(cp.problem, fixedIterations(20, Precision::Fp64));
        SolveOptions rest = fixedIterations(20, Precision::Fp64);
        rest.warmLogU = first.logU;
        rest.warmLogV = first.logV;
        const SolveResult second = solver->solve(cp.problem, rest);
        QVERIFY(planRelL1(cp.problem, second, straight) <= 1e-12);
    }

    void sameBitsForAnyThreadCount()
    {
        CloudProblem cp(300, 257, 3, 3);
        auto solver = createSolver("mapreduce");
        for (Precision precision : {Precision::Fp64, Precision::Fp32}) {
            const SolveResult one = solver->solve(cp.problem, fixedIterations(20, precision, 1));
            const SolveResult two = solver->solve(cp.problem, fixedIterations(20, precision, 2));
            QVERIFY(one.logU == two.logU && one.logV == two.logV);
        }
    }

    // A cancel requested at the first check stops the solve there; a cancel set
    // before the start runs no iteration.
    void cancellation()
    {
        CloudProblem cp(400, 400, 3, 8);
        std::atomic<bool> cancel{false};
        SolveControl control;
        control.cancel = &cancel;
        control.onProgress = [&](const SolveProgress&) { cancel.store(true); };
        SolveOptions o = fixedIterations(10000, Precision::Fp32);
        o.checkEvery = 3;
        const SolveResult r = createSolver("mapreduce")->solve(cp.problem, o, control);
        QVERIFY(r.cancelled);
        QVERIFY(r.iterations >= 3 && r.iterations <= 5);
        QVERIFY(allFinite(r.logU) && allFinite(r.logV));
        cancel.store(true);
        control.onProgress = {};
        const SolveResult none = createSolver("mapreduce")->solve(cp.problem, o, control);
        QVERIFY(none.cancelled);
        QCOMPARE(none.iterations, 0);
    }

    // The translation-invariant mode converges to the plain iteration's fixed
    // point (the reference solver run to convergence) in fewer iterations.
    void translationInvariantSameFixedPoint()
    {
        CloudProblem cp(120, 90, 3, 17, 0.02, 1.0, 1.0);
        SolveOptions o;
        o.precision = Precision::Fp64;
        o.maxIterations = 20000;
        o.tolerance = 1e-12;
        o.checkEvery = 10;
        o.threads = 2;
        const SolveResult ref = createSolver("reference")->solve(cp.problem, o);
        QVERIFY(ref.converged);
        o.mode = IterationMode::TranslationInvariant;
        const SolveResult ti = createSolver("mapreduce")->solve(cp.problem, o);
        QVERIFY(ti.converged);
        QCOMPARE(ti.mode, std::string("translation-invariant"));
        QVERIFY2(planRelL1(cp.problem, ti, ref) <= 1e-8,
                 qPrintable(QString::number(planRelL1(cp.problem, ti, ref))));
        QVERIFY(ti.iterations < ref.iterations);
    }

    // TI + automatic over-relaxation through the shared loop's relaxed step: the
    // reference's converged plan (1e-8) in at least 5x fewer passes than plain
    // map-reduce (measured 13x at eps 0.01 and 28x at eps 1e-3 on 150 x 90 points;
    // TI alone, which is what the variant ran before it took relaxation, 3.5x / 1.6x).
    void relaxedTranslationInvariantNeedsFewerPasses_data()
    {
        QTest::addColumn<double>("eps");
        QTest::newRow("eps 0.01") << 0.01;
        QTest::newRow("eps 0.003") << 0.003;
    }

    void relaxedTranslationInvariantNeedsFewerPasses()
    {
        QFETCH(double, eps);
        CloudProblem cp(90, 70, 3, 23, eps, 1.0, 1.0);
        SolveOptions o;
        o.precision = Precision::Fp64;
        o.maxIterations = 200000;
        o.tolerance = 1e-10;
        o.threads = 2;
        const SolveResult ref = createSolver("reference")->solve(cp.problem, o);
        QVERIFY(ref.converged);
        const SolveResult plain = createSolver("mapreduce")->solve(cp.problem, o);
        QVERIFY(plain.converged);
        o.mode = IterationMode::TranslationInvariant;
        o.acceleration = Acceleration::Auto;
        const SolveResult fast = createSolver("mapreduce")->solve(cp.problem, o);
        QVERIFY(fast.converged);
        QCOMPARE(fast.acceleration, std::string("auto"));
        QVERIFY2(planRelL1(cp.problem, fast, ref) <= 1e-8, qPrintable(QString::number(planRelL1(cp.problem, fast, ref))));
        QVERIFY2(5 * fast.passes <= plain.passes,
                 qPrintable(QString("%1 passes vs %2 plain").arg(fast.passes).arg(plain.passes)));
    }

    void rejectsBadInput()
    {
        std::vector<double> cost(6, 0.5), a(2, 0.5), b(3, 0.3);
        UotProblem dense;
        dense.cost = DenseCost{nullptr, cost.data(), 2, 3};
        dense.a = a;
        dense.b = b;
        try {
            createSolver("mapreduce")->solve(dense, fixedIterations(5, Precision::Fp64));
            QFAIL("a dense cost was accepted");
        } catch (const Error& e) {
            QVERIFY(e.code() == ErrorCode::InvalidArgument);
            QVERIFY(std::string(e.what()).find("point clouds") != std::string::npos);
        }
        CloudProblem nine(4, 5, 9, 1);
        try {
            createSolver("mapreduce")->solve(nine.problem, fixedIterations(5, Precision::Fp64));
            QFAIL("dimension 9 was accepted");
        } catch (const Error& e) {
            QVERIFY(std::string(e.what()).find("dimension") != std::string::npos);
        }
        CloudProblem nan(4, 5, 3, 1);
        nan.y[7] = std::nan("");
        try {
            createSolver("mapreduce")->solve(nan.problem, fixedIterations(5, Precision::Fp64));
            QFAIL("a NaN coordinate was accepted");
        } catch (const Error& e) {
            QVERIFY(std::string(e.what()).find("y[2] coordinate 1") != std::string::npos);
        }
    }

    // The switch `uot solve` and the colour pipeline use (the registry's): a matrix
    // that cannot fit (2^20 x 2^20 fp32 is 4 TiB) goes matrix-free; a small one
    // stays stored, as the CPU has no crossover (fused is faster where K fits).
    void matrixFreeDecision()
    {
        const std::uint64_t memory = memoryForMatrix(DeviceKind::Cpu, 0);
        if (memory > 0) {
            QCOMPARE(matrixFreeInstead("auto", std::size_t(1) << 20, std::size_t(1) << 20, Precision::Fp32, memory)
                         .value_or(""),
                     std::string("mapreduce"));
            QCOMPARE(matrixFreeInstead("auto", std::size_t(1) << 22, std::size_t(1) << 21, Precision::Fp64, memory)
                         .value_or(""),
                     std::string("mapreduce"));
        }
        QVERIFY(!matrixFreeInstead("auto", 100, 100, Precision::Fp32, memory));
        QVERIFY(!matrixFreeInstead("fused", 100, 100, Precision::Fp64, memory));  // far below any crossover
        // The largest squared distance of two clouds, against the analytic value.
        const double x[] = {0, 0, 1, 1}, y[] = {3, 4, -1, 0.5};  // d = 2: x0=(0,0) x1=(1,1); y0=(3,4) y1=(-1,0.5)
        QCOMPARE(maxSquaredDistance(x, 2, y, 2, 2, 1), 25.0);
    }

    // `uot solve --x X.npy --y Y.npy --plan`: the written plan equals the
    // float64 reference solver's on the same clouds; with a float32 cloud too.
    void cliSolvesPointClouds()
    {
        if (!QFileInfo(uotCli()).isExecutable())
            QSKIP(qPrintable("no uot executable at " + uotCli() + " (set UOT_CLI to one)"));
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        const std::string root = dir.path().toStdString();
        CloudProblem cp(40, 30, 3, 4, 0.05, 1.0, kInfinity);
        npy::writeNpy(root + "/x.npy", cp.x.data(), {40, 3});
        std::vector<float> y32(cp.y.begin(), cp.y.end());
        npy::writeNpy(root + "/y.npy", y32.data(), {30, 3});
        npy::writeNpy(root + "/a.npy", cp.a.data(), {40});
        npy::writeNpy(root + "/b.npy", cp.b.data(), {30});
        for (const QString solver : {"mapreduce", "fused"}) {
            QProcess p;
            p.start(uotCli(), {"solve", "--x", QString::fromStdString(root + "/x.npy"), "--y",
                                   QString::fromStdString(root + "/y.npy"), "--a", QString::fromStdString(root + "/a.npy"),
                                   "--b", QString::fromStdString(root + "/b.npy"), "--out-dir",
                                   QString::fromStdString(root + "/out-" + solver.toStdString()), "--solver", solver,
                                   "--precision", "fp64", "--tau-b", "inf", "--max-iter", "30", "--fixed-iterations", "--plan"});
            QVERIFY(p.waitForFinished(60000));
            QVERIFY2(p.exitCode() == 0, p.readAllStandardError().constData());
            // The reference on the same clouds (y rounded to float32 as written),
            // cost scale 1/max cost (the CLI's default).
            std::vector<double> y(y32.begin(), y32.end());
            UotProblem prob = cp.problem;
            double maxC = 0;
            for (std::size_t i = 0; i < 40; ++i)
                for (std::size_t j = 0; j < 30; ++j) {
                    double c = 0;
                    for (std::size_t k = 0; k < 3; ++k) c += std::pow(cp.x[i * 3 + k] - y[j * 3 + k], 2);
                    maxC = std::max(maxC, c);
                }
            prob.cost = PointCloudCost{cp.x.data(), y.data(), 40, 30, 3, 1.0 / maxC};
            const SolveResult ref = createSolver("reference")->solve(prob, fixedIterations(30, Precision::Fp64, 1));
            std::vector<double> expected(40 * 30);
            computePlan(prob, ref.logU, ref.logV, expected.data());
            const npy::Array plan = npy::readNpy(root + "/out-" + solver.toStdString() + "/plan.npy");
            QCOMPARE(plan.rows(), std::size_t(40));
            QCOMPARE(plan.cols(), std::size_t(30));
            const std::vector<double> got = plan.toDouble();
            double diff = 0, norm = 0;
            for (std::size_t k = 0; k < got.size(); ++k) {
                diff += std::abs(got[k] - expected[k]);
                norm += expected[k];
            }
            QVERIFY2(diff / norm <= 1e-9, qPrintable(solver + ": " + QString::number(diff / norm)));
        }
    }

    // Mismatched dimensions and a cost given twice are usage errors (exit 2).
    void cliRejectsBadClouds()
    {
        if (!QFileInfo(uotCli()).isExecutable())
            QSKIP(qPrintable("no uot executable at " + uotCli() + " (set UOT_CLI to one)"));
        QTemporaryDir dir;
        const std::string root = dir.path().toStdString();
        std::vector<double> x(12, 0.5), y(10, 0.25), a(4, 0.25), b(5, 0.2);
        npy::writeNpy(root + "/x.npy", x.data(), {4, 3});
        npy::writeNpy(root + "/y.npy", y.data(), {5, 2});
        npy::writeNpy(root + "/a.npy", a.data(), {4});
        npy::writeNpy(root + "/b.npy", b.data(), {5});
        QProcess p;
        p.start(uotCli(), {"solve", "--x", QString::fromStdString(root + "/x.npy"), "--y",
                               QString::fromStdString(root + "/y.npy"), "--a", QString::fromStdString(root + "/a.npy"),
                               "--b", QString::fromStdString(root + "/b.npy"), "--out-dir",
                               QString::fromStdString(root + "/out")});
        QVERIFY(p.waitForFinished(60000));
        QVERIFY(p.exitCode() != 0);
        QVERIFY(QString(p.readAllStandardError()).contains("dimension"));
    }
};

QTEST_GUILESS_MAIN(TestMapReduceSolver)
#include "test_mapreduce_solver.moc"
