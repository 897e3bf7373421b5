// Over-relaxation (--accel relax|auto) and eps-scaling (--eps-schedule) of the CPU
// variants against independent references: the float64 reference solver
// (plain UOT Sinkhorn, two mat-vecs per iteration, no acceleration) run to
// convergence. Accelerated and annealed solves must reach its plan to 1e-9
// (relative L1, float64); the safeguard must turn a fixed omega 1.9 that
// diverges into a converging solve; the log-domain variant must solve eps 1e-4
// with costs in [0, 1] through eps-scaling, and agree there with the plain
// log-domain iteration run to convergence; bad parameters must be rejected
// with messages that say what is wrong.

#include <QTest>

#include <cmath>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "core/registry/solver_registry.h"
#include "core/transport/eps_scaling.h"
#include "core/transport/uot_error.h"
#include "tests/gpu/plan_distance.h"

using namespace uot;

namespace {

// Random point clouds in the unit cube, squared distances scaled to [0, 1],
// weights with different total masses (a truly unbalanced problem).
struct CloudProblem {
    std::vector<double> x, y, a, b;
    UotProblem problem;
    CloudProblem(std::size_t m, std::size_t n, double eps, double tauA, double tauB, unsigned seed)
        : x(3 * m), y(3 * n), a(m), b(n)
    {
        std::mt19937 gen(seed);
        std::uniform_real_distribution<double> unit(0.0, 1.0);
        for (double& t : x) t = unit(gen);
        for (double& t : y) t = unit(gen);
        double sa = 0, sb = 0;
        for (double& t : a) sa += (t = 0.5 + unit(gen));
        for (double& t : b) sb += (t = 0.5 + unit(gen));
        for (double& t : a) t /= sa;
        for (double& t : b) t /= 1.3 * sb;
        problem.cost = PointCloudCost{x.data(), y.data(), m, n, 3, 1.0 / 3.0};
        problem.a = a;
        problem.b = b;
        problem.eps = eps;
        problem.tauA = tauA;
        problem.tauB = tauB;
    }
};

SolveOptions fp64Options(int maxIterations, double tolerance)
{
    SolveOptions o;
    o.precision = Precision::Fp64;
    o.maxIterations = maxIterations;
    o.tolerance = tolerance;
    o.threads = 2;
    o.evaluateFinalPlan = false;
    return o;
}

// The oracle: the float64 reference solver, plain iteration, to POT's criterion
// 1e-13 (computed once per problem: the data rows share problems).
const SolveResult& referencePlan(const UotProblem& problem, const std::string& key)
{
    static std::map<std::string, SolveResult> cache;
    auto it = cache.find(key);
    if (it == cache.end()) {
        auto reference = createSolver("reference");
        it = cache.emplace(key, reference->solve(problem, fp64Options(400000, 1e-13))).first;
    }
    return it->second;
}

}  // namespace

class TestAcceleration : public QObject {
    Q_OBJECT

private slots:
    void reachesTheReferencePlan_data();
    void reachesTheReferencePlan();
    void safeguardPreventsDivergence();
    void logDomainDownToEps1e4();
    void badParametersAreRejected_data();
    void badParametersAreRejected();
    void scheduleStagesEndAtTheTarget();
    void stoppingMeansTheMarginalConditionsHold_data();
    void stoppingMeansTheMarginalConditionsHold();
    void scheduleProgressCountsAcrossStages();
};

void TestAcceleration::reachesTheReferencePlan_data()
{
    QTest::addColumn<QString>("variant");
    QTest::addColumn<int>("mode");          // IterationMode
    QTest::addColumn<int>("acceleration");  // Acceleration
    QTest::addColumn<bool>("schedule");
    QTest::addColumn<double>("eps");
    QTest::addColumn<double>("tauA");
    QTest::addColumn<double>("tauB");
    const char* variants[] = {"pot-style", "fused", "log", "mapuot"};
    for (const char* v : variants)
        for (int mode : {0, 1})
            for (int acc : {1, 2})
                for (bool schedule : {false, true}) {
                    const std::string base = std::string(v) + (mode ? " ti" : " plain") + (acc == 1 ? " relax" : " auto") +
                                             (schedule ? " eps-scaling" : "");
                    QTest::newRow((base + " tau 1").c_str()) << QString(v) << mode << acc << schedule << 0.01 << 1.0 << 1.0;
                    QTest::newRow((base + " tau 0.5/2").c_str())
                        << QString(v) << mode << acc << schedule << 0.02 << 0.5 << 2.0;
                    QTest::newRow((base + " semi").c_str())
                        << QString(v) << mode << acc << schedule << 0.02 << kInfinity << 0.7;
                }
}

