#pragma once
// The single place that maps a variant name to a solver, for every backend.
// Backends (the CPU solvers in core/backends/cpu, the CUDA solvers in gpu/, later
// matrix-free, MPI and NCCL ones) register their variants here with their
// capabilities; callers (pipeline, CLI, studio, benches) ask the registry which
// variants exist, what each can do and which one to use on a device, and never
// parse variant names or include a backend's headers.
//
// Registration happens at static-initialisation time in each backend's
// registration file; executables get every compiled backend by linking
// uot::solvers (core/registry/CMakeLists.txt).

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/transport/uot_solver.h"

namespace uot {

enum class DeviceKind { Cpu, Gpu };
std::string toString(DeviceKind device);  // "cpu" | "gpu"

// What a variant can do, declared by its backend.
struct SolverCapabilities {
    DeviceKind device = DeviceKind::Cpu;
    // The algorithm, shared by the same method on different devices ("fused" for
    // both fused and gpu-fused): how --device maps a variant, and which CPU
    // variant stands in for a GPU one when no GPU is usable.
    std::string algorithm;
    bool fp32 = true;
    bool fp64 = true;
    bool denseCost = true;         // accepts a cost matrix
    bool pointClouds = true;       // accepts two point sets (PointCloudCost)
    bool storesMatrix = true;      // keeps a rows x cols kernel in memory
    bool translationInvariant = true;  // honours IterationMode::TranslationInvariant
    // Honours SolveOptions::acceleration (over-relaxation, relax|auto); the others
    // run the unrelaxed step and report acceleration "none".
    bool overRelaxation = false;
    bool logDomain = false;        // never underflows (works at any eps)
    bool readOnlyMatrix = true;    // an iteration only reads the stored matrix
    // Traffic model (docs/ALGORITHMS.md section 3): full sweeps over the stored
    // matrix per iteration (reads + writes), and the bytes of one stored entry
    // (0 = the solve's precision: 4 for fp32, 8 for fp64). Matrix-free variants
    // declare 0 sweeps.
    double matrixSweepsPerIteration = 1;
    int storedEntryBytes = 0;
    // Transcendental functions per matrix entry and iteration (roofline model):
    // 0 for the multiplicative variants and the CPU log variant (absorbed kernel),
    // 2 for log-sum-exp passes (gpu-log, the matrix-free ones).
    double transcendentalsPerEntry = 0;
    // The variant that continues from the last good iterate when this one
    // underflows (SolveOptions::allowStabilizedFallback); empty when none.
    std::string stabilizedFallback;
    // True for the variant "auto" means on this device (one per device).
    bool deviceDefault = false;
    // Matrix-free variants: rows x cols from which one iteration was measured at
    // least as fast as its device's default (stored-matrix) variant, on the
    // reference machine of that device (docs/BENCHMARKS.md, map-reduce); the
    // pipeline switches to it from there on (matrixFreeInstead). 0 = never
    // measured faster: only memory makes it switch.
    std::uint64_t fasterFromEntries = 0;
};

struct SolverInfo {
    std::string name;
    std::string description;
    SolverCapabilities caps;
    bool available = true;
    std::string unavailableReason;  // empty when available
};

// What a backend hands to registerSolver().
struct SolverRegistration {
    std::string name;
    std::string description;
    SolverCapabilities caps;
    std::function<std::unique_ptr<UotSolver>()> create;
    // Empty when the variant can run in this process (e.g. a GPU is present).
    std::function<std::string()> unavailableReason;
};

// Adds a variant. Returns true so that a backend can register from a static
// initialiser. Throws std::logic_error for a duplicate or empty name.
bool registerSolver(SolverRegistration registration);

// Every registered variant, in registration order (CPU first), with availability
// (which asks each backend, e.g. the CUDA runtime).
std::vector<SolverInfo> listSolvers();

// The variant with this name ("auto" = the CPU default), or nullopt. Asks the
// backend whether the variant can run here (for a GPU variant: the CUDA runtime).
std::optional<SolverInfo> findSolver(const std::string& name);

// The capabilities of a variant ("auto" = the CPU default), or nullopt for an
// unknown name. Never touches a device (safe before fork()).
std::optional<SolverCapabilities> solverCapabilities(const std::string& name);

// The variant "auto" means on a device (CPU: "fused", GPU: "gpu-fused").
// Throws uot::Error(Unavailable) when no backend of that kind is registered.
std::string defaultSolver(DeviceKind device);

// The variant running the same algorithm as `name` on `device` ("fused" on the
// GPU is "gpu-fused"; "auto" maps to the device default). nullopt when that
// device has no such variant.
std::optional<std::string> solverOnDevice(const std::string& name, DeviceKind device);

// The first registered variant of `device` that takes point clouds and never
// stores the matrix (CPU: "mapreduce"), or nullopt when the build has none.
std::optional<std::string> matrixFreeSolver(DeviceKind device);

// The matrix-free variant (same device) to solve a rows x cols point-cloud
// problem with instead of `solver`, or nullopt to keep `solver`: when `solver`
// stores the matrix and either that matrix (rows x cols entries of its stored
// size) would not fit in `memoryBytes` (what its device has for it; 0 =
// unknown, memory never decides), or `solver` is its device's default and
// rows x cols reaches the matrix-free variant's fasterFromEntries.
std::optional<std::string> matrixFreeInstead(const std::string& solver, std::size_t rows, std::size_t cols,
                                             Precision precision, std::uint64_t memoryBytes);

// True when `name` is a registered variant whose backend is the GPU.
bool runsOnGpu(const std::string& name);

// Bytes of matrix traffic of one iteration of `name` by its capabilities'
// traffic model (0 for an unknown name).
std::uint64_t bytesPerIteration(const std::string& name, std::size_t rows, std::size_t cols, Precision precision);

// Creates a variant by name ("auto" = defaultSolver(Cpu)).
// The returned solver switches to the variant's stabilizedFallback when the
// multiplicative iteration underflows and SolveOptions::allowStabilizedFallback
// is set, and reports that in the result.
// Throws uot::Error(InvalidArgument) for an unknown name, (Unavailable) for a
// variant that cannot run here (e.g. a GPU variant without a usable device).
std::unique_ptr<UotSolver> createSolver(const std::string& name);

// Comma-separated list of the names, for help texts and error messages.
std::string solverNamesForHelp();

}  // namespace uot
