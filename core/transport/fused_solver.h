#pragma once
// `fused`: one read-only pass over K per iteration (docs/ALGORITHMS.md s3).
// For each row: r_i = K_i. v, u_i = (a_i / r_i)^fa, and while the row is still
// in cache, s += u_i K_i. into per-thread column partials; then the partials
// are reduced (in parallel over column blocks) and v_j = (b_j / s_j)^fb.
// Same iterates as POT's sinkhorn_unbalanced; K is never written.

#include "core/transport/cpu_buffers.h"
#include "core/transport/uot_solver.h"

namespace uot {

class FusedSolver final : public UotSolver {
public:
    std::string name() const override { return "fused"; }
    // One read of the matrix per iteration: rows * cols * element size.
    std::uint64_t bytesPerIteration(std::size_t rows, std::size_t cols, Precision precision) const override;
    // Multiplicative form: stops with NumericalStatus::Underflow (last finite
    // iterate kept) when K has zero rows/columns or a scaling leaves the range.
    SolveResult solve(const UotProblem& problem, const SolveOptions& options, const SolveControl& control) override;

private:
    AlignedBuffer<float> m_k32;  // kept between solves of the same size
    AlignedBuffer<double> m_k64;
};

}  // namespace uot
