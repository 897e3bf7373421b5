#pragma once
// The translation-invariant (TI) UOT Sinkhorn iteration (Sejourne, Vialard,
// Peyre, AISTATS 2022) as a correction applied after one plain iteration.
// docs/TIME_TO_SOLUTION.md derives it; in short, with F = log u, G = log v,
// r_a = eps / tau_a, r_b = eps / tau_b:
//
//   row half-step:    F = F^ + s,  s = tau_b / (tau_a + tau_b + eps) * (log B(G) - log A(F^))
//   column half-step: G = G^ + t,  t = tau_a / (tau_a + tau_b + eps) * (log A(F) - log B(G^))
//
// where F^, G^ are the plain half-steps, A(F) = sum_i a_i exp(-r_a F_i) and
// B(G) = sum_j b_j exp(-r_b G_j). Each half-step is the plain one followed by the
// optimal dual translation (f + lambda, g - lambda) in closed form; the fixed
// point is the same UOT plan.
//
// Because s is one number for all rows, a plain pass that computed the column
// sums with the unshifted u^ = exp(F^) needs no second read of K: the column
// sums are exp(s) K^T u^, so G^ = G^plain - f_b s. Everything here is O(M + N).

#include <span>
#include <vector>

#include "core/transport/row_block_reduction.h"
#include "core/transport/uot_problem.h"

namespace uot {

// The constants of the step for a problem; the GPU variants use them too.
struct TranslationCoefficients {
    double ra = 0, rb = 0;  // eps / tau_a, eps / tau_b (0 for an infinite tau)
    double fb = 1;          // exponent of the column update, tau_b / (tau_b + eps)
    double cs = 0, ct = 0;  // tau_b / (tau_a + tau_b + eps), tau_a / (...), with their limits for tau -> inf
    // False when both sides are balanced (tau_a = tau_b = inf): the dual is then
    // exactly translation invariant and the TI step is the plain one.
    bool active = false;
};
TranslationCoefficients translationCoefficients(const UotProblem& problem);

class TranslationStep {
public:
    // logDomain: the scalings handed to the calls below are log u, log v (else u, v).
    // threads: CPU threads for the O(M + N) steps (0 = all; one below 16k entries).
    // rowBlocks: set when `problem` is this process's block of rows of a solve
    // distributed by rows; the row-side sum A(F) and the validity of u are then
    // combined over all blocks (null: one process).
    TranslationStep(const UotProblem& problem, bool logDomain, int threads = 0,
                    RowBlockReduction* rowBlocks = nullptr);

    bool active() const { return m_c.active; }

    // Call with the iteration's input v (before the pass): remembers log B(G)
    // (carried over without a pass over v when v is the vector the last afterPass() wrote).
    void beforePass(std::span<const double> v);

    // Turns the plain iterate (uNew, vNew) of the pass into the TI iterate, in
    // place. When colMarginal, errB = |P^T 1 - b|_1 of the corrected plan
    // (computed from vNew alone: the pass's column sums are b v^(-1/f_b)).
    // Returns false when a value became non-finite (the iterate is unusable).
    bool afterPass(std::span<double> uNew, std::span<double> vNew, bool colMarginal, double& errB);

    // log of the factor the last afterPass() multiplied u by (the reference
    // solver keeps K^T u up to date with it).
    double lastLogUFactor() const { return m_logUFactor; }

private:
    // out = log of the scalings (they are logs already in the log domain).
    void loadLogs(std::span<const double> scalings, std::vector<double>& out) const;

    std::span<const double> m_b;
    std::vector<double> m_logA, m_logB;  // log a, log b
    TranslationCoefficients m_c;
    bool m_logDomain = false;
    int m_threads = 1;
    RowBlockReduction* m_rowBlocks = nullptr;
    std::vector<double> m_x, m_g;  // log u^ and log v of the current step
    // log B of the v the last afterPass() wrote (valid while m_carried, for that same vector).
    double m_logBNext = 0;
    std::span<const double> m_lastV;
    bool m_carried = false;
    double m_logBIn = 0;
    double m_logUFactor = 0, m_logVFactor = 0;
};

}  // namespace uot
