#pragma once
// `uot-mpi batch`: `uot batch` with its inputs split over the MPI ranks of
// MPI_COMM_WORLD (distributed_batch_command.cpp). Collective: every rank calls
// it with the same arguments after MPI_Init. Built only with OpenCV (image I/O);
// without it the command says so (exit 4).

#include <string>
#include <vector>

namespace uot::mpi {

int runDistributedBatch(const std::vector<std::string>& args);

}  // namespace uot::mpi
