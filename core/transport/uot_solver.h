#pragma once
// The one solver interface every backend implements (CPU variants in core/,
// GPU variants in gpu/). Create instances through core/registry/solver_registry.h.

#include <string>

#include "core/transport/solve_options.h"
#include "core/transport/solve_result.h"
#include "core/transport/uot_problem.h"

namespace uot {

class UotSolver {
public:
    virtual ~UotSolver() = default;

    // The variant's registry name, e.g. "fused" or "gpu-fused".
    virtual std::string name() const = 0;

    // Bytes of matrix traffic one iteration must move for a rows x cols problem
    // at the given precision (docs/ALGORITHMS.md section 3).
    virtual std::uint64_t bytesPerIteration(std::size_t rows, std::size_t cols, Precision precision) const = 0;

    // Solves the problem. Throws uot::Error for invalid input (InvalidArgument),
    // an unusable backend (Unavailable, Device, OutOfMemory). Numerical trouble
    // and cancellation are reported in the result, never as NaN output.
    // A solver may keep buffers between calls on problems of the same size.
    virtual SolveResult solve(const UotProblem& problem, const SolveOptions& options,
                              const SolveControl& control = {}) = 0;
};

}  // namespace uot
