// `uot-mpi solve`: the `uot solve` problem distributed by rows over MPI ranks.
// Rank r owns rows [M r / P, M (r + 1) / P) of C (possibly none; --balance: rows in
// proportion to the ranks' measured speeds, app/mpi/row_split.h): it reads only
// those rows of C.npy (or generates them for --random), runs the fused
// single-pass kernel on them, and the ranks sum their column sums with one
// MPI_Allreduce per iteration and the step's row totals in one or two packed
// ones (core/transport/row_block_reduction.h). Rank 0
// writes u, v and the summary; the other ranks print nothing (uot-mpi's main
// silences them): every error is agreed on first (collective_errors.h), so rank
// 0 reports it for all and every rank exits with the same code.

// GCC 12 reports a false -Wrestrict inside std::string assignment (GCC bug 105329).
#if defined(__GNUC__) && !defined(__clang__) && __GNUC__ == 12
#pragma GCC diagnostic ignored "-Wrestrict"
#endif

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "app/cli/arg_parser.h"
#include "app/cli/commands.h"
#include "app/cli/json_text.h"
#include "app/cli/parameter_flags.h"
#include "app/cli/solve_report.h"
#include "app/cli/solver_flags.h"
#include "app/mpi/collective_errors.h"
#include "app/mpi/distributed_solve_command.h"
#include "app/mpi/mpi_row_reduction.h"
#include "app/mpi/random_row_problem.h"
#include "app/mpi/row_rebalancer.h"
#include "app/mpi/row_split.h"
#include "app/mpi/shared_row_chunks.h"
#include "app/mpi/unresponsive_ranks.h"
#include "core/npy/npy_io.h"
#include "core/transport/fused_solver.h"
#include "core/transport/kernel_matrix.h"
#include "core/transport/mapreduce_solver.h"
#include "core/transport/point_cloud_cost.h"
#include "core/transport/uot_error.h"

namespace uot::mpi {

namespace {

using cli::UsageError;

// "MxN" -> (M, N), both > 0.
std::pair<std::size_t, std::size_t> parseSize(const std::string& text)
{
    const auto x = text.find('x');
    std::size_t m = 0, n = 0;
    const char* end = text.data() + text.size();
    if (x != std::string::npos) {
        const auto rm = std::from_chars(text.data(), text.data() + x, m);
        const auto rn = std::from_chars(text.data() + x + 1, end, n);
        if (rm.ec == std::errc() && rm.ptr == text.data() + x && rn.ec == std::errc() && rn.ptr == end && m > 0 &&
            n > 0)
            return {m, n};
    }
    throw UsageError("option '--random' needs MxN with M, N > 0 (e.g. 16384x16384), got '" + text + "'");
}

// The first entry of a block of cost rows that is not finite and >= 0, as an error
// naming its place in the whole matrix.
template <typename T>
void checkCostRows(const std::vector<T>& rows, std::size_t firstRow, std::size_t cols, const std::string& path)
{
    for (std::size_t k = 0; k < rows.size(); ++k) {
        const double c = static_cast<double>(rows[k]);
        if (c >= 0.0 && std::isfinite(c)) continue;
        std::ostringstream msg;
        msg << "'" << path << "': cost matrix entry (" << firstRow + k / cols << ", " << k % cols << ") is " << c
            << ": costs must be finite and >= 0";
        throw Error(ErrorCode::InvalidArgument, msg.str());
    }
}

// Passes timed on the even split before --balance sets the rows up again.
constexpr int kBalancePasses = 5;

void checkLength(std::size_t have, std::size_t need, const std::string& what, const std::string& of)
{
    if (have == need) return;
    std::ostringstream msg;
    msg << "size mismatch: " << what << " has " << have << " entries but the cost has " << need << " " << of;
    throw Error(ErrorCode::InvalidArgument, msg.str());
}

}  // namespace

int runDistributedSolve(const std::vector<std::string>& args)
{
    MPI_Comm comm = MPI_COMM_WORLD;
    int rank = 0, ranks = 1;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &ranks);

