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

struct SolveOptions {
    Precision precision = Precision::Fp32;  // storage and arithmetic of the kernel matrix
    IterationMode mode = IterationMode::Plain;
    int maxIterations = 1000;
    // POT's stopping rule (docs/ALGORITHMS.md section 1), evaluated every
    // checkEvery iterations between the iterate at the check and the one before it.
    // 0 disables it (run exactly maxIterations).
    double tolerance = 1e-6;
    int checkEvery = 10;  // iterations between convergence checks and progress reports (>= 1)
    int threads = 0;      // CPU threads, 0 = all available
    int device = 0;       // GPU ordinal for the gpu-* variants
    // Warm start: scalings u (rows) and v (cols) of a previous solve, in
    // multiplicative form. Empty means u = v = 1 (POT >= 0.9).
    std::span<const double> warmU;
    std::span<const double> warmV;
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
};

using ProgressObserver = std::function<void(const SolveProgress&)>;

struct SolveControl {
    ProgressObserver onProgress;                   // may be empty; called on the solving thread
    const std::atomic<bool>* cancel = nullptr;     // polled every iteration
};

}  // namespace uot
