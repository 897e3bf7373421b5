#include "core/transport/relaxed_step.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace uot {

double RelaxedStepFigures::error() const { return std::max({change, violationA, violationB}); }

OmegaController::OmegaController(Acceleration acceleration, double omega) : m_acceleration(acceleration)
{
    if (acceleration == Acceleration::Relax) m_omega = omega;
    m_estimating = acceleration == Acceleration::Auto;
    if (m_estimating && omega > 1.0) {
        m_omega = std::min(omega, kMaxOmega);
        m_estimating = false;
    }
}

void OmegaController::accepted(double change)
{
    if (m_acceleration != Acceleration::Auto || m_rejections > 0) return;
    m_changes.push_back(change);
    const std::size_t n = m_changes.size();
    if (n < 7) return;
    const double c1 = m_changes[n - 1], c4 = m_changes[n - 4], c7 = m_changes[n - 7];
    if (!(c4 > 0) || !(c7 > 0) || !(c1 > 0)) return;
    // Linear rate over the last 3 iterations and the 3 before.
    const double r1 = std::pow(c1 / c4, 1.0 / 3.0), r0 = std::pow(c4 / c7, 1.0 / 3.0);
    if (!(r1 < 1)) return;
    if (m_estimating) {
        if (std::abs(r1 - r0) >= 0.03 && n < 24) return;
        // Optimal successive over-relaxation for a Gauss-Seidel-like rate r: 2 / (1 + sqrt(1 - r)).
        m_omega = std::clamp(2.0 / (1.0 + std::sqrt(1.0 - r1)), 1.0, kMaxOmega);
        m_estimating = false;
        m_changes.clear();
        return;
    }
    // Relaxed: below the optimum, the rate rho of omega obeys Young's relation
    // (rho + omega - 1)^2 = rho omega^2 r; above it rho = omega - 1. A settled rate
    // clearly above omega - 1 means omega is too small: solve for r and move up.
    if (std::abs(r1 - r0) >= 0.02 || !(r1 > m_omega - 1.0 + 0.02)) return;
    const double r = std::min(0.9999, (r1 + m_omega - 1.0) * (r1 + m_omega - 1.0) / (r1 * m_omega * m_omega));
    const double better = std::clamp(2.0 / (1.0 + std::sqrt(1.0 - r)), 1.0, kMaxOmega);
    if (better > m_omega + 0.01) {
        m_omega = better;
        m_changes.clear();
    }
}

void OmegaController::rejected()
{
    ++m_rejections;
    m_estimating = false;
    m_omega = 1.0 + 0.5 * (m_omega - 1.0);
    if (m_omega - 1.0 < 0.02 || m_rejections >= kMaxRejections) m_omega = 1.0;
}

namespace {
std::vector<double> logsOf(std::span<const double> w)
{
    std::vector<double> out(w.size());
    for (std::size_t k = 0; k < w.size(); ++k) out[k] = std::log(w[k]);
    return out;
}
}  // namespace

RelaxedStep::RelaxedStep(const UotProblem& problem, bool logDomain, bool translate, bool fp32)
    : m_problem(problem), m_c(translationCoefficients(problem)), m_logDomain(logDomain),
      m_translate(translate && m_c.active), m_fa(problem.exponentA()), m_fb(problem.exponentB()),
      m_slack(fp32 ? 1e-5 : 1e-11), m_logA(logsOf(problem.a)), m_logB(logsOf(problem.b)), m_F(problem.rows()),
      m_G(problem.cols()), m_Fhat(problem.rows()), m_Gnew(problem.cols()), m_rowMarginal(problem.rows()),
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