void TestAcceleration::reachesTheReferencePlan()
{
    QFETCH(QString, variant);
    QFETCH(int, mode);
    QFETCH(int, acceleration);
    QFETCH(bool, schedule);
    QFETCH(double, eps);
    QFETCH(double, tauA);
    QFETCH(double, tauB);
    const CloudProblem cp(60, 80, eps, tauA, tauB, 7);
    const SolveResult& reference =
        referencePlan(cp.problem, std::to_string(eps) + "/" + std::to_string(tauA) + "/" + std::to_string(tauB));
    QVERIFY2(reference.converged, "the float64 reference did not converge");

    auto solver = createSolver(variant.toStdString());
    SolveOptions o = fp64Options(100000, 1e-12);
    o.mode = static_cast<IterationMode>(mode);
    o.acceleration = static_cast<Acceleration>(acceleration);
    o.omega = 1.6;
    if (schedule) o.epsSchedule = EpsSchedule{16 * eps, 0.5};
    const SolveResult r = solver->solve(cp.problem, o);
    QVERIFY2(r.converged, qPrintable(QString("not converged: error %1 after %2 iterations").arg(r.error).arg(r.iterations)));
    QVERIFY(r.status == NumericalStatus::Ok);
    const double distance = test::planRelativeL1(cp.problem, r, reference);
    QVERIFY2(distance <= 1e-9, qPrintable(QString("plan distance to the reference %1").arg(distance)));
    if (schedule) {
        QCOMPARE(r.stages.size(), std::size_t(5));  // 16 eps, 8 eps, 4 eps, 2 eps, then the target
        QCOMPARE(r.stages.back().eps, eps);
    }
    if (variant == "mapuot") {
        QCOMPARE(QString::fromStdString(r.acceleration), QString("none"));  // cannot undo a step: runs unrelaxed
    } else {
        QCOMPARE(QString::fromStdString(r.acceleration), QString(acceleration == 1 ? "relax" : "auto"));
    }
}

void TestAcceleration::safeguardPreventsDivergence()
{
    // eps 0.003, TI with a fixed omega 1.9: without the safeguard the potentials
    // blow up; with it, omega shrinks after a rejected step and the solve converges.
    const CloudProblem cp(200, 250, 0.003, 1.0, 1.0, 3);
    const SolveResult& reference = referencePlan(cp.problem, "safeguard");
    QVERIFY(reference.converged);
    auto solver = createSolver("log");
    SolveOptions o = fp64Options(2000, 1e-10);
    o.mode = IterationMode::TranslationInvariant;
    o.acceleration = Acceleration::Relax;
    o.omega = 1.9;
    o.relaxationSafeguard = false;
    const SolveResult unguarded = solver->solve(cp.problem, o);
    QVERIFY(!unguarded.converged);
    QVERIFY2(!(unguarded.error < 1.0), qPrintable(QString("unguarded error %1").arg(unguarded.error)));
    o.relaxationSafeguard = true;
    const SolveResult guarded = solver->solve(cp.problem, o);
    QVERIFY(guarded.converged);
    QVERIFY(guarded.rejectedSteps >= 1);
    QVERIFY(guarded.omega < 1.9);
    const double distance = test::planRelativeL1(cp.problem, guarded, reference);
    QVERIFY2(distance <= 1e-8, qPrintable(QString("plan distance %1").arg(distance)));
}

void TestAcceleration::logDomainDownToEps1e4()
{
    // Costs in [0, 1] at eps 1e-4: exp(-C/eps) underflows in float64, so the
    // multiplicative reference cannot run; the independent check is the plain
    // log-domain iteration (no TI, omega 1, no schedule) to convergence, judged by
    // the criterion with the marginal violation (POT's relative change of u is
    // met long before convergence when u spans hundreds of orders of magnitude).
    const CloudProblem cp(40, 50, 1e-4, 1.0, 1.0, 5);
    auto log = createSolver("log");
    SolveOptions plain = fp64Options(3000000, 1e-12);
    plain.acceleration = Acceleration::Relax;
    plain.omega = 1.0;
    const SolveResult reference = log->solve(cp.problem, plain);
    QVERIFY2(reference.converged, qPrintable(QString("plain log-domain error %1").arg(reference.error)));
    QCOMPARE(reference.omega, 1.0);
    SolveOptions o = fp64Options(200000, 1e-12);
    o.mode = IterationMode::TranslationInvariant;
    o.acceleration = Acceleration::Auto;
    o.epsSchedule = EpsSchedule{0.1, 0.5};
    auto solver = createSolver("auto");  // fused underflows and hands over to log with the warm start
    const SolveResult r = solver->solve(cp.problem, o);
    QVERIFY2(r.converged, qPrintable(QString("error %1, status %2").arg(r.error).arg(QString::fromStdString(r.message))));
    QCOMPARE(r.stages.back().eps, 1e-4);
    const double distance = test::planRelativeL1(cp.problem, r, reference);
    QVERIFY2(distance <= 1e-8, qPrintable(QString("plan distance %1").arg(distance)));
    QVERIFY(r.passes < reference.passes);
}