    cli::ArgParser parser(
        "mpirun -np P uot-mpi solve (--cost C.npy | --x X.npy --y Y.npy) --a a.npy --b b.npy --out-dir DIR [options]\n"
        "       mpirun -np P uot-mpi solve --random MxN --out-dir DIR [options]",
        "Solves the problem of `uot solve` (same options, same outputs, same JSON fields) on P MPI ranks.\n"
        "Rank r owns rows [M r / P, M (r + 1) / P) of C (--balance: rows in proportion to the ranks'\n"
        "measured speeds): it reads only those rows of C.npy (or generates\n"
        "them for --random) and runs the fused single-pass solver on them; the column sums are summed\n"
        "over the ranks with one MPI_Allreduce per iteration, and the row totals of the step after it\n"
        "(translation-invariant shifts, over-relaxation safeguard, stopping test) travel packed in one\n"
        "or two more (at most 3 a pass with --accel), so every P gives the single-process iterates\n"
        "(float64: to ~1e-12). Rank 0 writes DIR/u.npy, v.npy, logu.npy, logv.npy and the summary,\n"
        "which adds ranks, threads per rank and the communication time per iteration.\n"
        "Solver: fused (--solver fused, or auto = fused with --mode ti --accel auto; the named solver\n"
        "takes --mode ti and --accel relax|auto too), or mapreduce (matrix-free, log domain, for point\n"
        "clouds: --x/--y or --random; the column LSEs are combined over the ranks in one packed\n"
        "reduction a pass); --device cpu, no --plan, no log-domain fallback for fused.");
    cli::addSolveIoOptions(parser, false);
    for (const params::Parameter& p : params::parameters()) {  // uot-mpi's own: --random --seed --mpi-wait --timeout
        if (p.cliGroup != params::CliGroup::Mpi) continue;
        cli::ParameterFlagStyle style;
        if (p.name == "timeout") style.helpSuffix = "; the job then exits " + std::to_string(kExitNoAnswer) + " (MPI_Abort)";
        cli::addParameterOption(parser, p, style);
    }
    cli::SolverFlagConfig config;
    config.deviceAuto = false;
    config.warmStart = true;
    config.defaultSolver = "fused";
    config.defaultThreads = "1";
    cli::addSolverOptions(parser, config);
    // Parsing sees the same arguments on every rank: it fails alike everywhere.
    parser.parse(args);
    if (parser.helpRequested()) {
        std::fputs(parser.helpText().c_str(), stdout);
        return cli::kExitOk;
    }
    if (!parser.positionals().empty()) throw UsageError("unexpected argument '" + parser.positionals()[0] + "'");
    const bool random = parser.has("random");
    const bool clouds = parser.has("x") || parser.has("y");
    if (!parser.has("out-dir")) throw UsageError("missing --out-dir (see --help)");
    if (random && (parser.has("cost") || parser.has("a") || parser.has("b") || clouds))
        throw UsageError("--random replaces --cost (or --x/--y), --a and --b: give one or the other");
    if (clouds && !(parser.has("x") && parser.has("y"))) throw UsageError("--x and --y go together (see --help)");
    if (clouds && parser.has("cost")) throw UsageError("give --cost or --x/--y, not both");
    if (!clouds && parser.has("cost-scale")) throw UsageError("--cost-scale applies to --x/--y point clouds only");
    if (!random)
        for (const char* required : {clouds ? "x" : "cost", "a", "b"})
            if (!parser.has(required))
                throw UsageError(std::string("missing --") + required + " (or --random MxN; see --help)");
    const cli::SolverSettings settings = cli::readSolverOptions(parser, config);
    if (settings.gpu) throw UsageError("uot-mpi solves on the CPU of each rank: drop --device gpu");
    const bool matrixFree = settings.solver == "mapreduce";
    if (settings.solver != "fused" && settings.solver != "auto" && !matrixFree)
        throw UsageError("uot-mpi runs the fused solver (--solver fused or auto) and the matrix-free one "
                         "(--solver mapreduce), got '" + settings.solver + "'");
    if (matrixFree && !clouds && !random)
        throw UsageError("--solver mapreduce needs point clouds: --x X.npy --y Y.npy (or --random MxN), not --cost");
    if (matrixFree && settings.options.stopping == StoppingRule::Pot)
        throw UsageError("--solver mapreduce over ranks has no --stop pot: drop it (the default rule is exact)");
    const auto number = [&parser](const char* name) { return cli::parameterNumber(parser, params::parameter(name)); };
    double costScale = parser.has("cost-scale") ? number("cost-scale") : 0;  // 0: from the points
    const int seed = static_cast<int>(number("random-seed"));
    const double timeoutSeconds = number("timeout");
    const std::string waitMode = cli::parameterText(parser, params::parameter("mpi-wait"));
    const bool balance = parser.flag("balance");
    const std::string rebalanceMode = cli::parameterText(parser, params::parameter("rebalance"));
    const bool rowChunks = parser.flag("row-chunks");
    if (rowChunks && matrixFree) throw UsageError("--row-chunks applies to the fused and auto solvers, not mapreduce");
    if (rowChunks && balance) throw UsageError("--row-chunks replaces --balance: give one or the other");
    if (rowChunks && resolveThreadCount(settings.options.threads) > 1) {
        // A rank's OpenMP threads take the chunks through MPI, one at a time (MPI_THREAD_SERIALIZED).
        int level = MPI_THREAD_SINGLE;
        MPI_Query_thread(&level);
        if (level < MPI_THREAD_SERIALIZED)
            throw UsageError("--row-chunks with several threads a rank needs an MPI library that lets threads call it "
                             "one at a time (MPI_THREAD_SERIALIZED), and this one does not: pass --threads 1");
    }

