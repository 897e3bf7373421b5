#include "core/transport/mapreduce_solver.h"

#include <omp.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <limits>
#include <memory>
#include <numbers>
#include <sstream>
#include <vector>

#include "core/transport/cpu_buffers.h"
#include "core/transport/mapreduce_kernels.h"
#include "core/transport/row_block_evaluation.h"
#include "core/transport/scaling_loop.h"
#include "core/transport/solve_setup.h"
#include "core/transport/subnormal_flush.h"
#include "core/transport/traffic_model.h"
#include "core/transport/uot_error.h"

namespace uot {

namespace {

constexpr double kLog2e = std::numbers::log2e;
constexpr double kLn2 = std::numbers::ln2;
constexpr std::size_t kTargetsPerTask = 64;           // targets one thread takes at a time
constexpr std::size_t kParallelEntries = 1 << 14;     // below this many entries a pass runs on one thread

[[noreturn]] void fail(const std::string& message) { throw Error(ErrorCode::InvalidArgument, message); }

const PointCloudCost& requirePointClouds(const UotProblem& problem)
{
    const auto* cloud = std::get_if<PointCloudCost>(&problem.cost);
    if (!cloud) {
        fail("mapreduce needs point clouds (a PointCloudCost: `uot solve --x X.npy --y Y.npy`), not a cost matrix; "
             "use fused or log for a dense cost");
    }
    if (cloud->dim < 1 || cloud->dim > static_cast<std::size_t>(kernels::kMaxCloudDim)) {
        std::ostringstream msg;
        msg << "mapreduce supports points of dimension 1 to " << kernels::kMaxCloudDim << ", got " << cloud->dim
            << "; use fused or log (they store the matrix)";
        fail(msg.str());
    }
    for (auto [points, count, name] : {std::tuple{cloud->x, cloud->rows, "x"}, std::tuple{cloud->y, cloud->cols, "y"}}) {
        for (std::size_t k = 0; k < count * cloud->dim; ++k) {
            if (!std::isfinite(points[k])) {
                std::ostringstream msg;
                msg << "point " << name << "[" << k / cloud->dim << "] coordinate " << k % cloud->dim << " is "
                    << points[k] << ": coordinates must be finite";
                fail(msg.str());
            }
        }
    }
    return *cloud;
}

// The mean of the points of both clouds (the centre of MapReduceEngine): the x of
// every block summed over the blocks (rowBlocks; null: one process), then the y.
// allRows: the number of x points of the whole problem.
std::vector<double> commonMean(const PointCloudCost& cloud, RowBlockReduction* rowBlocks, std::size_t allRows)
{
    std::vector<double> centre(cloud.dim, 0.0);
    for (std::size_t s = 0; s < cloud.rows * cloud.dim; ++s) centre[s % cloud.dim] += cloud.x[s];
    if (rowBlocks) rowBlocks->sum(centre);
    for (std::size_t s = 0; s < cloud.cols * cloud.dim; ++s) centre[s % cloud.dim] += cloud.y[s];
    for (double& c : centre) c /= static_cast<double>(allRows + cloud.cols);
    return centre;
}

// One point set in both roles: as sources (q, h, SoA, padded) and as targets
// (weights w and offsets o). With k = scale / eps and p the centred points,
//   -C_ts / eps * log2(e) = -k log2e |p_t|^2 - k log2e |q_s|^2 + 2 k log2e p_t . q_s
//                          =        o_t     +   (part of h_s)  +      w_t . q_s
template <typename T>
struct CloudSide {
    std::size_t count = 0, ld = 0;
    AlignedBuffer<T> q, h;
    std::vector<T> w, shift;
    std::vector<double> o, norm, logWeight;  // norm_s = -k log2e |q_s|^2; logWeight: log a or log b
    bool haveShift = false;

