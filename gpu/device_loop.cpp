#include "gpu/device_loop.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>

#include "core/transport/iteration_monitor.h"
#include "core/transport/potential_check.h"

namespace uot::gpu::detail {

namespace {

constexpr double kSliceSeconds = 0.005;  // device work queued between cancellation polls
constexpr int kMaxSlice = 512;

int sliceFor(double secondsPerIteration)
{
    if (!(secondsPerIteration > 0)) return kMaxSlice;
    return std::clamp(static_cast<int>(kSliceSeconds / secondsPerIteration), 1, kMaxSlice);
}

// POT's rule from the check kernel's maxima.
double changeError(const DeviceCheck& c)
{
    auto relative = [](double diff, double scale) {
        const double r = diff / scale;
        return std::isfinite(r) ? r : 1.0;
    };
    return 0.5 * (relative(c.diffU, c.scaleU) + relative(c.diffV, c.scaleV));
}

}  // namespace

DeviceCheck groupCheck(std::span<const ProblemCheck> problems)
{
    DeviceCheck c;
    c.marginalA = c.marginalB = std::numeric_limits<double>::quiet_NaN();
    bool running = false, capped = false;
    int slowest = std::numeric_limits<int>::max(), most = 0;
    long long passes = 0;
    double worst = 0;
    for (const ProblemCheck& p : problems) {
        most = std::max(most, p.iterations);
        passes = std::max(passes, p.passes);
        capped = capped || p.stop == DeviceStop::IterationCap;
        if (p.stop != DeviceStop::Running) continue;
        running = true;
        slowest = std::min(slowest, p.iterations);
        worst = std::max(worst, p.error);
    }
    c.iterations = running ? slowest : most;
    c.passes = passes;
    c.error = worst;
    c.stop = running ? DeviceStop::Running : capped ? DeviceStop::IterationCap : DeviceStop::Converged;
    return c;
}

void runDeviceLoop(const UotProblem& problem, const SolveOptions& options, const SolveControl& control,
                   DevicePasses& passes, const DeviceLoopSetup& setup, int iterations, SolveResult& result)
{
    const double nan = std::numeric_limits<double>::quiet_NaN();
    IterationMonitor monitor(options, control, setup.bytesPerIteration);
    const int checkEvery = std::max(1, options.checkEvery);
    int slice = sliceFor(setup.secondsPerIterationEstimate);
    double deviceSeconds = 0;
    int lastGood = iterations;
    std::vector<double> logs[4];
    const bool onDevice = passes.decidesOnDevice();
    long long devicePasses = -1;
    int reported = iterations;
    while (iterations < options.maxIterations) {
        if (monitor.cancelRequested()) {
            result.cancelled = true;
            break;
        }
        if (onDevice) {
            // The step kernel decides: a chunk up to the next check, then its figures.
            const int chunk = passes.stopsWithinLaunch() ? kMaxSlice : std::clamp(options.checkEvery, 1, kMaxSlice);
            passes.startChunk();
            passes.launch(std::min(chunk, std::max(1, options.maxIterations - iterations)));
            const DeviceCheck c = passes.check(false);
            deviceSeconds += c.chunkSeconds;
            iterations = c.iterations;
            devicePasses = c.passes;
            result.error = c.error;
            if (c.stop == DeviceStop::NotFinite) {
                setup.markNotFinite(result, iterations + 1);
                break;
            }
            if (iterations > reported) {
                monitor.report(iterations, c.error, c.marginalA, c.marginalB);
                reported = iterations;
            }
            if (c.stop == DeviceStop::Converged) {
                result.converged = true;
                break;
            }
            if (c.stop == DeviceStop::IterationCap) break;
            continue;
        }
        const int toCheck = std::min(checkEvery - iterations % checkEvery, options.maxIterations - iterations);
        passes.startChunk();
        int plain = toCheck - 1, done = 0, launched = 0;
        bool cancelled = false;
        while (plain > 0) {
            const int n = std::min(plain, slice);
            passes.launch(n);
            passes.markSlice(launched & 1);
            ++launched;
            plain -= n;
            done += n;
            // Wait for the slice before the one just queued: two stay in flight.
            if (launched >= 2) passes.waitSlice(launched & 1);
            if (monitor.cancelRequested()) {
                cancelled = true;
                break;
            }
        }
        if (!cancelled) {
            passes.snapshot();
            passes.launch(1);
            done += 1;
        }
        const DeviceCheck c = passes.check(setup.wantMarginals);
        deviceSeconds += c.chunkSeconds;
        iterations += done;
        if (c.bad) {
            passes.restoreGood();
            setup.markNotFinite(result, iterations);
            iterations = lastGood;
            break;
        }
        passes.keepGood();
        lastGood = iterations;
        if (cancelled) {
            // The last chunk ended without its check iteration: the snapshot is stale.
            result.cancelled = true;
            break;
        }
        if (options.stopping == StoppingRule::Potentials) {
            // The shared rule (potential_check.h) from the last two iterates, in log
            // form on the host: O(M + N) values per check.
            passes.readLogPotentials(logs[0], logs[1], logs[2], logs[3]);
            result.error = potentialCheckError(problem, logs[0], logs[1], logs[2], logs[3], setup.translate);
            if (options.tolerance > 0 && result.error < options.tolerance &&
                belowFp32Accuracy(passes.potentialResolution(), logs[0], logs[2])) {
                // The iterates stopped moving at the passes' precision floor, above what
                // an fp32 plan promises: say so instead of "converged".
                result.message = "stopped at the precision floor of the fp32 potentials (the plan is not within " +
                                 std::to_string(kFp32PlanAccuracy) + " of the float64 plan): " + setup.precisionAdvice;
                monitor.report(iterations, result.error);
                break;
            }
        } else {
            result.error = changeError(c);
        }
        // Keep each slice near kSliceSeconds of device work so cancellation stays prompt.
        if (c.chunkSeconds > 0) {
            const int wanted = sliceFor(c.chunkSeconds / std::max(1, done));
            if (wanted > 2 * slice || 2 * wanted < slice) slice = wanted;
        }
        if (monitor.report(iterations, result.error, setup.wantMarginals ? c.marginalA : nan,
                           setup.wantMarginals ? c.marginalB : nan)) {
            result.converged = true;
            break;
        }
    }
    result.iterations = iterations;
    result.passes = devicePasses >= 0
                        ? static_cast<std::uint64_t>(devicePasses)
                        : static_cast<std::uint64_t>(iterations) * static_cast<std::uint64_t>(setup.sweepsPerIteration);
    result.timings.iterateSeconds = deviceSeconds;
}

}  // namespace uot::gpu::detail