    // Everything a rank may fail at alone: reading its inputs and rows, building its kernel.
    std::size_t m = 0, n = 0, firstRow = 0, rowCount = 0;
    std::vector<double> allA, b, warmU, warmV, xRows, yPoints;
    std::size_t dim = 0;
    double maxCost = 0;  // over this rank's rows (--x/--y without --cost-scale)
    npy::Array costRows;
    RandomRowProblem generated;
    UotProblem block;
    SolveOptions options = settings.options;
    std::filesystem::path outDir;
    std::unique_ptr<FusedRowBlockSolve> fused;
    std::unique_ptr<MapReduceRowBlockSolve> mapReduce;
    // The rows of each rank (empty: the even split), set up in `build`; --balance
    // builds twice: the even split, timed over a few passes, then the balanced one.
    std::vector<std::size_t> split;
    // This rank's rows [first, first + count) of the problem into `block`: at the
    // start, and again when --balance moves rows during the solve (row_rebalancer.h).
    const auto loadRows = [&](std::size_t first, std::size_t count) -> const UotProblem& {
        if (random) {
            generated = makeRandomRowProblem(m, n, static_cast<std::uint64_t>(seed), first, count);
            if (allA.empty()) {  // the same for every block: kept (RowBlock::allA points into it)
                allA = generated.allA;
                b = generated.b;
            }
            PointCloudCost cloud;
            cloud.x = generated.x.data();
            cloud.y = generated.y.data();
            cloud.rows = count;
            cloud.cols = n;
            cloud.dim = 2;
            block.cost = cloud;
        } else if (clouds) {
            xRows = npy::readNpyRows(parser.value("x"), first, count).toDouble();
            PointCloudCost cloud{xRows.data(), yPoints.data(), count, n, dim, costScale};
            if (costScale == 0 && count > 0)
                maxCost = maxSquaredDistance(xRows.data(), count, yPoints.data(), n, dim, options.threads);
            block.cost = cloud;
        } else {
            const std::string path = parser.value("cost");
            costRows = npy::readNpyRows(path, first, count);
            DenseCost dense;
            dense.rows = count;
            dense.cols = n;
            if (costRows.dtype == npy::DType::Float32) {
                checkCostRows(costRows.f32, first, n, path);
                dense.f32 = costRows.f32.data();
            } else {
                checkCostRows(costRows.f64, first, n, path);
                dense.f64 = costRows.f64.data();
            }
            block.cost = dense;
        }
        block.a = std::span<const double>(allA).subspan(first, count);
        block.b = b;
        cli::applyProblemParameters(settings, block);
        return block;
    };
    const auto build = [&](const SolveOptions& solveOptions) {
        fused.reset();
        mapReduce.reset();
        // A bad value in an input file exits 1, as a bad file does (cli::readingInputFiles).
        cli::readingInputFiles([&] { runCollectively(comm, [&] {
            if (random) {
                std::tie(m, n) = parseSize(parser.value("random"));
            } else {
                if (clouds) {
                    const npy::Header xh = npy::readNpyHeader(parser.value("x"));
                    const npy::Array y = npy::readNpy(parser.value("y"));
                    dim = xh.shape.size() == 2 ? xh.shape[1] : 1;
                    const std::size_t yDim = y.shape.size() == 2 ? y.cols() : 1;
                    if (dim != yDim)
                        throw Error(ErrorCode::Io, "the point clouds have different dimensions: --x has " +
                                                       std::to_string(dim) + ", --y " + std::to_string(yDim) +
                                                       "; both must be M x d and N x d with the same d");
                    m = xh.shape.empty() ? 0 : xh.shape[0];
                    n = y.rows();
                    yPoints = y.toDouble();
                } else {
                    const npy::Header header = npy::readNpyHeader(parser.value("cost"));
                    if (header.shape.size() != 2)
                        throw Error(ErrorCode::Io,
                                    "'" + parser.value("cost") + "': the cost must be a 2-D array (M x N)");
                    m = header.shape[0];
                    n = header.shape[1];
                }
                allA = cli::readWeights(parser.value("a"), "a");
                b = cli::readWeights(parser.value("b"), "b");
                cli::checkNormalWeights(allA, "a");
                cli::checkNormalWeights(b, "b");
                checkLength(allA.size(), m, "a", "rows");
                checkLength(b.size(), n, "b", "columns");
            }
            if (m == 0 || n == 0)
                throw Error(ErrorCode::InvalidArgument,
                            "the cost matrix is empty: it needs at least one row and one column");
            if (split.empty()) split = evenRowSplit(m, ranks);
            firstRow = split[static_cast<std::size_t>(rank)];
            rowCount = split[static_cast<std::size_t>(rank) + 1] - firstRow;
            loadRows(firstRow, rowCount);
            if (!settings.warmUPath.empty()) {
                warmU = cli::readWeights(settings.warmUPath, "the warm start u");
                warmV = cli::readWeights(settings.warmVPath, "the warm start v");
                checkLength(warmU.size(), m, "the warm start u", "rows");
                checkLength(warmV.size(), n, "the warm start v", "columns");
                options.warmU = std::span<const double>(warmU).subspan(firstRow, rowCount);
                options.warmV = warmV;
            }
            if (rank == 0) outDir = cli::prepareOutputDirectory(parser.value("out-dir"));
        });
        if (clouds && costScale == 0) {
            // The default scale, 1 / the largest squared distance of the whole problem.
            MPI_Allreduce(MPI_IN_PLACE, &maxCost, 1, MPI_DOUBLE, MPI_MAX, comm);
            costScale = maxCost > 0 && std::isfinite(maxCost) ? 1.0 / maxCost : 1.0;
            std::get<PointCloudCost>(block.cost).scale = costScale;
        }
        runCollectively(comm, [&] {
            const RowBlock where{firstRow, allA};
            if (matrixFree) mapReduce = std::make_unique<MapReduceRowBlockSolve>(block, where, solveOptions);
            else fused = std::make_unique<FusedRowBlockSolve>(block, where, solveOptions);
        }); });
    };

