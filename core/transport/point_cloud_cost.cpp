#include "core/transport/point_cloud_cost.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>

#include "core/transport/kernel_matrix.h"

namespace uot {

double maxSquaredDistance(const double* x, std::size_t m, const double* y, std::size_t n, std::size_t dim,
                          int threads)
{
    double best = 0;
#pragma omp parallel for schedule(static) num_threads(resolveThreadCount(threads)) reduction(max : best) \
    if (m * n > (1u << 16))
    for (std::ptrdiff_t si = 0; si < static_cast<std::ptrdiff_t>(m); ++si) {
        const double* xi = x + static_cast<std::size_t>(si) * dim;
        for (std::size_t j = 0; j < n; ++j) {
            const double* yj = y + j * dim;
            double d2 = 0;
            for (std::size_t k = 0; k < dim; ++k) d2 += (xi[k] - yj[k]) * (xi[k] - yj[k]);
            best = std::max(best, d2);
        }
    }
    return best;
}

std::uint64_t availableMemoryBytes()
{
    if (std::FILE* f = std::fopen("/proc/meminfo", "r")) {
        char line[256];
        unsigned long long kib = 0;
        bool found = false;
        while (std::fgets(line, sizeof line, f)) {
            if (std::sscanf(line, "MemAvailable: %llu kB", &kib) == 1) {
                found = true;
                break;
            }
        }
        std::fclose(f);
        if (found) return static_cast<std::uint64_t>(kib) * 1024;
    }
    const long pages = ::sysconf(_SC_PHYS_PAGES), page = ::sysconf(_SC_PAGESIZE);
    return pages > 0 && page > 0 ? static_cast<std::uint64_t>(pages) * static_cast<std::uint64_t>(page) : 0;
}

bool fitsInMemory(std::uint64_t bytes)
{
    const std::uint64_t available = availableMemoryBytes();
    return available == 0 || bytes <= available / 2;
}

}  // namespace uot
