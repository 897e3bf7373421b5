#include "core/transport/relaxed_step.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

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
      m_G(problem.cols()), m_hatTerms(problem.rows()), m_rowTerms(problem.rows()), m_Gnew(problem.cols()), m_rowMarginal(problem.rows()),
      m_rowTarget(problem.rows()), m_colMarginal(problem.cols()), m_colTarget(problem.cols())
{
}

double RelaxedStep::logSum(const std::vector<double>& logW, const std::vector<double>& x, double r) const
{
    double mx = -std::numeric_limits<double>::infinity();
    for (std::size_t k = 0; k < x.size(); ++k) mx = std::max(mx, logW[k] - r * x[k]);
    if (!std::isfinite(mx)) return mx;
    double s = 0;
    for (std::size_t k = 0; k < x.size(); ++k) s += std::exp(logW[k] - r * x[k] - mx);
    return mx + std::log(s);
}

void RelaxedStep::beforePass(std::span<const double> u, std::span<const double> v)
{
    for (std::size_t i = 0; i < u.size(); ++i) m_F[i] = m_logDomain ? u[i] : std::log(u[i]);
    for (std::size_t j = 0; j < v.size(); ++j) m_G[j] = m_logDomain ? v[j] : std::log(v[j]);
}

bool RelaxedStep::afterPass(double w, std::span<double> uNew, std::span<double> vNew, RelaxedStepFigures& out,
                            bool deferViolation)
{
    const std::size_t m = uNew.size(), n = vNew.size();
    const double ra = m_c.ra, rb = m_c.rb, fb = m_fb;
    const std::span<const double> a = m_problem.a, b = m_problem.b;
    const double inf = std::numeric_limits<double>::infinity();
    // F~ from the pass, F^ behind it; the input plan's row marginal is P1 = e^F K e^G = a e^(F - F^/f_a).
    // The violations compare the shapes of the marginals with their targets (each
    // normalised to mass 1): the TI iteration's fixed point is the optimum up to a
    // translation (F + c, G - c), same plan, which scales P 1 against a e^{-r_a F}
    // by one common factor. The scalar condition left, the plan's mass, is
    // relaxedMassViolation's (relaxed_rules.h).
    //
    // Every row-side figure of the step is taken here from F~, before the shift s is
    // known, so that all of them travel over the row blocks in one packed reduction
    // (row_block_reduction.h): with F = F~ + w s, the extremes of F and dF are those
    // of F~ and dF~ plus w s, <a, F> = <a, F~> + w s |a|, and
    // log A(F) = log A(F~) - r_a w s.
    double errA = 0, massA = 0, targetA = 0, sumA = 0, linearA = 0, notFinite = 0;
    double dMax = -inf, dMin = inf, fMax = -inf, fMin = inf;  // of F~ - F and F~ (finite entries)
    for (std::size_t i = 0; i < m; ++i) {
        const double relaxed = m_logDomain ? uNew[i] : std::log(uNew[i]);
        const double hat = w == 1.0 ? relaxed : (relaxed - (1.0 - w) * m_F[i]) / w;
        uNew[i] = relaxed;
        const double target = a[i] * std::exp(-ra * m_F[i]);
        const double marginal = target * std::exp((1.0 + ra) * (m_F[i] - hat));
        m_rowMarginal[i] = marginal;
        m_rowTarget[i] = target;
        massA += marginal;
        targetA += target;
        errA += std::abs(marginal - a[i]);
        m_hatTerms[i] = m_logA[i] - ra * hat;      // the terms of log A(F^)
        m_rowTerms[i] = m_logA[i] - ra * relaxed;  // the terms of log A(F~)
        sumA += a[i];
        linearA += a[i] * relaxed;
        if (!std::isfinite(relaxed)) {
            notFinite += 1;
            continue;
        }
        dMax = std::max(dMax, relaxed - m_F[i]);
        dMin = std::min(dMin, relaxed - m_F[i]);
        fMax = std::max(fMax, relaxed);
        fMin = std::min(fMin, relaxed);
    }
    enum { kMassA, kTargetA, kErrA, kSumA, kLinearA, kNotFinite, kSums };
    RowTotals rows(kSums, 4, 2);
    const double sums[kSums] = {massA, targetA, errA, sumA, linearA, notFinite};
    for (int k = 0; k < kSums; ++k) rows.sum(k) = sums[k];
    rows.max(0) = dMax;
    rows.max(1) = -dMin;
    rows.max(2) = fMax;
    rows.max(3) = -fMin;
    rows.setLogSum(0, LogSumParts::of(m_hatTerms));
    rows.setLogSum(1, LogSumParts::of(m_rowTerms));
    startCombine(m_rowBlocks, rows);
    // The column side that needs no row total, while the row totals travel.
    const double logBIn = m_translate ? logSum(m_logB, m_G, rb) : 0.0;
    for (std::size_t j = 0; j < n; ++j) vNew[j] = m_logDomain ? vNew[j] : std::log(vNew[j]);  // G^pass
    finishCombine(m_rowBlocks, rows);
    massA = rows.sum(kMassA);
    targetA = rows.sum(kTargetA);
    errA = rows.sum(kErrA);
    const double s = m_translate ? m_c.cs * (logBIn - rows.logSum(0).value()) : 0.0;
    if (!std::isfinite(s)) return false;
    // The change is that of the plan: max_ij |dF_i + dG_j| (log units, relative to the
    // size of F_i + G_j when above 1), blind to a translation (F + c, G - c), which
    // leaves the plan as it is (and along which the relaxed TI iteration can creep).
    const double ws = w * s;
    for (std::size_t i = 0; i < m; ++i) uNew[i] += ws;  // F = F~ + w s
    const double dFmax = rows.max(0) + ws, dFmin = -rows.max(1) + ws;
    fMax = rows.max(2) + ws;
    fMin = -rows.max(3) + ws;
    sumA = rows.sum(kSumA);
    linearA = rows.sum(kLinearA) + ws * sumA;
    const double logTargetA = rows.logSum(1).value() - ra * ws;  // log A(F)
    const bool rowsFinite = rows.sum(kNotFinite) == 0;
    // G^ = G^pass - f_b w s (the column sums of F are e^(w s) times the pass's).
    for (std::size_t j = 0; j < n; ++j) m_Gnew[j] = vNew[j] - fb * ws;
    double t = 0;
    if (m_translate) {
        t = m_c.ct * (logTargetA - logSum(m_logB, m_Gnew, rb));
        if (!std::isfinite(t)) return false;
    }
    // The rows' violation needs the totals above: a second (one-number) reduction,
    // which travels while the column side of the step is computed.
    double violA = 0;
    for (std::size_t i = 0; i < m; ++i) violA += std::abs(m_rowMarginal[i] / massA - m_rowTarget[i] / targetA);
    if (m_violationPending) throw std::logic_error("RelaxedStep::afterPass with a violation still in flight");
    m_violation.sum(0) = violA;
    startCombine(m_rowBlocks, m_violation);
    m_violationPending = true;
    double targetB = 0, errB = 0, mass = 0, sumB = 0, linearB = 0;
    double dGmax = -inf, dGmin = inf, gMax = -inf, gMin = inf;
    for (std::size_t j = 0; j < n; ++j) {
        const double gPass = vNew[j];
        const double g = (1.0 - w) * m_G[j] + w * (m_Gnew[j] + t);
        const double logCol = std::log(b[j]) - gPass / fb + ws;  // log (K^T e^F)_j
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
    RelaxedTotals totals;
    totals.logTargetA = logTargetA;
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
    out.violationMass = relaxedMassViolation(totals, ra, rb, m_c.active);
    const RelaxedObjective objective = relaxedObjective(totals, m_problem.eps, m_problem.tauA, m_problem.tauB, ra, rb,
                                                        m_translate);
    out.change = relaxedChange(totals);
    out.violationB = violB;
    out.marginalErrorA = errA;
    out.marginalErrorB = errB;
    out.objective = objective.value;
    out.objectiveScale = objective.scale;
    // Whether every e^F_i is finite and > 0 follows from the extremes of F over all
    // blocks (exp and the shift are monotone), so every block decides the same.
    bool finite = std::isfinite(out.objective) && rowsFinite &&
                  (m_logDomain ? std::isfinite(fMax) && std::isfinite(fMin)
                               : std::isfinite(std::exp(fMax)) && std::exp(fMin) > 0);
    if (!m_logDomain)
        for (std::size_t i = 0; i < m; ++i) uNew[i] = std::exp(uNew[i]);
    for (std::size_t j = 0; j < n && finite; ++j) {
        if (!m_logDomain) vNew[j] = std::exp(vNew[j]);
        finite = std::isfinite(vNew[j]) && (m_logDomain || vNew[j] > 0);
    }
    out.violationA = std::numeric_limits<double>::quiet_NaN();
    if (!deferViolation) finishViolation(out);
    return finite;
}

void RelaxedStep::finishViolation(RelaxedStepFigures& figures)
{
    if (!m_violationPending) return;
    finishCombine(m_rowBlocks, m_violation);
    m_violationPending = false;
    figures.violationA = m_violation.sum(0);  // already between normalised marginals (in [0, 2])
}

bool RelaxedStep::acceptable(const RelaxedStepFigures& previous, const RelaxedStepFigures& candidate) const
{
    return objectiveAcceptable(previous.objective, previous.objectiveScale, candidate.objective,
                               candidate.objectiveScale, m_slack);
}

}  // namespace uot
