#include "core/transport/mapuot_solver.h"

#include <omp.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "core/transport/multiplicative_solve.h"
#include "core/transport/pass_reductions.h"
#include "core/transport/row_groups.h"
#include "core/transport/row_kernels.h"
#include "core/transport/traffic_model.h"

namespace uot {

namespace {

constexpr std::size_t kParallelThreshold = 1 << 15;

// The matrix holds a plan: A = diag(uHeld) K diag(vHeld), the scalings its last
// pass wrote. A pass starts from any (u, v) the loop hands it: the row factors
// gamma_i = u_i / uHeld_i and the column factors beta_j = v_j / vHeld_j bring A to
// the plan of (u, v) on the fly, inside the same read and write (A_ij beta_j gamma_i
// alpha_i). So the loop may change u, v between passes at no cost: the TI shifts, the
// over-relaxed column step, and the undo of a step the safeguard rejects
// (docs/TIME_TO_SOLUTION.md, "mapuot"). In the plain iteration gamma_i = 1 and beta_j
// is the last pass's column factor, as before.
template <typename T>
class MapUotPasses final : public ScalingPasses {
public:
    MapUotPasses(const UotProblem& problem, T* a, std::size_t ld, const std::vector<double>& u0, int threads)
        : m_A(a), m_m(problem.rows()), m_n(problem.cols()), m_ld(ld), m_threads(resolveThreadCount(threads)),
          m_a(problem.a), m_b(problem.b), m_fa(problem.exponentA()), m_fb(problem.exponentB()),
          m_kernels(kernels::rowKernels<T>()), m_sums(m_threads)
    {
        m_parallel = m_m * m_ld >= kParallelThreshold;
        m_beta.resize(ld);
        T* beta = m_beta.data();
        for (std::size_t j = 0; j < ld; ++j) beta[j] = T(0);  // padding stays 0
        // Warm start: A = diag(u0) K (a set-up pass, not an iteration); v0 is applied
        // by the first pass (beta = v0 / 1).
        m_uHeld.resize(m_m);
        for (std::size_t i = 0; i < m_m; ++i) m_uHeld[i] = static_cast<double>(static_cast<T>(u0[i]));
        m_vHeld.assign(m_n, 1.0);
        m_partials.resize(static_cast<std::size_t>(m_threads) * ld);
        m_col.resize(ld);
        m_q1.resize(ld);
        m_q2.resize(ld);
        bool warmU = false;
        for (double x : u0) warmU = warmU || x != 1.0;
        if (warmU) {
            const std::ptrdiff_t m = static_cast<std::ptrdiff_t>(m_m);
#pragma omp parallel for num_threads(m_threads) if (m_parallel) schedule(static)
            for (std::ptrdiff_t si = 0; si < m; ++si) {
                T* row = m_A + static_cast<std::size_t>(si) * m_ld;
                const T f = static_cast<T>(u0[static_cast<std::size_t>(si)]);
                for (std::size_t j = 0; j < m_ld; ++j) row[j] *= f;
            }
        }
    }

