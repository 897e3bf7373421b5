#pragma once
// What `uot solve` and `uot-mpi solve` share besides the solver flags
// (solver_flags.h): their input and output options, reading the weight files,
// the output directory, the files written, the summary (human or JSON) and the
// exit code for a result. One place, so that both commands read and report
// alike.

#include <cstddef>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "app/cli/arg_parser.h"
#include "app/cli/solver_flags.h"
#include "core/io/output_set.h"
#include "core/transport/solve_result.h"
#include "core/transport/uot_problem.h"

namespace uot::cli {

// Declares the files and reports of the parameter table's SolveIo group: --cost
// --a --b --x --y --cost-scale --out-dir --json --allow-unconverged, and --plan
// and --counters for a single process (`uot solve`).
void addSolveIoOptions(ArgParser& parser, bool singleProcess);

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

// Exit code 130 (the shell's 128 + SIGINT): the solve was stopped by Ctrl-C.
inline constexpr int kExitInterrupted = 130;

// The exit code for a finished solve (commands.h): 130 when it was cancelled
// (Ctrl-C; --allow-unconverged does not change that), else 5 and 6 with the
// reason on stderr prefixed with `command` ("uot solve"). The advice for 5 never
// names the solver already in use, nor (hasLogSolver false: uot-mpi) a
// log-domain solver the program does not have.
int solveExitCode(const SolveResult& result, const SolveOptions& options, bool allowUnconverged,
                  const std::string& command, bool hasLogSolver = true);

// The solver's own message for a program without a log-domain solver: its advice
// to use one is replaced by what that program can do.
std::string messageWithoutLogSolver(const std::string& message);

// Weights a and b must be normal floating-point numbers: a subnormal weight (below
// 2.2e-308, e.g. 1e-320) is refused here, with one message, instead of passing
// one check and failing another once the solver flushes subnormals to zero.
// Throws uot::Error(Io) naming `name` ("a", "b") and the entry.
void checkNormalWeights(const std::vector<double>& weights, const char* name);

// Runs `step`, which reads and checks the input files; an InvalidArgument error
// from it (a bad value in a file: NaN, Inf, a negative entry, sizes that
// disagree) is rethrown as Io, so that every problem with an input file exits 1,
// as a missing, truncated or mistyped one does (docs/SAFETY.md, "Exit codes").
void readingInputFiles(const std::function<void()>& step);

}  // namespace uot::cli
