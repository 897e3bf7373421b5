#pragma once
// How a solve is run, and how its caller observes and cancels it.

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <string>

#include "core/transport/uot_problem.h"

namespace uot {

// How each iteration updates the scalings. Both modes have the same fixed point
// (the entropic UOT solution); they differ in how many passes reach it.
enum class IterationMode {
    Plain,                 // u then v, as POT's sinkhorn_unbalanced (docs/ALGORITHMS.md section 1)
    TranslationInvariant   // Sejourne, Vialard, Peyre 2022: each half-step also takes the optimal
                           // dual translation (f + lambda, g - lambda), in closed form, in the same pass
};

std::string toString(IterationMode mode);               // "plain" | "translation-invariant"
IterationMode parseIterationMode(const std::string& text);  // "plain" | "ti" | "translation-invariant"
// The mode of a mode request ("auto", "plain", "ti", ...) for a solver request:
// "auto" is translation-invariant with the solver "auto" and plain for a named
// variant (which then stays comparable with POT iteration for iteration). The
// CLI and the studio both resolve their defaults here.
IterationMode resolveIterationMode(const std::string& modeRequest, const std::string& solverRequest);

// Over-relaxation of each half-step (docs/TIME_TO_SOLUTION.md, "Over-relaxation"):
// F <- (1 - omega) F_old + omega F_update in log form, with a safeguard that
// undoes a step which lowers the dual objective and shrinks omega.
enum class Acceleration {
    None,   // the plain or translation-invariant step as it is
    Relax,  // fixed omega (SolveOptions::omega), shrunk by the safeguard
    Auto    // omega from the observed linear rate of the unrelaxed step: 2 / (1 + sqrt(1 - rate))
};

std::string toString(Acceleration acceleration);               // "none" | "relax" | "auto"
Acceleration parseAcceleration(const std::string& text);        // throws Error(InvalidArgument)
// The acceleration of a request for a solver request: "" (not given) is Auto
// with the solver "auto" and None for a named variant (comparable with POT
// iteration for iteration); other requests are parsed.
Acceleration resolveAcceleration(const std::string& request, const std::string& solverRequest);

// When an iteration counts as converged (--stop).
enum class StoppingRule {
    // The default, the same for every engine: the largest relative change of the
    // plan's entries in log units (max_ij |dF_i + dG_j| / max(1, max_ij |F_i + G_j|),
    // F = log u, G = log v) and the violations of both marginal optimality conditions
    // (relative L1, computed from the log-potentials), all below the tolerance
    // (relaxed_step.h). Never computed on exponentiated scalings, so scalings that
    // underflow cannot read as "no change".
    Potentials,
    // POT's rule (docs/ALGORITHMS.md section 1) on the multiplicative scalings every
    // checkEvery iterations: iteration-for-iteration comparisons with POT only (it
    // reads underflowed scalings as converged).
    Pot
};

std::string toString(StoppingRule rule);               // "potentials" | "pot"
StoppingRule parseStoppingRule(const std::string& text);  // throws Error(InvalidArgument)

// eps-scaling (annealing): stages at eps = start, start * factor, ... while above
// the target, each warm-started from the previous one's potentials, then the
// target eps to the requested tolerance. start = 0 means no schedule.
struct EpsSchedule {
    double start = 0;
    double factor = 0.5;
    bool enabled() const { return start > 0; }
    bool operator==(const EpsSchedule&) const = default;
};
// "START,FACTOR" (e.g. "1,0.5") or "none"; throws Error(InvalidArgument) naming the fault.
EpsSchedule parseEpsSchedule(const std::string& text);
// Throws Error(InvalidArgument) when the schedule cannot reach `targetEps`
// (NaN, start < target, factor outside (0, 1)).
void validateEpsSchedule(const EpsSchedule& schedule, double targetEps);

// What a solve is asked to compute and how: everything in SolveOptions but the
// warm start. Compared as a whole (the pipeline's plan cache, core/pipeline), so a
// member added here takes part in every comparison without being listed anywhere.
struct SolveParameters {
    Precision precision = Precision::Fp32;  // storage and arithmetic of the kernel matrix
    IterationMode mode = IterationMode::Plain;
    Acceleration acceleration = Acceleration::None;
    double omega = 1.5;   // Relax: the starting omega, in [1, 2)
    // Auto: start at this omega instead of measuring the rate first (0 = measure);
    // eps-scaling passes on each stage's omega, scaled to the next eps.
    double autoInitialOmega = 0;
    // Relax/Auto: undo a step that lowers the dual objective and shrink omega (tests
    // turn it off to show what it prevents).
    bool relaxationSafeguard = true;
    EpsSchedule epsSchedule;  // applied by the solvers of createSolver (core/registry)
    int maxIterations = 1000;
    // The stopping test (StoppingRule): by default the potentials' criterion, evaluated
    // after every iteration; StoppingRule::Pot (only without acceleration) evaluates POT's
    // rule every checkEvery iterations between the iterate at the check and the one
    // before it. 0 disables it (run exactly maxIterations).
    double tolerance = 1e-6;
    StoppingRule stopping = StoppingRule::Potentials;
    int checkEvery = 10;  // iterations between convergence checks and progress reports (>= 1)
    int threads = 0;      // CPU threads, 0 = all available
    int device = 0;       // GPU ordinal for the gpu-* variants
    // When the multiplicative iteration would underflow (small eps), switch to
    // the stabilised log-domain solver and report it. When false (the caller
    // forced a variant) the solve stops with NumericalStatus::Underflow instead.
    bool allowStabilizedFallback = true;
    // Compute mass, marginal violations and objective of the final plan (one
    // extra pass over the matrix after the iterations; not timed as iterations).
    // Skipped when the solve was cancelled (the figures are then NaN).
    bool evaluateFinalPlan = true;
    // Read the device's hardware counters (DRAM bytes, cache hit rates) over a
    // few extra iterations run apart from the timed ones (GPU variants: CUPTI's
    // range profiler). The result's `counters` says what was read, or why not.
    bool sampleHardwareCounters = false;

