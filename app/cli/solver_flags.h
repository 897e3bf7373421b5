#pragma once
// The solver options every `uot` command that runs a solve shares (solve,
// bench, recolor, batch): one place that declares them on an ArgParser and
// reads them back, so that the flags mean the same thing everywhere.
//
//   ArgParser parser(...);
//   addSolverOptions(parser);                 // --solver --eps --tau ... --device
//   parser.parse(args);
//   const SolverSettings s = readSolverOptions(parser);
//   applyProblemParameters(s, problem);       // eps, tauA, tauB, reference
//   auto solver = createSolver(s.solver);     // already mapped for --device gpu
//   solver->solve(problem, s.options);

#include <string>

#include "app/cli/arg_parser.h"
#include "core/params/parameter_schema.h"
#include "core/transport/solve_options.h"
#include "core/transport/uot_problem.h"

namespace uot::cli {

// Every flag is an entry of the parameter table (core/params, group Solver): its
// help, default and range come from there, with the defaults of raw problems
// for solve, bench and uot-mpi (costs in their own units) and those of the
// pipeline for recolor, batch and lut. What differs from command to command:
struct SolverFlagConfig {
    params::Problems problems = params::Problems::Raw;  // whose defaults and ranges
    bool warmStart = false;               // also declare --warm-u / --warm-v (solve only)
    bool allowSolverList = false;         // --solver may be "a,b,c" (bench); names are then mapped one by one
    bool allowPrecisionAndThreadLists = false;  // --precision fp32,fp64 --threads 1,2 (bench)
    bool iterationLimits = true;          // declare --max-iter, --tol, --stop, --fixed-iterations (bench runs exact iteration counts)
    bool deviceAuto = true;   // --device auto (GPU when usable, else CPU) is offered
    // A command's own default, where it has one: bench's list of solvers, uot-mpi's
    // fused solver and one thread per rank ("" = the table's).
    std::string defaultSolver;
    std::string defaultThreads;
};

struct SolverSettings {
    // Registry name after the --device mapping ("fused" -> "gpu-fused" with
    // --device gpu). With allowSolverList it may be a comma-separated list,
    // each item mapped.
    std::string solver;
    bool solverForced = false;  // --solver named explicitly (and not "auto")
    bool gpu = false;           // --device gpu[:N], or auto with a usable GPU
    bool deviceAuto = false;    // --device auto: gpu says what it chose
    std::string deviceNote;     // --device auto without a usable GPU: why the CPU was chosen
    double eps = 0;     // --eps
    double tauA = 1.0;
    double tauB = 1.0;
    ReferenceMeasure reference = ReferenceMeasure::Ones;
    // precision, maxIterations, tolerance, checkEvery, threads, device,
    // allowStabilizedFallback (false when solverForced). Warm start is left
    // empty: the command reads the files named by warmUPath / warmVPath.
    SolveOptions options;
    std::string warmUPath;  // --warm-u (empty when not given)
    std::string warmVPath;  // --warm-v
};

// Declares the Solver entries of the parameter table on the parser (--solver
// --eps --tau --tau-a --tau-b --reference-measure --precision --max-iter --tol
// ... --device --threads; --warm-u --warm-v when config.warmStart) and
// --eps-schedule, the former spelling of --eps-scaling/--eps-scaling-factor.
void addSolverOptions(ArgParser& parser, const SolverFlagConfig& config = {});

// Reads and validates the options declared by addSolverOptions. Throws
// UsageError with a message naming the option for out-of-range values.
SolverSettings readSolverOptions(const ArgParser& parser, const SolverFlagConfig& config = {});

// For the commands that solve at once (solve, recolor, batch, lut; not bench,
// which must not touch the GPU runtime before it forks): with --device gpu[:N]
// (not auto), throws uot::Error(Unavailable) - exit 4 - when no GPU is usable
// or GPU N does not exist. Call before any work.
void requireUsableDevice(const SolverSettings& settings);

// The registry name to use for `name` on the chosen device: with gpu, "auto"
// becomes the GPU default (gpu-fused) and a CPU variant the GPU variant of the
// same algorithm (registry: solverOnDevice); GPU names are kept. With cpu, a
// GPU variant is a UsageError naming its CPU version.
std::string solverForDevice(const std::string& name, bool gpu);

// Copies eps, tauA, tauB and the reference measure into the problem.
void applyProblemParameters(const SolverSettings& settings, UotProblem& problem);

}  // namespace uot::cli
