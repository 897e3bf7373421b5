#include "core/transport/translation_invariant.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "core/transport/kernel_matrix.h"

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

namespace {

// Below this many entries the O(M + N) steps run on one thread.
constexpr std::size_t kParallelEntries = 1 << 14;

// The parts of log sum_k exp(logW_k - r x_k) over this process's entries
// (row_block_reduction.h: the largest term and the sum relative to it).
LogSumParts weightedExpSumParts(const std::vector<double>& logW, const std::vector<double>& x, double r, int threads)
{
    const std::ptrdiff_t n = static_cast<std::ptrdiff_t>(logW.size());
    const bool parallel = logW.size() >= kParallelEntries;
    double mx = -std::numeric_limits<double>::infinity();
#pragma omp parallel for num_threads(threads) if (parallel) reduction(max : mx) schedule(static)
    for (std::ptrdiff_t k = 0; k < n; ++k) mx = std::max(mx, logW[k] - r * x[k]);
    if (!std::isfinite(mx)) return {mx, mx == -std::numeric_limits<double>::infinity() ? 0.0 : 1.0};
    double s = 0;
#pragma omp parallel for num_threads(threads) if (parallel) reduction(+ : s) schedule(static)
    for (std::ptrdiff_t k = 0; k < n; ++k) s += std::exp(logW[k] - r * x[k] - mx);
    return {mx, s};
}

// log sum_k exp(logW_k - r x_k), stable (shifted by the largest term).
double logWeightedExpSum(const std::vector<double>& logW, const std::vector<double>& x, double r, int threads)
{
    return weightedExpSumParts(logW, x, r, threads).value();
}

std::vector<double> logsOfWeights(std::span<const double> w)
{
    std::vector<double> out(w.size());
    for (std::size_t k = 0; k < w.size(); ++k) out[k] = std::log(w[k]);
    return out;
}

}  // namespace

TranslationStep::TranslationStep(const UotProblem& problem, bool logDomain, int threads,
                                 RowBlockReduction* rowBlocks)
    : m_b(problem.b), m_logA(logsOfWeights(problem.a)), m_logB(logsOfWeights(problem.b)),
      m_c(translationCoefficients(problem)), m_logDomain(logDomain), m_threads(resolveThreadCount(threads)),
      m_rowBlocks(rowBlocks), m_x(problem.a.size()), m_g(problem.cols())
{
}

void TranslationStep::loadLogs(std::span<const double> scalings, std::vector<double>& out) const
{
    const std::ptrdiff_t n = static_cast<std::ptrdiff_t>(scalings.size());
    const bool logDomain = m_logDomain;
#pragma omp parallel for num_threads(m_threads) if (scalings.size() >= kParallelEntries) schedule(static)
    for (std::ptrdiff_t k = 0; k < n; ++k) out[k] = logDomain ? scalings[k] : std::log(scalings[k]);
}

void TranslationStep::beforePass(std::span<const double> v)
{
    if (!m_c.active) return;
    if (m_carried && v.data() == m_lastV.data() && v.size() == m_lastV.size()) {
        m_logBIn = m_logBNext;  // log B of the v the last afterPass() produced, kept from it
        return;
    }
    loadLogs(v, m_g);
    m_logBIn = logWeightedExpSum(m_logB, m_g, m_c.rb, m_threads);
}

