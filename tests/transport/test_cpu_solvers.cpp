// The CPU variants against the float64 reference solver and against each
// other: thread-count independence, warm start, cancellation, bad input,
// underflow handling. (POT cross-checks: pot_crosscheck.py.)

#include <omp.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "core/registry/solver_registry.h"
#include "core/transport/kernel_matrix.h"
#include "core/transport/plan_evaluation.h"
#include "core/transport/subnormal_flush.h"
#include "core/transport/uot_error.h"
#include "tests/support/qt_checks.h"

using namespace uot;

namespace {

const char* kVariants[] = {"pot-style", "mapuot", "fused", "log"};

struct RandomProblem {
    std::size_t m, n;
    std::vector<double> cost, a, b;
    UotProblem problem;

    RandomProblem(std::size_t rows, std::size_t cols, unsigned seed, double eps = 0.05, double tau = 1.0)
        : m(rows), n(cols), cost(rows * cols), a(rows), b(cols)
    {
        std::mt19937 rng(seed);
        std::uniform_real_distribution<double> unit(0.0, 1.0);
        for (double& c : cost) c = unit(rng);
        for (double& x : a) x = 0.5 + unit(rng);
        for (double& x : b) x = 0.5 + unit(rng);
        double sa = 0, sb = 0;
        for (double x : a) sa += x;
        for (double x : b) sb += x;
        for (double& x : a) x /= sa;
        for (double& x : b) x *= 1.5 / sb;  // unequal masses
        problem.cost = DenseCost{nullptr, cost.data(), m, n};
        problem.a = a;
        problem.b = b;
        problem.eps = eps;
        problem.tauA = problem.tauB = tau;
    }
};

SolveOptions fixedIterations(int iterations, Precision precision = Precision::Fp64, int threads = 1)
{
    SolveOptions o;
    o.precision = precision;
    o.maxIterations = iterations;
    o.tolerance = 0;
    o.checkEvery = 7;
    o.threads = threads;
    return o;
}

double planRelL1(const UotProblem& p, const SolveResult& x, const SolveResult& y)
{
    std::vector<double> px(p.rows() * p.cols()), py(px.size());
    computePlan(p, x.logU, x.logV, px.data());
    computePlan(p, y.logU, y.logV, py.data());
    double diff = 0, norm = 0;
    for (std::size_t k = 0; k < px.size(); ++k) {
        diff += std::abs(px[k] - py[k]);
        norm += std::abs(py[k]);
    }
    return diff / norm;
}

bool allFinite(const std::vector<double>& x)
{
    for (double e : x)
        if (!std::isfinite(e)) return false;
    return true;
}

// A balanced problem whose solution carries mass across a cost gap where
// exp(-C/eps) straddles the smallest normal float (exp(-87.3)): left sources
// hold 0.7, left targets take 0.3, so 0.4 must cross to the right. The cheaper
// crossing (C = 0.86, K = exp(-86)) is a normal float, the dearer one (C = 0.89,
// K = exp(-89)) is stored as 0 in fp32 and is normal in fp64. The fp32 problem
// without it is still feasible, so an fp32 multiplicative solve converges, to the
// plan of that other problem; the float64 solution sends about a tenth of the
// crossing mass the dearer way.
struct GapProblem {
    static constexpr std::size_t m = 4, n = 4;
    std::vector<double> cost{0.0,  0.01, 0.86, 0.86,   // s0 (left)
                             0.01, 0.0,  0.89, 0.89,   // s1 (left)
                             0.95, 0.95, 0.0,  0.01,   // s2 (right)
                             0.95, 0.95, 0.01, 0.0};   // s3 (right)
    std::vector<double> a{0.5, 0.2, 0.15, 0.15};
    std::vector<double> b{0.15, 0.15, 0.35, 0.35};
    UotProblem problem;

    GapProblem()
    {
        problem.cost = DenseCost{nullptr, cost.data(), m, n};
        problem.a = a;
        problem.b = b;
        problem.eps = 0.01;
        problem.tauA = problem.tauB = kInfinity;
    }
};

// POT's sinkhorn_unbalanced in log form (docs/ALGORITHMS.md section 1), written
// out here in plain float64 with long double sums, as the independent reference
// for the log-domain variant's passes (absorbed or exact): `iterations` plain
// iterations from (logU, logV), ones reference measure, dense costs.
void float64LogIterations(const RandomProblem& rp, int iterations, std::vector<double>& logU,
                          std::vector<double>& logV)
{
    const UotProblem& p = rp.problem;
    const double fa = std::isinf(p.tauA) ? 1.0 : p.tauA / (p.tauA + p.eps);
    const double fb = std::isinf(p.tauB) ? 1.0 : p.tauB / (p.tauB + p.eps);
    auto lse = [](const std::vector<double>& x) {
        const double mx = *std::max_element(x.begin(), x.end());
        long double s = 0;
        for (double e : x) s += std::exp(static_cast<long double>(e - mx));
        return mx + static_cast<double>(std::log(s));
    };
    std::vector<double> row(rp.n), col(rp.m);
    for (int it = 0; it < iterations; ++it) {
        for (std::size_t i = 0; i < rp.m; ++i) {
            for (std::size_t j = 0; j < rp.n; ++j) row[j] = -rp.cost[i * rp.n + j] / p.eps + logV[j];
            logU[i] = fa * (std::log(rp.a[i]) - lse(row));
        }
        for (std::size_t j = 0; j < rp.n; ++j) {
            for (std::size_t i = 0; i < rp.m; ++i) col[i] = -rp.cost[i * rp.n + j] / p.eps + logU[i];
            logV[j] = fb * (std::log(rp.b[j]) - lse(col));
        }
    }
}

SolveOptions toTolerance(Precision precision)
{
    SolveOptions o;
    o.precision = precision;
    o.maxIterations = 20000;
    o.tolerance = precision == Precision::Fp64 ? 1e-10 : 1e-6;  // 1e-6: fp32's own floor
    o.checkEvery = 10;
    o.threads = 2;
    return o;
}

void variantRows()
{
    QTest::addColumn<QString>("variant");
    for (const char* name : kVariants) QTest::newRow(name) << QString(name);
}

}  // namespace