    bool operator==(const SolveParameters&) const = default;
};

struct SolveOptions : SolveParameters {
    // Warm start: scalings u (rows) and v (cols) of a previous solve, in
    // multiplicative form. Empty means u = v = 1 (POT >= 0.9).
    std::span<const double> warmU;
    std::span<const double> warmV;
    // Warm start in log form (log u, log v), for potentials whose exponentials leave
    // the floating-point range (eps-scaling stages). Takes precedence over warmU/warmV.
    std::span<const double> warmLogU;
    std::span<const double> warmLogV;

    // The same solve is asked for when the parameters agree: a warm start says
    // where the iteration begins, not what it converges to.
    bool operator==(const SolveOptions& other) const
    {
        return static_cast<const SolveParameters&>(*this) == static_cast<const SolveParameters&>(other);
    }
};

// Reported at every check.
struct SolveProgress {
    int iteration = 0;                 // iterations completed
    double error = 0;                  // POT's stopping criterion at this check
    double marginalErrorA = 0;         // |P 1 - a|_1 for the current scalings (NaN if not computed)
    double marginalErrorB = 0;         // |P^T 1 - b|_1 (NaN if not computed)
    double elapsedSeconds = 0;         // since the start of the iterations
    double secondsPerIteration = 0;    // over the last check interval
    std::uint64_t bytesPerIteration = 0;  // matrix bytes the variant moves per iteration
    std::uint64_t bytesMoved = 0;      // cumulative since the start of the iterations
    // eps-scaling (SolveOptions::epsSchedule): this check is in stage `stage`
    // (0-based) of `stageCount`, solved at `stageEps`; iteration, elapsedSeconds and
    // bytesMoved then count from the start of the first stage. Without a schedule:
    // stage 0 of 1 and stageEps 0 (the problem's eps).
    int stage = 0;
    int stageCount = 1;
    double stageEps = 0;
};

using ProgressObserver = std::function<void(const SolveProgress&)>;

struct SolveControl {
    ProgressObserver onProgress;                   // may be empty; called on the solving thread
    const std::atomic<bool>* cancel = nullptr;     // polled every iteration
};

// The control of a later part of one solve (an eps-scaling stage, the log-domain
// continuation after an underflow): its progress counts on from the iterations,
// seconds and bytes already done, then passes through `adjust` (may be empty).
// Holds a reference to `control`, which must outlive it.
SolveControl continuedControl(const SolveControl& control, int doneIterations, double doneSeconds,
                              std::uint64_t doneBytes, std::function<void(SolveProgress&)> adjust = {});

}  // namespace uot
