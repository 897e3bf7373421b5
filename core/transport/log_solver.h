#pragma once
// `log`: the stabilised variant for small eps. Works on log-scalings
// (log u = f / eps, log v = g / eps) with the updates
//   log u_i = fa (log a_i - LSE_j(log K_ij + log v_j))
//   log v_j = fb (log b_j - LSE_i(log K_ij + log u_i)),
// log K_ij = -C_ij / eps + log R_ij: the same iteration as POT's
// sinkhorn_unbalanced in exact arithmetic, so it matches POT's
// sinkhorn_stabilized_unbalanced; it never underflows (no NaN or Inf) for any eps > 0.
//
// It stores the kernel with the potentials absorbed, exp(log K_ij + p_i + q_j)
// (Schmitzer's stabilisation), and runs most passes as the multiplicative fused
// pass over it (one read, no exp per entry); it absorbs again when the
// potentials drift away from (p, q), and runs a pass in exact log-sum-exp form
// (float64 from the costs, three exps per entry) whenever the absorbed pass could
// lose mass to entries stored as 0. Details in log_solver.cpp.

#include "core/transport/cpu_buffers.h"
#include "core/transport/uot_solver.h"

namespace uot {

class LogDomainSolver final : public UotSolver {
public:
    std::string name() const override { return "log"; }
    // One read of the log-kernel per iteration: rows * cols * element size.
    std::uint64_t bytesPerIteration(std::size_t rows, std::size_t cols, Precision precision) const override;
    // precision selects the storage of the absorbed kernel and the arithmetic of
    // its passes (fp32 or fp64); exact passes and the log-potentials are float64.
    // Exact passes poll the cancel flag within the pass too (they are slow).
    SolveResult solve(const UotProblem& problem, const SolveOptions& options, const SolveControl& control) override;

private:
    AlignedBuffer<float> m_k32;
    AlignedBuffer<double> m_k64;
};

}  // namespace uot
