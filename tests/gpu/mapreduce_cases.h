#pragma once
// The checks of gpu-mapreduce against independent float64 CPU solvers, shared by
// the Qt test (tests/gpu/test_gpu_mapreduce.cpp) and the Qt-free device driver
// (gpu_bench --check-mapreduce). Each check solves one point-cloud problem and
// returns the plan distance, its tolerance and whether it passed; nothing here
// compares gpu-mapreduce with its own output.

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <sstream>
#include <string>
#include <vector>

#include "core/registry/solver_registry.h"
#include "core/transport/solve_options.h"
#include "core/transport/solve_result.h"
#include "core/transport/uot_error.h"
#include "core/transport/uot_problem.h"
#include "gpu/gpu_backend.h"
#include "tests/gpu/plan_distance.h"

namespace uot::test {

struct CloudCase {
    std::string name;
    std::size_t m = 0, n = 0, d = 3;
    double eps = 0.05, tauA = 1, tauB = 1;
    ReferenceMeasure reference = ReferenceMeasure::Ones;
};

// Deterministic points in [0, 1]^d, cost scale 1/d (costs in [0, 1]), unequal
// masses when both sides are penalised.
struct CloudProblem {
    std::vector<double> x, y, a, b;
    UotProblem problem;
    explicit CloudProblem(const CloudCase& c) : x(c.m * c.d), y(c.n * c.d), a(c.m), b(c.n)
    {
        unsigned state = static_cast<unsigned>(c.m * 7919 + c.n * 104729 + c.d * 31);
        auto next = [&state]() {
            state = state * 1664525u + 1013904223u;
            return (state >> 8) / double(1u << 24);
        };
        for (double& v : x) v = next();
        for (double& v : y) v = 0.8 * next() + 0.1;
        double sa = 0, sb = 0;
        for (double& v : a) sa += (v = 0.3 + next());
        for (double& v : b) sb += (v = 0.3 + next());
        const bool balanced = std::isinf(c.tauA) || std::isinf(c.tauB);
        for (double& v : a) v /= sa;
        for (double& v : b) v *= (balanced ? 1.0 : 1.4) / sb;
        problem.cost = PointCloudCost{x.data(), y.data(), c.m, c.n, c.d, 1.0 / double(c.d)};
        problem.a = a;
        problem.b = b;
        problem.eps = c.eps;
        problem.tauA = c.tauA;
        problem.tauB = c.tauB;
        problem.reference = c.reference;
    }
    CloudProblem(const CloudProblem&) = delete;
    CloudProblem& operator=(const CloudProblem&) = delete;
};

struct CheckOutcome {
    bool ok = false;
    double distance = 0;
    double tolerance = 0;
    std::string detail;
};

// Prints one PASS/FAIL line per outcome and a summary line ("<what> checks: N,
// failures: F"); returns the exit status of a check driver (0 = all passed).
inline int reportOutcomes(const std::vector<CheckOutcome>& outcomes, const char* what)
{
    int failures = 0;
    for (const CheckOutcome& o : outcomes) {
        std::printf("%s %s\n", o.ok ? "PASS" : "FAIL", o.detail.c_str());
        failures += o.ok ? 0 : 1;
    }
    std::printf("%s checks: %zu, failures: %d\n", what, outcomes.size(), failures);
    return failures == 0 ? 0 : 1;
}

inline SolveOptions cloudOptions(Precision precision, int iterations, double tolerance, int checkEvery = 10)
{
    SolveOptions o;
    o.precision = precision;
    o.maxIterations = iterations;
    o.tolerance = tolerance;
    o.checkEvery = checkEvery;
    o.evaluateFinalPlan = false;
    return o;
}

inline bool finiteResult(const SolveResult& r)
{
    for (double v : r.logU)
        if (!std::isfinite(v)) return false;
    for (double v : r.logV)
        if (!std::isfinite(v)) return false;
    return true;
}

inline CheckOutcome judge(const CloudProblem& cp, const SolveResult& got, const SolveResult& ref, double tolerance,
                          const std::string& what)
{
    CheckOutcome o;
    o.tolerance = tolerance;
    o.distance = planRelativeL1(cp.problem, got, ref);
    o.ok = finiteResult(got) && o.distance <= tolerance;
    std::ostringstream msg;
    msg << what << ": plan rel L1 " << o.distance << " (tolerance " << tolerance << "), finite "
        << (finiteResult(got) ? "yes" : "NO") << ", iterations " << got.iterations << " vs " << ref.iterations;
    o.detail = msg.str();
    return o;
}

// The shapes of the held-out-style set, each in d = 1, 3, 8 and three penalty settings.
inline std::vector<CloudCase> referenceCases()
{
    std::vector<CloudCase> out;
    const std::size_t shapes[][2] = {{1, 7}, {7, 1}, {37, 53}, {513, 1025}};
    for (const auto& s : shapes)
        for (std::size_t d : {1, 3, 8}) {
            const std::string base = std::to_string(s[0]) + "x" + std::to_string(s[1]) + " d" + std::to_string(d);
            out.push_back({base + " tau 1", s[0], s[1], d, 0.05, 1.0, 1.0, ReferenceMeasure::Ones});
            out.push_back({base + " tauA inf tauB 0.7", s[0], s[1], d, 0.05, kInfinity, 0.7, ReferenceMeasure::Ones});
            out.push_back({base + " tau 0.5/2 product", s[0], s[1], d, 0.1, 0.5, 2.0, ReferenceMeasure::Product});
        }
    return out;
}

// Step for step against the float64 reference solver: the same 300 iterations.
inline CheckOutcome checkAgainstReference(const CloudCase& c)
{
    const CloudProblem cp(c);
    const SolveResult ref = createSolver("reference")->solve(cp.problem, cloudOptions(Precision::Fp64, 300, 0, 300));
    const SolveResult got = createSolver("gpu-mapreduce")->solve(cp.problem, cloudOptions(Precision::Fp32, 300, 0, 300));
    return judge(cp, got, ref, 1e-4, c.name);
}

// Small eps (the float64 reference underflows there): against the float64
// log-domain CPU solver, the same iterations; no NaN, plan close. fp32 rounds
// -C/eps with an absolute error growing like 1/eps, hence the looser tolerances.
inline std::vector<CloudCase> smallEpsCases()
{
    std::vector<CloudCase> out;
    for (double eps : {1e-3, 1e-4})
        for (std::size_t shape : {37, 513}) {
            std::ostringstream name;
            name << shape << "x" << 2 * shape - 1 << " d3 eps " << eps;
            out.push_back({name.str(), shape, 2 * shape - 1, 3, eps, 1.0, 1.0, ReferenceMeasure::Ones});
        }
    return out;
}

inline double smallEpsTolerance(double eps) { return eps >= 1e-3 ? 1e-2 : 5e-2; }

inline CheckOutcome checkSmallEps(const CloudCase& c)
{
    const CloudProblem cp(c);
    const SolveResult ref = createSolver("log")->solve(cp.problem, cloudOptions(Precision::Fp64, 200, 0, 200));
    const SolveResult got = createSolver("gpu-mapreduce")->solve(cp.problem, cloudOptions(Precision::Fp32, 200, 0, 200));
    return judge(cp, got, ref, smallEpsTolerance(c.eps), c.name);
}

// Warm start: 40 iterations, then 40 more from their scalings, against 80
// iterations of the float64 reference.
inline CheckOutcome checkWarmStart()
{
    const CloudCase c{"warm start 300x211 d3", 300, 211, 3, 0.05, 1.0, 1.0, ReferenceMeasure::Ones};
    const CloudProblem cp(c);
    auto solver = createSolver("gpu-mapreduce");
    const SolveResult first = solver->solve(cp.problem, cloudOptions(Precision::Fp32, 40, 0, 40));
    const std::vector<double> u = first.u(), v = first.v();
    SolveOptions o = cloudOptions(Precision::Fp32, 40, 0, 40);
    o.warmU = u;
    o.warmV = v;
    const SolveResult second = solver->solve(cp.problem, o);
    const SolveResult ref = createSolver("reference")->solve(cp.problem, cloudOptions(Precision::Fp64, 80, 0, 80));
    return judge(cp, second, ref, 1e-4, c.name);
}

// TI mode reaches the fixed point of the plain float64 reference run to convergence.
inline CheckOutcome checkTranslationInvariant(std::size_t m, std::size_t n)
{
    const CloudCase c{"TI " + std::to_string(m) + "x" + std::to_string(n) + " d3", m, n, 3, 0.05, 1.0, 1.0,
                      ReferenceMeasure::Ones};
    const CloudProblem cp(c);
    const SolveResult ref =
        createSolver("reference")->solve(cp.problem, cloudOptions(Precision::Fp64, 20000, 1e-12, 10));
    SolveOptions o = cloudOptions(Precision::Fp32, 5000, 1e-7, 10);
    o.mode = IterationMode::TranslationInvariant;
    const SolveResult got = createSolver("gpu-mapreduce")->solve(cp.problem, o);
    CheckOutcome out = judge(cp, got, ref, 1e-4, c.name);
    if (got.mode != "translation-invariant") {
        out.ok = false;
        out.detail += ", mode " + got.mode;
    }
    if (!ref.converged) {
        out.ok = false;
        out.detail += ", the reference did not converge";
    }
    return out;
}

// Over-relaxed (--accel auto), plain or TI: converged to the fixed point of the
// float64 reference run to convergence, reported as over-relaxed, and in fewer
// passes than the plain iteration of the same solver to the same tolerance.
inline CheckOutcome checkOverRelaxed(std::size_t m, std::size_t n, IterationMode mode)
{
    const bool ti = mode == IterationMode::TranslationInvariant;
    const CloudCase c{std::string(ti ? "TI" : "plain") + " + relax " + std::to_string(m) + "x" + std::to_string(n) +
                          " d3 eps 0.02 tau 1",
                      m, n, 3, 0.02, 1.0, 1.0, ReferenceMeasure::Ones};
    const CloudProblem cp(c);
    const SolveResult ref =
        createSolver("reference")->solve(cp.problem, cloudOptions(Precision::Fp64, 50000, 1e-12, 10));
    SolveOptions o = cloudOptions(Precision::Fp32, 20000, 1e-6, 10);
    o.mode = IterationMode::Plain;
    o.acceleration = Acceleration::None;
    const SolveResult plain = createSolver("gpu-mapreduce")->solve(cp.problem, o);
    o.mode = mode;
    o.acceleration = Acceleration::Auto;
    const SolveResult got = createSolver("gpu-mapreduce")->solve(cp.problem, o);
    CheckOutcome out = judge(cp, got, ref, 1e-4, c.name);
    std::ostringstream more;
    more << ", passes " << got.passes << " vs plain " << plain.passes << " (" << double(plain.passes) / double(got.passes)
         << "x fewer), acceleration " << got.acceleration << ", omega " << got.omega << ", converged "
         << (got.converged ? "yes" : "NO");
    out.detail += more.str();
    if (!got.converged || got.acceleration != "auto" || got.mode != toString(mode) || !ref.converged ||
        !(got.passes < plain.passes))
        out.ok = false;
    return out;
}

// The final plan evaluation (mass, marginals, objective) against the reference's.
inline CheckOutcome checkFinalEvaluation()
{
    const CloudCase c{"final plan 513x1025 d3", 513, 1025, 3, 0.05, 1.0, 1.0, ReferenceMeasure::Ones};
    const CloudProblem cp(c);
    SolveOptions o64 = cloudOptions(Precision::Fp64, 300, 0, 300), o32 = cloudOptions(Precision::Fp32, 300, 0, 300);
    o64.evaluateFinalPlan = o32.evaluateFinalPlan = true;
    const SolveResult ref = createSolver("reference")->solve(cp.problem, o64);
    const SolveResult got = createSolver("gpu-mapreduce")->solve(cp.problem, o32);
    CheckOutcome out;
    out.tolerance = 1e-4;
    auto rel = [](double x, double r) { return std::abs(x - r) / std::max(std::abs(r), 1e-12); };
    out.distance = std::max({rel(got.mass, ref.mass), rel(got.objective, ref.objective),
                             std::abs(got.marginalErrorA - ref.marginalErrorA) / ref.mass,
                             std::abs(got.marginalErrorB - ref.marginalErrorB) / ref.mass});
    out.ok = out.distance <= out.tolerance;
    std::ostringstream msg;
    msg << c.name << ": mass " << got.mass << " vs " << ref.mass << ", objective " << got.objective << " vs "
        << ref.objective << ", marginal errors " << got.marginalErrorA << "/" << got.marginalErrorB << " vs "
        << ref.marginalErrorA << "/" << ref.marginalErrorB << " (max rel " << out.distance << ")";
    out.detail = msg.str();
    return out;
}

// Fp64, a dense cost and a cancelled solve: clear errors and a cancelled result.
inline CheckOutcome checkRefusalsAndCancel()
{
    const CloudCase c{"refusals", 37, 53, 3, 0.05, 1.0, 1.0, ReferenceMeasure::Ones};
    const CloudProblem cp(c);
    auto solver = createSolver("gpu-mapreduce");
    CheckOutcome out;
    out.ok = true;
    try {
        solver->solve(cp.problem, cloudOptions(Precision::Fp64, 10, 0));
        out.ok = false;
        out.detail += "fp64 accepted; ";
    } catch (const Error& e) {
        if (std::string(e.what()).find("fp32") == std::string::npos) {
            out.ok = false;
            out.detail += std::string("fp64 message does not name fp32: ") + e.what() + "; ";
        }
    }
    std::vector<double> cost(c.m * c.n, 0.5);
    UotProblem dense = cp.problem;
    dense.cost = DenseCost{nullptr, cost.data(), c.m, c.n};
    try {
        solver->solve(dense, cloudOptions(Precision::Fp32, 10, 0));
        out.ok = false;
        out.detail += "dense cost accepted; ";
    } catch (const Error& e) {
        if (e.code() != ErrorCode::InvalidArgument) {
            out.ok = false;
            out.detail += "dense cost: wrong error code; ";
        }
    }
    std::atomic<bool> cancel{true};
    SolveControl control;
    control.cancel = &cancel;
    const SolveResult r = solver->solve(cp.problem, cloudOptions(Precision::Fp32, 1000, 0), control);
    if (!r.cancelled || r.iterations != 0) {
        out.ok = false;
        out.detail += "cancel ignored; ";
    }
    if (out.detail.empty()) out.detail = "fp64 and dense cost refused with clear messages, cancel honoured";
    return out;
}

// The work schedules of a pass (gpu/mapreduce_schedule.h) where blocks' ranges
// cross row blocks: balanced with a few block slots (several
// blocks' partials per row, several row blocks per block, in both passes), with
// every resident slot, and the split schedule; at eps 0.05 (fast passes) and
// 1e-3 (exact passes too), and in d = 8 (other rows per block). Against the
// float64 solvers exactly as the checks above.
struct ScheduleCase {
    CloudCase cloud;
    gpu::MapReduceConfig config;
    std::string label;
};

inline std::vector<ScheduleCase> scheduleCases()
{
    using gpu::MapReduceWork;
    const auto config = [](MapReduceWork schedule, int blocks) {
        gpu::MapReduceConfig c;
        c.schedule = schedule;
        c.blocks = blocks;
        return c;
    };
    const auto ones = ReferenceMeasure::Ones;
    // 2500 x 1800, d = 3 (1024 rows and 256 columns a unit): the row pass has 3 x 8
    // units, the column pass 2 x 10. Balanced over 5 slots: shares of 5 and 4
    // units, across row blocks.
    const CloudCase mid{"2500x1800 d3", 2500, 1800, 3, 0.05, 1.0, 1.0, ones};
    // 1100 x 700 at eps 1e-3: 2 x 3 and 1 x 5 units over 4 slots.
    const CloudCase smallEps{"1100x700 d3 eps 0.001", 1100, 700, 3, 1e-3, 1.0, 1.0, ones};
    // d = 8 (512 rows a unit): 6 x 1 and 1 x 12 units over 5 slots.
    const CloudCase wide{"3000x37 d8 tauA inf tauB 0.7", 3000, 37, 8, 0.05, kInfinity, 0.7, ones};
    return {{mid, config(MapReduceWork::Balanced, 5), "balanced, 5 slots"},
            {mid, config(MapReduceWork::Balanced, 7), "balanced, 7 slots"},
            {mid, config(MapReduceWork::Balanced, 0), "balanced, every resident slot"},
            {mid, config(MapReduceWork::Split, 0), "split"},
            {smallEps, config(MapReduceWork::Balanced, 4), "balanced, 4 slots"},
            {smallEps, config(MapReduceWork::Balanced, 3), "balanced, 3 slots"},
            {smallEps, config(MapReduceWork::Split, 0), "split"},
            {wide, config(MapReduceWork::Balanced, 5), "balanced, 5 slots"}};
}

inline CheckOutcome checkSchedule(const ScheduleCase& c)
{
    const CloudProblem cp(c.cloud);
    const bool smallEps = c.cloud.eps < 1e-2;
    const int iterations = smallEps ? 200 : 300;
    const SolveResult ref = createSolver(smallEps ? "log" : "reference")
                                ->solve(cp.problem, cloudOptions(Precision::Fp64, iterations, 0, iterations));
    const SolveResult got =
        gpu::createMapReduceSolver(c.config)->solve(cp.problem, cloudOptions(Precision::Fp32, iterations, 0, iterations));
    return judge(cp, got, ref, smallEps ? smallEpsTolerance(c.cloud.eps) : 1e-4, c.cloud.name + ", " + c.label);
}

}  // namespace uot::test
