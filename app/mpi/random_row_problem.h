#pragma once
// The bench problems of `uot-mpi solve --random MxN`: M source and N target
// points in the unit square, C_ij = |x_i - y_j|^2, weights a_i, b_j in
// [0.5, 1.5) / M (resp. / N). Every value is a hash of (seed, index), so a
// rank generates exactly its own rows and every rank count gives the same problem.

#include <cstddef>
#include <cstdint>
#include <vector>

namespace uot::mpi {

struct RandomRowProblem {
    std::vector<double> x;     // rows firstRow .. firstRow + rowCount - 1, 2 coordinates each
    std::vector<double> y;     // all N target points, 2 coordinates each
    std::vector<double> allA;  // a of all M rows
    std::vector<double> b;     // all N
};

RandomRowProblem makeRandomRowProblem(std::size_t m, std::size_t n, std::uint64_t seed, std::size_t firstRow,
                                      std::size_t rowCount);

}  // namespace uot::mpi