    PassStatus iterate(const double* u, const double* v, double* uNew, double* vNew, bool rowMarginal,
                       bool colMarginal, double& errA, double& errB) override
    {
        T* A = m_A;
        T* beta = m_beta.data();
        T* partials = m_partials.data();
        double* uHeld = m_uHeld.data();
        double* vHeld = m_vHeld.data();
        const std::size_t m = m_m, n = m_n, ld = m_ld;
        const double fa = m_fa, fb = m_fb, w = m_omega;
        // Over-relaxed rows: u_i^(1 - w) ((a_i / (K v)_i)^fa)^w = u_i alpha_i^w (alpha: the plain factor).
        const double expRatio = fa * w, expU = (fa - 1.0) * w;
        const auto& kern = m_kernels;
        const bool pipelined = kernels::pipelinedRowsPreferred();
        ThreadSums* sums = m_sums.data();
        double* col = m_col.data();
        double* q1 = m_q1.data();
        double* q2 = m_q2.data();
        int used = 1;
#pragma omp parallel num_threads(m_threads) if (m_parallel)
        {
            const int t = omp_get_thread_num();
            const int nt = omp_get_num_threads();
            if (t == 0) used = nt;
            ThreadSums local;
            // The column factors of (u, v) (see the class comment).
#pragma omp for schedule(static)
            for (std::ptrdiff_t sj = 0; sj < static_cast<std::ptrdiff_t>(n); ++sj) {
                const std::size_t j = static_cast<std::size_t>(sj);
                beta[j] = static_cast<T>(v[j] / vHeld[j]);
            }
            T* c = partials + static_cast<std::size_t>(t) * ld;
            for (std::size_t j = 0; j < ld; ++j) c[j] = T(0);
            // Rows in groups (row_groups.h): row sums of a group, its factors
            // alpha_i = ((a_i / r_i)^fa * u_i^(fa - 1))^w from vector pow calls, then the
            // in-place rescaling of its rows by gamma_i alpha_i (in cache, back to
            // front, written back) while the next group is prefetched; or, where it
            // measured faster (Intel Xeon), the row sums of group g+1 interleaved with
            // the rescaling of group g (same bits). See pipelinedRowsPreferred().
            const std::size_t r0 = splitBegin(m, nt, t), r1 = splitBegin(m, nt, t + 1);
            const RowGroups groups = pipelined ? RowGroups::adjacent(r0, r1, kernels::kMaxInterleavedRows)
                                               : RowGroups::forRowLength(r0, r1, ld * sizeof(T));
            const std::size_t stride = groups.stride(), rowStride = stride * ld;
            constexpr std::size_t kMax = kernels::kMaxGroupRows;
            double x[kMax], p1[kMax], p2[kMax], uOld[kMax], gamma[kMax];
            T rt[kMax];
            auto finishGroup = [&](RowGroup g, T* alphaT) {
                for (std::size_t q = 0; q < g.count; ++q) {
                    const std::size_t i = g.first + q * stride;
                    gamma[q] = u[i] / uHeld[i];
                    const double r = gamma[q] * static_cast<double>(rt[q]);  // row sum of the plan of (u, v)
                    if (rowMarginal) local.errA += std::abs(r - m_a[i]);
                    x[q] = m_a[i] / r;
                    uOld[q] = u[i];
                }
                if (expRatio != 1.0) kern.powBatch(x, expRatio, p1, g.count);
                if (expU != 0.0) kern.powBatch(uOld, expU, p2, g.count);
                for (std::size_t q = 0; q < g.count; ++q) {
                    const std::size_t i = g.first + q * stride;
                    const double alpha = (expRatio == 1.0 ? x[q] : p1[q]) * (expU == 0.0 ? 1.0 : p2[q]);
                    const double ui = uOld[q] * alpha;
                    uNew[i] = ui;
                    alphaT[q] = static_cast<T>(gamma[q] * alpha);
                    if (!(alphaT[q] > T(0)) || !std::isfinite(alphaT[q]) || !(ui > 0) || !std::isfinite(ui)) {
                        // Unusable: the row keeps the plan of (u, v), so that the loop may go on from (u, v).
                        local.bad = true;
                        alphaT[q] = static_cast<T>(gamma[q]);
                        uHeld[i] = uOld[q];
                    } else {
                        uHeld[i] = ui;
                    }
                }
            };
            // The cache-resident work: A_ij <- A_ij beta_j gamma_i alpha_i for a group
            // (written back), and its column sums.
            runGroupPipeline<T>(
                groups, pipelined,
                [&](RowGroup g) { kern.dotRows(A + g.first * ld, rowStride, g.count, beta, ld, rt); }, finishGroup,
                [&](RowGroup g, const T* alpha, RowGroup after) {
                    kern.scaleAccumulateRows(A + g.first * ld, rowStride, g.count, beta, alpha, c, ld,
                                             A + after.first * ld);
                },
                [&](RowGroup next, RowGroup cur, const T* alpha) {
                    kern.mapRows(A + next.first * ld, next.count, A + cur.first * ld, cur.count, rowStride, beta,
                                 alpha, c, ld, rt);
                });
#pragma omp barrier
            const std::size_t line = kernels::kAlignBytes / sizeof(T);
            const std::size_t c0 = splitBeginAligned(n, nt, t, line), c1 = splitBeginAligned(n, nt, t + 1, line);
            for (std::size_t j = c0; j < c1; ++j) {
                double sum = 0;
                for (int p = 0; p < nt; ++p) sum += static_cast<double>(partials[static_cast<std::size_t>(p) * ld + j]);
                col[j] = sum;
                q1[j] = m_b[j] / sum;
            }
            if (fb != 1.0 && c1 > c0) {
                kern.powBatch(q1 + c0, fb, q1 + c0, c1 - c0);
                kern.powBatch(v + c0, fb - 1.0, q2 + c0, c1 - c0);
            }
            for (std::size_t j = c0; j < c1; ++j) {
                const double bj = fb == 1.0 ? q1[j] : q1[j] * q2[j];
                const double vj = v[j] * bj;
                vNew[j] = vj;
                vHeld[j] = v[j];  // the columns of A now hold v
                const T bt = static_cast<T>(bj);  // what the next pass applies, about
                if (!(bt > T(0)) || !std::isfinite(bt) || !(vj > 0) || !std::isfinite(vj)) local.bad = true;
                if (colMarginal) local.errB += std::abs(bj * col[j] - m_b[j]);
            }
            sums[t] = local;
        }
        return mergeThreadSums(sums, used, errA, errB);
    }

