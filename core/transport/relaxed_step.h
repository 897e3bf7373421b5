#pragma once
// The accelerated iteration of the CPU scaling loop: over-relaxation of each
// half-step, optionally on top of the translation-invariant step, with a
// safeguard and an automatic omega. docs/TIME_TO_SOLUTION.md ("Over-relaxation")
// derives it. With F = log u, G = log v and omega = w:
//
//   row:     F^ = f_a (log a - LSE_j(log K_ij + G_j))      (plain half-step)
//            F  = (1 - w) F_old + w (F^ + s)              (s: TI shift, 0 in plain mode)
//   column:  G^ = f_b (log b - LSE_i(log K_ij + F_i))
//            G  = (1 - w) G_old + w (G^ + t)
//
// The pass applies the row relaxation per row (it needs F_old, which it reads),
// computes the column sums with F~ = (1 - w) F_old + w F^ and writes the plain
// column update G^pass; s is one number, so the column sums of F = F~ + w s are
// e^(w s) times the pass's. Everything here is O(M + N) after the pass.
//
// The same O(M + N) work gives the convergence criterion (largest change of
// the plan's entries in log units and the violation of both marginal optimality conditions) and the dual
// objective of the new iterate (in TI mode at its best translation: the TI
// fixed point is the optimum up to a translation (F + c, G - c), the same plan),
// which the safeguard compares with the previous one: a step that lowers it is undone and omega shrinks. A step with
// omega = 1 is an exact block maximisation of the dual and is always kept, and
// after kMaxRejections omega only shrinks, to 1 within 6 more rejections: the
// iteration cannot diverge.

#include <cstdint>
#include <span>
#include <vector>

#include "core/transport/relaxed_rules.h"
#include "core/transport/row_block_reduction.h"
#include "core/transport/solve_options.h"
#include "core/transport/translation_invariant.h"
#include "core/transport/uot_problem.h"

namespace uot {

// What the criterion and the reports need about one accepted iterate.
struct RelaxedStepFigures {
    // max_ij |dF_i + dG_j| / max(1, max_ij |F_i + G_j|): the largest relative change of the
    // plan's entries (log units), blind to translations (F + c, G - c)
    double change = 0;
    // | P 1 / |P 1| - t / |t| |_1 with t = a e^{-r_a F}, of the input plan: the
    // optimality condition of the rows up to a common factor (see afterPass)
    double violationA = 0;
    double violationB = 0;    // the same for the columns (t = b e^{-r_b G}) of the new plan
    double violationMass = 0;  // the common factors' condition (relaxedMassViolation), new plan
    double marginalErrorA = 0;  // |P 1 - a|_1 of the input plan
    double marginalErrorB = 0;  // |P^T 1 - b|_1 of the new plan
    double objective = 0;     // dual objective of the new plan (up to a constant)
    double objectiveScale = 0;  // sum of the magnitudes of its terms (for the rounding allowance)
    double error() const;     // relaxedError: the stopping criterion (StoppingRule::Potentials)
};

// Chooses omega: fixed (Relax) or from the observed rate of the unrelaxed step
// (Auto), and shrinks it on the safeguard's rejections (the rule is OmegaRule of
// relaxed_rules.h, which the GPU's device-resident step runs too).
class OmegaController {
public:
    // omega: Relax's omega; Auto's starting omega when > 1 (else measured first).
    OmegaController(Acceleration acceleration, double omega) { m_rule.start(acceleration, omega); }

    double omega() const { return m_rule.omega; }
    // After an accepted step with this change (max |dF|, |dG|).
    void accepted(double change) { m_rule.accepted(change); }
    // After a rejected step (notFinite: it left the floating-point range): OmegaRule::rejected.
    void rejected(bool notFinite) { m_rule.rejected(notFinite); }
    int rejections() const { return m_rule.rejections; }

    static constexpr int kMaxRejections = OmegaRule::kMaxRejections;
    static constexpr double kMaxOmega = OmegaRule::kMaxOmega;

private:
    OmegaRule m_rule;
};

class RelaxedStep {
public:
    // translate: add the TI shifts (they vanish when both taus are infinite).
    // logDomain: the scalings are log u, log v (else u, v). fp32: the pass rounds
    // to float (the safeguard's objective comparison allows for it). rowBlocks: set
    // when `problem` is this process's block of rows of a solve distributed by rows
    // (row_block_reduction.h): every row-side sum and extreme is then taken over all
    // blocks, so that every process computes the same shift, figures and safeguard
    // decision (null: one process). A step combines them in two packed reductions
    // (the second, one number, overlapped with the column side of the step, or with
    // the next pass: deferViolation).
    RelaxedStep(const UotProblem& problem, bool logDomain, bool translate, bool fp32,
                RowBlockReduction* rowBlocks = nullptr);

    // Call with the pass input (u, v) before the pass.
    void beforePass(std::span<const double> u, std::span<const double> v);

    // Turns the pass output (uNew: relaxed rows F~ with omega; vNew: plain G^pass)
    // into the accelerated iterate in place and fills figures. Returns false when a
    // value is not finite. deferViolation (row blocks): the rows' violation, which
    // only the stopping test needs, is left in flight (figures.violationA is NaN)
    // so that its reduction travels during the next pass; finishViolation must then
    // come before the next afterPass.
    bool afterPass(double omega, std::span<double> uNew, std::span<double> vNew, RelaxedStepFigures& figures,
                   bool deferViolation = false);
    // Completes figures.violationA of a deferred afterPass (nothing when none is in flight).
    void finishViolation(RelaxedStepFigures& figures);

    // Whether the iterate of `candidate` may replace the one of `previous`: its dual
    // objective is not lower (up to rounding).
    bool acceptable(const RelaxedStepFigures& previous, const RelaxedStepFigures& candidate) const;

private:
    // log sum_k exp(logW_k - r x_k) over this process's entries (the columns).
    double logSum(const std::vector<double>& logW, const std::vector<double>& x, double r) const;

    const UotProblem& m_problem;
    RowBlockReduction* m_rowBlocks;
    TranslationCoefficients m_c;
    bool m_logDomain, m_translate;
    double m_fa, m_fb, m_slack;
    std::vector<double> m_logA, m_logB;
    std::vector<double> m_F, m_G;        // logs of the pass input
    std::vector<double> m_hatTerms, m_rowTerms, m_Gnew;  // work vectors
    std::vector<double> m_rowMarginal, m_rowTarget, m_colMarginal, m_colTarget;
    RowTotals m_violation{1, 0, 0};  // the rows' violation over the blocks
    bool m_violationPending = false;
};

}  // namespace uot