class TestCpuSolvers : public QObject {
    Q_OBJECT
private slots:
    void variantsMatchReference_data();
    void variantsMatchReference();
    void threadCountDoesNotChangeTheResult_data();
    void threadCountDoesNotChangeTheResult();
    void warmStartConvergesFasterToTheSameAnswer_data();
    void warmStartConvergesFasterToTheSameAnswer();
    void progressReportsMarginalViolations_data();
    void progressReportsMarginalViolations();
    void cancellationStopsPromptly_data();
    void cancellationStopsPromptly();
    void badInputIsRejectedWithAMessage_data();
    void badInputIsRejectedWithAMessage();
    void emptyProblemIsRejected();
    void smallEpsUnderflowIsHandled();
    void kernelMatrixHoldsNoSubnormals();
    void flushScopeCoversTheTeamAndRestores();
    void solvesFlushSubnormalsAndRestoreTheMode_data();
    void solvesFlushSubnormalsAndRestoreTheMode();
    void flushedMassCountsTheEntriesHeldAsZero_data();
    void flushedMassCountsTheEntriesHeldAsZero();
    void massOnFlushedEntriesIsNotConverged_data();
    void massOnFlushedEntriesIsNotConverged();
    void logPassesMatchAFloat64LogIteration_data();
    void logPassesMatchAFloat64LogIteration();
    void logSolverConvergesToTheReference_data();
    void logSolverConvergesToTheReference();
};

// Every variant reproduces the float64 reference iterate for iterate, in
// float64 (1e-12) and float32 (1e-4), with tau_a != tau_b and a balanced side.
void TestCpuSolvers::variantsMatchReference_data()
{
    QTest::addColumn<int>("m");
    QTest::addColumn<int>("n");
    QTest::addColumn<QString>("variant");
    QTest::addColumn<bool>("fp64");
    for (const auto& [m, n] : {std::pair<int, int>{33, 65}, {1, 37}, {37, 1}, {130, 70}})
        for (const char* name : kVariants)
            for (bool fp64 : {true, false})
                QTest::addRow("%dx%d %s %s", m, n, name, fp64 ? "fp64" : "fp32") << m << n << QString(name) << fp64;
}

void TestCpuSolvers::variantsMatchReference()
{
    QFETCH(int, m);
    QFETCH(int, n);
    QFETCH(QString, variant);
    QFETCH(bool, fp64);
    const std::string name = variant.toStdString();
    const Precision precision = fp64 ? Precision::Fp64 : Precision::Fp32;
    RandomProblem rp(std::size_t(m), std::size_t(n), static_cast<unsigned>(m * 100 + n));
    rp.problem.tauA = 0.7;
    rp.problem.tauB = m == 130 ? kInfinity : 2.0;
    const SolveResult ref = createSolver("reference")->solve(rp.problem, fixedIterations(40));
    const SolveResult r = createSolver(name)->solve(rp.problem, fixedIterations(40, precision, 2));
    const double tol = precision == Precision::Fp64 ? 1e-12 : 1e-4;
    const double d = planRelL1(rp.problem, r, ref);
    UOT_QVERIFY_MSG(d <= tol, name << " " << toString(precision) << " " << m << "x" << n << ": " << d);
    UOT_QVERIFY_MSG(r.iterations == 40, r.iterations);
    UOT_QVERIFY_MSG(r.status == NumericalStatus::Ok, toString(r.status));
    UOT_QCOMPARE_CLOSE(r.mass, ref.mass, (precision == Precision::Fp64 ? 1e-11 : 1e-4) * ref.mass);
}

// Same number of threads: same bits. 1 vs 2 threads: same float64 result to 1e-12.
void TestCpuSolvers::threadCountDoesNotChangeTheResult_data()
{
    variantRows();
}

void TestCpuSolvers::threadCountDoesNotChangeTheResult()
{
    QFETCH(QString, variant);
    const std::string variantName = variant.toStdString();
    const char* name = variantName.c_str();
    RandomProblem rp(300, 200, 7);
    {
        auto solver = createSolver(name);
        const SolveResult one = solver->solve(rp.problem, fixedIterations(50, Precision::Fp64, 1));
        const SolveResult two = solver->solve(rp.problem, fixedIterations(50, Precision::Fp64, 2));
        const SolveResult twoAgain = createSolver(name)->solve(rp.problem, fixedIterations(50, Precision::Fp64, 2));
        UOT_QVERIFY_MSG(planRelL1(rp.problem, one, two) <= 1e-12, name);
        UOT_QVERIFY_MSG(two.logU == twoAgain.logU && two.logV == twoAgain.logV, name << ": not deterministic");
        const SolveResult f32a = solver->solve(rp.problem, fixedIterations(50, Precision::Fp32, 2));
        const SolveResult f32b = solver->solve(rp.problem, fixedIterations(50, Precision::Fp32, 2));
        UOT_QVERIFY_MSG(f32a.logU == f32b.logU && f32a.logV == f32b.logV, name << ": fp32 not deterministic");
    }
}

