#pragma once
// The interface of a solver that takes many UOT problems at once (batched
// GPU solves of the palette problems of a batch of images). Each problem is
// solved exactly as a single solve of it would be: the same objective, the
// same fixed point; only the schedule of the work differs. Create instances
// through core/registry/batched_solver_registry.h.

#include <span>
#include <string>
#include <vector>

#include "core/transport/solve_options.h"
#include "core/transport/solve_result.h"
#include "core/transport/uot_problem.h"

namespace uot {

class BatchedUotSolver {
public:
    virtual ~BatchedUotSolver() = default;

    // The registry name, e.g. "gpu-batched".
    virtual std::string name() const = 0;

    // Solves every problem (sizes may differ; an empty span returns an empty
    // vector). Results are in the order of `problems`; each one stops on its own
    // convergence test (options.tolerance: the single solve's test at the single
    // solve's cadence) or at options.maxIterations. A set control.cancel stops all
    // of them at the next check (every options.checkEvery iterations): the
    // unfinished results are marked cancelled.
    // Throws uot::Error: InvalidArgument for a problem this solver does not take
    // (the message names its index), Unavailable / Device / OutOfMemory for the
    // device.
    virtual std::vector<SolveResult> solveBatch(std::span<const UotProblem> problems, const SolveOptions& options,
                                                const SolveControl& control = {}) = 0;
};

}  // namespace uot