    // --mpi-wait sleep: 20 us naps between tests of a non-blocking reduction.
    const long sleepUs = waitMode == "sleep" ? 20 : 0;
    double balanceSeconds = 0;
    const double balanceStart = MPI_Wtime();
    if (balance) {
        // A few passes on the even split, timed without the waits, then each rank's
        // rows in proportion to its speed (row_split.h); the iterates of the solve
        // do not depend on the split.
        SolveOptions probe = options;
        probe.maxIterations = kBalancePasses;
        probe.tolerance = 0;
        build(probe);
        MpiRowReduction probeLoop(comm, sleepUs, timeoutSeconds), probeOther(comm, sleepUs, timeoutSeconds);
        const SolveResult timed =
            matrixFree ? mapReduce->run(probeLoop, probeOther) : fused->run(probeLoop, probeOther);
        const double mine[2] = {static_cast<double>(rowCount),
                                std::max(0.0, timed.timings.iterateSeconds - probeLoop.seconds())};
        std::vector<double> all(2 * static_cast<std::size_t>(ranks));
        MPI_Allgather(mine, 2, MPI_DOUBLE, all.data(), 2, MPI_DOUBLE, comm);
        std::vector<std::size_t> rowsNow(static_cast<std::size_t>(ranks));
        std::vector<double> seconds(rowsNow.size());
        for (std::size_t r = 0; r < rowsNow.size(); ++r) {
            rowsNow[r] = static_cast<std::size_t>(all[2 * r]);
            seconds[r] = all[2 * r + 1];
        }
        split = balancedRowSplit(rowsNow, seconds, m);
    }
    const double buildStart = MPI_Wtime();
    build(options);
    const double buildSeconds = MPI_Wtime() - buildStart;
    if (balance) balanceSeconds = MPI_Wtime() - balanceStart;
    MpiRowReduction loop(comm, sleepUs, timeoutSeconds), other(comm, sleepUs, timeoutSeconds);
    // --balance: rows move again during the solve (fused; the matrix-free solve keeps its first split).
    std::unique_ptr<RowRebalancer> rebalancer;
    if (balance && !matrixFree && ranks > 1 && rebalanceMode != "off")
        rebalancer = std::make_unique<RowRebalancer>(
            comm, split, rebalanceMode == "always" ? RowRebalancer::Mode::Always : RowRebalancer::Mode::Auto, loop,
            [&](std::size_t first, std::size_t count) { return loadRows(first, count); },
            rowCount > 0 ? buildSeconds / static_cast<double>(rowCount) : 0.0, options.maxIterations);
    // --row-chunks: the ranks of a node share its rows' kernel and take each pass's rows in chunks.
    std::unique_ptr<SharedRowChunks> chunks;
    if (rowChunks) chunks = std::make_unique<SharedRowChunks>(comm, split, loop);
    SolveResult result =
        matrixFree ? mapReduce->run(loop, other) : fused->run(loop, other, rebalancer.get(), chunks.get());
    if (rebalancer)
        rowCount = rebalancer->bounds()[static_cast<std::size_t>(rank) + 1] -
                   rebalancer->bounds()[static_cast<std::size_t>(rank)];
    result.message = cli::messageWithoutLogSolver(result.message);  // uot-mpi has no log-domain solver
    fused.reset();
    mapReduce.reset();

