#include "core/transport/potential_check.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "core/transport/relaxed_rules.h"
#include "core/transport/translation_invariant.h"

namespace uot {

double potentialCheckError(const UotProblem& problem, std::span<const double> logU, std::span<const double> logUPrev,
                           std::span<const double> logV, std::span<const double> logVPrev, bool translate,
                           RowBlockReduction* rowBlocks)
{
    const double nan = std::numeric_limits<double>::quiet_NaN();
    const TranslationCoefficients c = translationCoefficients(problem);
    const double ra = c.ra, rb = c.rb;
    const double inf = std::numeric_limits<double>::infinity();
    RelaxedTotals t;
    t.dFmax = t.dGmax = t.fMax = t.gMax = -inf;
    t.dFmin = t.dGmin = t.fMin = t.gMin = inf;
    const std::size_t m = logU.size(), n = logV.size();
    std::vector<double> logTarget(m), logMarginal(m), logTargetNew(m), logColTarget(n);
    bool finite = true;
    for (std::size_t i = 0; i < m; ++i) {
        const double f = logU[i], fp = logUPrev[i];
        finite = finite && std::isfinite(f) && std::isfinite(fp);
        t.dFmax = std::max(t.dFmax, f - fp);
        t.dFmin = std::min(t.dFmin, f - fp);
        t.fMax = std::max(t.fMax, f);
        t.fMin = std::min(t.fMin, f);
        const double logA = std::log(problem.a[i]);
        logTarget[i] = logA - ra * fp;
        logMarginal[i] = logTarget[i] + (1.0 + ra) * (fp - f);
        logTargetNew[i] = logA - ra * f;
    }
    for (std::size_t j = 0; j < n; ++j) {
        const double g = logV[j], gp = logVPrev[j];
        finite = finite && std::isfinite(g) && std::isfinite(gp);
        t.dGmax = std::max(t.dGmax, g - gp);
        t.dGmin = std::min(t.dGmin, g - gp);
        t.gMax = std::max(t.gMax, g);
        t.gMin = std::min(t.gMin, g);
        logColTarget[j] = std::log(problem.b[j]) - rb * g;
    }
    // Every row-side figure in one packed reduction over the row blocks.
    RowTotals rows(0, 5, 3);
    rows.max(0) = t.dFmax;
    rows.max(1) = -t.dFmin;
    rows.max(2) = t.fMax;
    rows.max(3) = -t.fMin;
    rows.max(4) = finite ? 0.0 : 1.0;
    rows.setLogSum(0, LogSumParts::of(logTarget));
    rows.setLogSum(1, LogSumParts::of(logMarginal));
    if (!translate) rows.setLogSum(2, LogSumParts::of(logTargetNew));
    startCombine(rowBlocks, rows);
    const double logColumnTargets = translate ? 0.0 : LogSumParts::of(logColTarget).value();
    finishCombine(rowBlocks, rows);
    t.dFmax = rows.max(0);
    t.dFmin = -rows.max(1);
    t.fMax = rows.max(2);
    t.fMin = -rows.max(3);
    if (rows.max(4) != 0.0) return nan;
    // The rows' shape: both sides normalised to mass 1, in logs (no exponential of a
    // potential on its own).
    const double lt = rows.logSum(0).value(), lm = rows.logSum(1).value();
    RowTotals violation(1, 0, 0);
    for (std::size_t i = 0; i < m; ++i)
        violation.sum(0) += std::abs(std::exp(logMarginal[i] - lm) - std::exp(logTarget[i] - lt));
    startCombine(rowBlocks, violation);
    finishCombine(rowBlocks, violation);
    const double violationA = violation.sum(0);
    double mass = 0;
    if (!translate) {
        t.logTargetA = rows.logSum(2).value();
        t.logTargetB = logColumnTargets;
        t.mass = std::exp(t.logTargetB);
        mass = relaxedMassViolation(t, ra, rb, c.active);
    }
    return relaxedError(relaxedChange(t), violationA, 0.0, mass);
}

bool belowFp32Accuracy(double resolution, std::span<const double> logU, std::span<const double> logV,
                       RowBlockReduction* rowBlocks)
{
    if (resolution == 0) return false;
    double fMax = 0, gMax = 0;
    for (double x : logU) fMax = std::max(fMax, std::abs(x));
    if (rowBlocks) fMax = rowBlocks->max(fMax);
    for (double y : logV) gMax = std::max(gMax, std::abs(y));
    return belowPlanAccuracy(resolution, fMax, gMax, kFp32PlanAccuracy);
}

}  // namespace uot
