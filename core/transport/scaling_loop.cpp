#include "core/transport/scaling_loop.h"

#include <chrono>
#include <limits>

#include "core/transport/iteration_monitor.h"
#include "core/transport/plan_evaluation.h"
#include "core/transport/solve_setup.h"
#include "core/transport/translation_invariant.h"

namespace uot {

void runScalingLoop(const UotProblem& problem, const SolveOptions& options, const SolveControl& control,
                    ScalingPasses& passes, const ScalingLoopSetup& setup, std::vector<double>& u,
                    std::vector<double>& v, SolveResult& result)
{
    using Clock = std::chrono::steady_clock;
    const double nan = std::numeric_limits<double>::quiet_NaN();
    IterationMonitor monitor(options, control, setup.bytesPerIteration);
    std::vector<double> uNew(u.size()), vNew(v.size());
    auto stoppingErr = [&](const std::vector<double>& x, const std::vector<double>& xPrev,
                           const std::vector<double>& y, const std::vector<double>& yPrev) {
        if (setup.rowBlocks) {
            // x is this process's block of u: its maxima are taken over all blocks.
            const RelativeChange cx = relativeChangeOf(x, xPrev), cy = relativeChangeOf(y, yPrev);
            double maxima[2] = {cx.diff, cx.scale};
            setup.rowBlocks->max(maxima);
            return 0.5 * (maxima[0] / maxima[1] + cy.diff / cy.scale);
        }
        return setup.logDomain ? stoppingErrorFromLogs(x, xPrev, y, yPrev) : stoppingError(x, xPrev, y, yPrev);
    };
    // Extra passes for reports are not iterations: their time is left out of iterateSeconds.
    double extraSeconds = 0;
    std::uint64_t sweeps = 0;  // passes over the matrix, extra row passes included
    auto extraRowMarginal = [&]() {
        const auto start = Clock::now();
        const double err = passes.rowMarginalError(u.data(), v.data());
        ++sweeps;
        extraSeconds += std::chrono::duration<double>(Clock::now() - start).count();
        return err;
    };

    TranslationStep translation(problem, setup.logDomain, options.threads, setup.rowBlocks);
    const bool translate = options.mode == IterationMode::TranslationInvariant && translation.active();
    result.mode = toString(options.mode);

    bool pending = false;  // a check whose report waits for the next pass's row marginal
    int pendingIteration = 0;
    double pendingError = 0, pendingErrB = 0;

    for (int it = 1; it <= options.maxIterations; ++it) {
        if (monitor.cancelRequested()) {
            result.cancelled = true;
            break;
        }
        const bool check = monitor.isCheckIteration(it);
        double errA = nan, errB = nan;
        if (translate) translation.beforePass(v);
        PassStatus status = passes.iterate(u.data(), v.data(), uNew.data(), vNew.data(), pending, check, errA, errB);
        if (status != PassStatus::Cancelled) sweeps += static_cast<std::uint64_t>(passes.sweepsPerIteration());
        if (status == PassStatus::Ok && translate) {
            if (translation.afterPass(uNew, vNew, check, errB))
                passes.rescaled(translation.lastLogUFactor(), translation.lastLogVFactor());
            else
                status = PassStatus::NotFinite;
        }
        if (status == PassStatus::Cancelled) {
            result.cancelled = true;
            break;
        }
        if (pending) {
            monitor.report(pendingIteration, pendingError, errA, pendingErrB);
            pending = false;
        }
        if (status == PassStatus::NotFinite) {
            if (setup.logDomain) {
                result.status = NumericalStatus::NotFinite;
                result.message = "a non-finite value appeared in the log-domain iteration at iteration " +
                                 std::to_string(it) + "; the last finite iterate is kept";
            } else {
                markUnderflow(result, setup.kernel, it);
            }
            break;
        }
        if (check) result.error = stoppingErr(uNew, u, vNew, v);
        u.swap(uNew);
        v.swap(vNew);
        result.iterations = it;
        if (check) {
            const bool converged = options.tolerance > 0 && result.error < options.tolerance;
            if (converged || it == options.maxIterations) {
                monitor.report(it, result.error, extraRowMarginal(), errB);
                if (converged) {
                    result.converged = true;
                    break;
                }
            } else {
                pending = true;
                pendingIteration = it;
                pendingError = result.error;
                pendingErrB = errB;
            }
        }
    }
    // Only a cancel leaves a check unreported here: report it without the row
    // marginal rather than spend another pass (a cancel must return promptly).
    if (pending) monitor.report(pendingIteration, pendingError, nan, pendingErrB);
    result.timings.iterateSeconds = monitor.elapsedSeconds() - extraSeconds;
    result.passes = sweeps;
}

}  // namespace uot
