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

#include "core/transport/uot_solver.h"

namespace uot {

class MapReduceSolver final : public UotSolver {
public:
    std::string name() const override { return "mapreduce"; }
    // No matrix: 0 bytes of matrix traffic (the clouds are O(M + N) and stay in cache).
    std::uint64_t bytesPerIteration(std::size_t rows, std::size_t cols, Precision precision) const override;
    SolveResult solve(const UotProblem& problem, const SolveOptions& options, const SolveControl& control) override;
};

// Exponentials one iteration evaluates (a row pass and a column pass): 2 M N.
// Floating-point operations per entry counted by the bench (docs/BENCHMARKS.md).
double mapReduceFlopsPerEntry(std::size_t dim, Precision precision);

}  // namespace uot