    void build(const double* points, std::size_t n, std::size_t dim, const double* centre, double k,
               std::span<const double> weights)
    {
        count = n;
        ld = kernels::paddedLength<T>(n);
        q.resize(dim * ld);
        h.resize(ld);
        w.assign(n * dim, T(0));
        shift.assign(n, T(0));
        o.assign(n, 0.0);
        norm.assign(n, 0.0);
        logWeight.resize(n);
        for (std::size_t d = 0; d < dim; ++d)
            for (std::size_t s = n; s < ld; ++s) q.data()[d * ld + s] = T(0);
        for (std::size_t s = n; s < ld; ++s) h.data()[s] = std::numeric_limits<T>::lowest() / 4;
        for (std::size_t s = 0; s < n; ++s) {
            double sq = 0;
            for (std::size_t d = 0; d < dim; ++d) {
                const double c = points[s * dim + d] - centre[d];
                sq += c * c;
                q.data()[d * ld + s] = static_cast<T>(c);
                w[s * dim + d] = static_cast<T>(2.0 * k * kLog2e * c);
            }
            o[s] = norm[s] = -k * kLog2e * sq;
            logWeight[s] = std::log(weights[s]);
        }
        haveShift = false;
    }
};

// The two log-sum-exp passes over the clouds.
template <typename T>
class MapReduceEngine {
public:
    // centre: the point both clouds are centred on (commonMean of the whole problem
    // when `problem` is one block of rows); empty: their common mean.
    MapReduceEngine(const UotProblem& problem, int threads, const SolveControl* control,
                    std::span<const double> centreGiven = {})
        : m_threads(resolveThreadCount(threads)), m_control(control),
          m_product(problem.reference == ReferenceMeasure::Product), m_kernels(kernels::mapReduceKernels<T>())
    {
        const PointCloudCost& cloud = std::get<PointCloudCost>(problem.cost);
        m_dim = cloud.dim;
        // Centre both clouds on their common mean: distances are unchanged and
        // the expanded form |p|^2 + |q|^2 - 2 p.q loses the fewest digits.
        const std::vector<double> centre =
            centreGiven.empty() ? commonMean(cloud, nullptr, cloud.rows)
                                : std::vector<double>(centreGiven.begin(), centreGiven.end());
        const double k = cloud.scale / problem.eps;
        m_sides[0].build(cloud.x, cloud.rows, m_dim, centre.data(), k, problem.a);
        m_sides[1].build(cloud.y, cloud.cols, m_dim, centre.data(), k, problem.b);
        m_parallel = cloud.rows * cloud.cols >= kParallelEntries;
        m_sums.resize(std::max(cloud.rows, cloud.cols));
    }

    // out[t] = log sum_s exp(sourceLogs_s - C_ts / eps) R_ts for every target t
    // of side `targets` (0: rows, sources the columns; 1: the reverse).
    // Returns false when cancelled (out is then incomplete).
    bool pass(int targets, const double* sourceLogs, double* out)
    {
        CloudSide<T>& tg = m_sides[targets];
        CloudSide<T>& sr = m_sides[1 - targets];
        for (std::size_t s = 0; s < sr.count; ++s) {
            const double logW = sourceLogs[s] + (m_product ? sr.logWeight[s] : 0.0);
            sr.h.data()[s] = static_cast<T>(kLog2e * logW + sr.norm[s]);
        }
        const kernels::CloudSources<T> src{sr.q.data(), sr.h.data(), sr.ld};
        const std::size_t dim = m_dim;
        const auto sums = m_kernels.shiftedSums[dim - 1];
        const auto maxima = m_kernels.maxScores[dim - 1];
        const std::size_t tasks = (tg.count + kTargetsPerTask - 1) / kTargetsPerTask;
        const std::atomic<bool>* cancel = m_control ? m_control->cancel : nullptr;
        std::atomic<bool> cancelled{false};
        const bool fresh = !tg.haveShift;
        double* sumsOut = m_sums.data();
#pragma omp parallel for schedule(dynamic, 1) num_threads(m_threads) if (m_parallel)
        for (std::ptrdiff_t task = 0; task < static_cast<std::ptrdiff_t>(tasks); ++task) {
            if (cancelled.load(std::memory_order_relaxed)) continue;
            if (cancel && cancel->load(std::memory_order_relaxed)) {
                cancelled.store(true, std::memory_order_relaxed);
                continue;
            }
            const std::size_t t0 = static_cast<std::size_t>(task) * kTargetsPerTask;
            const std::size_t n = std::min(kTargetsPerTask, tg.count - t0);
            const T* w = tg.w.data() + t0 * dim;
            T* shift = tg.shift.data() + t0;
            if (fresh) {
                maxima(src, w, n, shift);
                for (std::size_t t = 0; t < n; ++t) shift[t] = std::nearbyint(shift[t]);
            }
            sums(src, w, shift, n, sumsOut + t0);
            for (std::size_t t = 0; t < n; ++t) {
                double s = sumsOut[t0 + t];
                if (!(s >= kernels::MapReduceLimits<T>::kAcceptLow && s <= kernels::MapReduceLimits<T>::kAcceptHigh)) {
                    // Out of range against the previous LSE: redo against the maximum.
                    maxima(src, w + t * dim, 1, shift + t);
                    shift[t] = std::nearbyint(shift[t]);
                    sums(src, w + t * dim, shift + t, 1, &s);
                }
                const double l2 = static_cast<double>(shift[t]) + std::log2(s);
                if (std::isfinite(l2)) shift[t] = static_cast<T>(std::nearbyint(l2));
                out[t0 + t] = kLn2 * (l2 + tg.o[t0 + t]) + (m_product ? tg.logWeight[t0 + t] : 0.0);
            }
        }
        if (cancelled.load()) {
            tg.haveShift = false;  // some targets kept stale shifts
            return false;
        }
        tg.haveShift = true;
        return true;
    }

private:
    int m_threads;
    const SolveControl* m_control;
    bool m_product;
    const kernels::MapReduceKernels<T>& m_kernels;
    std::size_t m_dim = 0;
    CloudSide<T> m_sides[2];
    std::vector<double> m_sums;
    bool m_parallel = true;
};

template <typename T>
class MapReducePasses final : public ScalingPasses {
public:
    // rowBlocks: set when problem is this process's block of rows of a solve
    // distributed by rows (the column LSEs are then combined over all blocks).
    MapReducePasses(const UotProblem& problem, MapReduceEngine<T>& engine, RowBlockReduction* rowBlocks = nullptr)
        : m_engine(engine), m_a(problem.a), m_b(problem.b), m_fa(problem.exponentA()), m_fb(problem.exponentB()),
          m_lseRow(problem.rows()), m_lseCol(problem.cols()), m_rowBlocks(rowBlocks)
    {
        m_logA.resize(problem.rows());
        m_logB.resize(problem.cols());
        for (std::size_t i = 0; i < m_logA.size(); ++i) m_logA[i] = std::log(m_a[i]);
        for (std::size_t j = 0; j < m_logB.size(); ++j) m_logB[j] = std::log(m_b[j]);
    }