// Warm start from a converged solve: converges again at once, to the same plan.
void TestCpuSolvers::warmStartConvergesFasterToTheSameAnswer_data()
{
    variantRows();
}

void TestCpuSolvers::warmStartConvergesFasterToTheSameAnswer()
{
    QFETCH(QString, variant);
    const std::string variantName = variant.toStdString();
    const char* name = variantName.c_str();
    RandomProblem rp(120, 90, 11);
    {
        SolveOptions o;
        o.precision = Precision::Fp64;
        o.maxIterations = 5000;
        o.tolerance = 1e-9;
        o.checkEvery = 5;
        o.threads = 2;
        auto solver = createSolver(name);
        // A loose solve, then continue it from its scalings.
        SolveOptions loose = o;
        loose.tolerance = 1e-4;
        const SolveResult first = solver->solve(rp.problem, loose);
        const SolveResult cold = solver->solve(rp.problem, o);
        const std::vector<double> u = first.u(), v = first.v();
        SolveOptions warm = o;
        warm.warmU = u;
        warm.warmV = v;
        const SolveResult hot = solver->solve(rp.problem, warm);
        UOT_QVERIFY_MSG(cold.converged && hot.converged, name);
        UOT_QVERIFY_MSG(hot.iterations < cold.iterations, name << ": " << hot.iterations << " vs " << cold.iterations);
        UOT_QVERIFY_MSG(planRelL1(rp.problem, hot, cold) < 1e-6, name << ": " << planRelL1(rp.problem, hot, cold));
    }
}

// Progress reports carry the marginal violations of the current plan.
void TestCpuSolvers::progressReportsMarginalViolations_data()
{
    variantRows();
}

void TestCpuSolvers::progressReportsMarginalViolations()
{
    QFETCH(QString, variant);
    const std::string variantName = variant.toStdString();
    const char* name = variantName.c_str();
    RandomProblem rp(50, 40, 3);
    {
        std::vector<SolveProgress> reports;
        SolveControl control;
        control.onProgress = [&](const SolveProgress& p) { reports.push_back(p); };
        SolveOptions o = fixedIterations(30, Precision::Fp64, 2);
        o.checkEvery = 10;
        const SolveResult r = createSolver(name)->solve(rp.problem, o, control);
        UOT_QVERIFY_MSG(reports.size() == 3, name << ": " << reports.size());
        if (reports.empty()) return;
        // The last report describes the final plan.
        UOT_QCOMPARE_CLOSE(reports.back().marginalErrorA, r.marginalErrorA, 1e-10);
        UOT_QCOMPARE_CLOSE(reports.back().marginalErrorB, r.marginalErrorB, 1e-10);
        QVERIFY(reports.back().iteration == 30);
        // An intermediate one: compare with a solve stopped there.
        const SolveResult at10 = createSolver(name)->solve(rp.problem, fixedIterations(10, Precision::Fp64, 2));
        UOT_QCOMPARE_CLOSE(reports.front().marginalErrorA, at10.marginalErrorA, 1e-10);
        UOT_QCOMPARE_CLOSE(reports.front().marginalErrorB, at10.marginalErrorB, 1e-10);
        QVERIFY(reports.front().bytesPerIteration == r.bytesPerIteration);
    }
}

// A cancel requested from another thread after a few reports stops the solve
// promptly with a result marked cancelled (finite scalings).
void TestCpuSolvers::cancellationStopsPromptly_data()
{
    variantRows();
}

void TestCpuSolvers::cancellationStopsPromptly()
{
    QFETCH(QString, variant);
    const std::string variantName = variant.toStdString();
    const char* name = variantName.c_str();
    RandomProblem rp(400, 400, 5);
    {
        std::atomic<bool> cancel{false};
        std::atomic<int> reports{0};
        SolveControl control;
        control.cancel = &cancel;
        control.onProgress = [&](const SolveProgress&) {
            if (++reports == 3) cancel = true;
        };
        SolveOptions o = fixedIterations(1000000, Precision::Fp32, 2);
        o.checkEvery = 2;
        const SolveResult r = createSolver(name)->solve(rp.problem, o, control);
        UOT_QVERIFY_MSG(r.cancelled, name);
        UOT_QVERIFY_MSG(r.iterations >= 6 && r.iterations <= 7, name << ": " << r.iterations);
        QVERIFY(allFinite(r.logU) && allFinite(r.logV));
    }
    // Cancelled from another thread, by wall clock.
    {
        std::atomic<bool> cancel{false};
        SolveControl control;
        control.cancel = &cancel;
        std::atomic<bool> started{false};
        control.onProgress = [&](const SolveProgress&) { started = true; };
        SolveOptions o = fixedIterations(1000000, Precision::Fp32, 1);
        o.checkEvery = 1;
        SolveResult r;
        std::thread worker([&] { r = createSolver(name)->solve(rp.problem, o, control); });
        while (!started) std::this_thread::yield();
        cancel = true;
        worker.join();
        UOT_QVERIFY_MSG(r.cancelled, name);
    }
}

void TestCpuSolvers::badInputIsRejectedWithAMessage_data()
{
    variantRows();
}

