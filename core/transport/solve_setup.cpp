#include "core/transport/solve_setup.h"

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
        result.timings.evaluateSeconds =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    }
}

}  // namespace uot