    // The summary's collective calls are waited for as the solve's (--mpi-wait,
    // --timeout): its reductions through `other`'s sum and max, the others through
    // `other`'s waitFor (its seconds are not reported).
    const RequestWait summaryWait = [&other](MPI_Request& request) { other.waitFor(request); };
    // Communication per iteration: the slowest rank's (all take part in every call);
    // the passes of --row-chunks; the slowest rank's time in the moves during the solve.
    const double iterations = std::max(1, result.iterations);
    double stats[5] = {1e3 * loop.seconds() / iterations, static_cast<double>(rowCount),
                       -static_cast<double>(rowCount), chunks ? static_cast<double>(chunks->passes()) : 0.0,
                       rebalancer ? rebalancer->moveSeconds() : 0.0};
    other.max(stats);
    const double commMsPerIter = stats[0];
    const auto maxRows = static_cast<std::size_t>(stats[1]), minRows = static_cast<std::size_t>(-stats[2]);
    const double chunkPasses = stats[3], moveSeconds = stats[4];
    // The chunks of a pass over all nodes (each node's first rank counts its own).
    const bool countsNode = chunks && chunks->nodeRank() == 0;
    const double chunksPerPass =
        other.sum(countsNode ? static_cast<double>(rowChunkCount(chunks->nodeRowCount())) : 0.0);
    const double callsPerIter = static_cast<double>(loop.calls()) / iterations;
    // Each rank's time per iteration and its wait in the reductions, to rank 0: the
    // wait of one rank is the others' excess work, so the spread of the compute
    // (time - wait) shows the imbalance that the slowest rank's wait alone hides.
    // With --row-chunks, each rank's chunks and those it took from other ranks' blocks.
    constexpr std::size_t kPerRank = 4;
    const double mine[kPerRank] = {result.timings.msPerIteration, 1e3 * loop.seconds() / iterations,
                                   chunks ? static_cast<double>(chunks->chunksTaken()) : 0.0,
                                   chunks ? static_cast<double>(chunks->chunksStolen()) : 0.0};
    std::vector<double> perRank(rank == 0 ? kPerRank * static_cast<std::size_t>(ranks) : kPerRank);
    stopHereForTest(comm, "summary");
    MPI_Request request;
    MPI_Igather(mine, kPerRank, MPI_DOUBLE, perRank.data(), kPerRank, MPI_DOUBLE, 0, comm, &request);
    summaryWait(request);
    const int threads = options.threads > 0 ? options.threads : resolveThreadCount(0);
    // The moves during the solve (the same count everywhere).
    const int moves = rebalancer ? rebalancer->moves() : 0;
    const std::size_t rowsMoved = rebalancer ? rebalancer->rowsMoved() : 0;

