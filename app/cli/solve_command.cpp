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
#include "app/cli/commands.h"
#include "app/cli/json_text.h"
#include "app/cli/solve_report.h"
#include "app/cli/solver_flags.h"
#include "core/npy/npy_io.h"
#include "core/registry/solver_registry.h"
#include "core/transport/plan_evaluation.h"
#include "core/transport/uot_error.h"

namespace uot::cli {
namespace {

std::atomic<bool> g_interrupted{false};
extern "C" void onInterrupt(int) { g_interrupted.store(true); }

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
    addSolveIoOptions(parser, true);
    parser.addFlag("counters",
                   "GPU variants: read DRAM bytes and L2/L1 hit rates per iteration with CUPTI over a few extra, "
                   "untimed iterations, and report them next to the traffic model's bytes");
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

    const std::filesystem::path outDir = prepareOutputDirectory(parser.value("out-dir"));

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
    writeScalings(outDir, result);
    if (parser.flag("plan")) {
        std::vector<double> plan(m * n);
        computePlan(problem, result.logU, result.logV, plan.data(), options.threads);
        npy::writeNpy((outDir / "plan.npy").string(), plan.data(), {m, n});
    }

    SolveSummaryContext summary;
    summary.requestedSolver = settings.solver;
    summary.rows = m;
    summary.cols = n;
    summary.precision = options.precision;
    summary.problem = &problem;
    summary.outDir = outDir;
    summary.planWritten = parser.flag("plan");
    if (parser.flag("counters")) {
        summary.extraJsonMembers = "\"counters\": " + countersJson(result);
        summary.extraLines.push_back("counters    " + countersText(result));
    }
    if (parser.flag("json")) std::fputs(solveSummaryJson(result, summary).c_str(), stdout);
    else printSolveSummary(result, summary);
    return solveExitCode(result, options, parser.flag("allow-unconverged"), "uot solve");
}

}  // namespace uot::cli