void TestCpuSolvers::badInputIsRejectedWithAMessage()
{
    QFETCH(QString, variant);
    const std::string variantName = variant.toStdString();
    const char* name = variantName.c_str();
    {
        auto solver = createSolver(name);
        RandomProblem rp(4, 3, 1);
        SolveOptions o = fixedIterations(5);
        rp.cost[5] = -0.5;
        UOT_QVERIFY_THROWS_WITH(solver->solve(rp.problem, o), "(1, 2)");
        rp.cost[5] = std::nan("");
        UOT_QVERIFY_THROWS_WITH(solver->solve(rp.problem, o), "(1, 2)");
        rp.cost[5] = INFINITY;
        UOT_QVERIFY_THROWS_WITH(solver->solve(rp.problem, o), "finite");
        rp.cost[5] = 0.5;
        rp.a[2] = -1;
        UOT_QVERIFY_THROWS_WITH(solver->solve(rp.problem, o), "a[2]");
        rp.a[2] = std::nan("");
        UOT_QVERIFY_THROWS_WITH(solver->solve(rp.problem, o), "a[2]");
        rp.a[2] = 0.2;
        rp.b[1] = INFINITY;
        UOT_QVERIFY_THROWS_WITH(solver->solve(rp.problem, o), "b[1]");
        rp.b[1] = 0;
        UOT_QVERIFY_THROWS_WITH(solver->solve(rp.problem, o), "b[1]");
        rp.b[1] = 0.3;
        rp.problem.eps = 0;
        UOT_QVERIFY_THROWS_WITH(solver->solve(rp.problem, o), "eps");
        rp.problem.eps = -0.1;
        UOT_QVERIFY_THROWS_WITH(solver->solve(rp.problem, o), "eps");
        rp.problem.eps = 0.05;
        rp.problem.tauA = 0;
        UOT_QVERIFY_THROWS_WITH(solver->solve(rp.problem, o), "tau_a");
        rp.problem.tauA = 1;
        rp.problem.b = std::span<const double>(rp.b.data(), 2);
        UOT_QVERIFY_THROWS_WITH(solver->solve(rp.problem, o), "size mismatch");
        rp.problem.b = rp.b;
        const std::vector<double> shortU{1.0, 1.0}, badV{1.0, std::nan(""), 1.0}, goodU(4, 1.0);
        SolveOptions warm = o;
        warm.warmU = shortU;
        UOT_QVERIFY_THROWS_WITH(solver->solve(rp.problem, warm), "warm start u");
        warm.warmU = goodU;
        warm.warmV = badV;
        UOT_QVERIFY_THROWS_WITH(solver->solve(rp.problem, warm), "warm start v[1]");
        SolveOptions bad = o;
        bad.checkEvery = 0;
        UOT_QVERIFY_THROWS_WITH(solver->solve(rp.problem, bad), "check");
        // Still usable afterwards.
        const SolveResult r = solver->solve(rp.problem, o);
        QVERIFY(r.iterations == 5 && allFinite(r.logU));
    }
}

// Zero total mass cannot be expressed with positive weights; an empty problem can.
void TestCpuSolvers::emptyProblemIsRejected()
{
    RandomProblem rp(2, 2, 2);
    rp.problem.cost = DenseCost{nullptr, rp.cost.data(), 0, 2};
    rp.problem.a = {};
    UOT_QVERIFY_THROWS_WITH(createSolver("fused")->solve(rp.problem, fixedIterations(3)), "empty");
}

// Tiny eps: a forced multiplicative variant stops with Underflow and finite
// output; through the registry with fallback allowed it switches to log.
void TestCpuSolvers::smallEpsUnderflowIsHandled()
{
    // Costs in [0.75, 1] at eps = 1e-3: exp(-C/eps) is zero even in float64.
    RandomProblem rp(60, 50, 9, 1e-3);
    for (double& c : rp.cost) c = 0.75 + 0.25 * c;
    for (const char* name : {"pot-style", "mapuot", "fused"}) {
        for (Precision precision : {Precision::Fp32, Precision::Fp64}) {
            SolveOptions forced = fixedIterations(200, precision, 2);
            forced.allowStabilizedFallback = false;
            const SolveResult r = createSolver(name)->solve(rp.problem, forced);
            UOT_QVERIFY_MSG(r.status == NumericalStatus::Underflow, name << " " << toString(r.status));
            QVERIFY(!r.message.empty());
            QVERIFY(allFinite(r.logU) && allFinite(r.logV));
            QVERIFY(std::isfinite(r.mass));

            SolveOptions automatic = fixedIterations(200, precision, 2);
            const SolveResult s = createSolver(name)->solve(rp.problem, automatic);
            UOT_QVERIFY_MSG(s.status == NumericalStatus::SwitchedToLogDomain, name << " " << toString(s.status));
            QVERIFY(s.solver == "log");
            QVERIFY(s.iterations == 200);
            QVERIFY(allFinite(s.logU) && allFinite(s.logV) && std::isfinite(s.mass));
        }
    }
    // Costs in [0, 1]: K has no zero rows, but in float32 the scalings leave
    // the range during the iterations; the last finite iterate is kept.
    RandomProblem wide(60, 50, 9, 1e-3);
    for (std::size_t i = 0; i < 60; ++i) wide.cost[i * 50 + i % 50] *= 0.05;  // no row of K is all zero
    for (std::size_t j = 0; j < 50; ++j) wide.cost[j * 50 + j] *= 0.05;
    for (const char* name : {"pot-style", "fused"}) {
        SolveOptions forced = fixedIterations(500, Precision::Fp32, 2);
        forced.allowStabilizedFallback = false;
        const SolveResult r = createSolver(name)->solve(wide.problem, forced);
        UOT_QVERIFY_MSG(r.status == NumericalStatus::Underflow, name << " " << toString(r.status));
        UOT_QVERIFY_MSG(r.message.find("iteration") != std::string::npos, r.message);
        QVERIFY(allFinite(r.logU) && allFinite(r.logV) && std::isfinite(r.mass));
        const SolveResult s = createSolver(name)->solve(wide.problem, fixedIterations(500, Precision::Fp32, 2));
        UOT_QVERIFY_MSG(s.status == NumericalStatus::SwitchedToLogDomain, name << " " << toString(s.status));
        QVERIFY(s.iterations == 500 && allFinite(s.logU) && allFinite(s.logV));
    }
    // mapuot keeps the rescaled plan itself (entries of order one), so its
    // float32 matrix does not overflow here: whatever it reports, no NaN/Inf.
    {
        SolveOptions forced = fixedIterations(500, Precision::Fp32, 2);
        forced.allowStabilizedFallback = false;
        const SolveResult r = createSolver("mapuot")->solve(wide.problem, forced);
        QVERIFY(allFinite(r.logU) && allFinite(r.logV) && std::isfinite(r.mass));
    }
    // The log-domain result equals the reference's where the reference can still run (eps small but safe in fp64).
    RandomProblem mid(40, 30, 4, 0.004);
    const SolveResult ref = createSolver("reference")->solve(mid.problem, fixedIterations(100));
    QVERIFY(ref.status == NumericalStatus::Ok);
    const SolveResult lg = createSolver("log")->solve(mid.problem, fixedIterations(100, Precision::Fp64, 2));
    UOT_QVERIFY_MSG(planRelL1(mid.problem, lg, ref) < 1e-10, planRelL1(mid.problem, lg, ref));
    // auto at tiny eps in fp32 = fused, switched.
    const SolveResult au = createSolver("auto")->solve(rp.problem, fixedIterations(50, Precision::Fp32, 2));
    QVERIFY(au.status == NumericalStatus::SwitchedToLogDomain);
}

