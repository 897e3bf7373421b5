#include "core/transport/log_solver.h"

#include <omp.h>

#include <algorithm>
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
#include "core/transport/traffic_model.h"
#include "core/transport/uot_error.h"

namespace uot {

namespace {

constexpr double kNegInf = -std::numeric_limits<double>::infinity();
constexpr std::size_t kParallelThreshold = 1 << 13;
constexpr std::size_t kCancelPollRows = 16;
// After an absorbed pass had to be redone exactly, the next 2^k passes (k the
// number of such failures in a row, at most kMaxBackoffShift) go straight to the
// exact pass: a start far from the solution (cold, tiny eps) may fail for a while.
constexpr int kMaxBackoffShift = 6;

// Limits of the absorbed pass for storage T (see LogPasses below).
template <typename T>
struct AbsorbLimits;
template <>
struct AbsorbLimits<float> {
    static constexpr double drift = 10.0;      // re-absorb when |log u - absorbed| or |log v - absorbed| exceeds it
    static constexpr double step = 20.0;       // |new log u - absorbed| allowed within a pass
    static constexpr double relative = 0x1p-40;  // flushed share of a row or column sum allowed
};
template <>
struct AbsorbLimits<double> {
    static constexpr double drift = 100.0;
    static constexpr double step = 200.0;
    static constexpr double relative = 0x1p-64;
};

// The first invalid cost entry (negative or not finite) of a row as a flat index
// (i * cols + j), or noBad. Checked while a row is built, reported after the
// parallel region.
constexpr std::size_t kNoBad = std::numeric_limits<std::size_t>::max();

void throwBadCost(const UotProblem& problem, std::size_t flat)
{
    const std::size_t cols = problem.cols();
    const std::size_t i = flat / cols, j = flat % cols;
    std::vector<double> cost(cols);
    fillCostRow(problem.cost, i, cost.data());
    std::ostringstream msg;
    msg << "cost matrix entry (" << i << ", " << j << ") is " << cost[j] << ": costs must be finite and >= 0";
    throw Error(ErrorCode::InvalidArgument, msg.str());
}

// Row i of log K_ij = -C_ij / eps + log R_ij, in float64, into out[0 .. cols);
// out[cols .. ld) = the most negative double (a pad that adds exp(...) = 0).
// Returns the first invalid entry's flat index, or kNoBad (its out value is then 0).
#if UOT_HAVE_X86_KERNELS && defined(__GNUC__)
__attribute__((target_clones("avx512f", "avx2", "default")))  // as fillCostRow (kernel_matrix.cpp)
#endif
std::size_t logKernelRow(const UotProblem& problem, std::span<const double> logB, std::size_t i, double* out,
                         std::size_t ld)
{
    const std::size_t cols = problem.cols();
    fillCostRow(problem.cost, i, out);
    const double invEps = 1.0 / problem.eps;
    const bool product = !logB.empty();
    const double logA = product ? std::log(problem.a[i]) : 0.0;
    constexpr double kMaxCost = std::numeric_limits<double>::max();
    // Branch-free (vectorises); an invalid entry (negative, NaN, inf) is found again below.
    unsigned char invalid = 0;
    for (std::size_t j = 0; j < cols; ++j) {
        const double c = out[j];
        const bool valid = c >= 0.0 && c <= kMaxCost;
        invalid |= static_cast<unsigned char>(!valid);
        const double x = -c * invEps + (product ? logA + logB[j] : 0.0);
        out[j] = valid ? x : 0.0;
    }
    for (std::size_t j = cols; j < ld; ++j) out[j] = std::numeric_limits<double>::lowest();
    if (!invalid) return kNoBad;
    std::vector<double> cost(cols);
    fillCostRow(problem.cost, i, cost.data());
    for (std::size_t j = 0; j < cols; ++j)
        if (!(cost[j] >= 0.0 && cost[j] <= kMaxCost)) return i * cols + j;
    return kNoBad;
}

// The passes of the log-domain variant. Scalings are log u, log v (float64).
//
// Most passes are multiplicative passes over the kernel with the potentials
// absorbed (the stabilisation of Schmitzer 2019, POT's sinkhorn_stabilized):
//   Kt_ij = exp(log K_ij + p_i + q_j),   stored in T,
// with p, q the log-scalings at the last absorption. A pass then runs the fused
// pass (one read of Kt, one multiply-add per entry for the row sums and one for
// the column sums) on u~ = exp(log u - p), v~ = exp(log v - q), and turns the
// sums back into log-sum-exps: LSE_j(log K_ij + log v_j) = log((Kt v~)_i) - p_i.
// No exp per entry, so it runs at the speed of the multiplicative fused pass.
//
// It is exact: Kt entries below the smallest normal number of T are stored as 0
// and products below it are flushed, so each dropped term is below
// T_min * max(v~, 1) (rows) or T_min * max(u~, 1) (columns). The pass keeps
// |log v - q| <= drift (else it absorbs again first) and |new log u - p| <= step,
// and accepts its result only when every row sum and column sum exceeds the
// sum of all its dropped terms by the factor 1 / relative; otherwise (and when
// absorbing would overflow T) the same iteration runs as the exact log-sum-exp
// pass, in float64 from the costs, with three exps per entry. Starts near the
// solution (warm starts, the continuation of a multiplicative solve) thus run
// on the absorbed pass throughout.
template <typename T>
class LogPasses final : public ScalingPasses {
public:
    using Limits = AbsorbLimits<T>;

