#include "app/mpi/shared_row_chunks.h"

#include <algorithm>
#include <atomic>
#include <stdexcept>

#if defined(__linux__)
#include <sys/mman.h>
#endif

#include "app/mpi/node_ranks.h"
#include "core/transport/row_kernels_types.h"

namespace uot::mpi {

namespace {

// The window's first bytes: two sets of counters (std::int64_t), one per rank of
// the node each, used by odd and even passes; then the memory handed out, from
// the next 64-byte boundary.
MPI_Aint counterBytes(int nodeSize)
{
    return static_cast<MPI_Aint>(2 * static_cast<std::size_t>(nodeSize) * sizeof(std::int64_t));
}

}  // namespace

SharedRowChunks::SharedRowChunks(MPI_Comm comm, const std::vector<std::size_t>& split, MpiRowReduction& waits)
    : m_waits(waits)
{
    int rank = 0;
    MPI_Comm_rank(comm, &rank);
    m_node = nodeCommunicator(comm);
    MPI_Comm_size(m_node, &m_nodeSize);
    // The node's lowest and highest rank: consecutive ranks have contiguous rows.
    int bounds[2] = {-rank, rank};
    MPI_Allreduce(MPI_IN_PLACE, bounds, 2, MPI_INT, MPI_MAX, m_node);
    int apart = bounds[1] + bounds[0] + 1 != m_nodeSize;
    MPI_Allreduce(MPI_IN_PLACE, &apart, 1, MPI_INT, MPI_MAX, comm);
    if (apart) {
        MPI_Comm_free(&m_node);
        MPI_Comm_split(comm, rank, 0, &m_node);
        m_nodeSize = 1;
        bounds[0] = -rank;
        bounds[1] = rank;
    }
    MPI_Comm_rank(m_node, &m_nodeRank);
    m_firstRow = split[static_cast<std::size_t>(-bounds[0])];
    m_rowCount = split[static_cast<std::size_t>(bounds[1]) + 1] - m_firstRow;
    for (int r = -bounds[0]; r <= bounds[1] + 1; ++r)
        m_blocks.push_back(split[static_cast<std::size_t>(r)] - m_firstRow);
}

SharedRowChunks::~SharedRowChunks()
{
    if (m_window != MPI_WIN_NULL) {
        MPI_Win_unlock_all(m_window);
        MPI_Win_free(&m_window);
    }
    MPI_Comm_free(&m_node);
}

void* SharedRowChunks::sharedMemory(std::size_t bytes)
{
    if (m_window != MPI_WIN_NULL) throw std::logic_error("the node's shared memory is set up once");
    // All of it in the node's first rank's part; the others reach it through MPI_Win_shared_query.
    const MPI_Aint counters = counterBytes(m_nodeSize);
    const std::size_t size = static_cast<std::size_t>(counters) + bytes + kernels::kAlignBytes;
    void* base = allocateOnRankZero(m_node, size, &m_window);
    m_counters = static_cast<std::int64_t*>(base);
    if (m_nodeRank == 0) std::fill_n(m_counters, 2 * m_nodeSize, std::int64_t{0});
    const auto address = reinterpret_cast<std::uintptr_t>(base) + static_cast<std::uintptr_t>(counters);
    void* memory =
        reinterpret_cast<void*>((address + kernels::kAlignBytes - 1) / kernels::kAlignBytes * kernels::kAlignBytes);
#if defined(__linux__) && defined(MADV_HUGEPAGE)
    // The kernel is read every pass: huge pages where the system gives them for shared memory (a hint).
    if (m_nodeRank == 0 && bytes > 0) (void)::madvise(base, static_cast<std::size_t>(size), MADV_HUGEPAGE);
#endif
    MPI_Win_lock_all(MPI_MODE_NOCHECK, m_window);
    barrier();
    return memory;
}

void SharedRowChunks::barrier()
{
    if (m_window != MPI_WIN_NULL) MPI_Win_sync(m_window);
    MPI_Request request;
    MPI_Ibarrier(m_node, &request);
    // Before the first pass it is the set-up's (the kernel placed in the shared
    // memory), not a wait of the iteration loop.
    if (m_passes > 0) {
        m_waits.waitFor(request);
    } else {
        const UntimedWaits setUp(&m_waits);
        m_waits.waitFor(request);
    }
    if (m_window != MPI_WIN_NULL) MPI_Win_sync(m_window);
}

void SharedRowChunks::startPass()
{
    ++m_passes;  // first: this pass's barrier is a wait of the loop (barrier())
    barrier();
    // This pass counts on the counters of set m_passes % 2; the other set was the
    // last pass's, which every rank has finished: it is reset for the next pass,
    // whose barrier comes after.
    if (m_nodeRank == 0) {
        std::int64_t* other = m_counters + ((m_passes + 1) % 2) * static_cast<std::size_t>(m_nodeSize);
        for (int r = 0; r < m_nodeSize; ++r) std::atomic_ref<std::int64_t>(other[r]).store(0, std::memory_order_relaxed);
    }
}

std::size_t SharedRowChunks::takeChunk(int owner, std::size_t count)
{
    if (m_counters == nullptr) throw std::logic_error("SharedRowChunks: takeChunk before sharedMemory");
    // A processor atomic on the node's shared memory, not MPI_Fetch_and_op: Open
    // MPI's shared-memory windows take a spin lock around each one, and a rank
    // stopped while holding it would hang the others where no --timeout sees it.
    const std::size_t index = (m_passes % 2) * static_cast<std::size_t>(m_nodeSize) + static_cast<std::size_t>(owner);
    const std::int64_t ticket = std::atomic_ref<std::int64_t>(m_counters[index]).fetch_add(1, std::memory_order_relaxed);
    if (ticket < 0 || static_cast<std::size_t>(ticket) >= count) return count;
    ++m_taken;
    if (owner != m_nodeRank) ++m_stolen;
    return static_cast<std::size_t>(ticket);
}

}  // namespace uot::mpi
