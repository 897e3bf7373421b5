#pragma once
// `uot-mpi solve`: `uot solve` distributed by rows over the MPI ranks of
// MPI_COMM_WORLD (distributed_solve_command.cpp). Collective: every rank calls
// it with the same arguments after MPI_Init.

#include <string>
#include <vector>

namespace uot::mpi {

int runDistributedSolve(const std::vector<std::string>& args);

}  // namespace uot::mpi
