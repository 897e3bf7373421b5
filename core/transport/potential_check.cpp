#include "core/transport/potential_check.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "core/transport/relaxed_rules.h"
#include "core/transport/translation_invariant.h"

namespace uot {

namespace {

// log sum_k exp(x_k) over the entries of every block (rows: with blocks; collective).
double logSumExp(const std::vector<double>& x, RowBlockReduction* blocks)
{
    double mx = -std::numeric_limits<double>::infinity();
    for (double v : x) mx = std::max(mx, v);
    if (blocks) mx = blocks->max(mx);
    if (!std::isfinite(mx)) return mx;
    double s = 0;
    for (double v : x) s += std::exp(v - mx);
    if (blocks) s = blocks->sum(s);
    return mx + std::log(s);
}

}  // namespace

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
    if (rowBlocks) {
        double rows[5] = {t.dFmax, -t.dFmin, t.fMax, -t.fMin, finite ? 0.0 : 1.0};
        rowBlocks->max(rows);
        t.dFmax = rows[0];
        t.dFmin = -rows[1];
        t.fMax = rows[2];
        t.fMin = -rows[3];
        finite = rows[4] == 0.0;
    }
    if (!finite) return nan;
    // The rows' shape: both sides normalised to mass 1, in logs (no exponential of a
    // potential on its own).
    const double lt = logSumExp(logTarget, rowBlocks), lm = logSumExp(logMarginal, rowBlocks);
    double violationA = 0;
    for (std::size_t i = 0; i < m; ++i)
        violationA += std::abs(std::exp(logMarginal[i] - lm) - std::exp(logTarget[i] - lt));
    if (rowBlocks) violationA = rowBlocks->sum(violationA);
    double mass = 0;
    if (!translate) {
        t.logTargetA = logSumExp(logTargetNew, rowBlocks);
        t.logTargetB = logSumExp(logColTarget, nullptr);
        t.mass = std::exp(t.logTargetB);
        mass = relaxedMassViolation(t, ra, rb, c.active);
    }
    return relaxedError(relaxedChange(t), violationA, 0.0, mass);
}

bool belowFp32Accuracy(double resolution, std::span<const double> logU, std::span<const double> logV)
{
    if (resolution == 0) return false;
    double fMax = 0, gMax = 0;
    for (double x : logU) fMax = std::max(fMax, std::abs(x));
    for (double y : logV) gMax = std::max(gMax, std::abs(y));
    return resolution * (fMax + gMax) > kFp32PlanAccuracy;
}

}  // namespace uot
