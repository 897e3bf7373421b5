#include "app/mpi/shared_counters.h"

#include <atomic>
#include <stdexcept>

#include "app/mpi/node_ranks.h"

namespace uot::mpi {

namespace {

// Whether every rank of comm shares this rank's memory (one node).
bool oneNode(MPI_Comm comm)
{
    MPI_Comm node = nodeCommunicator(comm);
    int nodeSize = 0, size = 0;
    MPI_Comm_size(node, &nodeSize);
    MPI_Comm_size(comm, &size);
    MPI_Comm_free(&node);
    int all = nodeSize == size ? 1 : 0;
    MPI_Allreduce(MPI_IN_PLACE, &all, 1, MPI_INT, MPI_MIN, comm);
    return all != 0;
}

}  // namespace

SharedCounters::SharedCounters(MPI_Comm comm, int count) : m_count(count)
{
    int rank = 0;
    MPI_Comm_rank(comm, &rank);
    const std::size_t bytes = static_cast<std::size_t>(count) * sizeof(std::int64_t);  // all on rank 0
    std::int64_t* values = nullptr;
    if (oneNode(comm)) {
        m_shared = static_cast<std::int64_t*>(allocateOnRankZero(comm, bytes, &m_window));
        values = m_shared;
    } else {
        MPI_Win_allocate(rank == 0 ? static_cast<MPI_Aint>(bytes) : 0, sizeof(std::int64_t), MPI_INFO_NULL, comm,
                         &values, &m_window);
    }
    if (rank == 0)
        for (int i = 0; i < count; ++i) values[i] = 0;
    MPI_Win_lock_all(0, m_window);
    MPI_Win_sync(m_window);  // rank 0's zeros in the window's public copy
    MPI_Barrier(comm);       // ... before anyone counts
    MPI_Win_sync(m_window);  // ... and in this rank's view of shared memory
}

SharedCounters::~SharedCounters()
{
    MPI_Win_unlock_all(m_window);
    MPI_Win_free(&m_window);
}

std::uint64_t SharedCounters::fetchAndIncrement(int which)
{
    if (which < 0 || which >= m_count) throw std::out_of_range("SharedCounters: no such counter");
    if (m_shared != nullptr)
        return static_cast<std::uint64_t>(std::atomic_ref<std::int64_t>(m_shared[which]).fetch_add(1));
    const std::int64_t one = 1;
    std::int64_t before = 0;
    MPI_Fetch_and_op(&one, &before, MPI_INT64_T, 0, which, MPI_SUM, m_window);
    MPI_Win_flush(0, m_window);
    return static_cast<std::uint64_t>(before);
}

}  // namespace uot::mpi
