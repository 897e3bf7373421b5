#include "core/transport/log_solver.h"

#include <omp.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <limits>
#include <sstream>
#include <vector>

#include "core/transport/kernel_matrix.h"
#include "core/transport/pass_reductions.h"
#include "core/transport/row_kernels.h"
#include "core/transport/scaling_loop.h"
#include "core/transport/solve_setup.h"
#include "core/transport/subnormal_flush.h"
#include "core/transport/uot_error.h"

namespace uot {

namespace {

constexpr double kNegInf = -std::numeric_limits<double>::infinity();
constexpr std::size_t kParallelThreshold = 1 << 13;
constexpr std::size_t kCancelPollRows = 16;

// log K_ij = -C_ij / eps + log R_ij into out (rows x cols). Validates every cost
// entry like buildKernelMatrix (same message).
template <typename T>
void buildLogKernel(const UotProblem& problem, T* out, std::size_t ld, int threads)
{
    const std::size_t rows = problem.rows(), cols = problem.cols();
    // Very negative but finite: pads and entries beyond the range of T
    // contribute exp(...) = 0 without producing inf - inf = NaN.
    const double floor = static_cast<double>(std::numeric_limits<T>::lowest());
    const double invEps = 1.0 / problem.eps;
    const bool product = problem.reference == ReferenceMeasure::Product;
    const std::size_t noBad = std::numeric_limits<std::size_t>::max();
    std::size_t firstBad = noBad;
#pragma omp parallel num_threads(resolveThreadCount(threads))
    {
        std::vector<double> cost(cols);
        std::size_t localBad = noBad;
#pragma omp for schedule(static)
        for (std::ptrdiff_t si = 0; si < static_cast<std::ptrdiff_t>(rows); ++si) {
            const std::size_t i = static_cast<std::size_t>(si);
            fillCostRow(problem.cost, i, cost.data());
            const double logA = product ? std::log(problem.a[i]) : 0.0;
            T* row = out + i * ld;
            for (std::size_t j = 0; j < cols; ++j) {
                const double c = cost[j];
                if (!(c >= 0.0) || !std::isfinite(c)) {
                    localBad = std::min(localBad, i * cols + j);
                    row[j] = T(0);
                    continue;
                }
                row[j] = static_cast<T>(std::max(floor, -c * invEps + (product ? logA + std::log(problem.b[j]) : 0.0)));
            }
            for (std::size_t j = cols; j < ld; ++j) row[j] = static_cast<T>(floor);
        }
#pragma omp critical(uot_log_kernel_merge)
        firstBad = std::min(firstBad, localBad);
    }
    if (firstBad != noBad) {
        const std::size_t i = firstBad / cols, j = firstBad % cols;
        std::vector<double> cost(cols);
        fillCostRow(problem.cost, i, cost.data());
        std::ostringstream msg;
        msg << "cost matrix entry (" << i << ", " << j << ") is " << cost[j] << ": costs must be finite and >= 0";
        throw Error(ErrorCode::InvalidArgument, msg.str());
    }
}

template <typename T>
class LogPasses final : public ScalingPasses {
public:
    LogPasses(const UotProblem& problem, const T* logK, std::size_t ld, int threads, const SolveControl& control)
        : m_k(logK), m_m(problem.rows()), m_n(problem.cols()), m_ld(ld), m_threads(resolveThreadCount(threads)),
          m_fa(problem.exponentA()), m_fb(problem.exponentB()), m_control(control),
          m_kernels(kernels::rowKernels<T>()), m_sums(m_threads)
    {
        m_colMax.resize(static_cast<std::size_t>(m_threads) * ld);
        m_colSum.resize(static_cast<std::size_t>(m_threads) * ld);
        m_logV.resize(ld);
        for (std::size_t j = 0; j < ld; ++j) m_logV.data()[j] = 0.0;
        m_logA.resize(m_m);
        m_logB.resize(m_n);
        for (std::size_t i = 0; i < m_m; ++i) m_logA[i] = std::log(problem.a[i]);
        for (std::size_t j = 0; j < m_n; ++j) m_logB[j] = std::log(problem.b[j]);
        m_a = problem.a;
        m_b = problem.b;
        m_parallel = m_m * m_n >= kParallelThreshold;
    }

