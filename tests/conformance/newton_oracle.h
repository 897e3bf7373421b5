#pragma once
// The float64 oracle of the conformance suite: the entropic UOT plan by Newton's
// method on the dual with eps-continuation, written apart from the solvers (the
// same method as newton_oracle.py, for the C++ suite). With x = log u, y = log v,
// log K_ij = -C_ij / eps + log R_ij and r = eps / tau, it maximises the concave
//   D(x, y) = sum_i psi_a(x_i) + sum_j psi_b(y_j) - sum_ij exp(x_i + y_j + log K_ij),
//   psi(x) = -(w / r) (exp(-r x) - 1)  (w x when tau = inf),
// by damped Newton steps (backtracking on D, a dense Cholesky solve of the
// (M + N)^2 Hessian: small problems only), stage by stage from eps = max C down by
// halves to the target, each stage from the last one's potentials f = eps x.

#include <vector>

namespace uot::conformance {

struct OracleProblem {
    std::vector<double> cost;  // rows x cols, row-major
    std::vector<double> a, b;
    double eps = 0.05, tauA = 1, tauB = 1;  // tau may be infinite
    bool productReference = false;
};

// The converged plan (rows x cols, row-major).
std::vector<double> oraclePlan(const OracleProblem& problem);

}  // namespace uot::conformance
