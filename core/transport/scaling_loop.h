#pragma once
// The iteration loop every CPU scaling variant shares: cancellation, checks,
// the stopping test (StoppingRule: the potentials' criterion by default, POT's
// rule on request), progress with marginal violations, underflow handling.
// A variant supplies only its pass over the matrix (ScalingPasses).
//
// Marginal violations at a check come for free: |P^T 1 - b| from the column
// sums the pass has just computed, and |P 1 - a| from the row products the
// *next* pass computes anyway (the report is sent then). Only when the loop
// ends at a check does one extra row pass run.

#include <cstdint>
#include <functional>
#include <vector>

#include "core/transport/kernel_matrix.h"
#include "core/transport/row_block_reduction.h"
#include "core/transport/solve_options.h"
#include "core/transport/solve_result.h"
#include "core/transport/uot_problem.h"

namespace uot {

enum class PassStatus {
    Ok,
    NotFinite,  // a scaling became zero, infinite or NaN: the output is unusable
    Cancelled   // the pass saw the cancel flag and stopped early (output unusable)
};

// One variant's passes over the matrix. Scalings are host vectors in the
// variant's representation: multiplicative (u, v) or logarithmic (log u, log v).
class ScalingPasses {
public:
    virtual ~ScalingPasses() = default;

    // One iteration (u first, then v) from (u, v) to (uNew, vNew).
    // When rowMarginal: errA = sum_i |(P 1)_i - a_i| for the plan of the *input*
    // (u, v). When colMarginal: errB = sum_j |(P^T 1)_j - b_j| for the plan of
    // the *output* (uNew, vNew).
    virtual PassStatus iterate(const double* u, const double* v, double* uNew, double* vNew, bool rowMarginal,
                               bool colMarginal, double& errA, double& errB) = 0;

    // sum_i |(P 1)_i - a_i| for the plan of (u, v), by one extra row pass.
    virtual double rowMarginalError(const double* u, const double* v) = 0;

    // Sweeps over the matrix that one iterate() makes (2 for two mat-vecs).
    virtual int sweepsPerIteration() const { return 1; }

    // Over-relaxation of the row half-step (relaxed_step.h): the next iterate()
    // writes uNew = u^(1 - omega) * (a / K v)^(f_a omega) (in the variant's
    // representation) and computes the column sums with it. Every pass starts from
    // the (u, v) it is given: the loop may change them between passes (TI shifts,
    // the relaxed column step, the undo of a rejected step); mapuot folds such
    // changes into its next pass (mapuot_solver.cpp).
    virtual bool supportsRelaxation() const { return false; }
    virtual void setRowRelaxation(double omega) { (void)omega; }

    // The relative precision with which the passes hold the potentials (log u, log v
    // in the cost's units over eps): 0 when they keep them in float64 (every variant
    // but the fp32 matrix-free one, which keeps them in float). The plan can then be
    // no closer than about this times max |log u| + max |log v| (relative L1).
    virtual double potentialResolution() const { return 0; }
};


struct ScalingLoopSetup {
    bool logDomain = false;          // scalings are log u, log v
    KernelBuildReport kernel;        // for the underflow message
    std::uint64_t bytesPerIteration = 0;
    // Set when this process holds one block of rows of a solve distributed by
    // rows (row_block_reduction.h; either form). The passes then
    // return status, errA and errB for all rows (they combine them in their own
    // reduction), and the loop combines the stopping test's maxima and the
    // translation-invariant step's row sums. Null: one process, nothing extra.
    RowBlockReduction* rowBlocks = nullptr;
    bool fp32 = false;               // the pass rounds to float
    // Set by a solve distributed by rows whose rows may move between the processes
    // during the solve (uot-mpi --balance). Called at each check before the last
    // iteration, with no reduction in flight and this block's u of the accepted
    // iterate; collective. Returns true when the rows moved: the problem block and
    // the passes then hold the new rows and u their scalings, and the loop sets its
    // row-side state up again. The iterates do not depend on the split.
    std::function<bool(int iteration, std::vector<double>& u)> moveRows;
};

// Runs the iterations from (u, v) (in the variant's representation), leaving
// the last good iterate in u, v and filling iterations, passes, mode, error,
// converged, cancelled, status/message and timings.iterateSeconds of result.
// options.mode = TranslationInvariant corrects each iterate with a
// TranslationStep (translation_invariant.h): O(M + N), no extra sweep.
// options.stopping = Potentials (the default) or options.acceleration != None runs
// the potentials' loop (relaxed_step.h: over-relaxation with its safeguard when
// asked, TI shifts when options.mode asks, and the criterion of StoppingRule::
// Potentials evaluated after every iteration); StoppingRule::Pot without
// acceleration runs POT's rule every checkEvery iterations.
void runScalingLoop(const UotProblem& problem, const SolveOptions& options, const SolveControl& control,
                    ScalingPasses& passes, const ScalingLoopSetup& setup, std::vector<double>& u,
                    std::vector<double>& v, SolveResult& result);

}  // namespace uot
