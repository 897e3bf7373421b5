#include "core/transport/translation_invariant.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace uot {

TranslationCoefficients translationCoefficients(const UotProblem& problem)
{
    TranslationCoefficients c;
    const double eps = problem.eps, ta = problem.tauA, tb = problem.tauB;
    const bool finA = std::isfinite(ta), finB = std::isfinite(tb);
    c.active = finA || finB;
    c.ra = finA ? eps / ta : 0.0;
    c.rb = finB ? eps / tb : 0.0;
    c.fb = problem.exponentB();
    if (finA && finB) {
        c.cs = tb / (ta + tb + eps);
        c.ct = ta / (ta + tb + eps);
    } else if (finA) {  // tau_b = inf: the row shift takes all of it
        c.cs = 1.0;
    } else if (finB) {  // tau_a = inf: the column shift takes all of it
        c.ct = 1.0;
    }
    return c;
}

TranslationStep::TranslationStep(const UotProblem& problem, bool logDomain)
    : m_a(problem.a), m_b(problem.b), m_c(translationCoefficients(problem)), m_logDomain(logDomain)
{
}

namespace {

// log sum_k w_k exp(-r x_k), stable (shifted by the largest term).
double logWeightedExpSum(std::span<const double> w, std::span<const double> x, double r)
{
    double mx = -std::numeric_limits<double>::infinity();
    for (std::size_t k = 0; k < w.size(); ++k) mx = std::max(mx, std::log(w[k]) - r * x[k]);
    if (!std::isfinite(mx)) return mx;
    double s = 0;
    for (std::size_t k = 0; k < w.size(); ++k) s += std::exp(std::log(w[k]) - r * x[k] - mx);
    return mx + std::log(s);
}

}  // namespace

std::vector<double> TranslationStep::logsOf(std::span<const double> scalings) const
{
    std::vector<double> x(scalings.begin(), scalings.end());
    if (!m_logDomain)
        for (double& e : x) e = std::log(e);
    return x;
}

void TranslationStep::beforePass(std::span<const double> v)
{
    if (m_c.active) m_logBIn = logWeightedExpSum(m_b, logsOf(v), m_c.rb);
}

bool TranslationStep::afterPass(std::span<double> uNew, std::span<double> vNew, bool colMarginal, double& errB)
{
    m_logUFactor = m_logVFactor = 0;
    if (!m_c.active) return true;
    // Row half-step: F = F^ + s.
    const double logAHat = logWeightedExpSum(m_a, logsOf(uNew), m_c.ra);
    const double s = m_c.cs * (m_logBIn - logAHat);
    // The pass's column half-step used u^; with u = e^s u^ the column sums are
    // e^s times larger, so G^ = G^pass - f_b s. Then G = G^ + t.
    const double logA = logAHat - m_c.ra * s;
    const std::vector<double> gPass = logsOf(vNew);
    std::vector<double> g(gPass.size());
    for (std::size_t j = 0; j < g.size(); ++j) g[j] = gPass[j] - m_c.fb * s;
    const double logBh = logWeightedExpSum(m_b, g, m_c.rb);
    const double t = m_c.ct * (logA - logBh);
    m_logUFactor = s;
    m_logVFactor = t - m_c.fb * s;
    if (!std::isfinite(s) || !std::isfinite(t)) return false;
    double err = 0;
    for (std::size_t i = 0; i < uNew.size(); ++i) uNew[i] = m_logDomain ? uNew[i] + s : uNew[i] * std::exp(s);
    for (std::size_t j = 0; j < vNew.size(); ++j) {
        const double gNew = g[j] + t;
        vNew[j] = m_logDomain ? gNew : std::exp(gNew);
        if (!std::isfinite(vNew[j]) || (!m_logDomain && !(vNew[j] > 0))) return false;
        if (colMarginal) {
            // Column sums of the pass: (K^T u^)_j = b_j exp(-G^pass_j / f_b); the plan's
            // column marginal is v_j e^s (K^T u^)_j.
            const double logMarginal = gNew + s + std::log(m_b[j]) - gPass[j] / m_c.fb;
            err += std::abs(std::exp(logMarginal) - m_b[j]);
        }
    }
    for (std::size_t i = 0; i < uNew.size(); ++i)
        if (!std::isfinite(uNew[i]) || (!m_logDomain && !(uNew[i] > 0))) return false;
    if (colMarginal) errB = err;
    return true;
}

}  // namespace uot
