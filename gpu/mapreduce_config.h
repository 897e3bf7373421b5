#pragma once
// How gpu-mapreduce's fast pass is compiled and launched (no CUDA types: the
// public gpu_backend.h passes it through). Every field is validated by
// validateMapReduceConfig; only d = 3, the colour case, has the tuned variants:
// other dimensions use all-SFU exponentials and their own rows per thread.

#include <string>

namespace uot::gpu {

// How a pass divides its (row block, column tile) units among thread blocks
// (gpu/mapreduce_schedule.h): split is the grid of row blocks x column splits
// of session 19; balanced (default) gives whole equal shares, as small as the
// resident block slots allow. (1 was stream-K, every slot with shares differing
// by one unit: measured in session 20 and removed, docs/notes/mapreduce.md.)
enum class MapReduceWork { Split = 0, Balanced = 2 };

// The defaults are the fastest measured on the H100 at 65536^2 (docs/BENCHMARKS.md,
// map-reduce): every polynomial share was 0.7-6 % slower than none (1/32 within
// the run-to-run noise), the prefetch 2.7 % faster, the balanced schedule 3.7 %
// faster than split (docs/notes/mapreduce.md, work schedule).
struct MapReduceConfig {
    // Every polyEvery-th exponential of the fast pass (d = 3) is a polynomial on the
    // FMA units instead of the special-function unit: 0 (never), 6, 8, 10, 12, 16 or 32.
    int polyEvery = 0;
    // Load the next tile of the other side into registers while reducing the current one.
    bool prefetch = true;
    // Work schedule of a pass (gpu/mapreduce_schedule.h).
    MapReduceWork schedule = MapReduceWork::Balanced;
    // Balanced schedule: the block slots to share the work among;
    // 0 (default) is every block slot resident at once (occupancy API). Tests set
    // a few to make the blocks' ranges cross row blocks on small problems.
    int blocks = 0;
};

// Empty when the configuration is supported, else what is wrong, for a person.
inline std::string mapReduceConfigProblem(const MapReduceConfig& c)
{
    const int p = c.polyEvery;
    if (p != 0 && p != 6 && p != 8 && p != 10 && p != 12 && p != 16 && p != 32)
        return "gpu-mapreduce: polyEvery must be 0, 6, 8, 10, 12, 16 or 32";
    if (c.schedule != MapReduceWork::Split && c.schedule != MapReduceWork::Balanced)
        return "gpu-mapreduce: the schedule must be split (0) or balanced (2)";
    if (c.blocks < 0 || c.blocks > 1 << 20)
        return "gpu-mapreduce: blocks must be 0 (the resident slots) or a count up to 2^20";
    return {};
}

}  // namespace uot::gpu
