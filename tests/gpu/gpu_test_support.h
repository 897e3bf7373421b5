#pragma once
// Helpers shared by the GPU tests (Qt Test): the skip rule without a device, a
// deterministic random dense problem, solve options and the float64 plan
// distance used to compare a GPU result with the CPU reference.

#include <cmath>
#include <initializer_list>
#include <utility>
#include <string>
#include <vector>

#include "core/transport/kernel_matrix.h"
#include "core/transport/solve_options.h"
#include "core/transport/solve_result.h"
#include "core/transport/uot_problem.h"
#include "gpu/gpu_backend.h"
#include "tests/gpu/plan_distance.h"
#include "tests/support/qt_checks.h"

namespace uot::test {

}  // namespace uot::test

// Skips the whole test case where no GPU is usable (call it in initTestCase();
// QSKIP there skips every test function). Qt Test prints "SKIP" with the reason
// and exits 0; CTest reports the test skipped through SKIP_REGULAR_EXPRESSION.
#define UOT_QSKIP_WITHOUT_GPU()                                                  \
    do {                                                                         \
        const std::string uot_no_gpu = ::uot::gpu::unavailableReason();          \
        if (!uot_no_gpu.empty()) QSKIP(("no GPU: " + uot_no_gpu).c_str());       \
    } while (0)

namespace uot::test {

// A deterministic random problem; owns its data.
struct TestProblem {
    std::vector<double> cost, a, b;
    UotProblem problem;

    TestProblem(std::size_t m, std::size_t n, double eps, double tauA, double tauB, unsigned seed = 1,
                ReferenceMeasure reference = ReferenceMeasure::Ones)
        : cost(m * n), a(m), b(n)
    {
        unsigned state = seed * 2654435761u + 12345u;
        auto next = [&state]() {
            state = state * 1664525u + 1013904223u;
            return (state >> 8) / double(1u << 24);
        };
        for (double& c : cost) c = next();
        double sa = 0, sb = 0;
        for (double& x : a) sa += (x = 0.2 + next());
        for (double& x : b) sb += (x = 0.2 + next());
        const bool balanced = std::isinf(tauA) || std::isinf(tauB);
        for (double& x : a) x /= sa;
        for (double& x : b) x *= (balanced ? 1.0 : 1.7) / sb;  // unequal masses when unbalanced
        problem.cost = DenseCost{nullptr, cost.data(), m, n};
        problem.a = a;
        problem.b = b;
        problem.eps = eps;
        problem.tauA = tauA;
        problem.tauB = tauB;
        problem.reference = reference;
    }
};

inline SolveOptions options(Precision precision, int maxIterations, double tolerance, int checkEvery = 10)
{
    SolveOptions o;
    o.precision = precision;
    o.maxIterations = maxIterations;
    o.tolerance = tolerance;
    o.checkEvery = checkEvery;
    o.evaluateFinalPlan = false;
    return o;
}

// A fixed 300 x 211 point-cloud problem in 3-D (scale 0.25, eps 0.05, masses 1
// and 1.3, tau = 1): its cost is built on the device, never uploaded.
struct CloudTestProblem {
    static constexpr std::size_t m = 300, n = 211, d = 3;
    std::vector<double> x, y, a, b;
    UotProblem problem;

    CloudTestProblem() : x(m * d), y(n * d), a(m, 1.0 / m), b(n, 1.3 / n)
    {
        for (std::size_t k = 0; k < x.size(); ++k) x[k] = std::sin(0.37 * k);
        for (std::size_t k = 0; k < y.size(); ++k) y[k] = std::cos(0.23 * k);
        problem.cost = PointCloudCost{x.data(), y.data(), m, n, d, 0.25};
        problem.a = a;
        problem.b = b;
        problem.eps = 0.05;
    }
    CloudTestProblem(const CloudTestProblem&) = delete;
    CloudTestProblem& operator=(const CloudTestProblem&) = delete;
};

// Data rows of a test run once per variant: column "variant" (QString).
inline void addVariantRows(const std::vector<std::string>& variants)
{
    QTest::addColumn<QString>("variant");
    for (const std::string& v : variants) QTest::newRow(v.c_str()) << QString::fromStdString(v);
}

// Data rows of a test run once per shape: columns "rows" and "cols" (int), named "MxN".
inline void addShapeRows(std::initializer_list<std::pair<int, int>> shapes)
{
    QTest::addColumn<int>("rows");
    QTest::addColumn<int>("cols");
    for (const auto& [m, n] : shapes) QTest::addRow("%dx%d", m, n) << m << n;
}

inline bool allFinite(const SolveResult& r)
{
    for (double x : r.logU)
        if (!std::isfinite(x)) return false;
    for (double x : r.logV)
        if (!std::isfinite(x)) return false;
    return true;
}

}  // namespace uot::test
