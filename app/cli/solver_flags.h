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
#include "core/transport/solve_options.h"
#include "core/transport/uot_problem.h"

namespace uot::cli {

struct SolverFlagConfig {
    bool warmStart = false;               // also declare --warm-u / --warm-v (solve only)
    std::string defaultPrecision = "fp32";
    std::string defaultSolver = "auto";
    bool allowSolverList = false;         // --solver may be "a,b,c" (bench); names are then mapped one by one
    bool allowPrecisionAndThreadLists = false;  // --precision fp32,fp64 --threads 1,2 (bench)
    bool iterationLimits = true;          // declare --max-iter and --tol (bench runs exact iteration counts)
    // Defaults shown in --help and used when the flag is absent (recolor/batch use
    // their own: costs there are normalised colour distances).
    std::string defaultEps = "0.05";
    std::string defaultTau = "1";
    std::string defaultTauA;  // empty: --tau-a defaults to --tau
    std::string defaultTauB;  // empty: --tau-b defaults to --tau
    std::string defaultMaxIter = "1000";
    std::string defaultTol = "1e-6";
    std::string defaultThreads = "0";  // uot-mpi: one thread per rank
    std::string tauBHelp;     // replaces the help of --tau-b when not empty
};

struct SolverSettings {
    // Registry name after the --device mapping ("fused" -> "gpu-fused" with
    // --device gpu). With allowSolverList it may be a comma-separated list,
    // each item mapped.
    std::string solver;
    bool solverForced = false;  // --solver named explicitly (and not "auto")
    bool gpu = false;           // --device gpu[:N]
    double eps = 0.05;
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

// Declares --solver --eps --tau --tau-a --tau-b --reference-measure --precision
// --threads --max-iter --tol --check-every --device (and --warm-u --warm-v when
// config.warmStart) on the parser.
void addSolverOptions(ArgParser& parser, const SolverFlagConfig& config = {});

// Reads and validates the options declared by addSolverOptions. Throws
// UsageError with a message naming the option for out-of-range values.
SolverSettings readSolverOptions(const ArgParser& parser, const SolverFlagConfig& config = {});

// The registry name to use for `name` on the chosen device: with gpu, "auto"
// becomes the GPU default (gpu-fused) and a CPU variant the GPU variant of the
// same algorithm (registry: solverOnDevice); GPU names are kept. With cpu, a
// GPU variant is a UsageError naming its CPU version.
std::string solverForDevice(const std::string& name, bool gpu);

// Copies eps, tauA, tauB and the reference measure into the problem.
void applyProblemParameters(const SolverSettings& settings, UotProblem& problem);

}  // namespace uot::cli
