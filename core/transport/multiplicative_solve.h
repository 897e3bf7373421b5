#pragma once
// The solve() of every multiplicative CPU variant (pot-style, mapuot, fused):
// validate, build the padded kernel, start from the warm start or ones, run
// the shared loop with the variant's passes, finish the result. Internal to
// core/transport.

#include <chrono>
#include <string>

#include "core/transport/cpu_buffers.h"
#include "core/transport/scaling_loop.h"
#include "core/transport/solve_setup.h"
#include "core/transport/subnormal_flush.h"

namespace uot {

// make(K, ld, u, v) returns the variant's ScalingPasses (by value or pointer-like)
// over the padded matrix K (rows x ld) starting from the scalings u, v.
template <typename T, typename MakePasses>
SolveResult solveMultiplicative(const UotProblem& problem, const SolveOptions& options, const SolveControl& control,
                                const std::string& name, std::uint64_t bytesPerIteration, AlignedBuffer<T>& matrix,
                                MakePasses&& make)
{
    using Clock = std::chrono::steady_clock;
    const auto setupStart = Clock::now();
    validateSolveOptions(problem, options);
    const SubnormalFlushScope flushSubnormals(options.threads);
    SolveResult result;
    result.solver = name;
    result.mode = toString(options.mode);
    result.bytesPerIteration = bytesPerIteration;
    const std::size_t ld = kernels::paddedLength<T>(problem.cols());
    ScalingLoopSetup setup;
    setup.kernel = buildPaddedKernel<T>(problem, matrix, ld, options.threads);
    setup.bytesPerIteration = bytesPerIteration;
    setup.fp32 = sizeof(T) == 4;
    std::vector<double> u = initialScaling(options.warmU, options.warmLogU, problem.rows());
    std::vector<double> v = initialScaling(options.warmV, options.warmLogV, problem.cols());
    // A log warm start (eps-scaling) beyond the range of this form: let the
    // stabilised variant take it (as an underflow before the first iteration).
    const bool warmOutOfRange = !allFiniteAndPositive(u) || !allFiniteAndPositive(v);
    if (warmOutOfRange) {
        u.assign(u.size(), 1.0);
        v.assign(v.size(), 1.0);
    }
    auto passes = make(matrix.data(), ld, u, v);
    result.timings.setupSeconds = std::chrono::duration<double>(Clock::now() - setupStart).count();
    if (setup.kernel.underflows() || warmOutOfRange) {
        markUnderflow(result, setup.kernel, 0);
        if (warmOutOfRange)
            result.message = "the warm start leaves the floating-point range of the multiplicative form; "
                             "use the log-domain solver (--solver log)";
    } else {
        runScalingLoop(problem, options, control, passes, setup, u, v, result);
    }
    // The final float64 evaluation also measures the mass on the entries this
    // solve held as 0 (plan_evaluation.h); finishResult marks the result when it counts.
    const auto evaluator = [&options](const UotProblem& p, std::span<const double> logU,
                                      std::span<const double> logV) {
        return evaluatePlan(p, logU, logV, options.threads, storageFloor(options.precision));
    };
    finishResult(problem, options, u, v, result, evaluator);
    return result;
}

// solveMultiplicative in the precision the options ask for, with the matrix
// buffer of that precision; the buffer of the other precision is released.
template <typename MakePasses>
SolveResult solveInPrecision(const UotProblem& problem, const SolveOptions& options, const SolveControl& control,
                             const std::string& name, std::uint64_t bytesPerIteration, AlignedBuffer<float>& matrix32,
                             AlignedBuffer<double>& matrix64, MakePasses&& make)
{
    if (options.precision == Precision::Fp32) {
        matrix64.release();
        return solveMultiplicative<float>(problem, options, control, name, bytesPerIteration, matrix32, make);
    }
    matrix32.release();
    return solveMultiplicative<double>(problem, options, control, name, bytesPerIteration, matrix64, make);
}

}  // namespace uot