// K = exp(-C / eps) is stored without subnormal entries (they slow every later
// pass on x86 and carry too few bits to matter): an entry below the smallest
// normal number is 0, every other one is exp(-C / eps) rounded. The costs span
// fp32's subnormal range (exp(-87.3) .. exp(-103.3)) and fp64's (exp(-708) ..).
void TestCpuSolvers::kernelMatrixHoldsNoSubnormals()
{
    const std::vector<double> exponents{0.0, 10.0, 87.0, 88.0, 95.0, 103.0, 110.0, 700.0, 720.0, 745.0};
    const std::size_t n = exponents.size();
    std::vector<double> cost(n), a(1, 1.0), b(n, 1.0 / double(n));
    for (std::size_t j = 0; j < n; ++j) cost[j] = exponents[j];  // eps = 1: K_j = exp(-cost_j)
    UotProblem problem;
    problem.cost = DenseCost{nullptr, cost.data(), 1, n};
    problem.a = a;
    problem.b = b;
    problem.eps = 1.0;
    std::vector<float> k32(n);
    std::vector<double> k64(n);
    buildKernelMatrix<float>(problem, k32.data(), 1);
    buildKernelMatrix<double>(problem, k64.data(), 1);
    for (std::size_t j = 0; j < n; ++j) {
        QVERIFY2(std::fpclassify(k32[j]) != FP_SUBNORMAL, qPrintable(QString("fp32 entry %1 is subnormal").arg(j)));
        QVERIFY2(std::fpclassify(k64[j]) != FP_SUBNORMAL, qPrintable(QString("fp64 entry %1 is subnormal").arg(j)));
        const double exact = std::exp(-cost[j]);
        QCOMPARE(k32[j], exact < double(std::numeric_limits<float>::min()) ? 0.0f : static_cast<float>(exact));
        QCOMPARE(k64[j], exact < std::numeric_limits<double>::min() ? 0.0 : exact);
    }
    QVERIFY(k32[2] > 0.0f && k32[3] == 0.0f);  // exp(-87) is normal in fp32, exp(-88) is not
    QVERIFY(k64[7] > 0.0 && k64[8] == 0.0);    // exp(-700) is normal in fp64, exp(-720) is not
}

// Products that underflow below the smallest normal number are flushed to 0
// on the calling thread and on every thread of the team while a scope is
// alive, and the previous (IEEE gradual underflow) mode is back afterwards.
void TestCpuSolvers::flushScopeCoversTheTeamAndRestores()
{
#if !(defined(__SSE2__) || defined(__x86_64__))
    QSKIP("no x86 floating-point control register on this target");
#endif
    const int threads = 2;
    auto subnormalProducts = [&] {
        int count = 0;
#pragma omp parallel num_threads(threads) reduction(+ : count)
        {
            volatile float tiny = 1e-30f, scale = 1e-10f;  // 1e-40 is subnormal in fp32
            const float product = tiny * scale;
            count += std::fpclassify(product) == FP_SUBNORMAL ? 1 : 0;
        }
        return count;
    };
    QVERIFY(!SubnormalFlushScope::callingThreadFlushes());
    QCOMPARE(subnormalProducts(), threads);
    {
        const SubnormalFlushScope scope(threads);
        QVERIFY(SubnormalFlushScope::callingThreadFlushes());
        QCOMPARE(subnormalProducts(), 0);
    }
    QVERIFY(!SubnormalFlushScope::callingThreadFlushes());
    QCOMPARE(subnormalProducts(), threads);
}

// Every CPU solver runs its iterations with subnormals flushed (a small-eps
// pass ran at less than half speed without it) and leaves the caller's mode
// as it found it.
void TestCpuSolvers::solvesFlushSubnormalsAndRestoreTheMode_data()
{
    QTest::addColumn<QString>("variant");
    for (const char* name : kVariants) QTest::newRow(name) << name;
}

