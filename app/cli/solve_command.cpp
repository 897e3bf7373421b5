// `uot solve`: solves a UOT problem given as .npy files and writes the
// scalings (and optionally the plan) as .npy files. This is how users and
// other tools check the solvers against POT.

#include <atomic>
#include <charconv>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "app/cli/arg_parser.h"
#include "app/cli/commands.h"
#include "app/cli/json_text.h"
#include "app/cli/parameter_flags.h"
#include "app/cli/solve_report.h"
#include "app/cli/solver_flags.h"
#include "core/npy/npy_io.h"
#include "core/registry/device_registry.h"
#include "core/registry/solver_registry.h"
#include "core/transport/plan_evaluation.h"
#include "core/transport/point_cloud_cost.h"
#include "core/transport/solve_setup.h"
#include "core/transport/uot_error.h"

namespace uot::cli {
namespace {

std::atomic<bool> g_interrupted{false};
extern "C" void onInterrupt(int) { g_interrupted.store(true); }

// A point cloud file: M x d (a 1-D array is M points of dimension 1), as float64.
struct Cloud {
    std::vector<double> points;
    std::size_t count = 0, dim = 0;
};

Cloud readCloud(const std::string& path, const char* name)
{
    const npy::Array array = npy::readNpy(path);
    Cloud c;
    c.count = array.rows();
    c.dim = array.shape.size() == 2 ? array.cols() : 1;
    if (c.count == 0 || c.dim == 0)
        throw Error(ErrorCode::Io, "'" + path + "': the point cloud " + name + " is empty (expected M x d points)");
    c.points = array.toDouble();
    return c;
}

std::string gib(double bytes)
{
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.1f GiB", bytes / (1024.0 * 1024.0 * 1024.0));
    return buf;
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
    ArgParser parser("uot solve (--cost C.npy | --x X.npy --y Y.npy) --a a.npy --b b.npy --out-dir DIR [options]",
                     "Solves the entropic unbalanced OT problem\n"
                     "  min <P,C> + eps KL(P|R) + tau_a KL(P1|a) + tau_b KL(P^T1|b)\n"
                     "for a cost matrix C (M x N), or two point clouds X (M x d) and Y (N x d) with\n"
                     "C_ij = s |x_i - y_j|^2, and weights a (M), b (N) given as .npy files (float32 or\n"
                     "float64, C order), and writes DIR/u.npy, DIR/v.npy (float64 scalings: P = diag(u) K diag(v),\n"
                     "K = exp(-C/eps) R), DIR/logu.npy, DIR/logv.npy (their logarithms, always finite), and\n"
                     "DIR/plan.npy with --plan. Ctrl-C stops the iterations, writes the current iterate and exits\n"
                     "130 (JSON status \"cancelled\").");
    addSolveIoOptions(parser, true);
    SolverFlagConfig config;
    config.warmStart = true;
    addSolverOptions(parser, config);
    parser.parse(args);
    if (parser.helpRequested()) {
        std::fputs(parser.helpText().c_str(), stdout);
        return kExitOk;
    }
    if (!parser.positionals().empty()) throw UsageError("unexpected argument '" + parser.positionals()[0] + "'");
    const bool clouds = parser.has("x") || parser.has("y");
    if (clouds && parser.has("cost")) throw UsageError("give either --cost or --x and --y, not both");
    if (clouds && !(parser.has("x") && parser.has("y"))) throw UsageError("--x and --y go together (see --help)");
    if (!clouds && parser.has("cost-scale")) throw UsageError("--cost-scale applies to --x/--y point clouds only");
    if (!clouds && !parser.has("cost")) throw UsageError("missing --cost (or --x and --y) (see --help)");
    for (const char* required : {"a", "b", "out-dir"})
        if (!parser.has(required)) throw UsageError(std::string("missing --") + required + " (see --help)");
    const SolverSettings settings = readSolverOptions(parser, config);
    const double givenScale = parser.has("cost-scale") ? parameterNumber(parser, params::parameter("cost-scale")) : 0;
    requireUsableDevice(settings);  // --device gpu without a GPU: exit 4 before reading anything
    if (!settings.deviceNote.empty()) std::fprintf(stderr, "uot solve: note: %s\n", settings.deviceNote.c_str());

    UotProblem problem;
    npy::Array cost;
    Cloud x, y;
    double costScale = 0;
    std::vector<double> a, b, warmU, warmV;
    SolveOptions options = settings.options;
    readingInputFiles([&] {
        if (clouds) {
            x = readCloud(parser.value("x"), "X");
            y = readCloud(parser.value("y"), "Y");
            if (x.dim != y.dim) {
                throw Error(ErrorCode::Io, "the point clouds have different dimensions: --x is " +
                                               std::to_string(x.count) + " x " + std::to_string(x.dim) + ", --y is " +
                                               std::to_string(y.count) + " x " + std::to_string(y.dim) +
                                               "; both must be M x d and N x d with the same d");
            }
            if (parser.has("cost-scale")) {
                costScale = givenScale;
            } else {
                const double maxCost = maxSquaredDistance(x.points.data(), x.count, y.points.data(), y.count, x.dim,
                                                          settings.options.threads);
                costScale = maxCost > 0 && std::isfinite(maxCost) ? 1.0 / maxCost : 1.0;
            }
            problem.cost = PointCloudCost{x.points.data(), y.points.data(), x.count, y.count, x.dim, costScale};
        } else {
            cost = npy::readNpy(parser.value("cost"));
            if (cost.shape.size() != 2)
                throw Error(ErrorCode::Io, "'" + parser.value("cost") + "': the cost must be a 2-D array (M x N)");
            DenseCost dense;
            dense.rows = cost.rows();
            dense.cols = cost.cols();
            if (cost.dtype == npy::DType::Float32)
                dense.f32 = cost.f32.data();
            else
                dense.f64 = cost.f64.data();
            problem.cost = dense;
        }
        a = readWeights(parser.value("a"), "a");
        b = readWeights(parser.value("b"), "b");
        checkNormalWeights(a, "a");
        checkNormalWeights(b, "b");
        problem.a = a;
        problem.b = b;
        applyProblemParameters(settings, problem);

        if (!settings.warmUPath.empty()) {
            warmU = readWeights(settings.warmUPath, "the warm start u");
            warmV = readWeights(settings.warmVPath, "the warm start v");
            options.warmU = warmU;
            options.warmV = warmV;
        }
        validateSolveOptions(problem, options);  // the problem and the warm start, before touching the output directory
    });

    const std::filesystem::path outDir = prepareOutputDirectory(parser.value("out-dir"));

    if (parser.flag("counters")) options.sampleHardwareCounters = true;
    SolveControl control;
    control.cancel = &g_interrupted;
    auto previous = std::signal(SIGINT, onInterrupt);  // Ctrl-C: stop, write the iterate, exit 130
    // Point clouds whose K would not fit: "auto" on the CPU solves them matrix-free
    // (the registry's rule, the same one the colour pipeline follows).
    std::string solverName = settings.solver;
    const std::optional<std::string> matrixFree =
        clouds && solverName == "auto"
            ? matrixFreeInstead(solverName, problem.rows(), problem.cols(), options.precision,
                                memoryForMatrix(DeviceKind::Cpu, 0))
            : std::nullopt;
    if (matrixFree) {
        solverName = *matrixFree;
        std::fprintf(stderr, "uot solve: the %zu x %zu kernel would not fit in memory: solving matrix-free with "
                             "%s\n", problem.rows(), problem.cols(), solverName.c_str());
    }
    std::unique_ptr<UotSolver> solver = createSolver(solverName);
    SolveResult result;
    try {
        result = solver->solve(problem, options, control);
    } catch (...) {
        std::signal(SIGINT, previous);
        throw;
    }
    std::signal(SIGINT, previous);

    const std::size_t m = problem.rows(), n = problem.cols();
    OutputSet outputs(outDir);  // the old set's manifest goes first; the new one is written last
    writeScalings(outDir, result, outputs);
    // The plan is materialised only on request, and only when it fits.
    bool planWritten = false;
    std::string planNote;
    if (parser.flag("plan")) {
        const double planBytes = 8.0 * static_cast<double>(m) * static_cast<double>(n);
        if (planBytes < 1.8e19 && fitsInMemory(static_cast<std::uint64_t>(planBytes))) {
            std::vector<double> plan(m * n);
            computePlan(problem, result.logU, result.logV, plan.data(), options.threads);
            npy::writeNpy((outDir / "plan.npy").string(), plan.data(), {m, n});
            outputs.add("plan.npy");
            planWritten = true;
        } else {
            planNote = "no plan written: the " + std::to_string(m) + " x " + std::to_string(n) + " plan needs " +
                       gib(planBytes) + " in float64 and only " + gib(static_cast<double>(availableMemoryBytes())) +
                       " of memory is available (at most half is used); logu.npy and logv.npy define it: "
                       "P_ij = exp(logu_i + logv_j - C_ij / eps) R_ij";
            std::fprintf(stderr, "uot solve: %s\n", planNote.c_str());
        }
    }

    outputs.commit();

    SolveSummaryContext summary;
    summary.requestedSolver = settings.solver;
    summary.rows = m;
    summary.cols = n;
    summary.precision = options.precision;
    summary.problem = &problem;
    summary.outDir = outDir;
    summary.planWritten = planWritten;
    summary.extraJsonMembers = "\"cost\": " + jsonString(clouds ? "point-clouds" : "matrix") +
                               ", \"dim\": " + std::to_string(clouds ? x.dim : 0) +
                               ", \"cost_scale\": " + (clouds ? jsonNumber(costScale) : std::string("null")) +
                               ", \"plan_written\": " + (planWritten ? "true" : "false");
    if (parser.flag("counters")) {
        summary.extraJsonMembers +=
            (summary.extraJsonMembers.empty() ? "" : ", ") + std::string("\"counters\": ") + countersJson(result);
        summary.extraLines.push_back("counters    " + countersText(result));
    }
    if (parser.flag("json")) std::fputs(solveSummaryJson(result, summary).c_str(), stdout);
    else printSolveSummary(result, summary);
    return solveExitCode(result, options, parser.flag("allow-unconverged"), "uot solve");
}

}  // namespace uot::cli
