#pragma once
// Counters that every rank of a communicator can advance atomically: MPI-3
// one-sided atomics (MPI_Fetch_and_op) on a window held by rank 0, under a
// passive lock for the window's whole life (on one machine rank 0 takes no part
// in another rank's increment; where the library has no network atomics it may
// wait for rank 0's next MPI call). uot-mpi batch hands out its items' tickets
// this way (batch_shares.h).
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
    int m_count = 0;
};

}  // namespace uot::mpi
