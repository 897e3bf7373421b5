#pragma once
// The checks of gpu-nccl (one solve split over several GPUs through NCCL),
// shared by the Qt tests (tests/gpu/test_gpu_nccl.cpp on one GPU,
// test_gpu_nccl_two.cpp on two) and the Qt-free device driver (nccl_bench
// --check). Each check runs a fixed number of iterations (no stopping rule) and
// compares gpu-nccl's plan with the single-GPU gpu-fused plan and with the
// float64 CPU reference of the same iterations: an independent float64 solve,
// never gpu-nccl's own output.

#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "core/registry/solver_registry.h"
#include "core/transport/uot_error.h"
#include "gpu/gpu_backend.h"
#include "gpu/nccl_solver.h"
#include "tests/gpu/mapreduce_cases.h"

namespace uot::test {

// A dense random cost problem (costs in [0, 1)); owns its data.
struct DenseCase {
    std::vector<double> cost, a, b;
    UotProblem problem;
    DenseCase(std::size_t m, std::size_t n, double tauA, double tauB, unsigned seed) : cost(m * n), a(m), b(n)
    {
        unsigned state = seed * 2654435761u + 99u;
        auto next = [&state]() {
            state = state * 1664525u + 1013904223u;
            return (state >> 8) / double(1u << 24);
        };
        for (double& c : cost) c = next();
        for (double& x : a) x = (0.2 + next()) / double(m);
        for (double& x : b) x = (0.2 + next()) * 1.3 / double(n);
        problem.cost = DenseCost{nullptr, cost.data(), m, n};
        problem.a = a;
        problem.b = b;
        problem.eps = 0.05;
        problem.tauA = tauA;
        problem.tauB = tauB;
    }
};

inline SolveOptions ncclOptions(int iterations)
{
    return cloudOptions(Precision::Fp32, iterations, 0, iterations);  // exactly `iterations`, no stopping rule
}

// gpu-nccl over `devices` (chunks pieces) against gpu-fused on devices[0] and
// the float64 reference, 200 iterations each.
inline CheckOutcome checkNcclMatches(const std::string& what, const UotProblem& problem, const std::vector<int>& devices,
                                     int chunks)
{
    const int iterations = 200;
    SolveOptions single = ncclOptions(iterations);
    single.device = devices.front();
    const SolveResult fused = createSolver("gpu-fused")->solve(problem, single);
    const SolveResult ref = createSolver("reference")->solve(problem, cloudOptions(Precision::Fp64, iterations, 0, iterations));
    const SolveResult got = gpu::createNcclSolver(devices, chunks)->solve(problem, ncclOptions(iterations));
    CheckOutcome o;
    o.tolerance = 1e-5;
    o.distance = planRelativeL1(problem, got, fused);
    const double toRef = planRelativeL1(problem, got, ref);
    o.ok = finiteResult(got) && got.iterations == iterations && got.status == NumericalStatus::Ok &&
           o.distance <= o.tolerance && toRef <= 1e-4;
    std::ostringstream msg;
    msg << what << " on " << devices.size() << " GPU(s), " << chunks << " chunk(s): rel L1 vs gpu-fused " << o.distance
        << " (tolerance " << o.tolerance << "), vs fp64 reference " << toRef << " (tolerance 1e-4), iterations "
        << got.iterations;
    o.detail = msg.str();
    return o;
}

// gpu-nccl in TI mode, over-relaxed or not, run to its stopping test: converged to
// the fixed point of the float64 reference run to convergence (1e-4, fp32),
// reported in that mode, and in fewer iterations than its plain iteration.
inline CheckOutcome checkNcclAccelerated(const std::string& what, const UotProblem& problem,
                                         const std::vector<int>& devices, Acceleration acceleration)
{
    SolveOptions refOptions = cloudOptions(Precision::Fp64, 50000, 1e-12, 10);
    const SolveResult ref = createSolver("reference")->solve(problem, refOptions);
    SolveOptions o = cloudOptions(Precision::Fp32, 20000, 1e-6, 10);
    o.mode = IterationMode::Plain;
    o.acceleration = Acceleration::None;
    const SolveResult plain = gpu::createNcclSolver(devices, 2)->solve(problem, o);
    o.mode = IterationMode::TranslationInvariant;
    o.acceleration = acceleration;
    const SolveResult got = gpu::createNcclSolver(devices, 2)->solve(problem, o);
    CheckOutcome out;
    out.tolerance = 1e-4;
    out.distance = planRelativeL1(problem, got, ref);
    out.ok = finiteResult(got) && got.converged && got.status == NumericalStatus::Ok && ref.converged &&
             out.distance <= out.tolerance && got.mode == "translation-invariant" &&
             got.acceleration == toString(acceleration) && got.iterations <= plain.iterations;
    std::ostringstream msg;
    msg << what << " on " << devices.size() << " GPU(s), TI accel " << toString(acceleration) << ": rel L1 vs fp64 "
        << out.distance << " (tolerance 1e-4), converged " << (got.converged ? "yes" : "NO") << ", mode " << got.mode
        << ", acceleration " << got.acceleration << ", iterations " << got.iterations << " vs plain "
        << plain.iterations << ", omega " << got.omega;
    out.detail = msg.str();
    return out;
}

// The checks on the given GPUs: dense and point-cloud costs, balanced and
// unbalanced, product reference, uneven row splits (and, on several GPUs, a GPU
// with no rows), with and without the chunked overlap.
inline std::vector<CheckOutcome> ncclChecks(const std::vector<int>& devices)
{
    std::vector<CheckOutcome> out;
    for (int chunks : {1, 2, 3}) {
        DenseCase dense(1001, 777, 1.0, 1.0, 3);
        out.push_back(checkNcclMatches("dense 1001x777 tau 1", dense.problem, devices, chunks));
    }
    {
        DenseCase dense(513, 1024, kInfinity, 0.7, 5);
        out.push_back(checkNcclMatches("dense 513x1024 tauA inf tauB 0.7", dense.problem, devices, 2));
    }
    {
        const CloudProblem cloud({"cloud", 2049, 1500, 3, 0.05, 0.5, 2.0, ReferenceMeasure::Product});
        out.push_back(checkNcclMatches("points 2049x1500 d3 tau 0.5/2 product", cloud.problem, devices, 2));
    }
    {
        DenseCase few(1, 300, 1.0, 1.0, 9);  // fewer rows than GPUs when there are several
        out.push_back(checkNcclMatches("dense 1x300 (rows < GPUs)", few.problem, devices, 2));
    }
    for (const Acceleration acceleration : {Acceleration::None, Acceleration::Auto}) {
        DenseCase dense(1001, 777, 1.0, 1.0, 3);
        out.push_back(checkNcclAccelerated("dense 1001x777 tau 1", dense.problem, devices, acceleration));
        const CloudProblem cloud({"cloud", 1025, 900, 3, 0.02, 0.5, 2.0, ReferenceMeasure::Product});
        out.push_back(checkNcclAccelerated("points 1025x900 d3 eps 0.02 tau 0.5/2 product", cloud.problem, devices,
                                           acceleration));
        DenseCase few(1, 300, 1.0, 1.0, 9);
        out.push_back(checkNcclAccelerated("dense 1x300 (rows < GPUs)", few.problem, devices, acceleration));
    }
    return out;
}

// A device that does not exist fails the solve with InvalidArgument naming it.
inline CheckOutcome checkBadDevice()
{
    DenseCase dense(10, 10, 1.0, 1.0, 1);
    CheckOutcome o;
    try {
        gpu::createNcclSolver({0, 99})->solve(dense.problem, ncclOptions(5));
        o.detail = "GPU 99 was accepted";
    } catch (const Error& e) {
        const std::string what = e.what();
        o.ok = e.code() == ErrorCode::InvalidArgument && what.find("99") != std::string::npos;
        o.detail = std::string("GPU 99 rejected: ") + what;
    }
    return o;
}

inline int visibleGpus() { return static_cast<int>(gpu::listDevices().size()); }

}  // namespace uot::test
