#pragma once
// Batched solvers (core/transport/batched_solver.h) by name, registered by their
// backends with their capabilities (gpu/ registers "gpu-batched"); callers (the
// batch engine, benches) ask here which one to use on a device and never
// include the backend.

#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "core/registry/solver_registry.h"
#include "core/transport/batched_solver.h"

namespace uot {

struct BatchedSolverCapabilities {
    DeviceKind device = DeviceKind::Gpu;
    bool pointClouds = true;    // takes PointCloudCost problems
    bool denseCost = false;     // takes DenseCost problems
    int maxDim = 3;             // largest point dimension it takes
    bool productReference = true;  // takes ReferenceMeasure::Product
    bool translationInvariant = false;  // runs IterationMode::TranslationInvariant (else plain only)
    bool overRelaxation = false;        // runs Acceleration::Relax and Auto (else none only)
    bool fp64 = false;                  // solves in float64 when asked (else in fp32 whatever the options say)
};

struct BatchedSolverRegistration {
    std::string name;
    std::string description;
    BatchedSolverCapabilities caps;
    std::function<std::unique_ptr<BatchedUotSolver>()> create;
    std::function<std::string()> unavailableReason;  // empty when it can run here
};

// Adds a batched solver (from a backend's static initialiser). Throws
// std::logic_error for a duplicate or empty name.
bool registerBatchedSolver(BatchedSolverRegistration registration);

// The first registered batched solver of `device` that can run here, or nullopt
// (none compiled in, or no usable device: `why` then says which, when given).
std::optional<std::string> batchedSolverFor(DeviceKind device, std::string* why = nullptr);

// Capabilities of a registered batched solver, or nullopt for an unknown name.
std::optional<BatchedSolverCapabilities> batchedSolverCapabilities(const std::string& name);

// True when `problem` is one that the batched solver `name` takes.
bool batchedSolverAccepts(const std::string& name, const UotProblem& problem);

// Creates a batched solver by name. Throws uot::Error(InvalidArgument) for an
// unknown name, (Unavailable) when it cannot run here.
std::unique_ptr<BatchedUotSolver> createBatchedSolver(const std::string& name);

}  // namespace uot
