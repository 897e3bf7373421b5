#include "core/transport/scaling_loop.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <optional>

#include "core/transport/iteration_monitor.h"
#include "core/transport/plan_evaluation.h"
#include "core/transport/potential_check.h"
#include "core/transport/relaxed_step.h"
#include "core/transport/solve_setup.h"
#include "core/transport/translation_invariant.h"

namespace uot {

namespace {

void markNotFinite(SolveResult& result, const ScalingLoopSetup& setup, int iteration)
{
    if (setup.logDomain) {
        result.status = NumericalStatus::NotFinite;
        result.message = "a non-finite value appeared in the log-domain iteration at iteration " +
                         std::to_string(iteration) + "; the last finite iterate is kept";
    } else {
        markUnderflow(result, setup.kernel, iteration);
    }
}

// Whether the passes' precision (ScalingPasses::potentialResolution) keeps the plan
// of (u, v) from the accuracy an fp32 result promises (belowFp32Accuracy).
// Collective with row blocks (every process reaches it: convergence is decided alike).
bool precisionLimited(const ScalingPasses& passes, const std::vector<double>& u, const std::vector<double>& v,
                      const ScalingLoopSetup& setup)
{
    const double resolution = passes.potentialResolution();
    if (resolution == 0) return false;
    if (setup.logDomain) return belowFp32Accuracy(resolution, u, v, setup.rowBlocks);
    std::vector<double> logU(u.size()), logV(v.size());
    for (std::size_t i = 0; i < u.size(); ++i) logU[i] = std::log(u[i]);
    for (std::size_t j = 0; j < v.size(); ++j) logV[j] = std::log(v[j]);
    return belowFp32Accuracy(resolution, logU, logV, setup.rowBlocks);
}

// A report's extra row pass, which is not an iteration: its time is added to
// extraSeconds (left out of iterateSeconds), and its reductions' waits are left out
// of the row blocks' timing alike (row_block_reduction.h).
double extraRowMarginalError(ScalingPasses& passes, const std::vector<double>& u, const std::vector<double>& v,
                             const ScalingLoopSetup& setup, double& extraSeconds)
{
    const UntimedWaits untimed(setup.rowBlocks);
    const auto start = std::chrono::steady_clock::now();
    const double err = passes.rowMarginalError(u.data(), v.data());
    extraSeconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return err;
}

// The loop of the potentials' stopping rule (relaxed_step.h), with or without
// over-relaxation: each iteration is one pass followed by the O(M + N) step that
// applies the relaxation and the TI shifts and measures the criterion (the change
// of the plan in log units and both marginal violations) after every iteration.
// Without acceleration omega stays 1 and the step is the plain (or TI) one. A step
// the safeguard undoes costs its pass and is not counted as an iteration.
//
// Distributed by rows, the criterion is decided one pass late: the reduction of
// the rows' violation (only the stopping test needs it) travels while the next
// pass runs, and is finished after it. When that decides "converged" (or the
// precision floor), the iterate is the one checked and the pass after it is thrown
// away (counted in passes and time): the iterates, the iteration count and the
// answer are those of the undeferred loop.
void runPotentialsLoop(const UotProblem& problem, const SolveOptions& options, const SolveControl& control,
                        ScalingPasses& passes, const ScalingLoopSetup& setup, std::vector<double>& u,
                        std::vector<double>& v, SolveResult& result)
{
    IterationMonitor monitor(options, control, setup.bytesPerIteration);
    std::vector<double> uNew(u.size()), vNew(v.size());
    const bool relaxable = passes.supportsRelaxation();
    const Acceleration acceleration = relaxable ? options.acceleration : Acceleration::None;
    OmegaController omega(acceleration,
                          acceleration == Acceleration::Auto ? options.autoInitialOmega : options.omega);
    // Its row-side state is set up again when the rows move (setup.moveRows).
    std::optional<RelaxedStep> step;
    const auto makeStep = [&] {
        step.emplace(problem, setup.logDomain, options.mode == IterationMode::TranslationInvariant, setup.fp32,
                     setup.rowBlocks);
    };
    makeStep();
    const bool deferCheck = setup.rowBlocks != nullptr;
    result.mode = toString(options.mode);
    result.acceleration = toString(acceleration);
    RelaxedStepFigures last;
    bool haveLast = false;
    std::uint64_t sweeps = 0;
    const double nan = std::numeric_limits<double>::quiet_NaN();
    // A check's report waits for the next pass, which measures the row marginal of
    // the checked plan anyway (the figures' marginalErrorA is the pass input's).
    // Only when the loop ends at a check does one extra row pass run; its time is
    // left out of iterateSeconds.
    bool pending = false;
    int pendingIteration = 0;
    double pendingError = 0, pendingErrB = 0, extraSeconds = 0;
    auto reportPending = [&](double errA) {
        if (pending) monitor.report(pendingIteration, pendingError, errA, pendingErrB);
        pending = false;
    };
    // The stopping decision on accepted iterate `it` (u, v) with its complete
    // figures. Returns true when the loop ends there.
    int it = 0;
    auto decide = [&](const RelaxedStepFigures& figures) {
        result.error = figures.error();
        bool converged = options.tolerance > 0 && result.error < options.tolerance;
        if (converged && precisionLimited(passes, u, v, setup)) {
            // The iterates stopped moving, but at the passes' precision floor, which is
            // above what an fp32 plan promises: say so instead of "converged".
            result.message = "stopped at the precision floor of the fp32 potentials (the plan is not within " +
                             std::to_string(kFp32PlanAccuracy) + " of the float64 plan): use fp64";
            monitor.report(it, result.error, nan, figures.marginalErrorB);
            return true;
        }
        if (converged || it == options.maxIterations) {
            const double finalErrA = extraRowMarginalError(passes, u, v, setup, extraSeconds);
            ++sweeps;
            monitor.report(it, result.error, finalErrA, figures.marginalErrorB);
        } else if (monitor.isCheckIteration(it)) {
            pending = true;
            pendingIteration = it;
            pendingError = result.error;
            pendingErrB = figures.marginalErrorB;
        }
        result.converged = converged;
        return converged;
    };
    bool awaiting = false;  // the decision on iterate `it` waits for its violation (deferCheck)
    while (it < options.maxIterations) {
        if (monitor.cancelRequested()) {
            if (awaiting) {  // the decision the undeferred loop took before this cancel
                awaiting = false;
                step->finishViolation(last);
                if (decide(last)) break;
            }
            result.cancelled = true;
            break;
        }
        const double w = omega.omega();
        if (relaxable) passes.setRowRelaxation(w);
        step->beforePass(u, v);
        double errA = 0, errB = 0;
        const PassStatus status = passes.iterate(u.data(), v.data(), uNew.data(), vNew.data(), false, false, errA, errB);
        if (status != PassStatus::Cancelled) sweeps += static_cast<std::uint64_t>(passes.sweepsPerIteration());
        if (awaiting) {
            // The reduction has travelled during this pass; an iterate that ends the
            // loop stays in (u, v), and this pass's output is dropped.
            awaiting = false;
            step->finishViolation(last);
            if (decide(last)) break;
        }
        if (status == PassStatus::Cancelled) {
            result.cancelled = true;
            break;
        }
        RelaxedStepFigures figures;
        const bool finite = status == PassStatus::Ok && step->afterPass(w, uNew, vNew, figures, deferCheck);
        reportPending(finite ? figures.marginalErrorA : nan);
        const bool safeguard = options.relaxationSafeguard && w != 1.0;
        const bool rejected = safeguard && (!finite || (haveLast && !step->acceptable(last, figures)));
        if ((!finite && !safeguard) || rejected) step->finishViolation(figures);  // a step not kept: no decision
        if (!finite && !safeguard) {
            markNotFinite(result, setup, it + 1);
            break;
        }
        if (rejected) {
            omega.rejected(!finite);  // undo: (u, v) stay, the next pass runs with a smaller omega
            continue;
        }
        ++it;
        u.swap(uNew);
        v.swap(vNew);
        last = figures;
        haveLast = true;
        omega.accepted(figures.change);
        result.iterations = it;
        // Rows move at a check, where the decision on this iterate is taken now
        // (not deferred), so that no reduction is in flight.
        const bool move = setup.moveRows && monitor.isCheckIteration(it) && it < options.maxIterations;
        if (deferCheck && it < options.maxIterations && !move) {
            awaiting = true;
            continue;
        }
        step->finishViolation(last);
        if (decide(last)) break;
        if (move && setup.moveRows(it, u)) {
            uNew.resize(u.size());
            makeStep();
        }
    }
    // Only a cancel leaves a check unreported here: report it without the row
    // marginal rather than spend another pass (a cancel must return promptly).
    reportPending(nan);
    result.omega = omega.omega();
    result.rejectedSteps = omega.rejections();
    result.timings.iterateSeconds = monitor.elapsedSeconds() - extraSeconds;
    result.passes = sweeps;
}

}  // namespace

void runScalingLoop(const UotProblem& problem, const SolveOptions& options, const SolveControl& control,
                    ScalingPasses& passes, const ScalingLoopSetup& setup, std::vector<double>& u,
                    std::vector<double>& v, SolveResult& result)
{
    if (options.acceleration != Acceleration::None) {
        runPotentialsLoop(problem, options, control, passes, setup, u, v, result);
        return;
    }
    // The plain or TI iteration, checked every checkEvery iterations: the potentials'
    // rule from the last two iterates (potential_check.h; the O(M + N) step of the
    // accelerated loop after every pass would cost up to half a pass at 2048^2), or
    // POT's rule (StoppingRule::Pot).
    const double nan = std::numeric_limits<double>::quiet_NaN();
    IterationMonitor monitor(options, control, setup.bytesPerIteration);
    std::vector<double> uNew(u.size()), vNew(v.size());
    const bool translating = options.mode == IterationMode::TranslationInvariant;
    std::vector<double> logs[4];
    auto stoppingErr = [&](const std::vector<double>& x, const std::vector<double>& xPrev,
                           const std::vector<double>& y, const std::vector<double>& yPrev) {
        if (options.stopping == StoppingRule::Potentials) {
            if (setup.logDomain) return potentialCheckError(problem, x, xPrev, y, yPrev, translating, setup.rowBlocks);
            const std::vector<double>* in[4] = {&x, &xPrev, &y, &yPrev};
            for (int k = 0; k < 4; ++k) {
                logs[k].resize(in[k]->size());
                for (std::size_t i = 0; i < in[k]->size(); ++i) logs[k][i] = std::log((*in[k])[i]);
            }
            return potentialCheckError(problem, logs[0], logs[1], logs[2], logs[3], translating, setup.rowBlocks);
        }
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
        ++sweeps;
        return extraRowMarginalError(passes, u, v, setup, extraSeconds);
    };

    std::optional<TranslationStep> translation;  // set up again when the rows move (setup.moveRows)
    const auto makeTranslation = [&] { translation.emplace(problem, setup.logDomain, options.threads, setup.rowBlocks); };
    makeTranslation();
    const bool translate = options.mode == IterationMode::TranslationInvariant && translation->active();
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
        if (translate) translation->beforePass(v);
        PassStatus status = passes.iterate(u.data(), v.data(), uNew.data(), vNew.data(), pending, check, errA, errB);
        if (status != PassStatus::Cancelled) sweeps += static_cast<std::uint64_t>(passes.sweepsPerIteration());
        if (status == PassStatus::Ok && translate) {
            if (!translation->afterPass(uNew, vNew, check, errB)) status = PassStatus::NotFinite;
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
            markNotFinite(result, setup, it);
            break;
        }
        if (check) result.error = stoppingErr(uNew, u, vNew, v);
        u.swap(uNew);
        v.swap(vNew);
        result.iterations = it;
        if (check) {
            bool converged = options.tolerance > 0 && result.error < options.tolerance;
            if (converged && precisionLimited(passes, u, v, setup)) {
                result.message = "stopped at the precision floor of the fp32 potentials (the plan is not within " +
                                 std::to_string(kFp32PlanAccuracy) + " of the float64 plan): use fp64";
                monitor.report(it, result.error, nan, errB);
                break;
            }
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
            if (setup.moveRows && it < options.maxIterations && setup.moveRows(it, u)) {
                uNew.resize(u.size());
                makeTranslation();
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
