#pragma once
// What `uot solve` and `uot-mpi solve` share besides the solver flags
// (solver_flags.h): their input and output options, reading the weight files,
// the output directory, the files written, the summary (human or JSON) and the
// exit code for a result. One place, so that both commands read and report
// alike.

#include <cstddef>
#include <filesystem>
#include <string>
#include <vector>

#include "app/cli/arg_parser.h"
#include "app/cli/solver_flags.h"
#include "core/io/output_set.h"
#include "core/transport/solve_result.h"
#include "core/transport/uot_problem.h"

namespace uot::cli {

// Declares --cost --a --b --out-dir --json --allow-unconverged (and --plan when
// withPlan).
void addSolveIoOptions(ArgParser& parser, bool withPlan);

// A 1-D weight vector from a .npy file (a 2-D array with one row or column is
// accepted). Throws uot::Error(Io) naming the file.
std::vector<double> readWeights(const std::string& path, const char* name);

// Creates the output directory if missing. Throws uot::Error(Io) when it cannot.
std::filesystem::path prepareOutputDirectory(const std::string& dir);

// Writes DIR/u.npy, v.npy, logu.npy, logv.npy (float64) of the result and
// adds them to `outputs` (whose manifest the caller commits last).
void writeScalings(const std::filesystem::path& dir, const SolveResult& result, OutputSet& outputs);

// What a summary says beyond the result itself.
struct SolveSummaryContext {
    std::string requestedSolver;  // the registry name asked for
    std::size_t rows = 0, cols = 0;
    Precision precision = Precision::Fp32;
    const UotProblem* problem = nullptr;  // eps, tau_a, tau_b, reference measure
    std::filesystem::path outDir;
    bool planWritten = false;
    // More JSON members, already formatted ("\"ranks\": 4, ..."), appended
    // before the closing brace; and more lines for the human summary.
    std::string extraJsonMembers;
    std::vector<std::string> extraLines;
};

// The one-object JSON summary (with a trailing newline).
std::string solveSummaryJson(const SolveResult& result, const SolveSummaryContext& context);
// The human summary, printed to stdout.
void printSolveSummary(const SolveResult& result, const SolveSummaryContext& context);

// The exit code for a finished solve (commands.h), printing the reason for 5
// and 6 on stderr prefixed with `command` ("uot solve"); underflowAdvice says
// what to do about 5.
int solveExitCode(const SolveResult& result, const SolveOptions& options, bool allowUnconverged,
                  const std::string& command,
                  const std::string& underflowAdvice = "Use the log-domain solver (--solver log or auto)");

}  // namespace uot::cli