    bool supportsRelaxation() const override { return true; }
    void setRowRelaxation(double omega) override { m_omega = omega; }

    // The row sums of the plan of (u, v): gamma_i (A beta)_i with the factors of iterate().
    double rowMarginalError(const double* u, const double* v) override
    {
        std::vector<double> gamma(m_m);
        for (std::size_t i = 0; i < m_m; ++i) gamma[i] = u[i] / m_uHeld[i];
        T* beta = m_beta.data();
        for (std::size_t j = 0; j < m_n; ++j) beta[j] = static_cast<T>(v[j] / m_vHeld[j]);
        return rowMarginalErrorOf<T>(m_A, m_m, m_ld, beta, gamma.data(), m_a, m_kernels, m_threads, m_parallel);
    }

private:
    T* m_A;
    std::size_t m_m, m_n, m_ld;
    int m_threads;
    std::span<const double> m_a, m_b;
    double m_fa, m_fb;
    const kernels::RowKernels<T>& m_kernels;
    AlignedBuffer<T> m_beta, m_partials;
    AlignedBuffer<double> m_col, m_q1, m_q2;  // column sums and the two powers of the column factors
    std::vector<double> m_uHeld, m_vHeld;     // the scalings A holds: A = diag(uHeld) K diag(vHeld)
    std::vector<ThreadSums> m_sums;
    double m_omega = 1;
    bool m_parallel = true;
};

}  // namespace

std::uint64_t MapUotSolver::bytesPerIteration(std::size_t rows, std::size_t cols, Precision precision) const
{
    return matrixTrafficBytes(sweeps::kTwoReads, entryBytesFor(precision), rows, cols);
}

SolveResult MapUotSolver::solve(const UotProblem& problem, const SolveOptions& options, const SolveControl& control)
{
    const std::uint64_t bytes = bytesPerIteration(problem.rows(), problem.cols(), options.precision);
    auto make = [&](auto* a, std::size_t ld, std::vector<double>& u, std::vector<double>&) {
        using T = std::remove_pointer_t<decltype(a)>;
        return MapUotPasses<T>(problem, a, ld, u, options.threads);  // v0: applied by the first pass
    };
    return solveInPrecision(problem, options, control, name(), bytes, m_a32, m_a64, make);
}

}  // namespace uot
