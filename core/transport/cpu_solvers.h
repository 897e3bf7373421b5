#pragma once
// Factory for the CPU variants (core/transport). The registry
// (core/registry/solver_registry.h) is what callers use; this is its CPU half.

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "core/transport/uot_solver.h"

namespace uot {

// (name, one-line description) of every CPU variant.
std::vector<std::pair<std::string, std::string>> cpuSolverCatalog();

// The CPU variant with this name, or nullptr when there is none.
std::unique_ptr<UotSolver> createCpuSolver(const std::string& name);

}  // namespace uot
