#include "core/transport/reference_solver.h"

#include <chrono>
#include <cmath>
#include <limits>
#include <vector>

#include "core/transport/iteration_monitor.h"
#include "core/transport/kernel_matrix.h"
#include "core/transport/plan_evaluation.h"
#include "core/transport/solve_setup.h"
#include "core/transport/translation_invariant.h"

namespace uot {

std::uint64_t ReferenceSolver::bytesPerIteration(std::size_t rows, std::size_t cols, Precision) const
{
    return 2ull * rows * cols * sizeof(double);  // K v, then K^T u
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
    const KernelBuildReport kernel = buildKernelMatrix<double>(problem, K.data(), 1);

    SolveResult result;
    result.solver = name();
    result.mode = toString(options.mode);
    result.bytesPerIteration = bytesPerIteration(m, n, Precision::Fp64);
    std::vector<double> u = initialScaling(options.warmU, options.warmLogU, m);
    std::vector<double> v = initialScaling(options.warmV, options.warmLogV, n);
    const double fa = problem.exponentA();
    const double fb = problem.exponentB();
    result.timings.setupSeconds = std::chrono::duration<double>(Clock::now() - setupStart).count();

    if (kernel.underflows()) {
        markUnderflow(result, kernel, 0);
    } else {
        IterationMonitor monitor(options, control, result.bytesPerIteration);
        TranslationStep translation(problem, false, 1);
        const bool translate = options.mode == IterationMode::TranslationInvariant && translation.active();
        std::vector<double> Kv(m), Ktu(n), uNew(m), vNew(n);
        for (int it = 1; it <= options.maxIterations; ++it) {
            if (monitor.cancelRequested()) {
                result.cancelled = true;
                break;
            }
            if (translate) translation.beforePass(v);
            for (std::size_t i = 0; i < m; ++i) {
                double s = 0;
                for (std::size_t j = 0; j < n; ++j) s += K[i * n + j] * v[j];
                Kv[i] = s;
                uNew[i] = std::pow(problem.a[i] / s, fa);
            }
            for (std::size_t j = 0; j < n; ++j) Ktu[j] = 0;
            for (std::size_t i = 0; i < m; ++i)
                for (std::size_t j = 0; j < n; ++j) Ktu[j] += K[i * n + j] * uNew[i];
            for (std::size_t j = 0; j < n; ++j) vNew[j] = std::pow(problem.b[j] / Ktu[j], fb);
            result.passes += 2;
            double unusedErrB = 0;
            bool finite = allFiniteAndPositive(uNew) && allFiniteAndPositive(vNew);
            if (finite && translate) {
                // The TI step (translation_invariant.h); K^T u scales with u's common factor.
                finite = translation.afterPass(uNew, vNew, false, unusedErrB);
                for (std::size_t j = 0; j < n; ++j) Ktu[j] *= std::exp(translation.lastLogUFactor());
            }
            if (!finite) {
                // Like POT: keep the previous iterate and stop, but say why.
                markUnderflow(result, kernel, it);
                break;
            }
            const bool check = monitor.isCheckIteration(it);
            if (check) result.error = stoppingError(uNew, u, vNew, v);
            u.swap(uNew);
            v.swap(vNew);
            result.iterations = it;
            if (check) {
                // Marginals of the current plan: P1 = u (K v), P^T 1 = v (K^T u).
                double errA = 0, errB = 0;
                ++result.passes;
                for (std::size_t i = 0; i < m; ++i) {
                    double s = 0;
                    for (std::size_t j = 0; j < n; ++j) s += K[i * n + j] * v[j];
                    errA += std::abs(u[i] * s - problem.a[i]);
                }
                for (std::size_t j = 0; j < n; ++j) errB += std::abs(v[j] * Ktu[j] - problem.b[j]);
                if (monitor.report(it, result.error, errA, errB)) {
                    result.converged = true;
                    break;
                }
            }
        }
        result.timings.iterateSeconds = monitor.elapsedSeconds();
    }
    finishResult(problem, options, u, v, result);
    return result;
}

}  // namespace uot