bool RelaxedStep::afterPass(double w, std::span<double> uNew, std::span<double> vNew, RelaxedStepFigures& out)
{
    const std::size_t m = uNew.size(), n = vNew.size();
    const double ra = m_c.ra, rb = m_c.rb, fb = m_fb;
    const std::span<const double> a = m_problem.a, b = m_problem.b;
    // F~ from the pass, F^ behind it; the input plan's row marginal is P1 = e^F K e^G = a e^(F - F^/f_a).
    // The violations compare the shapes of the marginals with their targets (each
    // normalised to mass 1): the TI iteration's fixed point is the optimum up to a
    // translation (F + c, G - c), same plan, which scales P 1 against a e^{-r_a F}
    // by one common factor. The change of F, G covers the remaining scalar condition.
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
    double violA = 0;
    for (std::size_t i = 0; i < m; ++i) violA += std::abs(m_rowMarginal[i] / massA - m_rowTarget[i] / targetA);
    const double s = m_translate ? m_c.cs * (logSum(m_logB, m_G, rb) - logSum(m_logA, m_Fhat, ra)) : 0.0;
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
        t = m_c.ct * (logSum(m_logA, fNew, ra) - logSum(m_logB, m_Gnew, rb));
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
    change = std::max(std::abs(dFmax + dGmax), std::abs(dFmin + dGmin)) /
             std::max({1.0, std::abs(fMax + gMax), std::abs(fMin + gMin)});
    double violB = 0;
    for (std::size_t j = 0; j < n; ++j) violB += std::abs(m_colMarginal[j] / mass - m_colTarget[j] / targetB);
    double sumA = 0, linearA = 0, targetNewA = 0;
    for (std::size_t i = 0; i < m; ++i) {
        sumA += a[i];
        linearA += a[i] * uNew[i];
        targetNewA += a[i] * std::exp(-ra * uNew[i]);
    }
    // Dual objective (up to a constant): -tau_a (A(F) - |a|) - tau_b (B(G) - |b|) - eps mass,
    // a side with infinite tau contributing eps <a, F> instead. In TI mode, at its best
    // translation (F + c, G - c), which is what the TI half-steps increase.
    const double eps = m_problem.eps, tauA = m_problem.tauA, tauB = m_problem.tauB;
    const bool finA = std::isfinite(tauA), finB = std::isfinite(tauB);
    double c = 0;
    if (m_translate) {
        if (finA && finB) c = (std::log(targetNewA) - std::log(targetB)) / (ra + rb);
        else if (finB) c = (std::log(sumA) - std::log(targetB)) / rb;
        else c = (std::log(targetNewA) - std::log(sumB)) / ra;
    }
    const double termA = finA ? -tauA * (targetNewA * std::exp(-ra * c) - sumA) : eps * (linearA + sumA * c);
    const double termB = finB ? -tauB * (targetB * std::exp(rb * c) - sumB) : eps * (linearB - sumB * c);
    m_logUFactor = w * s;
    m_logVFactor = t - fb * w * s;
    out.change = change;
    out.violationA = violA / targetA;
    out.violationB = violB / targetB;
    out.marginalErrorA = errA;
    out.marginalErrorB = errB;
    out.objective = termA + termB - m_problem.eps * mass;
    out.objectiveScale = std::abs(termA) + std::abs(termB) + m_problem.eps * mass;
    bool finite = std::isfinite(out.objective);
    for (std::size_t i = 0; i < m && finite; ++i) {
        if (!m_logDomain) uNew[i] = std::exp(uNew[i]);
        finite = std::isfinite(uNew[i]) && (m_logDomain || uNew[i] > 0);
    }
    for (std::size_t j = 0; j < n && finite; ++j) {
        if (!m_logDomain) vNew[j] = std::exp(vNew[j]);
        finite = std::isfinite(vNew[j]) && (m_logDomain || vNew[j] > 0);
    }
    return finite;
}

bool RelaxedStep::acceptable(const RelaxedStepFigures& previous, const RelaxedStepFigures& candidate) const
{
    const double slack = m_slack * std::max(previous.objectiveScale, candidate.objectiveScale);
    return candidate.objective >= previous.objective - slack;
}

}  // namespace uot