    int exitCode = cli::kExitOk;
    runCollectively(comm, [&] {
        if (rank != 0) return;
        OutputSet outputs(outDir);  // the old set's manifest goes first; the new one is written last
        cli::writeScalings(outDir, result, outputs);
        outputs.commit();
        cli::SolveSummaryContext summary;
        summary.requestedSolver = settings.solver;
        summary.rows = m;
        summary.cols = n;
        summary.precision = options.precision;
        summary.problem = &block;
        summary.outDir = outDir;
        const double share = result.timings.msPerIteration > 0 ? commMsPerIter / result.timings.msPerIteration : 0.0;
        const std::string problemName =
            random ? "random " + parser.value("random") : clouds ? parser.value("x") : parser.value("cost");
        std::ostringstream j;
        j << "\"ranks\": " << ranks << ", \"threads_per_rank\": " << threads << ", \"rows_per_rank_min\": " << minRows
          << ", \"rows_per_rank_max\": " << maxRows << ", \"comm_ms_per_iter\": " << cli::jsonNumber(commMsPerIter)
          << ", \"comm_share\": " << cli::jsonNumber(share)
          << ", \"allreduce_per_iter\": " << cli::jsonNumber(callsPerIter)
          << ", \"problem\": " << cli::jsonString(problemName) << ", \"balanced\": " << (balance ? "true" : "false")
          << ", \"balance_ms\": " << cli::jsonNumber(1e3 * balanceSeconds) << ", \"rebalances\": " << moves
          << ", \"rows_moved\": " << rowsMoved << ", \"move_ms\": " << cli::jsonNumber(1e3 * moveSeconds)
          << ", \"row_chunks\": " << (rowChunks ? "true" : "false")
          << ", \"chunks_per_pass\": " << cli::jsonNumber(chunksPerPass)
          << ", \"chunk_passes\": " << cli::jsonNumber(chunkPasses);
        for (const auto& [key, offset] : {std::pair{"rank_ms_per_iter", 0}, std::pair{"rank_wait_ms_per_iter", 1},
                                          std::pair{"rank_chunks", 2}, std::pair{"rank_chunks_stolen", 3}}) {
            j << ", \"" << key << "\": [";
            for (int r = 0; r < ranks; ++r)
                j << (r ? ", " : "") << cli::jsonNumber(perRank[kPerRank * static_cast<std::size_t>(r) + offset]);
            j << "]";
        }
        summary.extraJsonMembers = j.str();
        char line[256];
        std::snprintf(line, sizeof line, "ranks       %d (%zu to %zu rows each%s), %d thread%s per rank", ranks,
                      minRows, maxRows, balance ? ", balanced" : "", threads, threads == 1 ? "" : "s");
        summary.extraLines.emplace_back(line);
        if (balance) {
            std::snprintf(line, sizeof line,
                          "balance     %.1f ms (%d timed passes on the even split, rows set up again)",
                          1e3 * balanceSeconds, kBalancePasses);
            summary.extraLines.emplace_back(line);
            std::snprintf(line, sizeof line, "rebalance   %d moves during the solve, %zu rows moved in all, %.1f ms",
                          moves, rowsMoved, 1e3 * moveSeconds);
            summary.extraLines.emplace_back(line);
        }
        std::snprintf(line, sizeof line,
                      "comm        %.3f ms/iteration (%.1f%% of it, waiting included), %.2f allreduce calls/iteration",
                      commMsPerIter, 100.0 * share, callsPerIter);
        summary.extraLines.emplace_back(line);
        double computeMin = 0, computeMax = 0;
        int slowest = 0;
        for (int r = 0; r < ranks; ++r) {
            const std::size_t at = kPerRank * static_cast<std::size_t>(r);
            const double compute = perRank[at] - perRank[at + 1];
            if (r == 0 || compute < computeMin) computeMin = compute;
            if (r == 0 || compute > computeMax) computeMax = compute, slowest = r;
        }
        std::snprintf(line, sizeof line, "compute     %.3f to %.3f ms/iteration over the ranks (slowest: rank %d)",
                      computeMin, computeMax, slowest);
        summary.extraLines.emplace_back(line);
        if (parser.flag("json")) std::fputs(cli::solveSummaryJson(result, summary).c_str(), stdout);
        else cli::printSolveSummary(result, summary);
    }, summaryWait);
    // The result (status, convergence) is the same on every rank, so is the code.
    exitCode = cli::solveExitCode(result, options, parser.flag("allow-unconverged"), "uot-mpi solve", false);
    return exitCode;
}

}  // namespace uot::mpi
