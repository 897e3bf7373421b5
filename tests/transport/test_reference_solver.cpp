// The reference solver against analytic solutions. (The POT cross-checks of
// every variant live in tests/transport/pot_crosscheck.py.)

#include <cmath>
#include <vector>

#include "core/registry/solver_registry.h"
#include "core/transport/plan_evaluation.h"
#include "tests/support/qt_checks.h"

using namespace uot;

namespace {
SolveOptions converging()
{
    SolveOptions o;
    o.precision = Precision::Fp64;
    o.maxIterations = 20000;
    o.tolerance = 1e-14;
    o.checkEvery = 1;
    return o;
}
}  // namespace

class TestReferenceSolver : public QObject {
    Q_OBJECT
private slots:
    void scalarProblemMatchesClosedForm();
    void balancedProblemMeetsBothMarginals();
    void invalidInputNamesTheProblem();
};

// 1 x 1: the optimal mass solves c + eps log p + tauA log(p/a) + tauB log(p/b) = 0.
void TestReferenceSolver::scalarProblemMatchesClosedForm()
{
    const double c = 0.3, a = 2.0, b = 0.5, eps = 0.1, tauA = 1.5, tauB = 0.7;
    const std::vector<double> cost{c}, wa{a}, wb{b};
    UotProblem p;
    p.cost = DenseCost{nullptr, cost.data(), 1, 1};
    p.a = wa;
    p.b = wb;
    p.eps = eps;
    p.tauA = tauA;
    p.tauB = tauB;
    auto solver = createSolver("reference");
    const SolveResult r = solver->solve(p, converging());
    const double expected = std::exp((tauA * std::log(a) + tauB * std::log(b) - c) / (eps + tauA + tauB));
    QVERIFY2(r.converged, qPrintable(QString("not converged after %1 iterations").arg(r.iterations)));
    UOT_QCOMPARE_CLOSE(r.mass, expected, 1e-10 * expected);
}

// Balanced on both sides: the plan's marginals are a and b exactly (equal masses).
void TestReferenceSolver::balancedProblemMeetsBothMarginals()
{
    const std::size_t m = 7, n = 5;
    std::vector<double> cost(m * n), a(m), b(n);
    for (std::size_t i = 0; i < m; ++i)
        for (std::size_t j = 0; j < n; ++j) cost[i * n + j] = std::pow((i / 6.0) - (j / 4.0), 2);
    for (std::size_t i = 0; i < m; ++i) a[i] = 1.0 / m;
    for (std::size_t j = 0; j < n; ++j) b[j] = 1.0 / n;
    UotProblem p;
    p.cost = DenseCost{nullptr, cost.data(), m, n};
    p.a = a;
    p.b = b;
    p.eps = 0.05;
    p.tauA = p.tauB = kInfinity;
    const SolveResult r = createSolver("reference")->solve(p, converging());
    QVERIFY2(r.converged, qPrintable(QString("not converged after %1 iterations").arg(r.iterations)));
    UOT_QCOMPARE_CLOSE(r.mass, 1.0, 1e-10);
    QVERIFY2(r.marginalErrorA < 1e-10, qPrintable(QString("marginalErrorA = %1").arg(r.marginalErrorA, 0, 'g', 17)));
    QVERIFY2(r.marginalErrorB < 1e-10, qPrintable(QString("marginalErrorB = %1").arg(r.marginalErrorB, 0, 'g', 17)));
}

void TestReferenceSolver::invalidInputNamesTheProblem()
{
    std::vector<double> cost{0.1, 0.2}, a{1.0}, b{0.5, 0.5};
    UotProblem p;
    p.cost = DenseCost{nullptr, cost.data(), 1, 2};
    p.a = a;
    p.b = b;
    auto solver = createSolver("reference");
    p.eps = -1;
    UOT_QVERIFY_THROWS_WITH(solver->solve(p, converging()), "eps");
    p.eps = 0.1;
    cost[1] = std::nan("");
    UOT_QVERIFY_THROWS_WITH(solver->solve(p, converging()), "(0, 1)");
    cost[1] = 0.2;
    b[0] = 0;
    UOT_QVERIFY_THROWS_WITH(solver->solve(p, converging()), "b[0]");
    UOT_QVERIFY_THROWS_WITH(createSolver("no-such-solver"), "unknown solver");
}

QTEST_APPLESS_MAIN(TestReferenceSolver)
#include "test_reference_solver.moc"
