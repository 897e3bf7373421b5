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

// Each rank's speed in rows per second, rowsNow[r] / seconds[r], the unknown ones
// (as balancedRowSplit says) at the mean of the known; all 0 when none is known.
std::vector<double> rankSpeeds(const std::vector<std::size_t>& rowsNow, const std::vector<double>& seconds);

// What moving from `bounds` to `next` (both P + 1 entries) saves, in seconds: the
// slowest rank's compute over `iterationsAhead` iterations, now (seconds[r] for the
// last `iterationsTimed` iterations on bounds) against the new split at the same
// speeds, less the move's time: the rows a rank gains times its secondsPerRow to
// set one up, for the rank that takes longest (they move at once). > 0: worth it.
double moveGainSeconds(const std::vector<std::size_t>& bounds, const std::vector<std::size_t>& next,
                       const std::vector<double>& seconds, int iterationsTimed, double iterationsAhead,
                       const std::vector<double>& secondsPerRow);

}  // namespace uot::mpi