    PassStatus iterate(const double* logU, const double* logV, double* logUNew, double* logVNew, bool rowMarginal,
                       bool colMarginal, double& errA, double& errB) override
    {
        if (!m_engine.pass(0, logV, m_lseRow.data())) return PassStatus::Cancelled;
        bool bad = false;
        double ea = 0;
        for (std::size_t i = 0; i < m_lseRow.size(); ++i) {
            const double lse = m_lseRow[i];
            if (rowMarginal) ea += std::abs(std::exp(logU[i] + lse) - m_a[i]);
            const double plain = m_fa * (m_logA[i] - lse);
            // Over-relaxation (relaxed_step.h): F = (1 - w) F_old + w F^; the column
            // pass below then sums with the relaxed F, as the relaxed step expects.
            logUNew[i] = m_omega == 1.0 ? plain : (1.0 - m_omega) * logU[i] + m_omega * plain;
            if (!std::isfinite(logUNew[i])) bad = true;
        }
        if (rowMarginal) errA = ea;
        if (m_rowBlocks) {
            if (!columnsOverBlocks(logUNew, bad, errA)) return PassStatus::NotFinite;
        } else {
            if (bad) return PassStatus::NotFinite;
            if (!m_engine.pass(1, logUNew, m_lseCol.data())) return PassStatus::Cancelled;
        }
        double eb = 0;
        for (std::size_t j = 0; j < m_lseCol.size(); ++j) {
            const double lse = m_lseCol[j];
            logVNew[j] = m_fb * (m_logB[j] - lse);
            if (!std::isfinite(logVNew[j])) bad = true;
            if (colMarginal) eb += std::abs(std::exp(logVNew[j] + lse) - m_b[j]);
        }
        if (colMarginal) errB = eb;
        return bad ? PassStatus::NotFinite : PassStatus::Ok;
    }

    double rowMarginalError(const double* logU, const double* logV) override
    {
        if (!m_engine.pass(0, logV, m_lseRow.data())) return std::numeric_limits<double>::quiet_NaN();
        double err = 0;
        for (std::size_t i = 0; i < m_lseRow.size(); ++i) err += std::abs(std::exp(logU[i] + m_lseRow[i]) - m_a[i]);
        return m_rowBlocks ? m_rowBlocks->sum(err) : err;
    }

    // A row pass and a column pass over the clouds.
    int sweepsPerIteration() const override { return 2; }

    bool supportsRelaxation() const override { return true; }
    void setRowRelaxation(double omega) override { m_omega = omega; }

