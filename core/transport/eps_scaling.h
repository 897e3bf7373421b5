#pragma once
// eps-scaling (annealing) around any solver: stages at eps = start, start * factor,
// ... while above the target, each warm-started from the previous stage's dual
// potentials (f = eps log u is kept, so log u scales by eps_prev / eps_next),
// then the target eps solved to the requested tolerance: the answer is the
// solution at the target eps, the stages only give it a better start.

#include <vector>

#include "core/transport/solve_options.h"
#include "core/transport/solve_result.h"
#include "core/transport/uot_problem.h"
#include "core/transport/uot_solver.h"

namespace uot {

// The eps of every stage, the target last. Validates (validateEpsSchedule).
std::vector<double> epsStages(const EpsSchedule& schedule, double targetEps);

// The schedule `--solver auto` runs when none was asked for: when eps is below
// 1/200 of the problem's cost range (max_ij C_ij - min_ij C_ij, one pass over the
// costs), stages from range/20 down by halves (each to kEpsStageTolerance,
// carrying the log-potentials), then eps; otherwise, or where that would take
// more stages than a schedule may have, none (start = 0). Without it
// eps 1e-4 on costs in [0, 1] takes tens of thousands of passes.
EpsSchedule automaticEpsSchedule(const UotProblem& problem);
inline constexpr double kAutomaticScheduleRatio = 200;  // eps below range / this: schedule
inline constexpr double kAutomaticScheduleStart = 20;   // first stage at range / this

// Tolerance of the stages before the target (the target gets the caller's).
inline constexpr double kEpsStageTolerance = 1e-2;

// Runs options.epsSchedule with `solver` (each stage without a schedule). The
// result is the target stage's, with iterations, passes and timings summed over
// the stages and SolveResult::stages filled.
SolveResult solveWithEpsSchedule(UotSolver& solver, const UotProblem& problem, const SolveOptions& options,
                                 const SolveControl& control);

}  // namespace uot
