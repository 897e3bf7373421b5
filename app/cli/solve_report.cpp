#include "app/cli/solve_report.h"

#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <limits>
#include <optional>
#include <sstream>
#include <system_error>

#include "app/cli/commands.h"
#include "app/cli/json_text.h"
#include "app/cli/parameter_flags.h"
#include "core/npy/npy_io.h"
#include "core/registry/solver_registry.h"
#include "core/transport/uot_error.h"

namespace uot::cli {
namespace {

// The eps-scaling stages of a result as a JSON array ([] without a schedule).
std::string stagesJson(const SolveResult& result)
{
    std::ostringstream j;
    j << "[";
    for (std::size_t k = 0; k < result.stages.size(); ++k) {
        const SolveStage& st = result.stages[k];
        j << (k ? ", " : "") << "{\"eps\": " << jsonNumber(st.eps) << ", \"iterations\": " << st.iterations
          << ", \"passes\": " << st.passes << ", \"error\": " << jsonNumber(st.error)
          << ", \"converged\": " << (st.converged ? "true" : "false") << "}";
    }
    j << "]";
    return j.str();
}

}  // namespace

void addSolveIoOptions(ArgParser& parser, bool singleProcess)
{
    for (const params::Parameter& p : params::parameters())
        if (p.cliGroup == params::CliGroup::SolveIo && (singleProcess || (p.name != "plan" && p.name != "counters")))
            addParameterOption(parser, p);
}

std::vector<double> readWeights(const std::string& path, const char* name)
{
    const npy::Array array = npy::readNpy(path);
    if (array.shape.size() == 2 && array.shape[0] != 1 && array.shape[1] != 1)
        throw Error(ErrorCode::Io, "'" + path + "': " + name + " must be a 1-D array (got a 2-D array)");
    return array.toDouble();
}

std::filesystem::path prepareOutputDirectory(const std::string& dir)
{
    const std::filesystem::path outDir = dir;
    std::error_code ec;
    std::filesystem::create_directories(outDir, ec);
    if (ec || !std::filesystem::is_directory(outDir))
        throw Error(ErrorCode::Io, "cannot create the output directory '" + outDir.string() + "': " + ec.message());
    if (::access(outDir.c_str(), W_OK | X_OK) != 0)
        throw Error(ErrorCode::Io, "no permission to write in the output directory '" + outDir.string() +
                                       "' (choose another --out-dir)");
    return outDir;
}

void writeScalings(const std::filesystem::path& dir, const SolveResult& result, OutputSet& outputs)
{
    const std::size_t m = result.logU.size(), n = result.logV.size();
    const std::vector<double> u = result.u(), v = result.v();
    npy::writeNpy((dir / "u.npy").string(), u.data(), {m});
    npy::writeNpy((dir / "v.npy").string(), v.data(), {n});
    npy::writeNpy((dir / "logu.npy").string(), result.logU.data(), {m});
    npy::writeNpy((dir / "logv.npy").string(), result.logV.data(), {n});
    for (const char* name : {"u.npy", "v.npy", "logu.npy", "logv.npy"}) outputs.add(name);
}

std::string solveSummaryJson(const SolveResult& result, const SolveSummaryContext& c)
{
    const UotProblem& problem = *c.problem;
    std::ostringstream j;
    j << "{\"solver\": " << jsonString(result.solver) << ", \"requested_solver\": " << jsonString(c.requestedSolver)
      << ", \"m\": " << c.rows << ", \"n\": " << c.cols << ", \"precision\": " << jsonString(toString(c.precision))
      << ", \"eps\": " << jsonNumber(problem.eps) << ", \"tau_a\": "
      << (std::isinf(problem.tauA) ? "\"inf\"" : jsonNumber(problem.tauA))
      << ", \"tau_b\": " << (std::isinf(problem.tauB) ? "\"inf\"" : jsonNumber(problem.tauB))
      << ", \"reference_measure\": " << jsonString(toString(problem.reference))
      << ", \"mode\": " << jsonString(result.mode) << ", \"iterations\": " << result.iterations
      << ", \"passes\": " << result.passes << ", \"error\": " << jsonNumber(result.error)
      << ", \"acceleration\": " << jsonString(result.acceleration) << ", \"omega\": " << jsonNumber(result.omega)
      << ", \"rejected_steps\": " << result.rejectedSteps << ", \"stages\": " << stagesJson(result)
      << ", \"mass\": " << jsonNumber(result.mass) << ", \"marginal_error_a\": " << jsonNumber(result.marginalErrorA)
      << ", \"marginal_error_b\": " << jsonNumber(result.marginalErrorB)
      << ", \"objective\": " << jsonNumber(result.objective)
      << ", \"ms_per_iter\": " << jsonNumber(result.timings.msPerIteration)
      << ", \"setup_ms\": " << jsonNumber(1e3 * result.timings.setupSeconds)
      << ", \"iterate_ms\": " << jsonNumber(1e3 * result.timings.iterateSeconds)
      << ", \"status\": " << jsonString(result.cancelled ? "cancelled" : toString(result.status))
      << ", \"message\": " << jsonString(result.message)
      << ", \"converged\": " << (result.converged ? "true" : "false")
      << ", \"cancelled\": " << (result.cancelled ? "true" : "false");
    if (!c.extraJsonMembers.empty()) j << ", " << c.extraJsonMembers;
    j << "}\n";
    return j.str();
}

void printSolveSummary(const SolveResult& result, const SolveSummaryContext& c)
{
    std::printf("solver      %s (requested %s), %s, %zu x %zu\n", result.solver.c_str(), c.requestedSolver.c_str(),
                toString(c.precision).c_str(), c.rows, c.cols);
    std::printf("iterations  %d%s%s, error %.3g, %s mode, %llu passes over K\n", result.iterations,
                result.converged ? " (converged)" : "", result.cancelled ? " (cancelled)" : "", result.error,
                result.mode.c_str(), static_cast<unsigned long long>(result.passes));
    if (result.acceleration != "none")
        std::printf("accel       %s, omega %.3g, %d steps undone by the safeguard\n", result.acceleration.c_str(),
                    result.omega, result.rejectedSteps);
    for (const SolveStage& st : result.stages)
        std::printf("stage       eps %g: %d iterations, %llu passes, error %.3g%s\n", st.eps, st.iterations,
                    static_cast<unsigned long long>(st.passes), st.error, st.converged ? " (converged)" : "");
    std::printf("mass        %.10g   |P1-a|_1 %.3g   |P^T1-b|_1 %.3g   objective %.10g\n", result.mass,
                result.marginalErrorA, result.marginalErrorB, result.objective);
    std::printf("time        %.3f ms/iteration, set-up %.1f ms\n", result.timings.msPerIteration,
                1e3 * result.timings.setupSeconds);
    for (const std::string& line : c.extraLines) std::printf("%s\n", line.c_str());
    std::printf("status      %s%s%s\n", result.cancelled ? "cancelled" : toString(result.status).c_str(),
                result.message.empty() ? "" : ": ",
                result.message.c_str());
    std::printf("written     %s/{u,v,logu,logv}.npy%s\n", c.outDir.string().c_str(),
                c.planWritten ? " and plan.npy" : "");
}

namespace {

const char* const kLogSolverAdvice = "use the log-domain solver (--solver log), a larger eps, or fp64";

// What to do about a numerical stop, for the solver that stopped: never the
// solver already in use, a solver the program lacks, or the precision in use.
std::string numericalAdvice(const SolveResult& result, const SolveOptions& options, bool hasLogSolver)
{
    const bool fp64 = options.precision == Precision::Fp64;
    const std::optional<SolverCapabilities> caps = solverCapabilities(result.solver);
    if (caps && caps->logDomain)
        return std::string("The log-domain solver already in use met values out of the floating-point range: the "
                           "costs (or point coordinates) are too large; rescale them (--cost-scale for point "
                           "clouds)") + (fp64 ? "" : " or use --precision fp64");
    if (!hasLogSolver)
        return std::string("This program has no log-domain solver for a cost matrix: use a larger eps") +
               (fp64 ? "" : " or --precision fp64") +
               ", --solver mapreduce on point clouds (--x/--y: it works with log-potentials), or `uot solve "
               "--solver log` in one process";
    return "Use the log-domain solver (--solver log or auto)";
}

}  // namespace

std::string messageWithoutLogSolver(const std::string& message)
{
    std::string out = message;
    for (const std::string& advice : {std::string(kLogSolverAdvice), std::string("Use the log-domain solver (--solver log), a larger eps, or fp64")}) {
        const std::size_t at = out.find(advice);
        if (at != std::string::npos) out.replace(at, advice.size(), "use a larger eps or fp64, or --solver mapreduce on point clouds (--x/--y: it works with "
                                                    "log-potentials); this program has no log-domain solver for a cost matrix");
    }
    return out;
}

int solveExitCode(const SolveResult& result, const SolveOptions& options, bool allowUnconverged,
                  const std::string& command, bool hasLogSolver)
{
    if (result.cancelled) {
        std::fprintf(stderr, "%s: cancelled (Ctrl-C) after %d iterations; the last iterate was written\n",
                     command.c_str(), result.iterations);
        return kExitInterrupted;
    }
    if (allowUnconverged) return kExitOk;
    if (result.status == NumericalStatus::Underflow || result.status == NumericalStatus::NotFinite) {
        const std::string message = hasLogSolver ? result.message : messageWithoutLogSolver(result.message);
        std::fprintf(stderr, "%s: stopped on %s after %d iterations (%s); the last finite iterate was "
                             "written. %s, or pass --allow-unconverged to accept it.\n",
                     command.c_str(), toString(result.status).c_str(), result.iterations, message.c_str(),
                     numericalAdvice(result, options, hasLogSolver).c_str());
        return kExitNumerical;
    }
    if (options.tolerance > 0 && !result.converged) {
        std::fprintf(stderr, "%s: not converged: error %.3g after the --max-iter cap of %d iterations is above "
                             "--tol %g; the last iterate was written. Raise --max-iter, or pass --allow-unconverged "
                             "to accept it.\n",
                     command.c_str(), result.error, result.iterations, options.tolerance);
        return kExitNotConverged;
    }
    return kExitOk;
}

void checkNormalWeights(const std::vector<double>& weights, const char* name)
{
    for (std::size_t i = 0; i < weights.size(); ++i) {
        const double w = weights[i];
        if (w == 0 || std::fpclassify(w) != FP_SUBNORMAL) continue;  // zero, NaN, negative: validateProblem says
        std::ostringstream msg;
        msg << "weight " << name << "[" << i << "] is " << w << ", a subnormal number (below "
            << std::numeric_limits<double>::min() << ", which the solvers flush to zero): weights must be finite "
            << "and at least " << std::numeric_limits<double>::min() << "; rescale them";
        throw Error(ErrorCode::Io, msg.str());
    }
}

void readingInputFiles(const std::function<void()>& step)
{
    try {
        step();
    } catch (const Error& e) {
        if (e.code() != ErrorCode::InvalidArgument) throw;
        throw Error(ErrorCode::Io, e.what());
    }
}

}  // namespace uot::cli