    // The engine keeps the sources' log-weights in T (CloudSide::h).
    double potentialResolution() const override
    {
        return std::is_same_v<T, float> ? static_cast<double>(std::numeric_limits<float>::epsilon()) : 0.0;
    }

private:
    // The column LSEs over the rows of every block: this block's LSE of each column
    // (over its own rows; none: -inf), with the row-side error and the rows' status,
    // combined in one packed reduction (row_block_reduction.h). Collective: a block
    // whose rows went bad still takes part. Returns false when a block's rows did.
    bool columnsOverBlocks(const double* logUNew, bool bad, double& errA)
    {
        const std::size_t n = m_lseCol.size();
        RowTotals totals(2, 0, n);
        totals.sum(0) = errA;
        totals.sum(1) = bad ? 1.0 : 0.0;
        if (!bad && !m_a.empty()) {
            m_engine.pass(1, logUNew, m_lseCol.data());  // no cancel in a distributed solve
            for (std::size_t j = 0; j < n; ++j) totals.setLogSum(j, {m_lseCol[j], 1.0});
        }
        m_rowBlocks->startCombine(totals);
        m_rowBlocks->finishCombine(totals);
        errA = totals.sum(0);
        for (std::size_t j = 0; j < n; ++j) m_lseCol[j] = totals.logSum(j).value();
        return totals.sum(1) == 0.0;
    }

