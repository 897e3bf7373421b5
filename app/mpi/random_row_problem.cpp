#include "app/mpi/random_row_problem.h"

namespace uot::mpi {

namespace {

// A uniform number in [0, 1) from (seed, stream, index): SplitMix64's output
// function applied to a combination of the three.
double uniform(std::uint64_t seed, std::uint64_t stream, std::uint64_t index)
{
    std::uint64_t z = seed * 0x9E3779B97F4A7C15ull + stream * 0xD1B54A32D192ED03ull + index * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    return static_cast<double>(z >> 11) * 0x1.0p-53;
}

enum Stream : std::uint64_t { kSourceX = 1, kSourceY, kTargetX, kTargetY, kSourceWeight, kTargetWeight };

}  // namespace

RandomRowProblem makeRandomRowProblem(std::size_t m, std::size_t n, std::uint64_t seed, std::size_t firstRow,
                                      std::size_t rowCount)
{
    RandomRowProblem p;
    p.x.resize(2 * rowCount);
    for (std::size_t r = 0; r < rowCount; ++r) {
        p.x[2 * r] = uniform(seed, kSourceX, firstRow + r);
        p.x[2 * r + 1] = uniform(seed, kSourceY, firstRow + r);
    }
    p.y.resize(2 * n);
    p.b.resize(n);
    for (std::size_t j = 0; j < n; ++j) {
        p.y[2 * j] = uniform(seed, kTargetX, j);
        p.y[2 * j + 1] = uniform(seed, kTargetY, j);
        p.b[j] = (0.5 + uniform(seed, kTargetWeight, j)) / static_cast<double>(n);
    }
    p.allA.resize(m);
    for (std::size_t i = 0; i < m; ++i) p.allA[i] = (0.5 + uniform(seed, kSourceWeight, i)) / static_cast<double>(m);
    return p;
}

}  // namespace uot::mpi
