#pragma once
// `pot-style`: what POT does, two matrix-vector passes per iteration (K v, then
// K^T u), done well: OpenMP rows for K v, per-thread cache-line-padded column
// partials for K^T u, SIMD row kernels. The honest baseline for speed ratios.

#include "core/transport/cpu_buffers.h"
#include "core/transport/uot_solver.h"

namespace uot {

class PotStyleSolver final : public UotSolver {
public:
    std::string name() const override { return "pot-style"; }
    // Two reads of the matrix per iteration: 2 * rows * cols * element size.
    std::uint64_t bytesPerIteration(std::size_t rows, std::size_t cols, Precision precision) const override;
    // Multiplicative form: stops with NumericalStatus::Underflow (last finite
    // iterate kept) when K has zero rows/columns or a scaling leaves the range.
    SolveResult solve(const UotProblem& problem, const SolveOptions& options, const SolveControl& control) override;

private:
    AlignedBuffer<float> m_k32;
    AlignedBuffer<double> m_k64;
};

}  // namespace uot
