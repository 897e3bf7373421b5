// `uot solve`: solves a UOT problem given as .npy files and writes the
// scalings (and optionally the plan) as .npy files. This is how users and
// other tools check the solvers against POT.

#include <atomic>
#include <charconv>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

#include "app/cli/arg_parser.h"
#include "app/cli/json_text.h"
#include "app/cli/commands.h"
#include "app/cli/solver_flags.h"
#include "core/npy/npy_io.h"
#include "core/registry/solver_registry.h"
#include "core/transport/plan_evaluation.h"
#include "core/transport/uot_error.h"

namespace uot::cli {
namespace {

std::atomic<bool> g_interrupted{false};
extern "C" void onInterrupt(int) { g_interrupted.store(true); }

std::vector<double> readWeights(const std::string& path, const char* name)
{
    const npy::Array array = npy::readNpy(path);
    if (array.shape.size() == 2 && array.shape[0] != 1 && array.shape[1] != 1)
        throw Error(ErrorCode::Io, "'" + path + "': " + name + " must be a 1-D array (got a 2-D array)");
    return array.toDouble();
}


// Why a result has no counters, for a person.
std::string countersMissing(const SolveResult& r)
{
    if (!r.counters.note.empty()) return r.counters.note;
    return "the variant " + r.solver + " does not read hardware counters (GPU variants do, through CUPTI)";
}

std::string countersJson(const SolveResult& r)
{
    const HardwareCounters& c = r.counters;
    std::ostringstream j;
    j << "{\"sampled\": " << (c.sampled ? "true" : "false");
    if (c.sampled) {
        j << ", \"source\": " << jsonString(c.source) << ", \"sampled_iterations\": " << c.sampledIterations
          << ", \"passes\": " << c.passes << ", \"dram_read_bytes_per_iter\": " << jsonNumber(c.dramReadBytesPerIteration)
          << ", \"dram_write_bytes_per_iter\": " << jsonNumber(c.dramWriteBytesPerIteration)
          << ", \"model_bytes_per_iter\": " << r.bytesPerIteration << ", \"l2_hit_rate\": " << jsonNumber(c.l2HitRate)
          << ", \"l1_hit_rate\": " << jsonNumber(c.l1HitRate);
        if (!c.note.empty()) j << ", \"note\": " << jsonString(c.note);
    } else {
        j << ", \"note\": " << jsonString(countersMissing(r));
    }
    j << "}";
    return j.str();
}

std::string countersText(const SolveResult& r)
{
    const HardwareCounters& c = r.counters;
    if (!c.sampled) return "not read: " + countersMissing(r);
    char text[320];
    std::snprintf(text, sizeof text,
                  "DRAM %.4g MB read + %.4g MB written per iteration (traffic model %.4g MB), L2 hit %.1f %%, "
                  "L1 hit %.1f %% (%s, %d iterations, %d passes)",
                  c.dramReadBytesPerIteration / 1e6, c.dramWriteBytesPerIteration / 1e6, r.bytesPerIteration / 1e6,
                  100 * c.l2HitRate, 100 * c.l1HitRate, c.source.c_str(), c.sampledIterations, c.passes);
    return text;
}

}  // namespace

int runSolveCommand(const std::vector<std::string>& args)
{
    ArgParser parser("uot solve --cost C.npy --a a.npy --b b.npy --out-dir DIR [options]",
                     "Solves the entropic unbalanced OT problem\n"
                     "  min <P,C> + eps KL(P|R) + tau_a KL(P1|a) + tau_b KL(P^T1|b)\n"
                     "for a cost matrix C (M x N) and weights a (M), b (N) given as .npy files (float32 or\n"
                     "float64, C order), and writes DIR/u.npy, DIR/v.npy (float64 scalings: P = diag(u) K diag(v),\n"
                     "K = exp(-C/eps) R), DIR/logu.npy, DIR/logv.npy (their logarithms, always finite), and\n"
                     "DIR/plan.npy with --plan. Ctrl-C stops the iterations and writes the current iterate.");
    parser.addOption("cost", "C.npy", "cost matrix, M x N, entries finite and >= 0");
    parser.addOption("a", "a.npy", "source weights, M entries > 0");
    parser.addOption("b", "b.npy", "target weights, N entries > 0");
    parser.addOption("out-dir", "DIR", "output directory (created if missing)");
    parser.addFlag("plan", "also write the plan P (M x N, float64) to DIR/plan.npy");
    parser.addFlag("json", "print one JSON object instead of the human summary");
    parser.addFlag("counters",
                   "GPU variants: read DRAM bytes and L2/L1 hit rates per iteration with CUPTI over a few extra, "
                   "untimed iterations, and report them next to the traffic model's bytes");
    parser.addFlag("allow-unconverged",
                   "exit 0 even when the solve stopped on underflow (exit 5) or at --max-iter before --tol (exit 6)");
    SolverFlagConfig config;
    config.warmStart = true;
    addSolverOptions(parser, config);
    parser.parse(args);
    if (parser.helpRequested()) {
        std::fputs(parser.helpText().c_str(), stdout);
        return kExitOk;
    }
    if (!parser.positionals().empty()) throw UsageError("unexpected argument '" + parser.positionals()[0] + "'");
    for (const char* required : {"cost", "a", "b", "out-dir"})
        if (!parser.has(required)) throw UsageError(std::string("missing --") + required + " (see --help)");
    const SolverSettings settings = readSolverOptions(parser, config);

    const npy::Array cost = npy::readNpy(parser.value("cost"));
    if (cost.shape.size() != 2)
        throw Error(ErrorCode::Io, "'" + parser.value("cost") + "': the cost must be a 2-D array (M x N)");
    const std::vector<double> a = readWeights(parser.value("a"), "a");
    const std::vector<double> b = readWeights(parser.value("b"), "b");

    UotProblem problem;
    DenseCost dense;
    dense.rows = cost.rows();
    dense.cols = cost.cols();
    if (cost.dtype == npy::DType::Float32) dense.f32 = cost.f32.data();
    else dense.f64 = cost.f64.data();
    problem.cost = dense;
    problem.a = a;
    problem.b = b;
    applyProblemParameters(settings, problem);

    SolveOptions options = settings.options;
    std::vector<double> warmU, warmV;
    if (!settings.warmUPath.empty()) {
        warmU = readWeights(settings.warmUPath, "the warm start u");
        warmV = readWeights(settings.warmVPath, "the warm start v");
        options.warmU = warmU;
        options.warmV = warmV;
    }
    validateProblem(problem);  // before touching the output directory

    const std::filesystem::path outDir = parser.value("out-dir");
    std::error_code ec;
    std::filesystem::create_directories(outDir, ec);
    if (ec || !std::filesystem::is_directory(outDir))
        throw Error(ErrorCode::Io, "cannot create the output directory '" + outDir.string() + "': " + ec.message());

    if (parser.flag("counters")) options.sampleHardwareCounters = true;
    SolveControl control;
    control.cancel = &g_interrupted;
    auto previous = std::signal(SIGINT, onInterrupt);
    std::unique_ptr<UotSolver> solver = createSolver(settings.solver);
    SolveResult result;
    try {
        result = solver->solve(problem, options, control);
    } catch (...) {
        std::signal(SIGINT, previous);
        throw;
    }
    std::signal(SIGINT, previous);

    const std::size_t m = problem.rows(), n = problem.cols();
    const std::vector<double> u = result.u(), v = result.v();
    npy::writeNpy((outDir / "u.npy").string(), u.data(), {m});
    npy::writeNpy((outDir / "v.npy").string(), v.data(), {n});
    npy::writeNpy((outDir / "logu.npy").string(), result.logU.data(), {m});
    npy::writeNpy((outDir / "logv.npy").string(), result.logV.data(), {n});
    if (parser.flag("plan")) {
        std::vector<double> plan(m * n);
        computePlan(problem, result.logU, result.logV, plan.data(), options.threads);
        npy::writeNpy((outDir / "plan.npy").string(), plan.data(), {m, n});
    }

    if (parser.flag("json")) {
        std::ostringstream j;
        j << "{\"solver\": " << jsonString(result.solver) << ", \"requested_solver\": " << jsonString(settings.solver)
          << ", \"m\": " << m << ", \"n\": " << n << ", \"precision\": " << jsonString(toString(options.precision))
          << ", \"eps\": " << jsonNumber(problem.eps) << ", \"tau_a\": "
          << (std::isinf(problem.tauA) ? "\"inf\"" : jsonNumber(problem.tauA))
          << ", \"tau_b\": " << (std::isinf(problem.tauB) ? "\"inf\"" : jsonNumber(problem.tauB))
          << ", \"reference_measure\": " << jsonString(toString(problem.reference))
          << ", \"mode\": " << jsonString(result.mode) << ", \"iterations\": " << result.iterations
          << ", \"passes\": " << result.passes << ", \"error\": " << jsonNumber(result.error)
          << ", \"mass\": " << jsonNumber(result.mass) << ", \"marginal_error_a\": " << jsonNumber(result.marginalErrorA)
          << ", \"marginal_error_b\": " << jsonNumber(result.marginalErrorB)
          << ", \"objective\": " << jsonNumber(result.objective)
          << ", \"ms_per_iter\": " << jsonNumber(result.timings.msPerIteration)
          << ", \"setup_ms\": " << jsonNumber(1e3 * result.timings.setupSeconds)
          << ", \"iterate_ms\": " << jsonNumber(1e3 * result.timings.iterateSeconds)
          << ", \"status\": " << jsonString(toString(result.status)) << ", \"message\": " << jsonString(result.message)
          << ", \"converged\": " << (result.converged ? "true" : "false")
          << ", \"cancelled\": " << (result.cancelled ? "true" : "false");
        if (parser.flag("counters")) j << ", \"counters\": " << countersJson(result);
        j << "}\n";
        std::fputs(j.str().c_str(), stdout);
    } else {
        std::printf("solver      %s (requested %s), %s, %zu x %zu\n", result.solver.c_str(), settings.solver.c_str(),
                    toString(options.precision).c_str(), m, n);
        std::printf("iterations  %d%s%s, error %.3g, %s mode, %llu passes over K\n", result.iterations,
                    result.converged ? " (converged)" : "", result.cancelled ? " (cancelled)" : "", result.error,
                    result.mode.c_str(), static_cast<unsigned long long>(result.passes));
        std::printf("mass        %.10g   |P1-a|_1 %.3g   |P^T1-b|_1 %.3g   objective %.10g\n", result.mass,
                    result.marginalErrorA, result.marginalErrorB, result.objective);
        std::printf("time        %.3f ms/iteration, set-up %.1f ms\n", result.timings.msPerIteration,
                    1e3 * result.timings.setupSeconds);
        std::printf("status      %s%s%s\n", toString(result.status).c_str(), result.message.empty() ? "" : ": ",
                    result.message.c_str());
        if (parser.flag("counters")) std::printf("counters    %s\n", countersText(result).c_str());
        std::printf("written     %s/{u,v,logu,logv}.npy%s\n", outDir.string().c_str(),
                    parser.flag("plan") ? " and plan.npy" : "");
    }
    if (parser.flag("allow-unconverged") || result.cancelled) return kExitOk;
    if (result.status == NumericalStatus::Underflow || result.status == NumericalStatus::NotFinite) {
        std::fprintf(stderr, "uot solve: stopped on %s after %d iterations (%s); the last finite iterate was "
                             "written. Use the log-domain solver (--solver log or auto), or pass --allow-unconverged "
                             "to accept it.\n",
                     toString(result.status).c_str(), result.iterations, result.message.c_str());
        return kExitNumerical;
    }
    if (options.tolerance > 0 && !result.converged) {
        std::fprintf(stderr, "uot solve: not converged: error %.3g after the --max-iter cap of %d iterations is above "
                             "--tol %g; the last iterate was written. Raise --max-iter, or pass --allow-unconverged "
                             "to accept it.\n",
                     result.error, result.iterations, options.tolerance);
        return kExitNotConverged;
    }
    return kExitOk;
}

}  // namespace uot::cli
