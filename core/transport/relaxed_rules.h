#pragma once
// The scalar rules of the over-relaxed iteration (relaxed_step.h), shared by the
// CPU loop and the GPU's device-resident step (gpu/relaxed_kernels.cu), so that
// both decide the same way: the automatic omega and its shrinking on a rejected
// step (OmegaRule), the dual objective and the change of the plan from the
// O(M + N) sums of one step (RelaxedTotals), and the safeguard's test
// (objectiveAcceptable). Plain data and functions that compile for the host and,
// under nvcc, for the device; no CUDA header is included here.

#include <math.h>

#include "core/transport/solve_options.h"

#if defined(__CUDACC__)
#define UOT_HOST_DEVICE __host__ __device__
#else
#define UOT_HOST_DEVICE
#endif

namespace uot {

namespace relaxed_detail {
UOT_HOST_DEVICE inline double clampTo(double x, double lo, double hi) { return x < lo ? lo : (x > hi ? hi : x); }
UOT_HOST_DEVICE inline double larger(double x, double y) { return x > y ? x : y; }
}  // namespace relaxed_detail

// Chooses omega: fixed (Relax) or from the observed rate of the unrelaxed step
// (Auto), and shrinks it on the safeguard's rejections, after which Auto measures the
// rate again. docs/TIME_TO_SOLUTION.md, "Automatic omega". Keeps the last 7 changes
// since the rate was last reset.
struct OmegaRule {
    static constexpr int kMaxRejections = 8;
    static constexpr double kMaxOmega = 1.9;
    static constexpr int kHistory = 7;

    Acceleration acceleration = Acceleration::None;
    double omega = 1;
    bool estimating = false;  // Auto: still measuring the rate with omega = 1
    int rejections = 0;
    int count = 0;            // changes recorded since the last reset
    double limit = kMaxOmega;  // the largest omega Auto may move up to (lowered by a non-finite step)
    double history[kHistory] = {0, 0, 0, 0, 0, 0, 0};

    // omega: Relax's omega; Auto's starting omega when > 1 (else measured first).
    UOT_HOST_DEVICE void start(Acceleration mode, double startOmega)
    {
        acceleration = mode;
        omega = mode == Acceleration::Relax ? startOmega : 1.0;
        estimating = mode == Acceleration::Auto;
        rejections = 0;
        count = 0;
        limit = kMaxOmega;
        if (estimating && startOmega > 1.0) {
            omega = startOmega < kMaxOmega ? startOmega : kMaxOmega;
            estimating = false;
        }
    }

    // The change recorded `back` steps ago (0: the latest).
    UOT_HOST_DEVICE double recent(int back) const { return history[(count - 1 - back) % kHistory]; }

    // After an accepted step with this change.
    UOT_HOST_DEVICE void accepted(double change)
    {
        using relaxed_detail::clampTo;
        if (acceleration != Acceleration::Auto || rejections >= kMaxRejections) return;
        history[count % kHistory] = change;
        ++count;
        if (count < 7) return;
        const double c1 = recent(0), c4 = recent(3), c7 = recent(6);
        if (!(c4 > 0) || !(c7 > 0) || !(c1 > 0)) return;
        // Linear rate over the last 3 iterations and the 3 before.
        const double r1 = cbrt(c1 / c4), r0 = cbrt(c4 / c7);
        if (!(r1 < 1)) return;
        if (estimating) {
            if (fabs(r1 - r0) >= 0.03 && count < 24) return;
            // Optimal successive over-relaxation for a Gauss-Seidel-like rate r: 2 / (1 + sqrt(1 - r)).
            omega = clampTo(2.0 / (1.0 + sqrt(1.0 - r1)), 1.0, kMaxOmega);
            estimating = false;
            count = 0;
            return;
        }
        // Relaxed: below the optimum, the rate rho of omega obeys Young's relation
        // (rho + omega - 1)^2 = rho omega^2 r; above it rho = omega - 1. A settled rate
        // clearly above omega - 1 means omega is too small: solve for r and move up.
        if (fabs(r1 - r0) >= 0.02 || !(r1 > omega - 1.0 + 0.02)) return;
        double r = (r1 + omega - 1.0) * (r1 + omega - 1.0) / (r1 * omega * omega);
        if (r > 0.9999) r = 0.9999;
        const double better = clampTo(2.0 / (1.0 + sqrt(1.0 - r)), 1.0, limit);
        if (better > omega + 0.01) {
            omega = better;
            count = 0;
        }
    }

