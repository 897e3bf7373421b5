#pragma once
// The single place that maps a variant name to a solver, CPU or GPU. Callers
// (CLI, pipeline, app) never need to know which backend was compiled in.

#include <memory>
#include <string>
#include <vector>

#include "core/transport/uot_solver.h"

namespace uot {

struct SolverInfo {
    std::string name;
    std::string description;
    bool gpu = false;
    bool available = true;
    std::string unavailableReason;  // empty when available
};

// Every variant this build knows, with availability (GPU variants without a device included).
std::vector<SolverInfo> listSolvers();

// Creates a variant by name ("auto" = the fastest exact CPU variant, "fused").
// The returned solver switches to the stabilised variant of the same backend
// (log / gpu-log) when the multiplicative iteration underflows and
// SolveOptions::allowStabilizedFallback is set, and reports that in the result.
// Throws uot::Error(InvalidArgument) for an unknown name, (Unavailable) for a
// GPU variant without a usable device.
std::unique_ptr<UotSolver> createSolver(const std::string& name);

// Comma-separated list of the names, for help texts and error messages.
std::string solverNamesForHelp();

}  // namespace uot
