#pragma once
// Counters that every rank of a communicator can advance atomically. uot-mpi
// batch hands out its items' tickets this way (batch_shares.h).
//
// When every rank shares one machine's memory (node_ranks.h), the counters live
// in an MPI-3 shared window (MPI_Win_allocate_shared) and each increment is a
// lock-free processor atomic: Open MPI's shared-memory windows guard every MPI
// atomic with a spin lock, and a rank stopped while holding it would hang every
// other rank's next increment, where no --timeout can see it. Across machines
// they are MPI-3 one-sided atomics (MPI_Fetch_and_op) on a window held by rank 0,
// under a passive lock for the window's whole life (where the library has no
// network atomics an increment may wait for rank 0's next MPI call).
//
// Not thread-safe: the caller serialises every MPI call of the process (the
// process runs under MPI_THREAD_SERIALIZED).

#include <mpi.h>

#include <cstdint>

namespace uot::mpi {

class SharedCounters {
public:
    // `count` counters, each at 0. Collective on comm.
    SharedCounters(MPI_Comm comm, int count);
    // Collective on comm (MPI_Win_free).
    ~SharedCounters();
    SharedCounters(const SharedCounters&) = delete;
    SharedCounters& operator=(const SharedCounters&) = delete;

    // Counter `which`'s value before this call added 1 to it.
    std::uint64_t fetchAndIncrement(int which);

private:
    MPI_Win m_window = MPI_WIN_NULL;
    std::int64_t* m_shared = nullptr;  // rank 0's counters, where every rank shares its memory
    int m_count = 0;
};

}  // namespace uot::mpi
