#include "core/transport/solve_setup.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <sstream>

#include "core/transport/plan_evaluation.h"
#include "core/transport/uot_error.h"

namespace uot {

namespace {
[[noreturn]] void fail(const std::string& message) { throw Error(ErrorCode::InvalidArgument, message); }

void validateWarmStart(std::span<const double> warm, std::size_t expected, const char* name)
{
    if (warm.empty()) return;
    if (warm.size() != expected) {
        std::ostringstream msg;
        msg << "warm start " << name << " has " << warm.size() << " entries but the problem needs " << expected;
        fail(msg.str());
    }
    for (std::size_t i = 0; i < warm.size(); ++i) {
        if (!std::isfinite(warm[i]) || warm[i] <= 0) {
            std::ostringstream msg;
            msg << "warm start " << name << "[" << i << "] is " << warm[i] << ": scalings must be finite and > 0";
            fail(msg.str());
        }
    }
}
void validateWarmLogStart(std::span<const double> warm, std::size_t expected, const char* name)
{
    if (warm.empty()) return;
    if (warm.size() != expected) {
        std::ostringstream msg;
        msg << "warm start log " << name << " has " << warm.size() << " entries but the problem needs " << expected;
        fail(msg.str());
    }
    for (std::size_t i = 0; i < warm.size(); ++i) {
        if (!std::isfinite(warm[i])) {
            std::ostringstream msg;
            msg << "warm start log " << name << "[" << i << "] is " << warm[i] << ": log-scalings must be finite";
            fail(msg.str());
        }
    }
}
}  // namespace

void validateSolveOptions(const UotProblem& problem, const SolveOptions& options)
{
    validateProblem(problem);
    if (options.maxIterations < 0) fail("max iterations must be >= 0");
    if (std::isnan(options.tolerance) || options.tolerance < 0) fail("tolerance must be >= 0 (0 disables it)");
    if (options.checkEvery < 1) fail("check interval must be >= 1 iteration");
    if (options.threads < 0) fail("thread count must be >= 0 (0 = all cores)");
    validateWarmStart(options.warmU, problem.rows(), "u");
    validateWarmStart(options.warmV, problem.cols(), "v");
    validateWarmLogStart(options.warmLogU, problem.rows(), "u");
    validateWarmLogStart(options.warmLogV, problem.cols(), "v");
    if (options.acceleration == Acceleration::Relax && !(options.omega >= 1.0 && options.omega < 2.0)) {
        std::ostringstream msg;
        msg << "omega is " << options.omega << ": the over-relaxation factor must be in [1, 2) (1 = no relaxation)";
        fail(msg.str());
    }
    if (options.epsSchedule.enabled() || options.epsSchedule.start != 0)
        validateEpsSchedule(options.epsSchedule, problem.eps);
}

std::vector<double> initialScaling(std::span<const double> warm, std::size_t size)
{
    if (warm.empty()) return std::vector<double>(size, 1.0);
    return std::vector<double>(warm.begin(), warm.end());
}

std::vector<double> initialScaling(std::span<const double> warm, std::span<const double> warmLog, std::size_t size)
{
    if (warmLog.empty()) return initialScaling(warm, size);
    std::vector<double> out(size);
    for (std::size_t i = 0; i < size; ++i) out[i] = std::exp(warmLog[i]);
    return out;
}

std::vector<double> initialLogScaling(std::span<const double> warm, std::span<const double> warmLog, std::size_t size)
{
    if (!warmLog.empty()) return std::vector<double>(warmLog.begin(), warmLog.end());
    std::vector<double> out = initialScaling(warm, size);
    for (double& x : out) x = std::log(x);
    return out;
}

bool allFiniteAndPositive(std::span<const double> x)
{
    for (double value : x)
        if (!(value > 0) || !std::isfinite(value)) return false;
    return true;
}

bool allFiniteAndPositive(std::span<const float> x)
{
    for (float value : x)
        if (!(value > 0) || !std::isfinite(value)) return false;
    return true;
}

void markUnderflow(SolveResult& result, const KernelBuildReport& kernel, int iteration)
{
    result.status = NumericalStatus::Underflow;
    std::ostringstream msg;
    if (iteration == 0 && kernel.underflows()) {
        msg << "exp(-C/eps) underflows to zero on " << kernel.zeroRows << " rows and " << kernel.zeroCols
            << " columns: eps is too small for the multiplicative solver at this precision; "
               "use the log-domain solver (--solver log), a larger eps, or fp64";
    } else {
        msg << "the scalings left the floating-point range at iteration " << iteration
            << "; the last finite iterate is kept. Use the log-domain solver (--solver log), a larger eps, or fp64";
    }
    result.message = msg.str();
}

double storageFloor(Precision precision)
{
    return precision == Precision::Fp32 ? static_cast<double>(std::numeric_limits<float>::min())
                                        : std::numeric_limits<double>::min();
}

double flushedMassLimit(const SolveOptions& options)
{
    // A pass's fp32 (fp64) sums carry a relative rounding of a few units of
    // epsilon anyway: lost mass below that is no error of its own.
    const double unit = options.precision == Precision::Fp32 ? std::numeric_limits<float>::epsilon()
                                                             : std::numeric_limits<double>::epsilon();
    return std::max(options.tolerance, 8.0 * unit);
}

namespace {

// The plan of the final scalings puts `flushed` of its mass on entries the
// solve held as 0: the iteration converged (if it did) to the fixed point of
// another problem.
void markFlushedMass(SolveResult& result, const SolveOptions& options, const PlanEvaluation& eval)
{
    result.status = NumericalStatus::Underflow;
    result.converged = false;
    std::ostringstream msg;
    msg << "the scalings grew so large that entries of exp(-C/eps) (or their products with the scalings) "
           "below the smallest normal "
        << (options.precision == Precision::Fp32 ? "fp32" : "fp64")
        << " number, held as 0, carry " << eval.flushedMass << " of the plan's mass " << eval.mass
        << ": the iteration solved a different problem. Use the log-domain solver (--solver log), "
        << (options.precision == Precision::Fp32 ? "fp64 (--precision fp64), " : "") << "or a larger eps";
    result.message = msg.str();
}

}  // namespace

void finishResult(const UotProblem& problem, const SolveOptions& options, std::span<const double> u,
                  std::span<const double> v, SolveResult& result, const PlanEvaluator& evaluator)
{
    std::vector<double> logU(u.size()), logV(v.size());
    for (std::size_t i = 0; i < u.size(); ++i) logU[i] = std::log(u[i]);
    for (std::size_t j = 0; j < v.size(); ++j) logV[j] = std::log(v[j]);
    finishResultFromLogs(problem, options, std::move(logU), std::move(logV), result, evaluator);
}

void finishResultFromLogs(const UotProblem& problem, const SolveOptions& options, std::vector<double> logU,
                          std::vector<double> logV, SolveResult& result, const PlanEvaluator& evaluator)
{
    result.logU = std::move(logU);
    result.logV = std::move(logV);
    result.timings.msPerIteration =
        result.iterations > 0 ? 1e3 * result.timings.iterateSeconds / result.iterations : 0.0;
    const double nan = std::numeric_limits<double>::quiet_NaN();
    result.mass = result.marginalErrorA = result.marginalErrorB = result.objective = nan;
    // Skipped after a cancel: the caller wants control back now (at 4096^2 the
    // float64 evaluation pass alone takes tens of milliseconds).
    if (options.evaluateFinalPlan && !result.cancelled) {
        const auto start = std::chrono::steady_clock::now();
        const PlanEvaluation eval = evaluator ? evaluator(problem, result.logU, result.logV)
                                              : evaluatePlan(problem, result.logU, result.logV, options.threads);
        result.mass = eval.mass;
        result.marginalErrorA = eval.marginalErrorA;
        result.marginalErrorB = eval.marginalErrorB;
        result.objective = eval.objective;
        if (result.status == NumericalStatus::Ok && eval.flushedMass > flushedMassLimit(options) * eval.mass)
            markFlushedMass(result, options, eval);
        result.timings.evaluateSeconds =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    }
}

}  // namespace uot
