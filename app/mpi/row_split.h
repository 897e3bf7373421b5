#pragma once
// Which rows of the cost each rank of `uot-mpi solve` owns: rank r owns rows
// [bounds[r], bounds[r + 1]) of M (bounds has P + 1 entries, bounds[0] = 0,
// bounds[P] = M). The even split gives each rank M / P rows; the balanced one
// gives each rank rows in proportion to its measured speed (rows per second of
// a pass), for ranks that do not run equally fast (cores shared with other
// work, a virtual machine's hyperthread siblings), so that none waits for the
// others in each reduction. Deterministic: the same inputs give the same split
// on every rank. No MPI here (the command gathers the measurements).

#include <cstddef>
#include <vector>

namespace uot::mpi {

// Rank r owns [M r / P, M (r + 1) / P).
std::vector<std::size_t> evenRowSplit(std::size_t rows, int ranks);

// The split in proportion to each rank's speed, rowsNow[r] / seconds[r] (its
// rows and its compute time for them, without waiting), rounded to whole rows by
// the largest remainders (ties: the lower rank). A rank whose speed is unknown
// (no rows, or a time <= 0 or not finite) counts at the mean speed of the others;
// with no speed known the split is the even one.
std::vector<std::size_t> balancedRowSplit(const std::vector<std::size_t>& rowsNow, const std::vector<double>& seconds,
                                          std::size_t rows);

}  // namespace uot::mpi
