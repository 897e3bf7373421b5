#pragma once
// One GPU per rank on a node with several: the rank's local rank (its place
// among the ranks of its node, MPI_Comm_split_type shared) modulo the node's
// visible devices picks the device, which is made the only one this process
// sees (CUDA_VISIBLE_DEVICES) before anything starts CUDA.

#include <mpi.h>

#include <string>

namespace uot::mpi {

// The ranks of `comm` on this rank's node, and this rank's place among them.
struct LocalRank {
    int rank = 0;
    int size = 1;
};
LocalRank localRank(MPI_Comm comm);

// The node's visible devices: the entries of CUDA_VISIBLE_DEVICES when it is
// set, else the GPUs the NVIDIA driver lists (/proc/driver/nvidia/gpus); none
// on a node without them. Sets CUDA_VISIBLE_DEVICES to the device of `local`
// and returns what was chosen, for the report ("" when there is no device).
// Call before any CUDA call of this process.
std::string pinLocalGpu(const LocalRank& local);

}  // namespace uot::mpi
