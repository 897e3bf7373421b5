#include "core/transport/cpu_solvers.h"

#include "core/transport/reference_solver.h"

namespace uot {

std::vector<std::pair<std::string, std::string>> cpuSolverCatalog()
{
    return {
        {"reference", "plain float64 two-pass loop, single thread: the test oracle"},
    };
}

std::unique_ptr<UotSolver> createCpuSolver(const std::string& name)
{
    if (name == "reference") return std::make_unique<ReferenceSolver>();
    return nullptr;
}

}  // namespace uot
