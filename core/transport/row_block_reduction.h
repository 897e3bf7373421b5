#pragma once
// The seam of a solve distributed by rows (uot-mpi): each process holds a
// contiguous block of rows of K, the whole of v, and its own block of u. What
// depends on all rows (column sums, row-side error sums, the stopping test's
// maxima, the translation-invariant step's row sum) is combined across the
// processes through this interface. core/ stays free of MPI: the MPI
// implementation lives with the uot-mpi executable (app/mpi). A null pointer
// wherever one is accepted means a single process (nothing to combine).

#include <span>

namespace uot {

class RowBlockReduction {
public:
    virtual ~RowBlockReduction() = default;

    // Element-wise sum / maximum over all processes, in place. Collective:
    // every process calls it in the same order with the same length.
    virtual void sum(std::span<double> values) = 0;
    virtual void max(std::span<double> values) = 0;

    double sum(double value)
    {
        sum(std::span<double>(&value, 1));
        return value;
    }
    double max(double value)
    {
        max(std::span<double>(&value, 1));
        return value;
    }
};

}  // namespace uot