bool TranslationStep::afterPass(std::span<double> uNew, std::span<double> vNew, bool colMarginal, double& errB)
{
    m_logUFactor = m_logVFactor = 0;
    m_carried = false;
    if (!m_c.active) return true;
    const bool logDomain = m_logDomain;
    const std::ptrdiff_t m = static_cast<std::ptrdiff_t>(uNew.size()), n = static_cast<std::ptrdiff_t>(vNew.size());
    const bool parallel = uNew.size() + vNew.size() >= kParallelEntries;
    // Row half-step: F = F^ + s. The row-side figures (log A(F^), the extremes of
    // u^ and its bad entries) travel over the row blocks in one packed reduction.
    loadLogs(uNew, m_x);
    const double inf = std::numeric_limits<double>::infinity();
    double uMax = -inf, uMin = inf, badRows = 0;
#pragma omp parallel for num_threads(m_threads) if (parallel) schedule(static) reduction(max : uMax) \
    reduction(min : uMin) reduction(+ : badRows)
    for (std::ptrdiff_t i = 0; i < m; ++i) {
        const double x = uNew[i];
        if (!std::isfinite(x) || (!logDomain && !(x > 0))) {
            badRows += 1;
        } else {
            uMax = std::max(uMax, x);
            uMin = std::min(uMin, x);
        }
    }
    RowTotals rows(1, 2, 1);
    rows.sum(0) = badRows;
    rows.max(0) = uMax;
    rows.max(1) = -uMin;
    rows.setLogSum(0, weightedExpSumParts(m_logA, m_x, m_c.ra, m_threads));
    startCombine(m_rowBlocks, rows);
    // The column side needs no row total: it runs while the totals travel.
    loadLogs(vNew, m_g);  // G^pass
    const double fb = m_c.fb, rb = m_c.rb;
    const double logBPass = logWeightedExpSum(m_logB, m_g, rb, m_threads);
    finishCombine(m_rowBlocks, rows);
    const double logAHat = rows.logSum(0).value();
    const double s = m_c.cs * (m_logBIn - logAHat);
    // The pass's column half-step used u^; with u = e^s u^ the column sums are
    // e^s times larger, so G^ = G^pass - f_b s. Then G = G^ + t.
    const double logA = logAHat - m_c.ra * s;
    // log B(G^) = log B(G^pass) + rb fb s: every term has the same factor.
    const double logBh = logBPass + rb * fb * s;
    const double t = m_c.ct * (logA - logBh);
    if (!std::isfinite(s) || !std::isfinite(t)) return false;
    m_logUFactor = s;
    m_logVFactor = t - fb * s;
    const double uFactor = std::exp(s), vFactor = std::exp(m_logVFactor), shiftV = m_logVFactor;
    // Every u_i e^s (or log u_i + s) is finite (and > 0) when the extremes are:
    // the shift is monotone, so every block decides the same from the totals.
    uMax = rows.max(0);
    uMin = -rows.max(1);
    bool bad = rows.sum(0) > 0 ||
               (logDomain ? !std::isfinite(uMax + s) || !std::isfinite(uMin + s)
                          : !std::isfinite(uMax * uFactor) || !(uMin * uFactor > 0));
    double err = 0;
#pragma omp parallel num_threads(m_threads) if (parallel)
    {
#pragma omp for schedule(static)
        for (std::ptrdiff_t i = 0; i < m; ++i) uNew[i] = logDomain ? uNew[i] + s : uNew[i] * uFactor;
#pragma omp for schedule(static) reduction(|| : bad) reduction(+ : err)
        for (std::ptrdiff_t j = 0; j < n; ++j) {
            vNew[j] = logDomain ? vNew[j] + shiftV : vNew[j] * vFactor;
            bad = bad || !std::isfinite(vNew[j]) || (!logDomain && !(vNew[j] > 0));
            if (colMarginal) {
                // Column sums of the pass: (K^T u^)_j = b_j exp(-G^pass_j / f_b); the plan's
                // column marginal is v_j e^s (K^T u^)_j.
                const double logMarginal = m_g[j] + shiftV + s + m_logB[j] - m_g[j] / fb;
                err += std::abs(std::exp(logMarginal) - m_b[j]);
            }
        }
    }
    // v is the same on every block: so is its part of `bad`.
    if (bad) return false;
    if (colMarginal) errB = err;
    // Every term of log B changed by exp(-rb t) from G^ to G: the next beforePass() needs no pass over v.
    m_logBNext = logBh - rb * t;
    m_lastV = vNew;
    m_carried = true;
    return true;
}

}  // namespace uot