void TestCpuSolvers::solvesFlushSubnormalsAndRestoreTheMode()
{
#if !(defined(__SSE2__) || defined(__x86_64__))
    QSKIP("no x86 floating-point control register on this target");
#endif
    QFETCH(QString, variant);
    RandomProblem rp(40, 30, 11);
    int reports = 0, flushing = 0;
    SolveControl control;
    control.onProgress = [&](const SolveProgress&) {
        ++reports;
        flushing += SubnormalFlushScope::callingThreadFlushes() ? 1 : 0;
    };
    SolveOptions options = fixedIterations(20, Precision::Fp32, 2);
    options.checkEvery = 1;
    const SolveResult r = createSolver(variant.toStdString())->solve(rp.problem, options, control);
    QVERIFY(r.status == NumericalStatus::Ok);
    QVERIFY(reports > 0);
    QCOMPARE(flushing, reports);
    QVERIFY(!SubnormalFlushScope::callingThreadFlushes());
}

// planSums' flushedMass against its definition taken entry by entry in plain
// float64 arithmetic: the plan's mass where K_ij, K_ij v_j, u_i K_ij or P_ij is
// below the floor (K_ij = exp(-C_ij/eps) R_ij). Scalings up to exp(+-680) (a
// threshold floor * u_i * v_j taken as products would over- or underflow there)
// and both reference measures.
void TestCpuSolvers::flushedMassCountsTheEntriesHeldAsZero_data()
{
    QTest::addColumn<double>("logRange");
    QTest::addColumn<bool>("product");
    QTest::addColumn<bool>("fp64Floor");
    for (double range : {30.0, 680.0})
        for (bool product : {false, true})
            for (bool fp64 : {false, true})
                QTest::addRow("scalings e^+-%g %s %s", range, product ? "product" : "ones", fp64 ? "DBL_MIN" : "FLT_MIN")
                    << range << product << fp64;
}

void TestCpuSolvers::flushedMassCountsTheEntriesHeldAsZero()
{
    QFETCH(double, logRange);
    QFETCH(bool, product);
    QFETCH(bool, fp64Floor);
    RandomProblem rp(37, 29, 17, fp64Floor ? 0.0015 : 0.01);  // exp(-C/eps) down to exp(-667) or exp(-100)
    if (product) rp.problem.reference = ReferenceMeasure::Product;
    // Scalings e^(+-30) around 1, or around e^(+-650): odd rows u ~ e^650 with
    // v ~ e^-650 (plan entries of order K), even rows u ~ e^-650 (entries ~ 0).
    std::mt19937 rng(5);
    std::uniform_real_distribution<double> spread(-30.0, 30.0);
    std::vector<double> logU(rp.m), logV(rp.n);
    const double centre = logRange - 30.0;
    for (std::size_t i = 0; i < rp.m; ++i) logU[i] = (i % 2 ? centre : -centre) + spread(rng);
    for (double& x : logV) x = -centre + spread(rng);
    const double floor = fp64Floor ? std::numeric_limits<double>::min() : double(std::numeric_limits<float>::min());
    double expected = 0, total = 0;
    for (std::size_t i = 0; i < rp.m; ++i) {
        for (std::size_t j = 0; j < rp.n; ++j) {
            const double logK = -rp.cost[i * rp.n + j] / rp.problem.eps + logReference(rp.problem, i, j);
            const double k = std::exp(logK), u = std::exp(logU[i]), v = std::exp(logV[j]);
            const double p = std::exp(logU[i] + logV[j] + logK);
            total += p;
            if (k < floor || k * v < floor || u * k < floor || p < floor) expected += p;
        }
    }
    QVERIFY(expected > 0);
    if (logRange < 100) QVERIFY(expected < total);  // both kinds of entry are there
    const PlanSums sums = planSums(rp.problem, logU, logV, 2, floor);
    UOT_QCOMPARE_CLOSE(sums.flushedMass, expected, 1e-12 * total);
    QCOMPARE(evaluatePlan(rp.problem, logU, logV, 2, floor).flushedMass, sums.flushedMass);
    QCOMPARE(planSums(rp.problem, logU, logV, 2).flushedMass, 0.0);  // not measured without a floor
}

// An fp32 multiplicative solve of GapProblem converges (its own stopping rule)
// to a plan whose float64 evaluation puts mass on entries its fp32 kernel held
// as 0: it must say Underflow, not converged; through the registry's fallback it
// continues in the log domain to the float64 reference's plan. In fp64 the same
// entries are normal and the variant itself matches the reference.
void TestCpuSolvers::massOnFlushedEntriesIsNotConverged_data()
{
    QTest::addColumn<QString>("variant");
    for (const char* name : {"pot-style", "mapuot", "fused"}) QTest::newRow(name) << name;
}

