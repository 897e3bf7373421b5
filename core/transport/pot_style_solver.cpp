#include "core/transport/pot_style_solver.h"

#include <omp.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "core/transport/multiplicative_solve.h"
#include "core/transport/pass_reductions.h"
#include "core/transport/row_kernels.h"
#include "core/transport/traffic_model.h"

namespace uot {

namespace {

constexpr std::size_t kParallelThreshold = 1 << 15;
constexpr std::size_t kRowGroup = 8;  // rows per kernel call (x / s loaded once per group)

template <typename T>
class PotStylePasses final : public ScalingPasses {
public:
    PotStylePasses(const UotProblem& problem, const T* k, std::size_t ld, int threads)
        : m_k(k), m_m(problem.rows()), m_n(problem.cols()), m_ld(ld), m_threads(resolveThreadCount(threads)),
          m_a(problem.a), m_b(problem.b), m_fa(problem.exponentA()), m_fb(problem.exponentB()),
          m_kernels(kernels::rowKernels<T>()), m_sums(m_threads)
    {
        m_v.resize(ld);
        for (std::size_t j = 0; j < ld; ++j) m_v.data()[j] = T(0);
        m_u.resize(m_m);
        m_partials.resize(static_cast<std::size_t>(m_threads) * ld);
        m_col.resize(ld);
        m_parallel = m_m * m_ld >= kParallelThreshold;
    }

    PassStatus iterate(const double* u, const double* v, double* uNew, double* vNew, bool rowMarginal,
                       bool colMarginal, double& errA, double& errB) override
    {
        T* vt = m_v.data();
        for (std::size_t j = 0; j < m_n; ++j) vt[j] = static_cast<T>(v[j]);
        const T* k = m_k;
        T* ut = m_u.data();
        T* partials = m_partials.data();
        const std::size_t m = m_m, n = m_n, ld = m_ld;
        const double fa = m_fa, fb = m_fb;
        const auto& kern = m_kernels;
        ThreadSums* sums = m_sums.data();
        double* col = m_col.data();
        int used = 1;
#pragma omp parallel num_threads(m_threads) if (m_parallel)
        {
            const int t = omp_get_thread_num();
            const int nt = omp_get_num_threads();
            if (t == 0) used = nt;
            ThreadSums local;
            const std::size_t r0 = splitBegin(m, nt, t), r1 = splitBegin(m, nt, t + 1);
            // Pass 1: u = (a / K v)^fa (the powers in one vector call per thread).
            T rt[kRowGroup];
            for (std::size_t i0 = r0; i0 < r1; i0 += kRowGroup) {
                const std::size_t nb = std::min(kRowGroup, r1 - i0);
                kern.dotRows(k + i0 * ld, ld, nb, vt, ld, rt);
                updateRowScalings(i0, 1, nb, rt, u, m_a, fa, kern, uNew, ut + i0, rowMarginal, local, m_omega);
            }
            // Pass 2: K^T u, each thread over its own rows into its own partials
            // (a second full read of K: by the time we get here it has left the cache).
            T* s = partials + static_cast<std::size_t>(t) * ld;
            for (std::size_t j = 0; j < ld; ++j) s[j] = T(0);
            for (std::size_t i0 = r0; i0 < r1; i0 += kRowGroup)
                kern.axpyRows(k + i0 * ld, ld, std::min(kRowGroup, r1 - i0), ut + i0, s, ld);
#pragma omp barrier
            const std::size_t line = kernels::kAlignBytes / sizeof(T);
            const std::size_t c0 = splitBeginAligned(n, nt, t, line), c1 = splitBeginAligned(n, nt, t + 1, line);
            updateColumnScalings(c0, c1, partials, nt, ld, m_b, fb, kern, col, vNew, colMarginal, local);
            sums[t] = local;
        }
        return mergeThreadSums(sums, used, errA, errB);
    }

    int sweepsPerIteration() const override { return 2; }  // K v, then K^T u

    bool supportsRelaxation() const override { return true; }
    void setRowRelaxation(double omega) override { m_omega = omega; }

    double rowMarginalError(const double* u, const double* v) override
    {
        T* vt = m_v.data();
        for (std::size_t j = 0; j < m_n; ++j) vt[j] = static_cast<T>(v[j]);
        return rowMarginalErrorOf(m_k, m_m, m_ld, vt, u, m_a, m_kernels, m_threads, m_parallel);
    }

private:
    const T* m_k;
    std::size_t m_m, m_n, m_ld;
    int m_threads;
    std::span<const double> m_a, m_b;
    double m_fa, m_fb;
    const kernels::RowKernels<T>& m_kernels;
    AlignedBuffer<T> m_v, m_u, m_partials;
    AlignedBuffer<double> m_col;
    std::vector<ThreadSums> m_sums;
    bool m_parallel = true;
    double m_omega = 1.0;  // over-relaxation of the row half-step
};

}  // namespace

std::uint64_t PotStyleSolver::bytesPerIteration(std::size_t rows, std::size_t cols, Precision precision) const
{
    return matrixTrafficBytes(sweeps::kTwoReads, entryBytesFor(precision), rows, cols);
}

SolveResult PotStyleSolver::solve(const UotProblem& problem, const SolveOptions& options, const SolveControl& control)
{
    const std::uint64_t bytes = bytesPerIteration(problem.rows(), problem.cols(), options.precision);
    auto make = [&](const auto* k, std::size_t ld, std::vector<double>&, std::vector<double>&) {
        using T = std::remove_cv_t<std::remove_pointer_t<decltype(k)>>;
        return PotStylePasses<T>(problem, k, ld, options.threads);
    };
    return solveInPrecision(problem, options, control, name(), bytes, m_k32, m_k64, make);
}

}  // namespace uot