    LogPasses(const UotProblem& problem, T* absorbed, std::size_t ld, int threads, const SolveControl& control)
        : m_problem(problem), m_kt(absorbed), m_m(problem.rows()), m_n(problem.cols()), m_ld(ld),
          m_ld64(kernels::paddedLength<double>(problem.cols())), m_threads(resolveThreadCount(threads)),
          m_fa(problem.exponentA()), m_fb(problem.exponentB()), m_control(control),
          m_kernels(kernels::rowKernels<T>()), m_kernels64(kernels::rowKernels<double>()), m_sums(m_threads)
    {
        m_colMax.resize(static_cast<std::size_t>(m_threads) * ld);
        m_colSum.resize(static_cast<std::size_t>(m_threads) * ld);
        m_partials.resize(static_cast<std::size_t>(m_threads) * ld);
        m_logV.resize(ld);
        m_vt.resize(ld);
        for (std::size_t j = 0; j < ld; ++j) {
            m_logV.data()[j] = 0.0;
            m_vt.data()[j] = T(0);
        }
        m_logA.resize(m_m);
        m_logB.resize(m_n);
        for (std::size_t i = 0; i < m_m; ++i) m_logA[i] = std::log(problem.a[i]);
        for (std::size_t j = 0; j < m_n; ++j) m_logB[j] = std::log(problem.b[j]);
        if (problem.reference == ReferenceMeasure::Product) m_logBRef = m_logB;
        m_a = problem.a;
        m_b = problem.b;
        m_absU.assign(m_m, 0.0);
        m_absV.assign(m_n, 0.0);
        m_parallel = m_m * m_n >= kParallelThreshold;
        const double tmin = static_cast<double>(std::numeric_limits<T>::min());
        m_rowFloor = static_cast<double>(m_n) * tmin * (std::exp(Limits::drift) + 1.0) / Limits::relative;
        m_colFloor = static_cast<double>(m_m) * tmin * (std::exp(Limits::step) + 1.0) / Limits::relative;
    }

