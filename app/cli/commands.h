#pragma once
// Every `uot` command: takes its arguments (after the command name), returns
// the process exit code. Exit codes (documented in README.md and docs/SAFETY.md, "Exit codes"):
//   0 success, 1 the work failed (message on stderr), 2 usage error,
//   3 some items of a batch failed, 4 backend unavailable (no GPU / not built),
//   5 `uot solve` stopped on a numerical failure (a forced variant's underflow, a
//   non-finite value), 6 `uot solve` hit --max-iter before --tol (outputs written
//   either way; --allow-unconverged turns 5 and 6 into 0).

#include <string>
#include <vector>

namespace uot::cli {

enum ExitCode { kExitOk = 0, kExitFailure = 1, kExitUsage = 2, kExitPartial = 3, kExitUnavailable = 4,
               kExitNumerical = 5, kExitNotConverged = 6 };

int runSolveCommand(const std::vector<std::string>& args);
int runBenchCommand(const std::vector<std::string>& args);
int runDevicesCommand(const std::vector<std::string>& args);
int runRecolorCommand(const std::vector<std::string>& args);
int runBatchCommand(const std::vector<std::string>& args);
int runLutCommand(const std::vector<std::string>& args);

}  // namespace uot::cli
