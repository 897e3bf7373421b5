#pragma once
// Building the Gibbs kernel K_ij = exp(-C_ij / eps) * R_ij from a problem's
// cost source. Shared by every CPU variant so that they all start from the
// same matrix.

#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/transport/uot_problem.h"

namespace uot {

// Writes C_i. (cols values) for row i into out (host memory).
void fillCostRow(const CostSource& cost, std::size_t i, double* out);

// log R_ij: 0 for ReferenceMeasure::Ones, log a_i + log b_j for Product.
double logReference(const UotProblem& problem, std::size_t i, std::size_t j);

struct KernelBuildReport {
    std::size_t zeroRows = 0;     // rows of K that underflowed to all zeros
    std::size_t zeroCols = 0;     // columns of K that underflowed to all zeros
    // 1 where column j of the built rows has a non-zero entry (a solve
    // distributed by rows combines these to count the columns zero in every block).
    std::vector<unsigned char> nonZeroColumns;
    bool underflows() const { return zeroRows != 0 || zeroCols != 0; }
};

// Fills out (rows x cols, row-major, host memory) with K. Validates every cost
// entry: throws uot::Error(InvalidArgument) naming the first negative or
// non-finite entry. Uses up to `threads` OpenMP threads (0 = all).
template <typename T>
KernelBuildReport buildKernelMatrix(const UotProblem& problem, T* out, int threads);

extern template KernelBuildReport buildKernelMatrix<float>(const UotProblem&, float*, int);
extern template KernelBuildReport buildKernelMatrix<double>(const UotProblem&, double*, int);

// Resolves a thread count option (0 = all available) to a positive number.
int resolveThreadCount(int requested);

}  // namespace uot
