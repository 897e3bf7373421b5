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

#include <algorithm>
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
#include "tests/support/qt_checks.h"

using namespace uot;

namespace {

// Random point clouds in the unit cube, squared distances scaled to [0, 1],
// weights with different total masses (a truly unbalanced problem).
struct CloudProblem {
    std::vector<double> x, y, a, b;
    UotProblem problem;
    // massRatio: |a| / |b| (1 for a balanced problem).
    CloudProblem(std::size_t m, std::size_t n, double eps, double tauA, double tauB, unsigned seed,
                 double massRatio = 1.3)
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
        for (double& t : b) t /= massRatio * sb;
        problem.cost = PointCloudCost{x.data(), y.data(), m, n, 3, 1.0 / 3.0};
        problem.a = a;
        problem.b = b;
        problem.eps = eps;
        problem.tauA = tauA;
        problem.tauB = tauB;
    }
};

SolveOptions fp64Options(int maxIterations, double tolerance, Precision precision = Precision::Fp64)
{
    SolveOptions o;
    o.precision = precision;
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
    void mapuotReachesTheReferencePlan_data();
    void mapuotReachesTheReferencePlan();
    void mapuotMakesTheRelaxedSteps_data();
    void mapuotMakesTheRelaxedSteps();
    void mapuotSafeguardPreventsDivergence_data();
    void mapuotSafeguardPreventsDivergence();
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
    const char* variants[] = {"pot-style", "fused", "log", "mapuot"};  // mapuot: more cases below
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
    QCOMPARE(QString::fromStdString(r.acceleration), QString(acceleration == 1 ? "relax" : "auto"));
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

// mapuot keeps the plan in its matrix and folds every change of (u, v) between its
// passes (TI shifts, the relaxed column step, the undo of a rejected step) into its
// next pass as pending row and column factors (mapuot_solver.cpp). Converged relaxed
// solves must reach the float64 reference's plan: fp64 to 1e-9, fp32 to 1e-4, plain and
// TI, balanced and unbalanced, non-square; and take fewer iterations than the same
// loop with omega 1.
void TestAcceleration::mapuotReachesTheReferencePlan_data()
{
    QTest::addColumn<bool>("fp32");
    QTest::addColumn<int>("mode");          // IterationMode
    QTest::addColumn<int>("acceleration");  // Acceleration
    QTest::addColumn<double>("eps");
    QTest::addColumn<double>("tauA");
    QTest::addColumn<double>("tauB");
    QTest::addColumn<double>("massRatio");
    QTest::addColumn<int>("rows");
    QTest::addColumn<int>("cols");
    struct Penalty {
        const char* name;
        double tauA, tauB, massRatio;
        int rows, cols;
    };
    const Penalty penalties[] = {{"balanced 70x50", kInfinity, kInfinity, 1.0, 70, 50},
                                 {"tau 1 60x90", 1.0, 1.0, 1.3, 60, 90},
                                 {"tau 0.5/2 90x45", 0.5, 2.0, 1.3, 90, 45}};
    for (bool fp32 : {false, true})
        for (int mode : {0, 1})
            for (int acc : {1, 2})
                for (double eps : {0.01, 0.003})
                    for (const Penalty& t : penalties) {
                        const std::string name = std::string(fp32 ? "fp32" : "fp64") + (mode ? " ti" : " plain") +
                                                 (acc == 1 ? " relax" : " auto") + " eps " + std::to_string(eps) +
                                                 " " + t.name;
                        QTest::newRow(name.c_str()) << fp32 << mode << acc << eps << t.tauA << t.tauB << t.massRatio
                                                    << t.rows << t.cols;
                    }
}

void TestAcceleration::mapuotReachesTheReferencePlan()
{
    QFETCH(bool, fp32);
    QFETCH(int, mode);
    QFETCH(int, acceleration);
    QFETCH(double, eps);
    QFETCH(double, tauA);
    QFETCH(double, tauB);
    QFETCH(double, massRatio);
    QFETCH(int, rows);
    QFETCH(int, cols);
    const CloudProblem cp(static_cast<std::size_t>(rows), static_cast<std::size_t>(cols), eps, tauA, tauB, 11,
                          massRatio);
    const SolveResult& reference = referencePlan(
        cp.problem, "mapuot " + std::to_string(eps) + "/" + std::to_string(tauA) + "/" + std::to_string(rows));
    QVERIFY2(reference.converged, "the float64 reference did not converge");
    auto solver = createSolver("mapuot");
    SolveOptions o = fp64Options(100000, fp32 ? 1e-6 : 1e-12, fp32 ? Precision::Fp32 : Precision::Fp64);
    o.mode = static_cast<IterationMode>(mode);
    o.acceleration = static_cast<Acceleration>(acceleration);
    o.omega = 1.6;
    // The plain iteration with both taus finite has a slow mode along the total mass
    // that the change criterion underrates (fused alike: at tolerance 1e-12 the plan is
    // still 1.8e-9 away at eps 0.003): those rows run a fixed number of iterations.
    const bool massMode = mode == 0 && std::isfinite(tauA) && std::isfinite(tauB);
    if (massMode) {
        o.tolerance = 0;
        o.maxIterations = fp32 ? 1000 : 20000;
    }
    const SolveResult r = solver->solve(cp.problem, o);
    QVERIFY2(r.converged || massMode, qPrintable(QString("not converged: error %1 after %2 iterations, %3")
                                                     .arg(r.error)
                                                     .arg(r.iterations)
                                                     .arg(QString::fromStdString(r.message))));
    QVERIFY(r.status == NumericalStatus::Ok);
    QCOMPARE(QString::fromStdString(r.acceleration), QString(acceleration == 1 ? "relax" : "auto"));
    const double distance = test::planRelativeL1(cp.problem, r, reference);
    QVERIFY2(distance <= (fp32 ? 1e-4 : 1e-9), qPrintable(QString("plan distance to the reference %1").arg(distance)));
    // The same loop with omega 1 (unrelaxed): relaxation must have paid, in passes to
    // the tolerance, or for the fixed rows in the distance after 150 iterations.
    SolveOptions unrelaxed = o;
    unrelaxed.acceleration = Acceleration::Relax;
    unrelaxed.omega = 1.0;
    if (massMode) {
        SolveOptions relaxed = o;
        relaxed.maxIterations = unrelaxed.maxIterations = 150;
        const double dRelaxed = test::planRelativeL1(cp.problem, solver->solve(cp.problem, relaxed), reference);
        const double dPlain = test::planRelativeL1(cp.problem, solver->solve(cp.problem, unrelaxed), reference);
        QVERIFY2(dRelaxed < 0.5 * dPlain,
                 qPrintable(QString("after 150 iterations: relaxed %1, unrelaxed %2").arg(dRelaxed).arg(dPlain)));
    } else {
        const SolveResult slow = solver->solve(cp.problem, unrelaxed);
        QVERIFY(slow.converged);
        QVERIFY2(r.passes < slow.passes,
                 qPrintable(QString("relaxed %1 passes, unrelaxed %2").arg(r.passes).arg(slow.passes)));
    }
}

// The first iterations of relaxed mapuot are the relaxed Sinkhorn steps written out
// here in float64 from their definition, F = (1 - w) F + w f_a (log a - LSE_j(log K + G)),
// then G likewise: this pins the omega power of the in-place row factor and the
// pending column factors that carry the relaxed column step into the next pass.
void TestAcceleration::mapuotMakesTheRelaxedSteps_data()
{
    QTest::addColumn<double>("omega");
    QTest::addColumn<double>("tauA");
    QTest::addColumn<double>("tauB");
    QTest::addColumn<bool>("fp32");
    QTest::newRow("omega 1.5 tau 1") << 1.5 << 1.0 << 1.0 << false;
    QTest::newRow("omega 1.8 tau 0.5/2") << 1.8 << 0.5 << 2.0 << false;
    QTest::newRow("omega 1.3 semi") << 1.3 << kInfinity << 0.7 << false;
    QTest::newRow("fp32 omega 1.5 tau 1") << 1.5 << 1.0 << 1.0 << true;
}

void TestAcceleration::mapuotMakesTheRelaxedSteps()
{
    QFETCH(double, omega);
    QFETCH(double, tauA);
    QFETCH(double, tauB);
    QFETCH(bool, fp32);
    const std::size_t m = 30, n = 40;
    const int steps = 4;
    const CloudProblem cp(m, n, 0.05, tauA, tauB, 2);
    const UotProblem& p = cp.problem;
    std::vector<double> logK(m * n), row(n), F(m, 0.0), G(n, 0.0);
    for (std::size_t i = 0; i < m; ++i) {
        fillCostRow(p.cost, i, row.data());
        for (std::size_t j = 0; j < n; ++j) logK[i * n + j] = -row[j] / p.eps + logReference(p, i, j);
    }
    auto lse = [](const std::vector<double>& x) {
        double mx = -kInfinity, sum = 0;
        for (double t : x) mx = std::max(mx, t);
        for (double t : x) sum += std::exp(t - mx);
        return mx + std::log(sum);
    };
    const double fa = std::isinf(tauA) ? 1.0 : tauA / (tauA + p.eps), fb = std::isinf(tauB) ? 1.0 : tauB / (tauB + p.eps);
    for (int s = 0; s < steps; ++s) {
        std::vector<double> terms(n);
        for (std::size_t i = 0; i < m; ++i) {
            for (std::size_t j = 0; j < n; ++j) terms[j] = logK[i * n + j] + G[j];
            F[i] = (1 - omega) * F[i] + omega * fa * (std::log(p.a[i]) - lse(terms));
        }
        terms.resize(m);
        for (std::size_t j = 0; j < n; ++j) {
            for (std::size_t i = 0; i < m; ++i) terms[i] = logK[i * n + j] + F[i];
            G[j] = (1 - omega) * G[j] + omega * fb * (std::log(p.b[j]) - lse(terms));
        }
        terms.resize(n);
    }
    auto solver = createSolver("mapuot");
    SolveOptions o = fp64Options(steps, 0.0, fp32 ? Precision::Fp32 : Precision::Fp64);
    o.acceleration = Acceleration::Relax;
    o.omega = omega;
    const SolveResult r = solver->solve(p, o);
    QCOMPARE(r.iterations, steps);
    QCOMPARE(r.rejectedSteps, 0);
    const double tolerance = fp32 ? 1e-4 : 1e-10;
    for (std::size_t i = 0; i < m; ++i)
        UOT_QVERIFY_MSG(std::abs(r.logU[i] - F[i]) <= tolerance * std::max(1.0, std::abs(F[i])),
                        "log u " << i << ": " << r.logU[i] << " vs " << F[i]);
    for (std::size_t j = 0; j < n; ++j)
        UOT_QVERIFY_MSG(std::abs(r.logV[j] - G[j]) <= tolerance * std::max(1.0, std::abs(G[j])),
                        "log v " << j << ": " << r.logV[j] << " vs " << G[j]);
}

// A too large fixed omega (1.95) on a hard problem (eps 0.003, tau 10, TI): without
// the safeguard the iteration does not converge; with it, steps are undone (inside
// mapuot's next pass), omega shrinks and the plan is the reference's.
void TestAcceleration::mapuotSafeguardPreventsDivergence_data()
{
    QTest::addColumn<bool>("fp32");
    QTest::newRow("fp64") << false;
    QTest::newRow("fp32") << true;
}

void TestAcceleration::mapuotSafeguardPreventsDivergence()
{
    QFETCH(bool, fp32);
    const CloudProblem cp(200, 250, 0.003, 10.0, 10.0, 3);
    const SolveResult& reference = referencePlan(cp.problem, "mapuot safeguard");
    QVERIFY(reference.converged);
    auto solver = createSolver("mapuot");
    SolveOptions o = fp64Options(3000, fp32 ? 1e-6 : 1e-11, fp32 ? Precision::Fp32 : Precision::Fp64);
    o.mode = IterationMode::TranslationInvariant;
    o.acceleration = Acceleration::Relax;
    o.omega = 1.95;
    o.relaxationSafeguard = false;
    const SolveResult unguarded = solver->solve(cp.problem, o);
    QVERIFY2(!unguarded.converged, qPrintable(QString("unguarded converged in %1").arg(unguarded.iterations)));
    o.relaxationSafeguard = true;
    const SolveResult guarded = solver->solve(cp.problem, o);
    QVERIFY2(guarded.converged, qPrintable(QString("error %1 after %2, %3")
                                               .arg(guarded.error)
                                               .arg(guarded.iterations)
                                               .arg(QString::fromStdString(guarded.message))));
    QVERIFY(guarded.rejectedSteps >= 1);
    QVERIFY(guarded.omega < 1.95);
    const double distance = test::planRelativeL1(cp.problem, guarded, reference);
    QVERIFY2(distance <= (fp32 ? 1e-4 : 1e-8), qPrintable(QString("plan distance %1").arg(distance)));
}

QTEST_GUILESS_MAIN(TestAcceleration)
#include "test_acceleration.moc"
