#include "core/transport/fused_solver.h"

#include <omp.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "core/transport/multiplicative_solve.h"
#include "core/transport/pass_reductions.h"
#include "core/transport/row_groups.h"
#include "core/transport/row_kernels.h"

namespace uot {

namespace {

// Below this many matrix elements the pass runs on one thread (fork/join
// would cost more than it saves).
constexpr std::size_t kParallelThreshold = 1 << 15;

template <typename T>
class FusedPasses final : public ScalingPasses {
public:
    FusedPasses(const UotProblem& problem, const T* k, std::size_t ld, int threads)
        : m_k(k), m_m(problem.rows()), m_n(problem.cols()), m_ld(ld), m_threads(resolveThreadCount(threads)),
          m_a(problem.a), m_b(problem.b), m_fa(problem.exponentA()), m_fb(problem.exponentB()),
          m_kernels(kernels::rowKernels<T>()), m_sums(m_threads)
    {
        m_v.resize(ld);
        for (std::size_t j = 0; j < ld; ++j) m_v.data()[j] = T(0);
        m_partials.resize(static_cast<std::size_t>(m_threads) * ld);
        m_col.resize(ld);
        m_parallel = m_m * m_ld >= kParallelThreshold;
    }

    PassStatus iterate(const double* u, const double* v, double* uNew, double* vNew, bool rowMarginal,
                       bool colMarginal, double& errA, double& errB) override
    {
        loadV(v);
        const T* k = m_k;
        const T* vt = m_v.data();
        T* partials = m_partials.data();
        const std::size_t m = m_m, n = m_n, ld = m_ld;
        const double fa = m_fa, fb = m_fb;
        const auto& kern = m_kernels;
        const double omega = m_omega;
        const bool pipelined = kernels::pipelinedRowsPreferred();
        ThreadSums* sums = m_sums.data();
        double* col = m_col.data();
        int used = 1;
#pragma omp parallel num_threads(m_threads) if (m_parallel)
        {
            const int t = omp_get_thread_num();
            const int nt = omp_get_num_threads();
            if (t == 0) used = nt;
            ThreadSums local;
            T* s = partials + static_cast<std::size_t>(t) * ld;
            for (std::size_t j = 0; j < ld; ++j) s[j] = T(0);
            // Rows in groups (row_groups.h): the dot products of a group, its
            // scalings u_i = (a_i / r_i)^fa in one vector pow call, then its
            // column update while the rows are in cache (L2, and L1 for the last
            // columns: the update runs back to front). Where it measured faster
            // (Intel Xeon: small per-core bandwidth) the dot products of group
            // g+1 run interleaved with the column update of group g (same bits;
            // on the 2-core EPYC the plain order is faster). See
            // pipelinedRowsPreferred(). No software prefetch of the next group: on
            // the EPYC with the matrix on huge pages it made the pass slower
            // (docs/notes/benchmark-history.md, "Row-group kernels").
            const std::size_t r0 = splitBegin(m, nt, t), r1 = splitBegin(m, nt, t + 1);
            const RowGroups groups = pipelined ? RowGroups::adjacent(r0, r1, kernels::kMaxInterleavedRows)
                                               : RowGroups::forRowLength(r0, r1, ld * sizeof(T));
            const std::size_t rowStride = groups.stride() * ld;
            T rt[kernels::kMaxGroupRows];
            runGroupPipeline<T>(
                groups, pipelined,
                [&](RowGroup g) { kern.dotRows(k + g.first * ld, rowStride, g.count, vt, ld, rt); },
                [&](RowGroup g, T* ut) {
                    updateRowScalings(g.first, groups.stride(), g.count, rt, u, m_a, fa, kern, uNew, ut, rowMarginal,
                                      local, omega);
                },
                [&](RowGroup g, const T* ut, RowGroup) {
                    kern.axpyRows(k + g.first * ld, rowStride, g.count, ut, s, ld);
                },
                [&](RowGroup next, RowGroup cur, const T* ut) {
                    kern.fusedRows(k + next.first * ld, next.count, k + cur.first * ld, cur.count, rowStride, vt, ut,
                                   s, ld, rt);
                });
#pragma omp barrier
            const std::size_t line = kernels::kAlignBytes / sizeof(T);
            const std::size_t c0 = splitBeginAligned(n, nt, t, line), c1 = splitBeginAligned(n, nt, t + 1, line);
            updateColumnScalings(c0, c1, partials, nt, ld, m_b, fb, kern, col, vNew, colMarginal, local);
            sums[t] = local;
        }
        return mergeThreadSums(sums, used, errA, errB);
    }

    bool supportsRelaxation() const override { return true; }
    void setRowRelaxation(double omega) override { m_omega = omega; }

    double rowMarginalError(const double* u, const double* v) override
    {
        loadV(v);
        return rowMarginalErrorOf(m_k, m_m, m_ld, m_v.data(), u, m_a, m_kernels, m_threads, m_parallel);
    }

private:
    void loadV(const double* v)
    {
        T* vt = m_v.data();
        for (std::size_t j = 0; j < m_n; ++j) vt[j] = static_cast<T>(v[j]);
    }

    const T* m_k;
    std::size_t m_m, m_n, m_ld;
    int m_threads;
    std::span<const double> m_a, m_b;
    double m_fa, m_fb;
    const kernels::RowKernels<T>& m_kernels;
    AlignedBuffer<T> m_v;
    AlignedBuffer<T> m_partials;
    AlignedBuffer<double> m_col;  // column sums K^T u of the last pass
    std::vector<ThreadSums> m_sums;
    bool m_parallel = true;
    double m_omega = 1.0;  // over-relaxation of the row half-step
};

}  // namespace

std::uint64_t FusedSolver::bytesPerIteration(std::size_t rows, std::size_t cols, Precision precision) const
{
    return static_cast<std::uint64_t>(rows) * cols * (precision == Precision::Fp32 ? 4 : 8);
}

SolveResult FusedSolver::solve(const UotProblem& problem, const SolveOptions& options, const SolveControl& control)
{
    const std::uint64_t bytes = bytesPerIteration(problem.rows(), problem.cols(), options.precision);
    auto make = [&](const auto* k, std::size_t ld, std::vector<double>&, std::vector<double>&) {
        using T = std::remove_cv_t<std::remove_pointer_t<decltype(k)>>;
        return FusedPasses<T>(problem, k, ld, options.threads);
    };
    return solveInPrecision(problem, options, control, name(), bytes, m_k32, m_k64, make);
}

}  // namespace uot
