#pragma once
// `log`: the stabilised variant for small eps. Works on log-scalings
// (log u = f / eps, log v = g / eps) and the stored log-kernel
// log K_ij = -C_ij / eps + log R_ij, with log-sum-exp updates:
//   log u_i = fa (log a_i - LSE_j(log K_ij + log v_j))
//   log v_j = fb (log b_j - LSE_i(log K_ij + log u_i))
// in a single pass per iteration: each row's LSE with its max, then, with the
// new log u_i, per-thread column LSE partials kept with an online max, merged
// after the pass. The same iteration as POT's sinkhorn_unbalanced, in exact
// arithmetic, so it matches POT's sinkhorn_stabilized_unbalanced; it never
// underflows (no NaN or Inf) for any eps > 0.

#include "core/transport/cpu_buffers.h"
#include "core/transport/uot_solver.h"

namespace uot {

class LogDomainSolver final : public UotSolver {
public:
    std::string name() const override { return "log"; }
    // One read of the log-kernel per iteration: rows * cols * element size.
    std::uint64_t bytesPerIteration(std::size_t rows, std::size_t cols, Precision precision) const override;
    // precision selects the storage of log K (fp32 or fp64); arithmetic is float64.
    // Polls the cancel flag within the pass too (a pass is slow: two exp per element).
    SolveResult solve(const UotProblem& problem, const SolveOptions& options, const SolveControl& control) override;

private:
    AlignedBuffer<float> m_k32;
    AlignedBuffer<double> m_k64;
};

}  // namespace uot
