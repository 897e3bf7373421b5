#pragma once
// The ranks of a communicator that share this rank's memory (its node):
// MPI_Comm_split_type(MPI_COMM_TYPE_SHARED). Test only: UOT_MPI_TEST_NODE_RANKS=K
// makes nodes of K consecutive ranks instead, as if the job ran on several
// machines, and -K nodes of the ranks r with the same r % K (ranks apart).
// Collective on comm.

#include <mpi.h>

namespace uot::mpi {

// A new communicator (the caller frees it): this rank's node, ordered as in comm.
MPI_Comm nodeCommunicator(MPI_Comm comm);

}  // namespace uot::mpi