void TestCpuSolvers::massOnFlushedEntriesIsNotConverged()
{
    QFETCH(QString, variant);
    const std::string name = variant.toStdString();
    GapProblem gp;
    // The premise: the dearer crossing is 0 in the fp32 kernel, normal in fp64.
    {
        std::vector<float> k32(gp.m * gp.n);
        std::vector<double> k64(gp.m * gp.n);
        buildKernelMatrix<float>(gp.problem, k32.data(), 1);
        buildKernelMatrix<double>(gp.problem, k64.data(), 1);
        QVERIFY(k32[0 * gp.n + 2] > 0 && k32[1 * gp.n + 2] == 0.0f);
        QVERIFY(k64[1 * gp.n + 2] > 0);
    }
    const SolveResult ref = createSolver("reference")->solve(gp.problem, toTolerance(Precision::Fp64));
    QVERIFY(ref.status == NumericalStatus::Ok && ref.converged);
    UOT_QCOMPARE_CLOSE(ref.mass, 1.0, 1e-8);

    SolveOptions forced = toTolerance(Precision::Fp32);
    forced.allowStabilizedFallback = false;
    const SolveResult r = createSolver(name)->solve(gp.problem, forced);
    UOT_QVERIFY_MSG(r.status == NumericalStatus::Underflow, name << " " << toString(r.status) << " mass " << r.mass);
    QVERIFY(!r.converged);
    UOT_QVERIFY_MSG(r.message.find("--solver log") != std::string::npos, r.message);
    // What it would have returned: the plan of the other problem, far from the reference.
    UOT_QVERIFY_MSG(planRelL1(gp.problem, r, ref) > 1e-2, planRelL1(gp.problem, r, ref));

    // The continuation's progress counts on from the primary's iterations: one
    // increasing sequence (one convergence curve in the studio), ending at the total.
    std::vector<int> reported;
    SolveControl control;
    control.onProgress = [&](const SolveProgress& p) { reported.push_back(p.iteration); };
    SolveOptions checked = toTolerance(Precision::Fp32);
    checked.checkEvery = 1;
    const SolveResult s = createSolver(name)->solve(gp.problem, checked, control);
    UOT_QVERIFY_MSG(s.status == NumericalStatus::SwitchedToLogDomain, name << " " << toString(s.status));
    QVERIFY(!reported.empty());
    for (std::size_t k = 1; k < reported.size(); ++k)
        UOT_QVERIFY_MSG(reported[k] > reported[k - 1], "progress went back from " << reported[k - 1] << " to " << reported[k]);
    QCOMPARE(reported.back(), s.iterations);
    UOT_QVERIFY_MSG(s.converged && s.solver == "log", s.solver << " " << s.converged << " " << s.iterations << " " << s.message);
    UOT_QVERIFY_MSG(planRelL1(gp.problem, s, ref) < 1e-4, planRelL1(gp.problem, s, ref));
    // Absorbed from the primary's last iterate, the dearer crossing is a normal
    // entry of the stored kernel: the continuation needs no exact pass.
    UOT_QVERIFY_MSG(s.exactPasses == 0 && s.absorptions >= 1, s.exactPasses << " " << s.absorptions);

    const SolveResult d = createSolver(name)->solve(gp.problem, toTolerance(Precision::Fp64));
    UOT_QVERIFY_MSG(d.status == NumericalStatus::Ok && d.converged, name << " fp64 " << toString(d.status));
    UOT_QVERIFY_MSG(planRelL1(gp.problem, d, ref) < 1e-6, planRelL1(gp.problem, d, ref));

    if (name == "fused") {  // auto is fused on the CPU
        const SolveResult au = createSolver("auto")->solve(gp.problem, toTolerance(Precision::Fp32));
        QVERIFY(au.status == NumericalStatus::SwitchedToLogDomain && au.converged);
        UOT_QVERIFY_MSG(planRelL1(gp.problem, au, ref) < 1e-4, planRelL1(gp.problem, au, ref));
        // With auto over-relaxation (the pipeline's default) the continuation goes on
        // with the omega the primary reached: the same plan.
        SolveOptions relaxed = toTolerance(Precision::Fp32);
        relaxed.acceleration = Acceleration::Auto;
        const SolveResult ar = createSolver("auto")->solve(gp.problem, relaxed);
        UOT_QVERIFY_MSG(ar.status == NumericalStatus::SwitchedToLogDomain && ar.converged, toString(ar.status));
        UOT_QVERIFY_MSG(planRelL1(gp.problem, ar, ref) < 1e-4, planRelL1(gp.problem, ar, ref));
    }
}

// The log-domain variant runs most passes on its kernel with the potentials
// absorbed, and a pass in exact log-sum-exp form where the absorbed one could
// lose mass to entries stored as 0 (log_solver.cpp). Either way each pass is
// POT's iteration: 30 plain iterations match the float64 log iteration written
// out above, from starts that take each path:
//  - near: from the solution's potentials (absorbed passes only);
//  - cold: from 0 (in fp32 the first step can exceed the absorbed pass's step
//    limit: at most that pass exact);
//  - tiny eps: costs in [0.75, 1] at eps 1e-3, where exp(-C/eps) is 0 even in
//    float64, so the cold absorbed kernel is all zeros: exact passes first;
//  - spread: the solution's potentials +-2.5 drift limits (beyond the absorbed
//    pass's drift and step limits): exact passes and re-absorptions;
//  - tiny row: near, with one source weight so small (1e-36 in fp32, 1e-305 in
//    fp64) that most of its row's absorbed entries are below the smallest normal
//    number: that row's sums are not exact, so every pass is (checked on the
//    potentials, as the row's mass is too small for the plan's distance to see it).
void TestCpuSolvers::logPassesMatchAFloat64LogIteration_data()
{
    QTest::addColumn<QString>("start");
    QTest::addColumn<double>("eps");
    QTest::addColumn<double>("tau");
    QTest::addColumn<bool>("fp64");
    for (const char* start : {"near", "cold", "tiny eps", "spread", "tiny row"})
        for (double tau : {1.0, kInfinity})
            for (bool fp64 : {true, false})
                QTest::addRow("%s tau %g %s", start, tau, fp64 ? "fp64" : "fp32")
                    << QString(start) << (QString(start) == "tiny eps" ? 1e-3 : 0.003) << tau << fp64;
}

