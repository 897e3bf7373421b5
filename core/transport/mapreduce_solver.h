#pragma once
// `mapreduce`: the matrix-free twin of `log` (log_solver.h) for problems given
// as two point clouds (PointCloudCost: C_ij = scale |x_i - y_j|^2). K is never
// stored: every pass recomputes the costs from the points (KeOps-style
// map-reduce), so memory is O((M + N) d) and any size that fits as points can
// be solved. Same iteration as `log`, in the log domain, so it never
// underflows at any eps:
//   log u_i = fa (log a_i - LSE_j(log K_ij + log v_j))     (row pass over Y)
//   log v_j = fb (log b_j - LSE_i(log K_ij + log u_i))     (column pass over X)
// Each LSE runs in one sweep with one exponential per entry: the sum is taken
// relative to the target's previous LSE, rounded to an integer and folded into
// the exponent bits, and redone against the true maximum when it falls out of
// range (mapreduce_kernels.h). The final plan's mass, marginals and objective
// come from two more float64 passes (no matrix either); the plan itself is
// only materialised by computePlan() on request.
//
// d = 1..8 (compile-time dimension; d = 3 is the colour case). OpenMP splits
// the targets of each pass across threads; SIMD over sources, in L1-sized
// chunks. Fp32: float32 arithmetic in the passes (8 or 16 lanes); Fp64:
// float64. The scalings and their updates are float64 either way.
// A dense cost matrix is refused (InvalidArgument): use the other variants.

#include "core/transport/row_block_reduction.h"
#include "core/transport/uot_solver.h"

namespace uot {

class MapReduceSolver final : public UotSolver {
public:
    std::string name() const override { return "mapreduce"; }
    // No matrix: 0 bytes of matrix traffic (the clouds are O(M + N) and stay in cache).
    std::uint64_t bytesPerIteration(std::size_t rows, std::size_t cols, Precision precision) const override;
    SolveResult solve(const UotProblem& problem, const SolveOptions& options, const SolveControl& control) override;
};

// This process's share of a `mapreduce` solve distributed by rows (uot-mpi): each
// process holds a contiguous block of the x points (possibly none), the a of its
// rows and all of y and b. The row pass is the block's own; the column pass's
// log-sum-exps are combined over the blocks (with the row-side error and status) in
// one packed reduction per pass, so every process computes the same log v. The
// same iteration as MapReduceSolver (the shared loop: plain, TI, over-relaxation),
// up to the order of the column sums' additions. No cancel.
class MapReduceRowBlockSolve {
public:
    // Validates this block and the options (throws uot::Error before any
    // communication). block.cost is a PointCloudCost of the block's x points and
    // all y points; options.warmU, if given, holds the block's rows of u.
    MapReduceRowBlockSolve(const UotProblem& block, const RowBlock& where, const SolveOptions& options);

    // The iterations and the final evaluation; collective (see FusedRowBlockSolve::run).
    SolveResult run(RowBlockReduction& loop, RowBlockReduction& other);

private:
    template <typename T>
    SolveResult runIn(RowBlockReduction& loop, RowBlockReduction& other);

    UotProblem m_block;
    RowBlock m_where;
    SolveOptions m_options;
};

// Exponentials one iteration evaluates (a row pass and a column pass): 2 M N.
// Floating-point operations per entry counted by the bench (docs/BENCHMARKS.md).
double mapReduceFlopsPerEntry(std::size_t dim, Precision precision);

}  // namespace uot
