#pragma once
// The test oracle: a plain float64, single-threaded, two-pass iteration that
// mirrors POT's sinkhorn_unbalanced step for step. Never fast; always simple.

#include "core/transport/uot_solver.h"

namespace uot {

class ReferenceSolver final : public UotSolver {
public:
    std::string name() const override { return "reference"; }
    std::uint64_t bytesPerIteration(std::size_t rows, std::size_t cols, Precision) const override;
    // Always computes in float64 on one thread; options.precision and threads are ignored.
    SolveResult solve(const UotProblem& problem, const SolveOptions& options, const SolveControl& control) override;
};

}  // namespace uot
