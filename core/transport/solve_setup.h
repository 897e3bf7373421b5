#pragma once
// Small steps every CPU variant takes before and after its iteration loop, kept
// in one place so that all variants validate, start and finish identically.

#include <cstddef>
#include <functional>
#include <span>
#include <vector>

#include "core/transport/kernel_matrix.h"
#include "core/transport/solve_options.h"
#include "core/transport/plan_evaluation.h"
#include "core/transport/solve_result.h"
#include "core/transport/uot_problem.h"

namespace uot {

// Validates the problem and the options (iteration counts, tolerance, warm
// start sizes and values). Throws uot::Error(InvalidArgument).
void validateSolveOptions(const UotProblem& problem, const SolveOptions& options);

// The warm start if given (already validated), else all ones.
std::vector<double> initialScaling(std::span<const double> warm, std::size_t size);
// The multiplicative starting scaling of a side: exp(warmLog) when given (it may
// leave the floating-point range: check with allFiniteAndPositive), else
// initialScaling(warm, size).
std::vector<double> initialScaling(std::span<const double> warm, std::span<const double> warmLog, std::size_t size);
// The same in log form (log-domain variants): warmLog, else log(warm), else zeros.
std::vector<double> initialLogScaling(std::span<const double> warm, std::span<const double> warmLog,
                                      std::size_t size);

bool allFiniteAndPositive(std::span<const double> x);
bool allFiniteAndPositive(std::span<const float> x);

// Marks the result as stopped by underflow at `iteration` (0 = before the first).
void markUnderflow(SolveResult& result, const KernelBuildReport& kernel, int iteration);

// The smallest normal number of a multiplicative solve's storage precision:
// entries of K (and fp products) below it are held as 0 (kernel_matrix.h,
// subnormal_flush.h). planSums' storageFloor.
double storageFloor(Precision precision);

// The share of the plan's mass that a multiplicative solve may lose to entries
// held as 0 before its result no longer counts as converged:
// max(options.tolerance, 8 units of rounding of options.precision).
double flushedMassLimit(const SolveOptions& options);

// Evaluates the final plan of log-scalings (evaluatePlan on the host when none is given).
using PlanEvaluator =
    std::function<PlanEvaluation(const UotProblem&, std::span<const double> logU, std::span<const double> logV)>;

// Stores log-scalings from multiplicative u, v, fills msPerIteration and, when
// requested, evaluates the final plan (mass, marginal errors, objective) with
// `evaluator` (empty: evaluatePlan on the host with options.threads). When the
// evaluation measures flushedMass (plan_evaluation.h) above flushedMassLimit
// times the plan's mass, a result that was Ok becomes Underflow, not converged:
// the iteration solved the problem without those entries.
void finishResult(const UotProblem& problem, const SolveOptions& options, std::span<const double> u,
                  std::span<const double> v, SolveResult& result, const PlanEvaluator& evaluator = {});

// Same, from log-scalings (log-domain variants).
void finishResultFromLogs(const UotProblem& problem, const SolveOptions& options, std::vector<double> logU,
                          std::vector<double> logV, SolveResult& result, const PlanEvaluator& evaluator = {});

}  // namespace uot