    // Absorbs (logU, logV) into the stored kernel, validating every cost entry
    // (throws uot::Error(InvalidArgument) naming the first bad one). Returns
    // false, leaving no absorbed kernel, when an entry would overflow T.
    bool absorb(const double* logU, const double* logV)
    {
        const std::size_t m = m_m, n = m_n, ld = m_ld;
        const double logMax = std::log(static_cast<double>(std::numeric_limits<T>::max())) - 1.0;
        const T tmin = std::numeric_limits<T>::min();
        std::size_t firstBad = kNoBad;
        bool overflow = false;
#pragma omp parallel num_threads(m_threads) if (m_parallel)
        {
            std::vector<double> row(std::max(m_ld64, n));
            std::size_t localBad = kNoBad;
            bool localOverflow = false;
#pragma omp for schedule(static)
            for (std::ptrdiff_t si = 0; si < static_cast<std::ptrdiff_t>(m); ++si) {
                const std::size_t i = static_cast<std::size_t>(si);
                localBad = std::min(localBad, logKernelRow(m_problem, m_logBRef, i, row.data(), n));
                const double p = logU[i];
                T* out = m_kt + i * ld;
                double* x = row.data();
                unsigned char rowOverflow = 0;  // branch-free, so that the loop vectorises
                for (std::size_t j = 0; j < n; ++j) {
                    const double y = x[j] + p + logV[j];
                    rowOverflow |= static_cast<unsigned char>(!(y < logMax));
                    x[j] = y < logMax ? y : logMax;
                }
                localOverflow = localOverflow || rowOverflow;
                m_kernels.expBatch(x, x, n);
                for (std::size_t j = 0; j < n; ++j) {
                    const T k = static_cast<T>(x[j]);
                    out[j] = k < tmin ? T(0) : k;
                }
                for (std::size_t j = n; j < ld; ++j) out[j] = T(0);
            }
#pragma omp critical(uot_log_absorb_merge)
            {
                firstBad = std::min(firstBad, localBad);
                overflow = overflow || localOverflow;
            }
        }
        if (firstBad != kNoBad) throwBadCost(m_problem, firstBad);
        m_absorbed = !overflow;
        if (m_absorbed) {
            std::copy(logU, logU + m, m_absU.begin());
            std::copy(logV, logV + n, m_absV.begin());
        }
        ++m_absorptions;
        return m_absorbed;
    }

    PassStatus iterate(const double* logU, const double* logV, double* logUNew, double* logVNew, bool rowMarginal,
                       bool colMarginal, double& errA, double& errB) override
    {
        if (m_backoff > 0) {
            --m_backoff;
            return exactPass(logU, logV, logUNew, logVNew, rowMarginal, colMarginal, errA, errB);
        }
        if ((!m_absorbed || !withinDrift(logU, logV)) && !absorb(logU, logV)) {
            noteFailure();
            return exactPass(logU, logV, logUNew, logVNew, rowMarginal, colMarginal, errA, errB);
        }
        bool reliable = true;
        const PassStatus status =
            absorbedPass(logU, logV, logUNew, logVNew, rowMarginal, colMarginal, errA, errB, reliable);
        if (reliable) {
            m_failures = 0;
            return status;
        }
        noteFailure();
        return exactPass(logU, logV, logUNew, logVNew, rowMarginal, colMarginal, errA, errB);
    }

    bool supportsRelaxation() const override { return true; }
    void setRowRelaxation(double omega) override { m_omega = omega; }

    double rowMarginalError(const double* logU, const double* logV) override
    {
        std::vector<double> perRow(m_m);
        const std::ptrdiff_t m = static_cast<std::ptrdiff_t>(m_m);
        if (m_absorbed && withinDrift(logU, logV)) {
            const T* vt = loadAbsorbedV(logV);
            bool reliable = true;
#pragma omp parallel for num_threads(m_threads) if (m_parallel) schedule(static) reduction(&& : reliable)
            for (std::ptrdiff_t si = 0; si < m; ++si) {
                const std::size_t i = static_cast<std::size_t>(si);
                const double r = static_cast<double>(m_kernels.dot(m_kt + i * m_ld, vt, m_ld));
                reliable = reliable && std::isfinite(r) && r >= m_rowFloor;
                perRow[i] = std::abs(std::exp(logU[i] - m_absU[i]) * r - m_a[i]);
            }
            if (reliable) return sumInOrder(perRow);
        }
        double* lv = m_logV.data();
        for (std::size_t j = 0; j < m_n; ++j) lv[j] = logV[j];
#pragma omp parallel num_threads(m_threads) if (m_parallel)
        {
            AlignedBuffer<double> row;
            row.resize(m_ld64);
#pragma omp for schedule(static)
            for (std::ptrdiff_t si = 0; si < m; ++si) {
                const std::size_t i = static_cast<std::size_t>(si);
                logKernelRow(m_problem, m_logBRef, i, row.data(), m_ld64);
                const double lse = m_kernels64.rowLogSumExp(row.data(), lv, m_ld64);
                perRow[i] = std::abs(std::exp(logU[i] + lse) - m_a[i]);
            }
        }
        return sumInOrder(perRow);
    }

    int absorptions() const { return m_absorptions; }
    int exactPasses() const { return m_exactPasses; }

private:
    static double sumInOrder(const std::vector<double>& x)
    {
        double s = 0;
        for (double e : x) s += e;
        return s;
    }

