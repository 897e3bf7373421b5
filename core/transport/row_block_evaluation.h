#pragma once
// The final figures of a solve distributed by rows (uot-mpi): every process holds
// its block of rows; the plan's row figures are gathered whole and its column and
// scalar figures summed over the blocks, so that every process evaluates the whole
// plan exactly as one process would (plan_evaluation.h). Collective.

#include <span>
#include <vector>

#include "core/transport/plan_evaluation.h"
#include "core/transport/row_block_reduction.h"
#include "core/transport/uot_problem.h"

namespace uot {

// The values of this block's rows placed in a vector of all rows (zeros elsewhere),
// summed over the blocks: every process gets the whole vector (exact: each entry
// has one non-zero term).
std::vector<double> gatherRows(RowBlockReduction& blocks, const RowBlock& where, std::span<const double> block);

// The evaluation of the whole plan from this block's sums (planSums of the block:
// its rows' sums, its share of the column sums and of the scaled log sum).
// `block` is this process's problem (its rows' a; b, eps, taus of the whole).
PlanEvaluation evaluationOverBlocks(RowBlockReduction& blocks, const UotProblem& block, const RowBlock& where,
                                    PlanSums sums);

}  // namespace uot
