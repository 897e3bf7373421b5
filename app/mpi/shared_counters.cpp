#include "app/mpi/shared_counters.h"

#include <stdexcept>

namespace uot::mpi {

SharedCounters::SharedCounters(MPI_Comm comm, int count) : m_count(count)
{
    int rank = 0;
    MPI_Comm_rank(comm, &rank);
    const MPI_Aint bytes = rank == 0 ? static_cast<MPI_Aint>(count) * static_cast<MPI_Aint>(sizeof(std::int64_t)) : 0;
    std::int64_t* values = nullptr;
    MPI_Win_allocate(bytes, sizeof(std::int64_t), MPI_INFO_NULL, comm, &values, &m_window);
    if (rank == 0)
        for (int i = 0; i < count; ++i) values[i] = 0;
    MPI_Win_lock_all(0, m_window);
    MPI_Win_sync(m_window);  // rank 0's zeros in the window's public copy
    MPI_Barrier(comm);       // ... before anyone counts
}

SharedCounters::~SharedCounters()
{
    MPI_Win_unlock_all(m_window);
    MPI_Win_free(&m_window);
}

std::uint64_t SharedCounters::fetchAndIncrement(int which)
{
    if (which < 0 || which >= m_count) throw std::out_of_range("SharedCounters: no such counter");
    const std::int64_t one = 1;
    std::int64_t before = 0;
    MPI_Fetch_and_op(&one, &before, MPI_INT64_T, 0, which, MPI_SUM, m_window);
    MPI_Win_flush(0, m_window);
    return static_cast<std::uint64_t>(before);
}

}  // namespace uot::mpi