    bool withinDrift(const double* logU, const double* logV) const
    {
        for (std::size_t i = 0; i < m_m; ++i)
            if (!(std::abs(logU[i] - m_absU[i]) <= Limits::drift)) return false;
        for (std::size_t j = 0; j < m_n; ++j)
            if (!(std::abs(logV[j] - m_absV[j]) <= Limits::drift)) return false;
        return true;
    }

    void noteFailure()
    {
        m_absorbed = false;
        m_backoff = (1 << std::min(m_failures, kMaxBackoffShift)) - 1;
        ++m_failures;
    }

    // v~_j = exp(log v_j - q_j) rounded to T (pads 0).
    const T* loadAbsorbedV(const double* logV)
    {
        T* vt = m_vt.data();
        for (std::size_t j = 0; j < m_n; ++j) vt[j] = static_cast<T>(std::exp(logV[j] - m_absV[j]));
        return vt;
    }

    // The iteration on the absorbed kernel (class comment). Sets reliable to
    // false when its result must not be used.
    PassStatus absorbedPass(const double* logU, const double* logV, double* logUNew, double* logVNew,
                            bool rowMarginal, bool colMarginal, double& errA, double& errB, bool& reliable)
    {
        const T* vt = loadAbsorbedV(logV);
        const T* k = m_kt;
        T* partials = m_partials.data();
        const std::size_t m = m_m, n = m_n, ld = m_ld;
        const auto& kern = m_kernels;
        const double omega = m_omega;
        ThreadSums* sums = m_sums.data();
        std::atomic<bool> unreliable{false};
        int used = 1;
#pragma omp parallel num_threads(m_threads) if (m_parallel)
        {
            const int t = omp_get_thread_num();
            const int nt = omp_get_num_threads();
            if (t == 0) used = nt;
            ThreadSums local;
            bool localUnreliable = false;
            T* s = partials + static_cast<std::size_t>(t) * ld;
            for (std::size_t j = 0; j < ld; ++j) s[j] = T(0);
            const std::size_t r0 = splitBegin(m, nt, t), r1 = splitBegin(m, nt, t + 1);
            fusedRowPass<T>(kern, k, ld, r0, r1, vt, s, [&](RowGroup g, std::size_t stride, const T* rt, T* ut) {
                for (std::size_t q = 0; q < g.count; ++q) {
                    const std::size_t i = g.first + q * stride;
                    const double r = static_cast<double>(rt[q]);
                    if (!(std::isfinite(r) && r >= m_rowFloor)) {
                        localUnreliable = true;
                        ut[q] = T(0);
                        logUNew[i] = logU[i];
                        continue;
                    }
                    if (rowMarginal) local.errA += std::abs(std::exp(logU[i] - m_absU[i]) * r - m_a[i]);
                    const double lse = std::log(r) - m_absU[i];
                    const double plain = m_fa * (m_logA[i] - lse);
                    const double lu = omega == 1.0 ? plain : (1.0 - omega) * logU[i] + omega * plain;
                    logUNew[i] = lu;
                    const double d = lu - m_absU[i];
                    if (!(std::abs(d) <= Limits::step)) {
                        localUnreliable = true;
                        ut[q] = T(0);
                        continue;
                    }
                    ut[q] = static_cast<T>(std::exp(d));
                }
            });
            if (localUnreliable) unreliable.store(true, std::memory_order_relaxed);
#pragma omp barrier
            if (!unreliable.load(std::memory_order_relaxed)) {
                const std::size_t line = kernels::kAlignBytes / sizeof(T);
                const std::size_t c1 = splitBeginAligned(n, nt, t + 1, line);
                for (std::size_t j = splitBeginAligned(n, nt, t, line); j < c1; ++j) {
                    double c = 0;
                    for (int p = 0; p < nt; ++p) c += static_cast<double>(partials[static_cast<std::size_t>(p) * ld + j]);
                    if (!(std::isfinite(c) && c >= m_colFloor)) {
                        localUnreliable = true;
                        break;
                    }
                    const double lse = std::log(c) - m_absV[j];
                    const double lvNew = m_fb * (m_logB[j] - lse);
                    logVNew[j] = lvNew;
                    if (colMarginal) local.errB += std::abs(std::exp(lvNew + lse) - m_b[j]);
                }
                if (localUnreliable) unreliable.store(true, std::memory_order_relaxed);
            }
            sums[t] = local;
        }
        reliable = !unreliable.load();
        if (!reliable) return PassStatus::NotFinite;
        return mergeThreadSums(sums, used, errA, errB);
    }

