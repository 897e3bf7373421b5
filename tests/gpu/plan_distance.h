#pragma once
// The float64 distance between the plans of two solves of one problem, used by
// the GPU tests and the GPU benchmark's accuracy mode (no test harness here).

#include <cmath>
#include <vector>

#include "core/transport/kernel_matrix.h"
#include "core/transport/solve_result.h"
#include "core/transport/uot_problem.h"

namespace uot::test {

// Relative L1 distance between the plans of two results, computed in float64.
inline double planRelativeL1(const UotProblem& p, const SolveResult& x, const SolveResult& ref)
{
    const std::size_t m = p.rows(), n = p.cols();
    std::vector<double> row(n);
    double diff = 0, total = 0;
    for (std::size_t i = 0; i < m; ++i) {
        fillCostRow(p.cost, i, row.data());
        for (std::size_t j = 0; j < n; ++j) {
            const double logK = -row[j] / p.eps + logReference(p, i, j);
            const double px = std::exp(x.logU[i] + x.logV[j] + logK);
            const double pr = std::exp(ref.logU[i] + ref.logV[j] + logK);
            diff += std::abs(px - pr);
            total += std::abs(pr);
        }
    }
    return total > 0 ? diff / total : diff;
}

}  // namespace uot::test
