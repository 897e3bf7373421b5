#pragma once
// StoppingRule::Potentials for loops that do not run the relaxed step
// (relaxed_step.h) after each pass: the CPU loop without acceleration (also
// distributed by rows) and the gpu-mapreduce and gpu-nccl loops, which check
// every checkEvery iterations from the last two iterates alone. The same
// figures as the relaxed step's, combined by the same rules (relaxed_rules.h):
//
//   change     max_ij |dF_i + dG_j| / max(1, max_ij |F_i + G_j|)    (relaxedChange)
//   rows       the normalised L1 distance of the row marginal of the previous plan
//              to its target a e^{-r_a F}: after a plain row half-step F^ from it,
//              P 1 = a e^{-r_a F_prev} e^{(1 + r_a)(F_prev - F^)}; a TI shift of F
//              is a common factor, which the normalisation removes
//   columns    0: the column half-step meets its condition exactly (up to the TI
//              shift's common factor)
//   mass       plain mode: mass = B(G) = sum_j b_j e^{-r_b G_j} after the column
//              half-step (relaxedMassViolation); TI mode: not measured here (the
//              shifts are not known to the check), the change covers it
//
// all from F = log u, G = log v: never from exponentiated scalings that may have
// underflowed.

#include <span>

#include "core/transport/row_block_reduction.h"
#include "core/transport/uot_problem.h"

namespace uot {

// logU, logV: the iterate at the check; logUPrev, logVPrev: the one before it
// (one plain or TI iteration apart). translate: the iteration takes TI shifts.
// NaN when a value is not finite. rowBlocks: set when logU, logUPrev and
// problem.a are this process's block of rows of a solve distributed by rows
// (row_block_reduction.h; collective): the row-side extremes and sums are then
// taken over all blocks, and every process gets the same error.
double potentialCheckError(const UotProblem& problem, std::span<const double> logU, std::span<const double> logUPrev,
                           std::span<const double> logV, std::span<const double> logVPrev, bool translate,
                           RowBlockReduction* rowBlocks = nullptr);

// The plan accuracy an fp32 result promises (relative L1 to the float64 plan).
inline constexpr double kFp32PlanAccuracy = 1e-4;

// Whether passes that hold the potentials with relative precision `resolution`
// (FLT_EPSILON for float; 0: float64) keep the plan of (logU, logV) from
// kFp32PlanAccuracy: resolution * (max |log u| + max |log v|) above it. A loop whose
// iterates stop moving there must not call the result converged. rowBlocks: set when
// logU is this process's block of rows (collective: the maximum is taken over all
// blocks, so every process decides the same).
bool belowFp32Accuracy(double resolution, std::span<const double> logU, std::span<const double> logV,
                       RowBlockReduction* rowBlocks = nullptr);

}  // namespace uot