void TestAcceleration::badParametersAreRejected_data()
{
    QTest::addColumn<double>("start");
    QTest::addColumn<double>("factor");
    QTest::addColumn<double>("omega");
    QTest::addColumn<QString>("fragment");
    const double nan = std::nan("");
    QTest::newRow("start NaN") << nan << 0.5 << 1.5 << "must be a finite number > 0";
    QTest::newRow("start inf") << kInfinity << 0.5 << 1.5 << "must be a finite number > 0";
    QTest::newRow("start below eps") << 0.001 << 0.5 << 1.5 << "below the target eps";
    QTest::newRow("factor 1") << 1.0 << 1.0 << 1.5 << "must be in (0, 1)";
    QTest::newRow("factor 2") << 1.0 << 2.0 << 1.5 << "must be in (0, 1)";
    QTest::newRow("factor 0") << 1.0 << 0.0 << 1.5 << "must be in (0, 1)";
    QTest::newRow("factor NaN") << 1.0 << nan << 1.5 << "must be in (0, 1)";
    QTest::newRow("too many stages") << 1e6 << 0.999 << 1.5 << "stages (at most";
    QTest::newRow("omega 2") << 0.0 << 0.5 << 2.0 << "must be in [1, 2)";
    QTest::newRow("omega NaN") << 0.0 << 0.5 << nan << "must be in [1, 2)";
}

void TestAcceleration::badParametersAreRejected()
{
    QFETCH(double, start);
    QFETCH(double, factor);
    QFETCH(double, omega);
    QFETCH(QString, fragment);
    const CloudProblem cp(5, 6, 0.01, 1.0, 1.0, 1);
    SolveOptions o = fp64Options(100, 1e-6);
    o.acceleration = Acceleration::Relax;
    o.omega = omega;
    o.epsSchedule = EpsSchedule{start, factor};
    auto solver = createSolver("auto");
    try {
        (void)solver->solve(cp.problem, o);
        QFAIL("no error for bad parameters");
    } catch (const Error& e) {
        QVERIFY(e.code() == ErrorCode::InvalidArgument);
        QVERIFY2(std::string(e.what()).find(fragment.toStdString()) != std::string::npos, e.what());
    }
}

void TestAcceleration::scheduleStagesEndAtTheTarget()
{
    QCOMPARE(epsStages(EpsSchedule{1.0, 0.5}, 0.1), (std::vector<double>{1.0, 0.5, 0.25, 0.125, 0.1}));
    QCOMPARE(epsStages(EpsSchedule{0.1, 0.5}, 0.1), (std::vector<double>{0.1}));
    const EpsSchedule parsed = parseEpsSchedule("0.2,0.25");
    QCOMPARE(parsed.start, 0.2);
    QCOMPARE(parsed.factor, 0.25);
    QVERIFY(!parseEpsSchedule("none").enabled());
    bool threw = false;
    try {
        (void)parseEpsSchedule("0.2;0.5");
    } catch (const Error& e) {
        threw = std::string(e.what()).find("is not a number") != std::string::npos;
    }
    QVERIFY(threw);
}


// The criterion's violation terms are L1 distances between normalised marginals
// and their optimality targets, whatever the problem's total mass: a solve that
// reports convergence at --tol must have its plan's marginals within a small
// multiple of the tolerance of the optimality conditions P 1 = a e^{-F eps / tau_a},
// P^T 1 = b e^{-G eps / tau_b}, computed here from the returned potentials and
// the cost. (An earlier criterion divided them once more by the target mass and
// stopped masses of 1e4 about 1e4 times too early.)
void TestAcceleration::stoppingMeansTheMarginalConditionsHold_data()
{
    QTest::addColumn<QString>("variant");
    QTest::addColumn<double>("mass");
    QTest::addColumn<int>("mode");
    QTest::addColumn<double>("tau");
    for (const char* v : {"fused", "log"})
        for (double mass : {1.0, 1e6})
            for (int mode : {0, 1})
                for (double tau : {0.5, 10.0})
                    QTest::newRow((std::string(v) + " mass " + std::to_string(mass) + (mode ? " ti" : " plain") + " tau " +
                                   std::to_string(tau)).c_str())
                        << QString(v) << mass << mode << tau;
}

