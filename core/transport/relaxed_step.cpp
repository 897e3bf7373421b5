#include "core/transport/relaxed_step.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace uot {

double RelaxedStepFigures::error() const { return relaxedError(change, violationA, violationB, violationMass); }

namespace {
std::vector<double> logsOf(std::span<const double> w)
{
    std::vector<double> out(w.size());
    for (std::size_t k = 0; k < w.size(); ++k) out[k] = std::log(w[k]);
    return out;
}
}  // namespace

RelaxedStep::RelaxedStep(const UotProblem& problem, bool logDomain, bool translate, bool fp32,
                         RowBlockReduction* rowBlocks)
    : m_problem(problem), m_rowBlocks(rowBlocks), m_c(translationCoefficients(problem)), m_logDomain(logDomain),
      m_translate(translate && m_c.active), m_fa(problem.exponentA()), m_fb(problem.exponentB()),
      m_slack(objectiveSlack(fp32)), m_logA(logsOf(problem.a)), m_logB(logsOf(problem.b)), m_F(problem.rows()),
      m_G(problem.cols()), m_Fhat(problem.rows()), m_Gnew(problem.cols()), m_rowMarginal(problem.rows()),
      m_rowTarget(problem.rows()), m_colMarginal(problem.cols()), m_colTarget(problem.cols())
{
}

void RelaxedStep::sumOverRows(std::span<double> values) const
{
    if (m_rowBlocks) m_rowBlocks->sum(values);
}

void RelaxedStep::maxOverRows(std::span<double> values) const
{
    if (m_rowBlocks) m_rowBlocks->max(values);
}

double RelaxedStep::logSum(const std::vector<double>& logW, const std::vector<double>& x, double r, bool rows) const
{
    double mx = -std::numeric_limits<double>::infinity();
    for (std::size_t k = 0; k < x.size(); ++k) mx = std::max(mx, logW[k] - r * x[k]);
    if (rows) maxOverRows(std::span<double>(&mx, 1));
    // A block without rows still takes part in the sum below (collective).
    if (!std::isfinite(mx)) return mx;
    double s = 0;
    for (std::size_t k = 0; k < x.size(); ++k) s += std::exp(logW[k] - r * x[k] - mx);
    if (rows) sumOverRows(std::span<double>(&s, 1));
    return mx + std::log(s);
}

void RelaxedStep::beforePass(std::span<const double> u, std::span<const double> v)
{
    for (std::size_t i = 0; i < u.size(); ++i) m_F[i] = m_logDomain ? u[i] : std::log(u[i]);
    for (std::size_t j = 0; j < v.size(); ++j) m_G[j] = m_logDomain ? v[j] : std::log(v[j]);
}