    PassStatus iterate(const double* logU, const double* logV, double* logUNew, double* logVNew, bool rowMarginal,
                       bool colMarginal, double& errA, double& errB) override
    {
        const std::size_t m = m_m, n = m_n, ld = m_ld;
        const T* k = m_k;
        double* lv = m_logV.data();
        for (std::size_t j = 0; j < n; ++j) lv[j] = logV[j];
        double* colMax = m_colMax.data();
        double* colSum = m_colSum.data();
        ThreadSums* sums = m_sums.data();
        const auto& kern = m_kernels;
        const std::atomic<bool>* cancel = m_control.cancel;
        const double omega = m_omega;
        std::atomic<bool> cancelled{false};
        int used = 1;
#pragma omp parallel num_threads(m_threads) if (m_parallel)
        {
            const int t = omp_get_thread_num();
            const int nt = omp_get_num_threads();
            if (t == 0) used = nt;
            ThreadSums local;
            double* cm = colMax + static_cast<std::size_t>(t) * ld;
            double* cs = colSum + static_cast<std::size_t>(t) * ld;
            for (std::size_t j = 0; j < ld; ++j) {
                cm[j] = kNegInf;
                cs[j] = 0;
            }
            const std::size_t r0 = splitBegin(m, nt, t), r1 = splitBegin(m, nt, t + 1);
            for (std::size_t i = r0; i < r1; ++i) {
                if ((i - r0) % kCancelPollRows == 0 && cancel) {
                    if (cancel->load(std::memory_order_relaxed)) cancelled.store(true, std::memory_order_relaxed);
                    if (cancelled.load(std::memory_order_relaxed)) break;
                }
                const T* row = k + i * ld;
                const double lse = kern.rowLogSumExp(row, lv, ld);
                if (rowMarginal) local.errA += std::abs(std::exp(logU[i] + lse) - m_a[i]);
                const double plain = m_fa * (m_logA[i] - lse);
                const double lu = omega == 1.0 ? plain : (1.0 - omega) * logU[i] + omega * plain;
                logUNew[i] = lu;
                if (!std::isfinite(lu)) {
                    local.bad = true;
                    continue;
                }
                // Column log-sum-exp partials with an online max.
                kern.columnLogSumExp(row, lu, cm, cs, ld);
            }
#pragma omp barrier
            if (!cancelled.load(std::memory_order_relaxed)) {
                const std::size_t c1 = splitBeginAligned(n, nt, t + 1, 8);
                for (std::size_t j = splitBeginAligned(n, nt, t, 8); j < c1; ++j) {
                    double mx = kNegInf;
                    for (int p = 0; p < nt; ++p) mx = std::max(mx, colMax[static_cast<std::size_t>(p) * ld + j]);
                    double s = 0;
                    for (int p = 0; p < nt; ++p) {
                        const double pm = colMax[static_cast<std::size_t>(p) * ld + j];
                        if (pm > kNegInf) s += colSum[static_cast<std::size_t>(p) * ld + j] * std::exp(pm - mx);
                    }
                    const double lse = mx + std::log(s);
                    const double lvNew = m_fb * (m_logB[j] - lse);
                    logVNew[j] = lvNew;
                    if (!std::isfinite(lvNew)) local.bad = true;
                    if (colMarginal) local.errB += std::abs(std::exp(lvNew + lse) - m_b[j]);
                }
            }
            sums[t] = local;
        }
        if (cancelled.load()) return PassStatus::Cancelled;
        return mergeThreadSums(sums, used, errA, errB);
    }

    bool supportsRelaxation() const override { return true; }
    void setRowRelaxation(double omega) override { m_omega = omega; }

    double rowMarginalError(const double* logU, const double* logV) override
    {
        double* lv = m_logV.data();
        for (std::size_t j = 0; j < m_n; ++j) lv[j] = logV[j];
        std::vector<double> perRow(m_m);
        const std::ptrdiff_t m = static_cast<std::ptrdiff_t>(m_m);
#pragma omp parallel for num_threads(m_threads) if (m_parallel) schedule(static)
        for (std::ptrdiff_t si = 0; si < m; ++si) {
            const std::size_t i = static_cast<std::size_t>(si);
            const double lse = m_kernels.rowLogSumExp(m_k + i * m_ld, lv, m_ld);
            perRow[i] = std::abs(std::exp(logU[i] + lse) - m_a[i]);
        }
        double err = 0;
        for (double e : perRow) err += e;
        return err;
    }

private:
    const T* m_k;
    std::size_t m_m, m_n, m_ld;
    int m_threads;
    double m_fa, m_fb;
    const SolveControl& m_control;
    const kernels::RowKernels<T>& m_kernels;
    std::vector<ThreadSums> m_sums;
    AlignedBuffer<double> m_colMax, m_colSum, m_logV;
    std::vector<double> m_logA, m_logB;
    std::span<const double> m_a, m_b;
    bool m_parallel = true;
    double m_omega = 1.0;  // over-relaxation of the row half-step
};

template <typename T>
SolveResult solveLog(const UotProblem& problem, const SolveOptions& options, const SolveControl& control,
                     AlignedBuffer<T>& logK, std::uint64_t bytes)
{
    using Clock = std::chrono::steady_clock;
    const auto setupStart = Clock::now();
    validateSolveOptions(problem, options);
    SolveResult result;
    const SubnormalFlushScope flushSubnormals(options.threads);
    result.solver = "log";
    result.mode = toString(options.mode);
    result.bytesPerIteration = bytes;
    const std::size_t ld = kernels::paddedLength<T>(problem.cols());
    logK.resize(problem.rows() * ld);
    buildLogKernel<T>(problem, logK.data(), ld, options.threads);
    std::vector<double> logU = initialLogScaling(options.warmU, options.warmLogU, problem.rows());
    std::vector<double> logV = initialLogScaling(options.warmV, options.warmLogV, problem.cols());
    LogPasses<T> passes(problem, logK.data(), ld, options.threads, control);
    ScalingLoopSetup setup;
    setup.logDomain = true;
    setup.fp32 = sizeof(T) == 4;
    setup.bytesPerIteration = bytes;
    result.timings.setupSeconds = std::chrono::duration<double>(Clock::now() - setupStart).count();
    runScalingLoop(problem, options, control, passes, setup, logU, logV, result);
    finishResultFromLogs(problem, options, std::move(logU), std::move(logV), result);
    return result;
}

}  // namespace

std::uint64_t LogDomainSolver::bytesPerIteration(std::size_t rows, std::size_t cols, Precision precision) const
{
    return static_cast<std::uint64_t>(rows) * cols * (precision == Precision::Fp32 ? 4 : 8);
}

SolveResult LogDomainSolver::solve(const UotProblem& problem, const SolveOptions& options, const SolveControl& control)
{
    const std::uint64_t bytes = bytesPerIteration(problem.rows(), problem.cols(), options.precision);
    if (options.precision == Precision::Fp32) {
        m_k64.release();
        return solveLog<float>(problem, options, control, m_k32, bytes);
    }
    m_k32.release();
    return solveLog<double>(problem, options, control, m_k64, bytes);
}

}  // namespace uot
