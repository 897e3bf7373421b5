#pragma once
// RowChunkPool (core/transport/row_chunk_pool.h) over MPI-3 shared memory, for
// uot-mpi solve --row-chunks: the ranks of one node (MPI_Comm_split_type
// MPI_COMM_TYPE_SHARED) share one window (MPI_Win_allocate_shared) that holds the
// kernel of the node's rows and the pass's arrays; the next chunk of a rank's
// block comes from that rank's counter in the window (a lock-free processor
// atomic on the shared memory, so a stopped rank never holds a lock), two sets
// of counters used in turn so that one is reset while the other counts. Ranks on different nodes keep their
// blocks: each node's chunks cover its own rows, and the column sums of the nodes
// are added by the solve's reduction over all ranks.
//
// A node's rows must be one contiguous range, so its ranks must be consecutive
// in the communicator (mpirun's --map-by core or slot); when some node's are not,
// every rank is a node of its own (the blocks of the even split, as without
// --row-chunks). The nodes are node_ranks.h's (whose test hook,
// UOT_MPI_TEST_NODE_RANKS, stands in for several machines).

#include <mpi.h>

#include <cstdint>
#include <vector>

#include "app/mpi/mpi_row_reduction.h"
#include "core/transport/row_chunk_pool.h"

namespace uot::mpi {

class SharedRowChunks final : public RowChunkPool {
public:
    // split: the rows of each rank of comm (P + 1 bounds). The node's barriers are
    // waited for through `waits` (its --mpi-wait and --timeout; their time counted
    // there from the first pass on: the set-up's are not waits of the loop).
    SharedRowChunks(MPI_Comm comm, const std::vector<std::size_t>& split, MpiRowReduction& waits);
    ~SharedRowChunks() override;
    SharedRowChunks(const SharedRowChunks&) = delete;
    SharedRowChunks& operator=(const SharedRowChunks&) = delete;

    std::size_t nodeFirstRow() const override { return m_firstRow; }
    std::size_t nodeRowCount() const override { return m_rowCount; }
    const std::vector<std::size_t>& nodeBlocks() const override { return m_blocks; }
    int nodeRank() const override { return m_nodeRank; }
    int nodeSize() const override { return m_nodeSize; }
    void* sharedMemory(std::size_t bytes) override;
    void barrier() override;
    void startPass() override;
    std::size_t takeChunk(int owner, std::size_t count) override;

    // The chunks this rank took over the solve, those of them from other ranks'
    // blocks, and the passes.
    std::uint64_t chunksTaken() const { return m_taken; }
    std::uint64_t chunksStolen() const { return m_stolen; }
    std::uint64_t passes() const { return m_passes; }

private:
    MPI_Comm m_node = MPI_COMM_NULL;
    MPI_Win m_window = MPI_WIN_NULL;
    std::int64_t* m_counters = nullptr;  // 2 x m_nodeSize, at the start of the window
    MpiRowReduction& m_waits;
    std::size_t m_firstRow = 0, m_rowCount = 0;
    std::vector<std::size_t> m_blocks;
    int m_nodeRank = 0, m_nodeSize = 1;
    std::uint64_t m_taken = 0, m_stolen = 0, m_passes = 0;
};

}  // namespace uot::mpi
