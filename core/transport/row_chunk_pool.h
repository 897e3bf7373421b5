#pragma once
// Dynamic row chunks for a solve distributed by rows (uot-mpi --row-chunks): the
// processes of one node (one machine) also hold the kernel of all the node's rows
// in memory they share, and in every pass each process takes chunks of rows as
// long as any is left: first those of its own block (from its own copy of them),
// then, once those are done, the chunks the other processes have not taken yet
// (from the shared kernel). A process slowed down for a while (a shared core) then
// does fewer rows instead of holding the others up. core/ stays free of MPI: the
// shared memory, the barrier and the atomic counters come from the transport
// (app/mpi/shared_row_chunks.h); the pass itself is FusedRowBlockSolve's.
//
// Each chunk's column partials go to a slot of their own and are summed in chunk
// order, so the column sums do not depend on which process did which chunk (nor,
// for the same node rows, on the number of processes).

#include <cstddef>
#include <vector>

namespace uot {

class RowChunkPool {
public:
    virtual ~RowChunkPool() = default;

    // The node's rows [firstRow, firstRow + rowCount) of the whole problem (the
    // blocks of its processes, which are contiguous), the bounds of each of its
    // processes' blocks among them (nodeSize() + 1, from 0 to rowCount), this
    // process's index among the node's processes and their count.
    virtual std::size_t nodeFirstRow() const = 0;
    virtual std::size_t nodeRowCount() const = 0;
    virtual const std::vector<std::size_t>& nodeBlocks() const = 0;
    virtual int nodeRank() const = 0;
    virtual int nodeSize() const = 0;

    // `bytes` of memory shared by the node's processes, 64-byte aligned, the same
    // place for all of them. Collective on the node; called once.
    virtual void* sharedMemory(std::size_t bytes) = 0;
    // Returns once every process of the node has called it; what each wrote to
    // the shared memory before it is visible to all after it. Collective on the node.
    virtual void barrier() = 0;
    // The barrier that starts a pass: after it, every process's counter hands out
    // its chunks from 0 again. Collective on the node.
    virtual void startPass() = 0;
    // The next of the `count` chunks of node process `owner` not yet taken in this
    // pass by any process of the node (each index once, in increasing order), or
    // `count` when all are taken. Counts the chunks this process took.
    virtual std::size_t takeChunk(int owner, std::size_t count) = 0;
};

// Chunks of a node's rows in one pass: at most 256, enough for the slowest
// process's last chunk to be a small part of a pass, and at least 64 rows each, so
// that a chunk's column slot (one row of the kernel, written once and read once)
// is at most a 32nd of its traffic. Depends only on the node's row count.
inline constexpr std::size_t kMaxRowChunks = 256;
inline constexpr std::size_t kMinChunkRows = 64;
inline std::size_t rowChunkCount(std::size_t nodeRows)
{
    const std::size_t chunks = nodeRows / kMinChunkRows;
    return chunks < 1 ? (nodeRows > 0 ? 1 : 0) : chunks > kMaxRowChunks ? kMaxRowChunks : chunks;
}

}  // namespace uot
