#pragma once
// The ranks of a communicator that share this rank's memory (its node):
// MPI_Comm_split_type(MPI_COMM_TYPE_SHARED), and memory they share. Test only: UOT_MPI_TEST_NODE_RANKS=K
// makes nodes of K consecutive ranks instead, as if the job ran on several
// machines, and -K nodes of the ranks r with the same r % K (ranks apart).
// Collective on comm.

#include <mpi.h>

#include <atomic>
#include <cstddef>
#include <cstdint>

namespace uot::mpi {

// Counters in shared memory are advanced by several processes: their atomics
// (std::atomic_ref) must need no lock.
static_assert(std::atomic_ref<std::int64_t>::is_always_lock_free);

// A new communicator (the caller frees it): this rank's node, ordered as in comm.
MPI_Comm nodeCommunicator(MPI_Comm comm);

// An MPI-3 shared window (MPI_Win_allocate_shared) over `node`, whose ranks share
// memory, with all of its memory, `bytes` (as rank 0 gives it), in rank 0's part;
// returns that memory's address in this process (MPI_Win_shared_query). The
// caller frees *window (MPI_Win_free). Collective on node.
void* allocateOnRankZero(MPI_Comm node, std::size_t bytes, MPI_Win* window);

}  // namespace uot::mpi