void TestAcceleration::stoppingMeansTheMarginalConditionsHold()
{
    QFETCH(QString, variant);
    QFETCH(double, mass);
    QFETCH(int, mode);
    QFETCH(double, tau);
    CloudProblem cp(50, 70, 0.005, tau, tau, 11);
    for (double& t : cp.a) t *= mass;
    for (double& t : cp.b) t *= mass;
    cp.problem.a = cp.a;
    cp.problem.b = cp.b;
    const double tol = 1e-6;
    auto solver = createSolver(variant.toStdString());
    SolveOptions o = fp64Options(100000, tol);
    o.mode = static_cast<IterationMode>(mode);
    o.acceleration = Acceleration::Auto;
    const SolveResult r = solver->solve(cp.problem, o);
    QVERIFY(r.converged);
    const std::size_t m = cp.a.size(), n = cp.b.size();
    std::vector<double> rows(m, 0.0), cols(n, 0.0);
    for (std::size_t i = 0; i < m; ++i)
        for (std::size_t j = 0; j < n; ++j) {
            double d = 0;
            for (int k = 0; k < 3; ++k) d += (cp.x[3 * i + k] - cp.y[3 * j + k]) * (cp.x[3 * i + k] - cp.y[3 * j + k]);
            const double p = std::exp(r.logU[i] + r.logV[j] - d / 3.0 / cp.problem.eps);
            rows[i] += p;
            cols[j] += p;
        }
    const auto violation = [](const std::vector<double>& marginal, const std::vector<double>& target) {
        double sm = 0, st = 0, v = 0;
        for (std::size_t k = 0; k < marginal.size(); ++k) sm += marginal[k], st += target[k];
        for (std::size_t k = 0; k < marginal.size(); ++k) v += std::abs(marginal[k] / sm - target[k] / st);
        return v;
    };
    std::vector<double> targetA(m), targetB(n);
    for (std::size_t i = 0; i < m; ++i) targetA[i] = cp.a[i] * std::exp(-r.logU[i] * cp.problem.eps / cp.problem.tauA);
    for (std::size_t j = 0; j < n; ++j) targetB[j] = cp.b[j] * std::exp(-r.logV[j] * cp.problem.eps / cp.problem.tauB);
    const double vA = violation(rows, targetA), vB = violation(cols, targetB);
    QVERIFY2(vA <= 10 * tol && vB <= 10 * tol,
             qPrintable(QString("violations %1 / %2 at tol %3 after %4 iterations").arg(vA).arg(vB).arg(tol).arg(r.iterations)));
}

// The progress of a schedule (what the studio's chart and statistics draw): one
// iteration count across the stages, each check tagged with its stage and that
// stage's eps (the schedule worked out by hand: 0.08 halved down to 0.01).
void TestAcceleration::scheduleProgressCountsAcrossStages()
{
    const CloudProblem cp(30, 40, 0.01, 1.0, 1.0, 7);
    SolveOptions o = fp64Options(20000, 1e-8);
    o.epsSchedule = EpsSchedule{0.08, 0.5};
    std::vector<SolveProgress> seen;
    SolveControl control;
    control.onProgress = [&seen](const SolveProgress& p) { seen.push_back(p); };
    auto solver = createSolver("auto");
    const SolveResult r = solver->solve(cp.problem, o, control);
    QVERIFY(r.converged);
    const std::vector<double> eps = {0.08, 0.04, 0.02, 0.01};
    QCOMPARE(r.stages.size(), eps.size());
    QVERIFY(!seen.empty());
    int lastIteration = 0, lastStage = 0;
    double lastSeconds = 0;
    std::vector<int> stageEnd(eps.size(), 0);
    for (const SolveProgress& p : seen) {
        QCOMPARE(p.stageCount, int(eps.size()));
        QVERIFY(p.stage >= lastStage && p.stage < int(eps.size()));
        QCOMPARE(p.stageEps, eps[std::size_t(p.stage)]);
        QVERIFY(p.iteration > lastIteration);
        QVERIFY(p.elapsedSeconds >= lastSeconds);
        lastIteration = p.iteration;
        lastStage = p.stage;
        lastSeconds = p.elapsedSeconds;
        stageEnd[std::size_t(p.stage)] = p.iteration;
    }
    QCOMPARE(lastIteration, r.iterations);
    // Each stage's last check is where the iterations of it and the earlier stages add up to.
    int sum = 0;
    for (std::size_t k = 0; k < eps.size(); ++k) {
        sum += r.stages[k].iterations;
        QCOMPARE(stageEnd[k], sum);
    }
}

QTEST_GUILESS_MAIN(TestAcceleration)
#include "test_acceleration.moc"
