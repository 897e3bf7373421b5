#pragma once
// Helpers shared by the GPU tests: the skip rule without a device, a
// deterministic random dense problem, solve options and the float64 plan
// distance used to compare a GPU result with the CPU reference.

#include <cmath>
#include <string>
#include <vector>

#include "core/transport/kernel_matrix.h"
#include "core/transport/solve_options.h"
#include "core/transport/solve_result.h"
#include "core/transport/uot_problem.h"
#include "gpu/gpu_backend.h"
#include "tests/support/test_harness.h"

namespace uot::test {

// True when a GPU is usable; otherwise marks the executable skipped (exit 77).
inline bool requireGpu()
{
    const std::string reason = gpu::unavailableReason();
    if (reason.empty()) return true;
    skip(reason);
    return false;
}

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

// Relative L1 distance between the plans of two results, computed in float64.
inline double planRelativeL1(const UotProblem& p, const SolveResult& x, const SolveResult& ref)
{
    const std::size_t m = p.rows(), n = p.cols();
    std::vector<double> row(n);
    double diff = 0, total = 0;
    for (std::size_t i = 0; i < m; ++i) {
        fillCostRow(p.cost, i, row.data());
        for (std::size_t j = 0; j < n; ++j) {
            const double logK = -row[j] / p.eps + logReference(p, i, j);
            const double px = std::exp(x.logU[i] + x.logV[j] + logK);
            const double pr = std::exp(ref.logU[i] + ref.logV[j] + logK);
            diff += std::abs(px - pr);
            total += std::abs(pr);
        }
    }
    return total > 0 ? diff / total : diff;
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
