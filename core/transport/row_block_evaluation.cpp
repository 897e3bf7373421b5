#include "core/transport/row_block_evaluation.h"

#include <algorithm>

namespace uot {

std::vector<double> gatherRows(RowBlockReduction& blocks, const RowBlock& where, std::span<const double> block)
{
    std::vector<double> whole(where.allA.size(), 0.0);
    std::copy(block.begin(), block.end(), whole.begin() + static_cast<std::ptrdiff_t>(where.firstRow));
    blocks.sum(whole);
    return whole;
}

PlanEvaluation evaluationOverBlocks(RowBlockReduction& blocks, const UotProblem& block, const RowBlock& where,
                                    PlanSums sums)
{
    blocks.sum(sums.colSums);
    const double scaledLogSum = blocks.sum(sums.scaledLogSum);
    const double flushedMass = blocks.sum(sums.flushedMass);
    const std::vector<double> rowSums = gatherRows(blocks, where, sums.rowSums);
    UotProblem whole = block;
    DenseCost shape;
    shape.rows = where.allA.size();
    shape.cols = block.cols();
    whole.cost = shape;
    whole.a = where.allA;
    PlanEvaluation eval = evaluationFromSums(whole, rowSums, sums.colSums, scaledLogSum);
    eval.flushedMass = flushedMass;
    return eval;
}

}  // namespace uot
