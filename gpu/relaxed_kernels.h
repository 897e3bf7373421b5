#pragma once
// Internal to gpu/: the over-relaxed iteration (--accel relax|auto) on the
// device, in plain and translation-invariant mode. The pass applies the row
// relaxation per row (it reads omega from RelaxedState::omega on the device);
// two O(M + N) kernels after it (launchRelaxedStep) do everything else of
// core/transport/relaxed_step.cpp's afterPass, the safeguard and the omega rule
// (core/transport/relaxed_rules.h, the same code as the CPU's) and the
// convergence test, all on the device: no host sync per iteration, so the
// iteration stays inside the CUDA graph. docs/TIME_TO_SOLUTION.md ("GPU") says why.
// Two kernels: a sweep whose last block reduces the partials once and decides,
// and the commit whose last block finishes the stopping figures. gpu-fused runs
// the sweep inside its column half-step kernel instead (launchColumnsAndRelaxedStep).

#include <cuda_runtime.h>

#include <cstddef>

#include "core/transport/relaxed_rules.h"

namespace uot::gpu::detail {

// Why the device stopped iterating (the iterate is then frozen: every later pass
// of the replayed graph is undone by the step kernel until the host notices).
enum RelaxedStop : int { kRunning = 0, kConverged = 1, kIterationCap = 2, kNotFinite = 3 };

// The loop's state, kept on the device between iterations and read back at checks.
struct RelaxedState {
    OmegaRule rule;
    double omega = 1;          // the omega the next pass uses (the pass kernels read it)
    double lastObjective = 0;  // dual objective and its scale of the last accepted iterate
    double lastScale = 0;
    int haveLast = 0;
    int iterations = 0;        // accepted steps
    long long passes = 0;      // passes over K that were not frozen (rejected ones included)
    int stop = kRunning;
    double error = 1;          // max(change, violationA, violationB) of the last accepted step
    double marginalA = 0;      // |P 1 - a|_1 of the input plan of the last accepted step
    double marginalB = 0;      // |P^T 1 - b|_1 of its new plan
    double violationA = 0;     // the normalised row and column violations of the last accepted step
    double violationB = 0;
    double shiftS = 0;         // the TI shifts s, t of the last step taken (0 in plain mode)
    double shiftT = 0;
    unsigned int tickets[2] = {0, 0};  // the step kernels' last-block counters (0 between steps)
};

struct RelaxedParams {
    double ra = 0, rb = 0, fb = 1, cs = 0, ct = 0;  // TranslationCoefficients and f_b
    bool translate = false;   // add the TI shifts
    bool logDomain = false;   // the scalings are log u, log v (gpu-log)
    bool safeguard = true;    // SolveOptions::relaxationSafeguard
    double eps = 1, tauA = 1, tauB = 1;
    double slack = 1e-11;     // objectiveSlack(fp32)
    double tolerance = 0;     // 0: never converged, run to maxIterations
    int maxIterations = 0;
    int sweeps = 1;           // passes over K of one iteration
};

// Doubles of the scratch buffer the step needs (per-block partials): for
// launchRelaxedStep, cols = 0; for launchColumnsAndRelaxedStep, the columns.
std::size_t relaxedWorkDoubles(std::size_t cols);

// After a pass that left F~ (relaxed rows, with omega = state->omega) in u and the
// plain column update G^pass in v, computed from the iterate (uSaved, vSaved):
// turns (u, v) into the accelerated iterate, decides on it (accept: (uSaved,
// vSaved) = (u, v); reject or frozen: (u, v) = (uSaved, vSaved)) and updates the
// state. V: T for multiplicative variants, double for gpu-log. Two O(M + N)
// kernels over up to 128 blocks (the sweep with the decision in its last block,
// the commit with the stopping test in its last block); work:
// relaxedWorkDoubles(0) doubles.
template <typename V>
void launchRelaxedStep(V* u, V* v, V* uSaved, V* vSaved, std::size_t rows, std::size_t cols, const double* a,
                       const double* b, const double* logA, const double* logB, const RelaxedParams& params,
                       RelaxedState* state, double* work, cudaStream_t stream);

// gpu-fused (T = float or double), instead of its column finalize (launchFinalizeColumns,
// same partials convention: a negative count for private rows) and launchRelaxedStep:
// the step's sweep runs inside the column half-step kernel, one block per 32 columns
// (each finalizes its columns into v, then sweeps them and its share of the rows; the
// last block decides), then the commit. Both launched with programmatic dependent
// launch when `programmatic` (the commit lets the next pass start streaming K).
// work: relaxedWorkDoubles(cols) doubles.
// The widest matrix whose gpu-fused solves take launchColumnsAndRelaxedStep: up to
// 128 column blocks, as many as the step kernels' grid. Measured on an H200
// (docs/BENCHMARKS.md, 2026-11-27): 7 % faster than the step kernels at 4096^2, 4 %
// slower at 16384^2 fp32 (512 column blocks whose last one gathers every partial).
constexpr std::size_t kColumnsStepMaxCols = 4096;

template <typename T>
void launchColumnsAndRelaxedStep(T* partials, int partialRows, std::size_t pitch, double fb, T* colSums, T* u, T* v,
                                 T* uSaved, T* vSaved, std::size_t rows, std::size_t cols, const double* a,
                                 const double* b, const double* logA, const double* logB,
                                 const RelaxedParams& params, RelaxedState* state, double* work, bool programmatic,
                                 cudaStream_t stream);

}  // namespace uot::gpu::detail
