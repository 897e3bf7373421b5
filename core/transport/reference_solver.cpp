#include "core/transport/reference_solver.h"

#include <chrono>
#include <cmath>
#include <limits>
#include <vector>

#include "core/transport/kernel_matrix.h"
#include "core/transport/plan_evaluation.h"
#include "core/transport/scaling_loop.h"
#include "core/transport/solve_setup.h"
#include "core/transport/traffic_model.h"

namespace uot {

namespace {

// The two plain mat-vecs of POT's sinkhorn_unbalanced, in float64 on one
// thread, over the unpadded kernel: u = (a / K v)^fa, then v = (b / K^T u)^fb.
class ReferencePasses final : public ScalingPasses {
public:
    ReferencePasses(const UotProblem& problem, const std::vector<double>& k)
        : m_k(k), m_a(problem.a), m_b(problem.b), m_m(problem.rows()), m_n(problem.cols()),
          m_fa(problem.exponentA()), m_fb(problem.exponentB()), m_ktu(problem.cols())
    {
    }

    PassStatus iterate(const double* u, const double* v, double* uNew, double* vNew, bool rowMarginal,
                       bool colMarginal, double& errA, double& errB) override
    {
        double ea = 0;
        bool finite = true;
        for (std::size_t i = 0; i < m_m; ++i) {
            const double s = rowDot(i, v);
            if (rowMarginal) ea += std::abs(u[i] * s - m_a[i]);
            uNew[i] = std::pow(m_a[i] / s, m_fa);
            finite = finite && std::isfinite(uNew[i]) && uNew[i] > 0;
        }
        if (rowMarginal) errA = ea;
        for (std::size_t j = 0; j < m_n; ++j) m_ktu[j] = 0;
        for (std::size_t i = 0; i < m_m; ++i)
            for (std::size_t j = 0; j < m_n; ++j) m_ktu[j] += m_k[i * m_n + j] * uNew[i];
        double eb = 0;
        for (std::size_t j = 0; j < m_n; ++j) {
            vNew[j] = std::pow(m_b[j] / m_ktu[j], m_fb);
            finite = finite && std::isfinite(vNew[j]) && vNew[j] > 0;
            if (colMarginal) eb += std::abs(vNew[j] * m_ktu[j] - m_b[j]);
        }
        if (colMarginal) errB = eb;
        return finite ? PassStatus::Ok : PassStatus::NotFinite;
    }

    double rowMarginalError(const double* u, const double* v) override
    {
        double err = 0;
        for (std::size_t i = 0; i < m_m; ++i) err += std::abs(u[i] * rowDot(i, v) - m_a[i]);
        return err;
    }

    int sweepsPerIteration() const override { return 2; }

private:
    double rowDot(std::size_t i, const double* v) const
    {
        double s = 0;
        for (std::size_t j = 0; j < m_n; ++j) s += m_k[i * m_n + j] * v[j];
        return s;
    }

    const std::vector<double>& m_k;
    std::span<const double> m_a, m_b;
    std::size_t m_m, m_n;
    double m_fa, m_fb;
    std::vector<double> m_ktu;
};

}  // namespace

std::uint64_t ReferenceSolver::bytesPerIteration(std::size_t rows, std::size_t cols, Precision) const
{
    return matrixTrafficBytes(sweeps::kTwoReads, sizeof(double), rows, cols);  // K v, then K^T u
}

SolveResult ReferenceSolver::solve(const UotProblem& problem, const SolveOptions& options,
                                   const SolveControl& control)
{
    using Clock = std::chrono::steady_clock;
    const auto setupStart = Clock::now();
    validateSolveOptions(problem, options);
    const std::size_t m = problem.rows();
    const std::size_t n = problem.cols();
    std::vector<double> K(m * n);
    ScalingLoopSetup setup;
    setup.kernel = buildKernelMatrix<double>(problem, K.data(), 1);

    SolveResult result;
    result.solver = name();
    result.mode = toString(options.mode);
    result.bytesPerIteration = bytesPerIteration(m, n, Precision::Fp64);
    setup.bytesPerIteration = result.bytesPerIteration;
    std::vector<double> u = initialScaling(options.warmU, options.warmLogU, m);
    std::vector<double> v = initialScaling(options.warmV, options.warmLogV, n);
    result.timings.setupSeconds = std::chrono::duration<double>(Clock::now() - setupStart).count();

    if (setup.kernel.underflows()) {
        markUnderflow(result, setup.kernel, 0);
    } else {
        // One thread, as the rest of the oracle.
        SolveOptions oneThread = options;
        oneThread.threads = 1;
        ReferencePasses passes(problem, K);
        runScalingLoop(problem, oneThread, control, passes, setup, u, v, result);
    }
    finishResult(problem, options, u, v, result);
    return result;
}

}  // namespace uot
