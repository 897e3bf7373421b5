#pragma once
// `mapuot`: the MAP-UOT paper's fused double loop over the matrix A, rescaled
// in place (initially K), in the exact form of docs/ALGORITHMS.md s2: the
// accumulated scalings u, v are tracked and
//   alpha_i = (a_i / r_i)^fa * u_i^(fa - 1),  u_i *= alpha_i,  A_i. *= alpha_i
//   beta_j  = (b_j / c_j)^fb * v_j^(fb - 1),  v_j *= beta_j,   A_.j *= beta_j
// so that it solves the real UOT problem (the paper's form without the u, v
// factors does not when tau < inf). One read and one write of A per
// iteration: the column factors are applied while the next iteration reads
// the row (A_ij * beta_j), then the row factor, and the result is written back.

#include "core/transport/cpu_buffers.h"
#include "core/transport/uot_solver.h"

namespace uot {

class MapUotSolver final : public UotSolver {
public:
    std::string name() const override { return "mapuot"; }
    // One read and one write of the matrix per iteration: 2 * rows * cols * element size.
    std::uint64_t bytesPerIteration(std::size_t rows, std::size_t cols, Precision precision) const override;
    // Multiplicative form: stops with NumericalStatus::Underflow (last finite
    // iterate kept) when K has zero rows/columns or a scaling leaves the range.
    SolveResult solve(const UotProblem& problem, const SolveOptions& options, const SolveControl& control) override;

private:
    AlignedBuffer<float> m_a32;
    AlignedBuffer<double> m_a64;
};

}  // namespace uot
