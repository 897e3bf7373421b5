#pragma once
// Internal to gpu/: how a gpu-mapreduce pass divides its work among thread
// blocks. Plain C++ (no CUDA runtime): the kernels, the host planner and the
// tests share this arithmetic.
//
// The work of a pass is rowBlocks x tiles "units": unit u = rowBlock * tiles + t
// reduces the rows of one row block (rowsPerBlock own points) over tile t (one
// shared-memory tile of the other side). Every launched block reduces a
// contiguous range of units. Where a range covers a row block only in part, the
// block writes one partial (sum, and max in exact mode) per row of that row block
// into a slot of its own: slots 0 .. segments(r) - 1 of row block r, laid out as
// partial[slot * ownCount + row]; the finalize step merges the slots of each row.
//
// Two schedules (gpu/mapreduce_config.h, MapReduceWork):
//  - balanced (default): shares of q = ceil(units / slots) whole units, in
//    ceil(units / q) blocks, where slots is every block slot resident at once
//    (the occupancy of the kernels): the largest share is as small as any
//    schedule of the resident slots allows, and every block but the last has
//    exactly that share; ranges cross row-block boundaries, so a block may write
//    several partials;
//  - split: a grid of row blocks x column splits of whole tiles (the schedule of
//    session 19): each block one row block, one partial. Its share is rounded to
//    whole tiles per split and, when the row blocks outnumber the resident slots,
//    it runs in several waves.

#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "core/transport/uot_error.h"

#if defined(__CUDACC__)
#define UOT_MAPREDUCE_HD __host__ __device__ __forceinline__
#else
#define UOT_MAPREDUCE_HD inline
#endif

namespace uot::gpu::detail {

struct MapReduceSchedule {
    std::uint64_t rowBlocks = 1;  // row blocks of the own side
    std::uint64_t tiles = 1;      // tiles of the other side (units per row block)
    int rowsPerBlock = 1;         // own points per row block
    int blocks = 1;               // blocks launched (a 1-D grid)
    std::uint64_t share = 0;      // balanced: units per block (the last block: the rest); 0: split
    int splitTiles = 0;           // split: tiles per split
    int splits = 1;               // split: splits per row block
    int maxSegments = 1;          // the most slots of any row block (scratch: maxSegments x ownCount)

    UOT_MAPREDUCE_HD std::uint64_t units() const { return rowBlocks * tiles; }

    // The units [begin, end) of block b.
    UOT_MAPREDUCE_HD void range(int b, std::uint64_t& begin, std::uint64_t& end) const
    {
        if (share != 0) {
            begin = std::uint64_t(b) * share;
            end = begin + share < units() ? begin + share : units();
        } else {
            // Block b = split * rowBlocks + row block (row blocks vary fastest, as the
            // former 2-D grid launched them).
            const std::uint64_t row = std::uint64_t(b) % rowBlocks, split = std::uint64_t(b) / rowBlocks;
            const std::uint64_t first = split * std::uint64_t(splitTiles);
            begin = row * tiles + first;
            end = row * tiles + (first + splitTiles < tiles ? first + splitTiles : tiles);
        }
    }

    // The block whose range holds unit u.
    UOT_MAPREDUCE_HD int blockOf(std::uint64_t u) const
    {
        if (share != 0) return static_cast<int>(u / share);
        return static_cast<int>((u % tiles) / std::uint64_t(splitTiles) * rowBlocks + u / tiles);
    }

    // Number of slots (partials per row) of row block r.
    UOT_MAPREDUCE_HD int segments(std::uint64_t r) const
    {
        if (splitTiles != 0) return splits;
        return blockOf(r * tiles + tiles - 1) - blockOf(r * tiles) + 1;
    }

    // The slot of row block r that block b writes (b's range must meet row block r).
    UOT_MAPREDUCE_HD int slot(int b, std::uint64_t r) const
    {
        if (splitTiles != 0) return static_cast<int>(std::uint64_t(b) / rowBlocks);
        return b - blockOf(r * tiles);
    }
};

namespace schedule_detail {
inline MapReduceSchedule shape(std::size_t ownCount, std::size_t otherCount, int rowsPerBlock, int tileSize)
{
    if (rowsPerBlock < 1 || tileSize < 1) throw Error(ErrorCode::InvalidArgument, "gpu-mapreduce: bad block shape");
    MapReduceSchedule s;
    s.rowsPerBlock = rowsPerBlock;
    s.rowBlocks = std::max<std::uint64_t>(1, (ownCount + rowsPerBlock - 1) / rowsPerBlock);
    s.tiles = std::max<std::uint64_t>(1, (otherCount + tileSize - 1) / tileSize);
    return s;
}

}  // namespace schedule_detail

// The balanced schedule: whole shares of ceil(units / residentSlots) units.
inline MapReduceSchedule balancedMapReduceSchedule(std::size_t ownCount, std::size_t otherCount, int rowsPerBlock,
                                                   int tileSize, int residentSlots)
{
    MapReduceSchedule s = schedule_detail::shape(ownCount, otherCount, rowsPerBlock, tileSize);
    const std::uint64_t units = s.units();
    const std::uint64_t shared = std::min<std::uint64_t>(std::max(residentSlots, 1), units);
    s.share = (units + shared - 1) / shared;
    const std::uint64_t blocks = (units + s.share - 1) / s.share;  // <= shared
    if (units > (std::uint64_t(1) << 62)) throw Error(ErrorCode::InvalidArgument, "gpu-mapreduce: too many points");
    s.blocks = static_cast<int>(blocks);
    s.maxSegments = 1;
    for (std::uint64_t r = 0; r < s.rowBlocks; ++r) s.maxSegments = std::max(s.maxSegments, s.segments(r));
    return s;
}

// The split schedule: as many whole-tile splits of the other side as keep the
// resident block slots of one wave busy (at least one split, at most one tile each).
inline MapReduceSchedule splitMapReduceSchedule(std::size_t ownCount, std::size_t otherCount, int rowsPerBlock,
                                                int tileSize, int residentSlots)
{
    MapReduceSchedule s = schedule_detail::shape(ownCount, otherCount, rowsPerBlock, tileSize);
    const std::uint64_t splits = std::clamp<std::uint64_t>(std::uint64_t(std::max(residentSlots, 1)) / s.rowBlocks, 1,
                                                           std::min<std::uint64_t>(s.tiles, 65535));
    const std::uint64_t perSplit = (s.tiles + splits - 1) / splits;
    s.splitTiles = static_cast<int>(perSplit);
    s.splits = static_cast<int>((s.tiles + perSplit - 1) / perSplit);
    if (s.rowBlocks * std::uint64_t(s.splits) > 0x7fffffffu)
        throw Error(ErrorCode::InvalidArgument, "gpu-mapreduce: too many points for one launch");
    s.blocks = static_cast<int>(s.rowBlocks * std::uint64_t(s.splits));
    s.maxSegments = s.splits;
    return s;
}

}  // namespace uot::gpu::detail
