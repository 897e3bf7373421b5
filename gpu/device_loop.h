#pragma once
// The one host iteration loop of the GPU engines that keep their scalings on the
// device and check every checkEvery iterations (gpu-fused and the other
// GpuSolver variants, plain, TI or over-relaxed; gpu-mapreduce; gpu-nccl). It owns the
// check cadence, the slices of queued work between cancellation polls, the
// snapshot of the last good iterate, the stopping test (the shared one on the
// log-potentials, potential_check.h, or POT's rule), the precision floor,
// progress reports and the counters. An engine provides DevicePasses: queueing
// iterations and the few O(M + N) copies and reductions the loop asks for.
// Host code without CUDA types (the engines hide their streams and events).

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "core/transport/solve_options.h"
#include "core/transport/solve_result.h"
#include "core/transport/uot_problem.h"

namespace uot::gpu::detail {

// What passes that decide on the device report at a check (DevicePasses::decidesOnDevice).
enum class DeviceStop { Running, Converged, IterationCap, NotFinite };

// What the check after a chunk of iterations finds (DevicePasses::check).
struct DeviceCheck {
    bool bad = false;              // a scaling is not finite (or not > 0 in the multiplicative form)
    double diffU = 0, scaleU = 1;  // max |u - uPrev| and max(1, |u|, |uPrev|) (POT's rule)
    double diffV = 0, scaleV = 1;
    double marginalA = 0, marginalB = 0;  // |P 1 - a|_1, |P^T 1 - b|_1 when asked for, else NaN
    double chunkSeconds = 0;              // time of the iterations since startChunk
    // Set by passes that decide on the device (else left as they are):
    int iterations = -1;    // accepted iterations so far
    long long passes = -1;  // passes over the matrix so far (undone steps included)
    double error = 0;       // the stopping figure of the last accepted iteration
    DeviceStop stop = DeviceStop::Running;
};

// One engine's iterations on the device. The loop calls, per check:
// startChunk, (launch, markSlice, waitSlice)*, snapshot, launch(1), check, then
// keepGood or restoreGood, and readLogPotentials for the potentials' rule.
class DevicePasses {
public:
    virtual ~DevicePasses() = default;
    // Starts timing the iterations of the next chunk.
    virtual void startChunk() = 0;
    // Queues `count` iterations (asynchronously).
    virtual void launch(int count) = 0;
    // Marks the end of the work queued so far in slot 0 or 1, and waits for such a
    // mark: the loop keeps at most two slices queued and polls cancellation between.
    virtual void markSlice(int slot) = 0;
    virtual void waitSlice(int slot) = 0;
    // The iterate before the check's iteration: previous := current.
    virtual void snapshot() = 0;
    // Stops the chunk's timer, compares current with previous on the device (and
    // the plan's marginals when `marginals`), and waits for the result.
    virtual DeviceCheck check(bool marginals) = 0;
    // good := current (a check passed), or current := good (it found a bad value).
    virtual void keepGood() = 0;
    virtual void restoreGood() = 0;
    // The current and previous iterates as log-potentials (log u, log v) on the host.
    virtual void readLogPotentials(std::vector<double>& logU, std::vector<double>& logUPrev, std::vector<double>& logV,
                                   std::vector<double>& logVPrev) = 0;
    // Relative precision with which the passes hold the potentials: 0 for float64
    // (or scalings kept in the solve's precision), FLT_EPSILON for potentials in float.
    virtual double potentialResolution() const { return 0; }
    // True for passes whose step kernel decides on the device (the accelerated
    // GpuSolver iteration: it accepts or undoes each step, sets omega and tests
    // convergence): the loop then launches whole chunks of checkEvery iterations
    // without snapshots, and takes the iterations, the error, the marginals and the
    // stop from check(). Iterations queued after the device stopped are undone there.
    virtual bool decidesOnDevice() const { return false; }
    // True for such passes whose launch ends by itself when the device stops (it
    // runs no frozen iterations after a stop): the loop then launches chunks of up
    // to 512 iterations instead of checkEvery, so a short solve is one launch and one
    // read of the state; checks, progress reports and cancellation polls come once
    // a chunk. The iterations and the result are the same.
    virtual bool stopsWithinLaunch() const { return false; }
};

// The base of passes whose kernels decide on the device (decidesOnDevice): the loop
// only starts chunks, launches and checks, so the host-side hooks for slices,
// snapshots and the last good iterate do nothing.
class DeviceDecidedPasses : public DevicePasses {
public:
    bool decidesOnDevice() const override { return true; }
    void markSlice(int) override {}
    void waitSlice(int) override {}
    void snapshot() override {}
    void keepGood() override {}
    void restoreGood() override {}
    void readLogPotentials(std::vector<double>&, std::vector<double>&, std::vector<double>&,
                           std::vector<double>&) override
    {
    }
};

// One problem of a group whose passes decide per problem on the device (the
// batched solver): its figures at a check.
struct ProblemCheck {
    int iterations = 0;    // accepted iterations
    long long passes = 0;  // passes over the problem (undone iterations included)
    double error = 0;      // its stopping figure
    DeviceStop stop = DeviceStop::Running;
};

// The group's check for the loop: it runs while one problem does. iterations: the
// fewest accepted ones of a running problem (the chunks and the cap follow the
// slowest; a problem with undone steps lags behind the others), else the most of
// all; passes: the most; error: the largest of the running problems; stop: Running,
// else IterationCap when one stopped at the cap, else Converged (a problem that
// stopped on a non-finite value stops alone: its result says so). At least one problem.
DeviceCheck groupCheck(std::span<const ProblemCheck> problems);

struct DeviceLoopSetup {
    std::uint64_t bytesPerIteration = 0;        // traffic_model.h, for progress and the counters
    int sweepsPerIteration = 1;                 // passes over the matrix (or the points) per iteration
    double secondsPerIterationEstimate = 1e-5;  // the first slice's length (later ones are measured)
    bool translate = false;                     // the iterations take TI shifts
    bool wantMarginals = false;                 // progress marginals at checks (extra reads: only when listened to)
    // Marks `result` not finite at `iteration` (the message names the engine's cause).
    std::function<void(SolveResult& result, int iteration)> markNotFinite;
    // Appended to the precision-floor message ("use ...").
    std::string precisionAdvice = "use fp64";
};

// Runs iterations from `iterations` (already done, e.g. counter sampling) up to
// options.maxIterations, checking every options.checkEvery. Leaves the last good
// iterate on the device and fills iterations, passes, error, converged,
// cancelled, status/message and timings.iterateSeconds of result.
void runDeviceLoop(const UotProblem& problem, const SolveOptions& options, const SolveControl& control,
                   DevicePasses& passes, const DeviceLoopSetup& setup, int iterations, SolveResult& result);

}  // namespace uot::gpu::detail