    // The same iteration in exact log-sum-exp form, float64 from the costs: each
    // row's LSE with its max, then, with the new log u_i, per-thread column LSE
    // partials kept with an online max, merged after the pass. Polls the cancel
    // flag within the pass (three exps per entry: it is slow).
    PassStatus exactPass(const double* logU, const double* logV, double* logUNew, double* logVNew, bool rowMarginal,
                         bool colMarginal, double& errA, double& errB)
    {
        ++m_exactPasses;
        const std::size_t m = m_m, n = m_n, ld = m_ld, ld64 = m_ld64;
        double* lv = m_logV.data();
        for (std::size_t j = 0; j < n; ++j) lv[j] = logV[j];
        double* colMax = m_colMax.data();
        double* colSum = m_colSum.data();
        ThreadSums* sums = m_sums.data();
        const auto& kern = m_kernels64;
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
            AlignedBuffer<double> row;
            row.resize(ld64);
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
                logKernelRow(m_problem, m_logBRef, i, row.data(), ld64);
                const double lse = kern.rowLogSumExp(row.data(), lv, ld64);
                if (rowMarginal) local.errA += std::abs(std::exp(logU[i] + lse) - m_a[i]);
                const double plain = m_fa * (m_logA[i] - lse);
                const double lu = omega == 1.0 ? plain : (1.0 - omega) * logU[i] + omega * plain;
                logUNew[i] = lu;
                if (!std::isfinite(lu)) {
                    local.bad = true;
                    continue;
                }
                kern.columnLogSumExp(row.data(), lu, cm, cs, ld64);
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

    const UotProblem& m_problem;
    T* m_kt;  // the absorbed kernel, rows x ld
    std::size_t m_m, m_n, m_ld, m_ld64;
    int m_threads;
    double m_fa, m_fb;
    const SolveControl& m_control;
    const kernels::RowKernels<T>& m_kernels;
    const kernels::RowKernels<double>& m_kernels64;
    std::vector<ThreadSums> m_sums;
    AlignedBuffer<double> m_colMax, m_colSum, m_logV;
    AlignedBuffer<T> m_partials, m_vt;
    std::vector<double> m_logA, m_logB;
    std::vector<double> m_logBRef;  // log b_j for the product reference measure, else empty
    std::vector<double> m_absU, m_absV;  // the potentials absorbed into m_kt (p, q)
    std::span<const double> m_a, m_b;
    double m_rowFloor = 0, m_colFloor = 0;
    bool m_absorbed = false;
    int m_failures = 0, m_backoff = 0;
    int m_absorptions = 0, m_exactPasses = 0;
    bool m_parallel = true;
    double m_omega = 1.0;  // over-relaxation of the row half-step
};

template <typename T>
SolveResult solveLog(const UotProblem& problem, const SolveOptions& options, const SolveControl& control,
                     AlignedBuffer<T>& absorbed, std::uint64_t bytes)
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
    absorbed.resize(problem.rows() * ld);
    std::vector<double> logU = initialLogScaling(options.warmU, options.warmLogU, problem.rows());
    std::vector<double> logV = initialLogScaling(options.warmV, options.warmLogV, problem.cols());
    LogPasses<T> passes(problem, absorbed.data(), ld, options.threads, control);
    // The first absorption also validates the costs (before any iteration).
    passes.absorb(logU.data(), logV.data());
    ScalingLoopSetup setup;
    setup.logDomain = true;
    setup.fp32 = sizeof(T) == 4;
    setup.bytesPerIteration = bytes;
    result.timings.setupSeconds = std::chrono::duration<double>(Clock::now() - setupStart).count();
    runScalingLoop(problem, options, control, passes, setup, logU, logV, result);
    result.absorptions = passes.absorptions();
    result.exactPasses = passes.exactPasses();
    finishResultFromLogs(problem, options, std::move(logU), std::move(logV), result);
    return result;
}

}  // namespace

std::uint64_t LogDomainSolver::bytesPerIteration(std::size_t rows, std::size_t cols, Precision precision) const
{
    return matrixTrafficBytes(sweeps::kOneRead, entryBytesFor(precision), rows, cols);
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