bool RelaxedStep::afterPass(double w, std::span<double> uNew, std::span<double> vNew, RelaxedStepFigures& out)
{
    const std::size_t m = uNew.size(), n = vNew.size();
    const double ra = m_c.ra, rb = m_c.rb, fb = m_fb;
    const std::span<const double> a = m_problem.a, b = m_problem.b;
    // F~ from the pass, F^ behind it; the input plan's row marginal is P1 = e^F K e^G = a e^(F - F^/f_a).
    // The violations compare the shapes of the marginals with their targets (each
    // normalised to mass 1): the TI iteration's fixed point is the optimum up to a
    // translation (F + c, G - c), same plan, which scales P 1 against a e^{-r_a F}
    // by one common factor. The scalar condition left, the plan's mass, is
    // relaxedMassViolation's (relaxed_rules.h).
    double change = 0, errA = 0, massA = 0, targetA = 0;  // change: set below
    for (std::size_t i = 0; i < m; ++i) {
        const double relaxed = m_logDomain ? uNew[i] : std::log(uNew[i]);
        m_Fhat[i] = w == 1.0 ? relaxed : (relaxed - (1.0 - w) * m_F[i]) / w;
        uNew[i] = relaxed;
        const double target = a[i] * std::exp(-ra * m_F[i]);
        const double marginal = target * std::exp((1.0 + ra) * (m_F[i] - m_Fhat[i]));
        m_rowMarginal[i] = marginal;
        m_rowTarget[i] = target;
        massA += marginal;
        targetA += target;
        errA += std::abs(marginal - a[i]);
    }
    double rowTotals[3] = {massA, targetA, errA};
    sumOverRows(rowTotals);
    massA = rowTotals[0];
    targetA = rowTotals[1];
    errA = rowTotals[2];
    double violA = 0;
    for (std::size_t i = 0; i < m; ++i) violA += std::abs(m_rowMarginal[i] / massA - m_rowTarget[i] / targetA);
    sumOverRows(std::span<double>(&violA, 1));
    const double s = m_translate ? m_c.cs * (logSum(m_logB, m_G, rb, false) - logSum(m_logA, m_Fhat, ra, true)) : 0.0;
    if (!std::isfinite(s)) return false;
    // The change is that of the plan: max_ij |dF_i + dG_j| (log units, relative to the
    // size of F_i + G_j when above 1), blind to a translation (F + c, G - c), which
    // leaves the plan as it is (and along which the relaxed TI iteration can creep).
    const double inf = std::numeric_limits<double>::infinity();
    double dFmax = -inf, dFmin = inf, dGmax = -inf, dGmin = inf, fMax = -inf, fMin = inf, gMax = -inf, gMin = inf;
    for (std::size_t i = 0; i < m; ++i) {
        uNew[i] += w * s;  // F = F~ + w s
        const double d = uNew[i] - m_F[i];
        dFmax = std::max(dFmax, d);
        dFmin = std::min(dFmin, d);
        fMax = std::max(fMax, uNew[i]);
        fMin = std::min(fMin, uNew[i]);
    }
    double rowExtremes[4] = {dFmax, -dFmin, fMax, -fMin};
    maxOverRows(rowExtremes);
    dFmax = rowExtremes[0];
    dFmin = -rowExtremes[1];
    fMax = rowExtremes[2];
    fMin = -rowExtremes[3];
    // G^ = G^pass - f_b w s (the column sums of F are e^(w s) times the pass's).
    for (std::size_t j = 0; j < n; ++j) {
        const double gPass = m_logDomain ? vNew[j] : std::log(vNew[j]);
        vNew[j] = gPass;
        m_Gnew[j] = gPass - fb * w * s;
    }
    double t = 0;
    if (m_translate) {
        // log A of the new F: A(F~ + w s) needs the relaxed logs, which uNew holds now.
        std::vector<double>& fNew = m_Fhat;  // F^ is no longer needed
        for (std::size_t i = 0; i < m; ++i) fNew[i] = uNew[i];
        t = m_c.ct * (logSum(m_logA, fNew, ra, true) - logSum(m_logB, m_Gnew, rb, false));
        if (!std::isfinite(t)) return false;
    }
    double targetB = 0, errB = 0, mass = 0, sumB = 0, linearB = 0;
    for (std::size_t j = 0; j < n; ++j) {
        const double gPass = vNew[j];
        const double g = (1.0 - w) * m_G[j] + w * (m_Gnew[j] + t);
        const double logCol = std::log(b[j]) - gPass / fb + w * s;  // log (K^T e^F)_j
        const double marginal = std::exp(g + logCol);
        const double target = b[j] * std::exp(-rb * g);
        m_colMarginal[j] = marginal;
        m_colTarget[j] = target;
        targetB += target;
        errB += std::abs(marginal - b[j]);
        mass += marginal;
        sumB += b[j];
        linearB += b[j] * g;
        dGmax = std::max(dGmax, g - m_G[j]);
        dGmin = std::min(dGmin, g - m_G[j]);
        gMax = std::max(gMax, g);
        gMin = std::min(gMin, g);
        vNew[j] = g;
    }
    double violB = 0;
    for (std::size_t j = 0; j < n; ++j) violB += std::abs(m_colMarginal[j] / mass - m_colTarget[j] / targetB);
    double sumA = 0, linearA = 0, targetNewA = 0;
    for (std::size_t i = 0; i < m; ++i) {
        sumA += a[i];
        linearA += a[i] * uNew[i];
        targetNewA += a[i] * std::exp(-ra * uNew[i]);
    }
    double newRowTotals[3] = {sumA, linearA, targetNewA};
    sumOverRows(newRowTotals);
    sumA = newRowTotals[0];
    linearA = newRowTotals[1];
    targetNewA = newRowTotals[2];
    RelaxedTotals totals;
    totals.logTargetA = std::log(targetNewA);
    totals.logTargetB = std::log(targetB);
    totals.sumA = sumA;
    totals.sumB = sumB;
    totals.linearA = linearA;
    totals.linearB = linearB;
    totals.mass = mass;
    totals.dFmax = dFmax;
    totals.dFmin = dFmin;
    totals.dGmax = dGmax;
    totals.dGmin = dGmin;
    totals.fMax = fMax;
    totals.fMin = fMin;
    totals.gMax = gMax;
    totals.gMin = gMin;
    change = relaxedChange(totals);
    out.violationMass = relaxedMassViolation(totals, ra, rb, m_c.active);
    const RelaxedObjective objective = relaxedObjective(totals, m_problem.eps, m_problem.tauA, m_problem.tauB, ra, rb,
                                                        m_translate);
    out.change = change;
    out.violationA = violA;  // already between normalised marginals (in [0, 2])
    out.violationB = violB;
    out.marginalErrorA = errA;
    out.marginalErrorB = errB;
    out.objective = objective.value;
    out.objectiveScale = objective.scale;
    bool finite = std::isfinite(out.objective);
    for (std::size_t i = 0; i < m && finite; ++i) {
        if (!m_logDomain) uNew[i] = std::exp(uNew[i]);
        finite = std::isfinite(uNew[i]) && (m_logDomain || uNew[i] > 0);
    }
    for (std::size_t j = 0; j < n && finite; ++j) {
        if (!m_logDomain) vNew[j] = std::exp(vNew[j]);
        finite = std::isfinite(vNew[j]) && (m_logDomain || vNew[j] > 0);
    }
    // A u that left the range on one block fails the step on every block.
    if (m_rowBlocks) finite = m_rowBlocks->max(finite ? 0.0 : 1.0) == 0.0;
    return finite;
}

bool RelaxedStep::acceptable(const RelaxedStepFigures& previous, const RelaxedStepFigures& candidate) const
{
    return objectiveAcceptable(previous.objective, previous.objectiveScale, candidate.objective,
                               candidate.objectiveScale, m_slack);
}

}  // namespace uot