void TestCpuSolvers::logPassesMatchAFloat64LogIteration()
{
    QFETCH(QString, start);
    QFETCH(double, eps);
    QFETCH(double, tau);
    QFETCH(bool, fp64);
    RandomProblem rp(70, 45, 23, eps, tau);
    if (std::isinf(tau))
        for (double& x : rp.b) x /= 1.5;  // balanced: equal masses
    if (start == "tiny eps")
        for (double& c : rp.cost) c = 0.75 + 0.25 * c;
    std::vector<double> logU(rp.m, 0.0), logV(rp.n, 0.0);
    if (start == "tiny row") {
        rp.a[0] = fp64 ? 1e-305 : 1e-36;
        for (std::size_t j = 0; j < rp.n; ++j) rp.cost[j] = 0.75 + 0.25 * rp.cost[j];
    }
    if (start != "cold" && start != "tiny eps") float64LogIterations(rp, 400, logU, logV);
    if (start == "spread") {
        std::mt19937 rng(3);
        const double spread = fp64 ? 250.0 : 25.0;  // 2.5x the drift limit of the storage
        std::uniform_real_distribution<double> noise(-spread, spread);
        for (double& x : logU) x += noise(rng);
        for (double& x : logV) x += noise(rng);
    }
    SolveOptions options = fixedIterations(30, fp64 ? Precision::Fp64 : Precision::Fp32, 2);
    options.warmLogU = logU;
    options.warmLogV = logV;
    const SolveResult r = createSolver("log")->solve(rp.problem, options);
    QVERIFY(r.status == NumericalStatus::Ok && r.iterations == 30);

    SolveResult expected;
    expected.logU = logU;
    expected.logV = logV;
    float64LogIterations(rp, 30, expected.logU, expected.logV);
    const double d = planRelL1(rp.problem, r, expected);
    UOT_QVERIFY_MSG(d <= (fp64 ? 1e-10 : 1e-5), qPrintable(start) << ": plan " << d << " from the float64 iteration ("
                                                                   << r.exactPasses << " exact passes, "
                                                                   << r.absorptions << " absorptions)");
    double potentials = 0;
    for (std::size_t i = 0; i < rp.m; ++i) potentials = std::max(potentials, std::abs(r.logU[i] - expected.logU[i]));
    for (std::size_t j = 0; j < rp.n; ++j) potentials = std::max(potentials, std::abs(r.logV[j] - expected.logV[j]));
    UOT_QVERIFY_MSG(potentials <= (fp64 ? 1e-8 : 1e-3), qPrintable(start) << ": potentials " << potentials);
    // The paths the row is there for.
    const int absorbedPasses = r.iterations - r.exactPasses;
    if (start == "near") UOT_QVERIFY_MSG(r.exactPasses == 0 && r.absorptions == 1, r.exactPasses << " " << r.absorptions);
    if (start == "tiny row") UOT_QVERIFY_MSG(r.exactPasses == 30, r.exactPasses << " exact passes");
    if (start == "cold") UOT_QVERIFY_MSG(r.exactPasses <= 1 && absorbedPasses >= 29, r.exactPasses);
    if (start == "tiny eps" || start == "spread")
        UOT_QVERIFY_MSG(r.exactPasses > 0 && absorbedPasses > 0 && r.absorptions > 1,
                        r.exactPasses << " exact, " << r.absorptions << " absorptions");
}

// Solved to tolerance (translation-invariant, over-relaxed: the defaults of the
// log-domain continuation), the log-domain variant's plan is the converged
// float64 reference's (1e-8 in fp64, 1e-4 in fp32; measured 1e-10 and 8e-7), on
// absorbed passes after at most one exact one (a cold fp32 start, as above).
void TestCpuSolvers::logSolverConvergesToTheReference_data()
{
    QTest::addColumn<double>("eps");
    QTest::addColumn<double>("tau");
    QTest::addColumn<bool>("fp64");
    for (double eps : {0.01, 0.003})
        for (double tau : {1.0, kInfinity})
            for (bool fp64 : {true, false})
                QTest::addRow("eps %g tau %g %s", eps, tau, fp64 ? "fp64" : "fp32") << eps << tau << fp64;
}

void TestCpuSolvers::logSolverConvergesToTheReference()
{
    QFETCH(double, eps);
    QFETCH(double, tau);
    QFETCH(bool, fp64);
    RandomProblem rp(90, 64, 31, eps, tau);
    if (std::isinf(tau))
        for (double& x : rp.b) x /= 1.5;  // balanced: equal masses
    const SolveResult ref = createSolver("reference")->solve(rp.problem, toTolerance(Precision::Fp64));
    QVERIFY(ref.status == NumericalStatus::Ok && ref.converged);
    SolveOptions options = toTolerance(fp64 ? Precision::Fp64 : Precision::Fp32);
    options.mode = IterationMode::TranslationInvariant;
    options.acceleration = Acceleration::Auto;
    const SolveResult r = createSolver("log")->solve(rp.problem, options);
    UOT_QVERIFY_MSG(r.status == NumericalStatus::Ok && r.converged, toString(r.status) << " " << r.iterations);
    const double d = planRelL1(rp.problem, r, ref);
    UOT_QVERIFY_MSG(d <= (fp64 ? 1e-8 : 1e-4), "plan " << d << " from the reference after " << r.iterations);
    UOT_QVERIFY_MSG(r.exactPasses <= 1, r.exactPasses << " exact passes of " << r.iterations);
}

QTEST_APPLESS_MAIN(TestCpuSolvers)
#include "test_cpu_solvers.moc"
