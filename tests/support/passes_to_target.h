#pragma once
// Passes over K until a solver's plan is within a target distance of a converged
// plan, measured from outside the solver: chained solves of `chunk` iterations,
// each warm-started from the last (a warm start continues the iteration
// exactly), with the plan distance taken after each. Used by the time-to-solution
// benchmarks (bench/quality/time_to_solution.cpp, tests/gpu/gpu_bench.cpp).

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <vector>

#include "core/transport/uot_solver.h"
#include "tests/gpu/plan_distance.h"

namespace uot::test {

// A result whose iterate can go on: Ok, or the log-domain solver after `auto`'s switch.
inline bool usableStatus(NumericalStatus status)
{
    return status == NumericalStatus::Ok || status == NumericalStatus::SwitchedToLogDomain;
}

struct PassCount {
    std::uint64_t passes = 0;  // SolveResult::passes summed over the chunks
    int iterations = 0;
    double distance = 1;       // plan relative L1 to the converged plan at the stop
};

// `options` gives precision, mode and threads; its iteration limits are replaced.
// Stops at `target`, at 200000 iterations, or when a chunk stops early (status not Ok).
inline PassCount passesToTarget(UotSolver& solver, const UotProblem& problem, SolveOptions options,
                                const SolveResult& converged, double target, int chunk)
{
    options.maxIterations = chunk;
    options.tolerance = 0;
    options.checkEvery = chunk;
    options.evaluateFinalPlan = false;
    PassCount count;
    std::vector<double> u, v;  // the warm start (options hold spans of them)
    while (count.iterations < 200000) {
        const SolveResult r = solver.solve(problem, options);
        count.iterations += r.iterations;
        count.passes += r.passes;
        count.distance = planRelativeL1(problem, r, converged);
        if (count.distance <= target || r.iterations < chunk || !usableStatus(r.status)) break;
        // The scalings themselves where they are in range (a multiplicative variant
        // continues from them bit for bit), else their logs (a log-domain variant at a
        // small eps, whose e^(log u) overflows, continues from those exactly).
        u = r.u();
        v = r.v();
        const auto inRange = [](const std::vector<double>& x) {
            return std::all_of(x.begin(), x.end(), [](double e) { return std::isfinite(e) && e > 0; });
        };
        if (!inRange(u) || !inRange(v)) {
            u = r.logU;
            v = r.logV;
            options.warmU = {};
            options.warmV = {};
            options.warmLogU = u;
            options.warmLogV = v;
        } else {
            options.warmLogU = {};
            options.warmLogV = {};
            options.warmU = u;
            options.warmV = v;
        }
    }
    return count;
}

// For iterations that a warm start does not continue exactly (over-relaxation,
// whose omega is chosen during the solve; eps-scaling, whose stages start over):
// solves from scratch with --max-iter N, N doubling until the plan is within
// `target`, then bisected to the smallest such N. The count is that solve's
// passes (rejected steps and every stage included). `wallMs` gets the wall time
// of that solve.
inline PassCount passesToTargetFromScratch(UotSolver& solver, const UotProblem& problem, SolveOptions options,
                                           const SolveResult& converged, double target, double* wallMs = nullptr)
{
    options.tolerance = 0;
    options.evaluateFinalPlan = false;
    auto run = [&](int n, PassCount& out) {
        options.maxIterations = n;
        options.checkEvery = n;
        const auto start = std::chrono::steady_clock::now();
        const SolveResult r = solver.solve(problem, options);
        if (wallMs) *wallMs = 1e3 * std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        out.iterations = r.iterations;
        out.passes = r.passes;
        out.distance = planRelativeL1(problem, r, converged);
        return out.distance <= target || !usableStatus(r.status);
    };
    PassCount hi;
    int high = 8;
    while (!run(high, hi) && high < 200000) high *= 2;
    int low = high / 2;  // not reached at low (or low = 4 below the first try)
    while (high - low > 1) {
        const int mid = (low + high) / 2;
        PassCount c;
        if (run(mid, c)) {
            high = mid;
            hi = c;
        } else {
            low = mid;
        }
    }
    // The wall time of the answer's own solve. Its count and distance stay those of
    // the bisection's run: a GPU solve's atomic sums do not repeat bit for bit, and
    // a rerun that ends a hair above `target` must not turn the count into a miss.
    PassCount timed;
    run(high, timed);
    return hi;
}

}  // namespace uot::test