    MapReduceEngine<T>& m_engine;
    std::span<const double> m_a, m_b;
    double m_fa, m_fb;
    std::vector<double> m_lseRow, m_lseCol, m_logA, m_logB;
    RowBlockReduction* m_rowBlocks = nullptr;
    double m_omega = 1.0;  // over-relaxation of the row half-step
};

// The sums of the plan of (logU, logV) from two float64 passes (planSums without a
// matrix): P 1 = exp(logU + LSE_row), P^T 1 = exp(logV + LSE_col), and
// sum_ij P_ij (logU_i + logV_j) = sum_i logU_i (P 1)_i + sum_j logV_j (P^T 1)_j. For a
// block of rows, its share of the column sums and of that sum (no rows: none).
PlanSums matrixFreeSums(MapReduceEngine<double>& engine, std::span<const double> logU, std::span<const double> logV)
{
    PlanSums sums;
    sums.rowSums.resize(logU.size());
    sums.colSums.assign(logV.size(), 0.0);
    engine.pass(0, logV.data(), sums.rowSums.data());
    if (!logU.empty()) engine.pass(1, logU.data(), sums.colSums.data());
    for (std::size_t i = 0; i < logU.size(); ++i) {
        sums.rowSums[i] = std::exp(logU[i] + sums.rowSums[i]);
        sums.scaledLogSum += logU[i] * sums.rowSums[i];
    }
    if (logU.empty()) return sums;
    for (std::size_t j = 0; j < logV.size(); ++j) {
        sums.colSums[j] = std::exp(logV[j] + sums.colSums[j]);
        sums.scaledLogSum += logV[j] * sums.colSums[j];
    }
    return sums;
}

// Mass, marginals and objective of the plan of (logU, logV) (matrixFreeSums).
PlanEvaluation evaluateMatrixFree(MapReduceEngine<double>& engine, const UotProblem& problem,
                                  std::span<const double> logU, std::span<const double> logV)
{
    const PlanSums sums = matrixFreeSums(engine, logU, logV);
    return evaluationFromSums(problem, sums.rowSums, sums.colSums, sums.scaledLogSum);
}

template <typename T>
SolveResult solveMapReduce(const UotProblem& problem, const SolveOptions& options, const SolveControl& control)
{
    using Clock = std::chrono::steady_clock;
    const auto setupStart = Clock::now();
    validateSolveOptions(problem, options);
    requirePointClouds(problem);
    const SubnormalFlushScope flushSubnormals(options.threads);
    SolveResult result;
    result.solver = "mapreduce";
    result.mode = toString(options.mode);
    result.bytesPerIteration = 0;
    // The log warm start (eps-scaling stages, a fallback's continuation) when given.
    std::vector<double> logU = initialLogScaling(options.warmU, options.warmLogU, problem.rows());
    std::vector<double> logV = initialLogScaling(options.warmV, options.warmLogV, problem.cols());
    MapReduceEngine<T> engine(problem, options.threads, &control);
    MapReducePasses<T> passes(problem, engine);
    ScalingLoopSetup setup;
    setup.logDomain = true;
    setup.bytesPerIteration = 0;
    result.timings.setupSeconds = std::chrono::duration<double>(Clock::now() - setupStart).count();
    runScalingLoop(problem, options, control, passes, setup, logU, logV, result);
    const PlanEvaluator evaluator = [&](const UotProblem& p, std::span<const double> lu, std::span<const double> lv) {
        if constexpr (std::is_same_v<T, double>) {
            return evaluateMatrixFree(engine, p, lu, lv);
        } else {
            MapReduceEngine<double> exact(p, options.threads, nullptr);
            return evaluateMatrixFree(exact, p, lu, lv);
        }
    };
    finishResultFromLogs(problem, options, std::move(logU), std::move(logV), result, evaluator);
    return result;
}

}  // namespace

std::uint64_t MapReduceSolver::bytesPerIteration(std::size_t rows, std::size_t cols, Precision precision) const
{
    return matrixTrafficBytes(sweeps::kMatrixFree, entryBytesFor(precision), rows, cols);
}

SolveResult MapReduceSolver::solve(const UotProblem& problem, const SolveOptions& options, const SolveControl& control)
{
    if (options.precision == Precision::Fp32) return solveMapReduce<float>(problem, options, control);
    return solveMapReduce<double>(problem, options, control);
}

double mapReduceFlopsPerEntry(std::size_t dim, Precision precision)
{
    // Per entry: dim FMAs for the score, the shift, 3 adds of the range
    // reduction, the polynomial (degree 5 in fp32, 12 in fp64; one FMA per
    // degree) and the accumulation; an FMA counts 2, min/max and the integer
    // exponent add count 0.
    const double degree = precision == Precision::Fp32 ? 5 : 12;
    return 2.0 * static_cast<double>(dim) + 1 + 3 + 2 * degree + 1;
}

MapReduceRowBlockSolve::MapReduceRowBlockSolve(const UotProblem& block, const RowBlock& where,
                                               const SolveOptions& options)
    : m_block(block), m_where(where), m_options(options)
{
    // A block without rows has nothing of its own to check (see FusedRowBlockSolve).
    if (!block.a.empty()) validateSolveOptions(block, options);
    requirePointClouds(block);
}

SolveResult MapReduceRowBlockSolve::run(RowBlockReduction& loop, RowBlockReduction& other)
{
    if (m_options.precision == Precision::Fp32) return runIn<float>(loop, other);
    return runIn<double>(loop, other);
}

template <typename T>
SolveResult MapReduceRowBlockSolve::runIn(RowBlockReduction& loop, RowBlockReduction& other)
{
    using Clock = std::chrono::steady_clock;
    const auto setupStart = Clock::now();
    const SubnormalFlushScope flushSubnormals(m_options.threads);
    SolveResult result;
    result.solver = "mapreduce";
    result.mode = toString(m_options.mode);
    result.bytesPerIteration = 0;
    // Every block centres the clouds on the mean of the whole problem's points.
    const std::vector<double> centre =
        commonMean(std::get<PointCloudCost>(m_block.cost), &other, m_where.allA.size());
    std::vector<double> logU = initialLogScaling(m_options.warmU, m_options.warmLogU, m_block.rows());
    std::vector<double> logV = initialLogScaling(m_options.warmV, m_options.warmLogV, m_block.cols());
    MapReduceEngine<T> engine(m_block, m_options.threads, nullptr, centre);
    MapReducePasses<T> passes(m_block, engine, &loop);
    ScalingLoopSetup setup;
    setup.logDomain = true;
    setup.rowBlocks = &loop;
    result.timings.setupSeconds = std::chrono::duration<double>(Clock::now() - setupStart).count();
    runScalingLoop(m_block, m_options, SolveControl{}, passes, setup, logU, logV, result);
    const PlanEvaluator evaluator = [&](const UotProblem& p, std::span<const double> lu, std::span<const double> lv) {
        auto sumsWith = [&](MapReduceEngine<double>& exact) {
            return evaluationOverBlocks(other, p, m_where, matrixFreeSums(exact, lu, lv));
        };
        if constexpr (std::is_same_v<T, double>) {
            return sumsWith(engine);
        } else {
            MapReduceEngine<double> exact(p, m_options.threads, nullptr, centre);
            return sumsWith(exact);
        }
    };
    finishResultFromLogs(m_block, m_options, std::move(logU), std::move(logV), result, evaluator);
    result.logU = gatherRows(other, m_where, result.logU);
    return result;
}

template SolveResult MapReduceRowBlockSolve::runIn<float>(RowBlockReduction&, RowBlockReduction&);
template SolveResult MapReduceRowBlockSolve::runIn<double>(RowBlockReduction&, RowBlockReduction&);

}  // namespace uot