    // After a rejected step: omega moves halfway to 1 (to 1 below 1.02), and the rate
    // is measured again from there, so that Auto may move omega up again (a step undone
    // in the first iterations at an estimated omega no longer holds the whole solve at
    // the halved omega), until kMaxRejections: from then on omega only shrinks, so at
    // most kMaxRejections + 6 steps are undone (0.9 halved six times is below 0.02).
    // notFinite: the step left the floating-point range, which a larger omega would
    // again: omega never moves above the halved one.
    UOT_HOST_DEVICE void rejected(bool notFinite)
    {
        ++rejections;
        estimating = false;
        count = 0;
        omega = 1.0 + 0.5 * (omega - 1.0);
        if (omega - 1.0 < 0.02) omega = 1.0;
        if (notFinite && omega < limit) limit = omega;
    }
};

// The O(M + N) sums of one relaxed step of the new iterate (F, G) that the
// objective and the change need; relaxed_step.cpp and gpu/relaxed_kernels.cu
// fill it the same way.
struct RelaxedTotals {
    double logTargetA = 0;  // log sum_i a_i exp(-r_a F_i)
    double logTargetB = 0;  // log sum_j b_j exp(-r_b G_j)
    double sumA = 0, sumB = 0;        // |a|, |b|
    double linearA = 0, linearB = 0;  // <a, F>, <b, G>
    double mass = 0;                  // sum_ij P_ij
    double dFmax = 0, dFmin = 0, dGmax = 0, dGmin = 0;  // extremes of the changes of F and G
    double fMax = 0, fMin = 0, gMax = 0, gMin = 0;      // extremes of F and G
};

// The dual objective (up to a constant) of the new iterate and the sum of the
// magnitudes of its terms (for the safeguard's rounding allowance):
// -tau_a (A(F) - |a|) - tau_b (B(G) - |b|) - eps mass, a side with infinite tau
// contributing eps <a, F> instead. translate: at its best translation (F + c, G - c),
// which is what the TI half-steps increase.
struct RelaxedObjective {
    double value = 0;
    double scale = 0;
};
UOT_HOST_DEVICE inline RelaxedObjective relaxedObjective(const RelaxedTotals& t, double eps, double tauA, double tauB,
                                                         double ra, double rb, bool translate)
{
    const bool finA = isfinite(tauA), finB = isfinite(tauB);
    double c = 0;
    if (translate) {
        if (finA && finB) c = (t.logTargetA - t.logTargetB) / (ra + rb);
        else if (finB) c = (log(t.sumA) - t.logTargetB) / rb;
        else c = (t.logTargetA - log(t.sumB)) / ra;
    }
    const double termA = finA ? -tauA * (exp(t.logTargetA - ra * c) - t.sumA) : eps * (t.linearA + t.sumA * c);
    const double termB = finB ? -tauB * (exp(t.logTargetB + rb * c) - t.sumB) : eps * (t.linearB - t.sumB * c);
    return {termA + termB - eps * t.mass, fabs(termA) + fabs(termB) + eps * t.mass};
}

// max_ij |dF_i + dG_j| / max(1, max_ij |F_i + G_j|): the largest relative change of
// the plan's entries (log units), blind to translations (F + c, G - c).
UOT_HOST_DEVICE inline double relaxedChange(const RelaxedTotals& t)
{
    using relaxed_detail::larger;
    return larger(fabs(t.dFmax + t.dGmax), fabs(t.dFmin + t.dGmin)) /
           larger(1.0, larger(fabs(t.fMax + t.gMax), fabs(t.fMin + t.gMin)));
}

// The optimality condition the normalised violations leave out: the common
// factors. At the optimum P 1 = a e^{-r_a F*}, P^T 1 = b e^{-r_b G*}, and the
// iterate (F, G) may sit at a translation (F* - c, G* + c) of it (the same plan:
// the TI iteration's fixed point), so mass = A(F) e^{-r_a c} = B(G) e^{r_b c}, i.e.
// r_b log(mass / A(F)) + r_a log(mass / B(G)) = 0. Returns that residual over
// (r_a + r_b), in log units: the relative error of the plan's mass (a side with an
// infinite tau fixes the mass alone: |log(mass / |b|)| when tau_b = inf). 0 when
// both taus are infinite (no translation: then nothing is left beyond the shapes).
UOT_HOST_DEVICE inline double relaxedMassViolation(const RelaxedTotals& t, double ra, double rb, bool active)
{
    if (!active) return 0;
    const double logMass = log(t.mass);
    const double rowGap = logMass - t.logTargetA;  // with tau_a = inf, A(F) = |a| (r_a = 0)
    const double colGap = logMass - t.logTargetB;
    return fabs(rb * rowGap + ra * colGap) / (ra + rb);
}

// The stopping criterion of StoppingRule::Potentials from the O(M + N) figures of a
// step: the change of the plan (relaxedChange), the violations of the marginals'
// shapes (normalised relative L1) and of their common factor (relaxedMassViolation).
// A NaN anywhere gives NaN (never "converged").
UOT_HOST_DEVICE inline double relaxedError(double change, double violationA, double violationB, double mass)
{
    if (isnan(change) || isnan(violationA) || isnan(violationB) || isnan(mass)) return NAN;
    using relaxed_detail::larger;
    return larger(larger(change, violationA), larger(violationB, mass));
}

// The precision floor (potential_check.h's belowFp32Accuracy, and the batched
// solver's fp32 log-sum-exp): whether potentials held with relative precision
// `resolution` (FLT_EPSILON for float; 0: float64) fail to keep the plan within
// `accuracy` (relative L1) of the float64 plan, from the largest |F| and |G|.
UOT_HOST_DEVICE inline bool belowPlanAccuracy(double resolution, double maxAbsF, double maxAbsG, double accuracy)
{
    return resolution != 0 && resolution * (maxAbsF + maxAbsG) > accuracy;
}

// The safeguard's test: a candidate's objective is not lower than the previous
// one's beyond the rounding allowance slack (1e-11 relative in fp64, 1e-5 in fp32).
UOT_HOST_DEVICE inline bool objectiveAcceptable(double previous, double previousScale, double candidate,
                                                double candidateScale, double slack)
{
    return candidate >= previous - slack * relaxed_detail::larger(previousScale, candidateScale);
}

// The rounding allowance of the safeguard for a precision.
UOT_HOST_DEVICE inline double objectiveSlack(bool fp32) { return fp32 ? 1e-5 : 1e-11; }

}  // namespace uot
