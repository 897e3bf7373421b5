#pragma once
// Helpers for problems given as point clouds (PointCloudCost): the default
// cost scale, and whether a rows x cols matrix fits in this machine's memory
// (which decides between the stored-matrix variants and `mapreduce`, and
// whether `uot solve --plan` can write the plan).

#include <cstddef>
#include <cstdint>

#include "core/transport/uot_problem.h"

namespace uot {

// max_ij |x_i - y_j|^2 over the clouds x (m x dim) and y (n x dim), row-major
// host memory: one pass over the pairs, no matrix (threads: 0 = all).
double maxSquaredDistance(const double* x, std::size_t m, const double* y, std::size_t n, std::size_t dim,
                          int threads = 0);

// Memory this process may still use: MemAvailable of /proc/meminfo (Linux),
// else the physical memory; 0 when unknown.
std::uint64_t availableMemoryBytes();

// Whether `bytes` fit in half of the available memory (the other half is left
// to the rest of the process and the machine).
bool fitsInMemory(std::uint64_t bytes);


}  // namespace uot
