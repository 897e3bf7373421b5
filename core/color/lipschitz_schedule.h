#pragma once
// The Lipschitz sweeps of map_regularizer.h (cyclic projections over the lattice's
// edges, one edge after the other, sweep after sweep) as levels: sets of edge visits
// that share no node, so that a device can make each level's projections at once and
// still leave every value bit for bit as the sweeps in order do. Each node sees its
// edges in the same order as in the sweeps, so each projection reads the same two
// values. No OpenCV, no Qt, no CUDA.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/color/map_regularizer.h"

namespace uot {

struct LipschitzSchedule {
    // The first `opening` sweeps, level by level as early as each visit can come (a visit
    // comes one level after the last visit of either of its nodes): the visits of level l
    // are openingVisits[openingStart[l] .. openingStart[l + 1]), each edge index * 8 + sweep.
    int opening = 0;
    std::vector<std::uint32_t> openingStart;
    std::vector<std::uint32_t> openingVisits;
    // The later sweeps repeat sweep `opening`'s levels every `period` levels: edge e of
    // sweep s >= opening comes at level laterLevel[e] + period * (s - opening), where
    // `period` exceeds every node's spread of levels in one sweep. The edges grouped by
    // laterLevel % period: group r is groupEdges[groupStart[r] .. groupStart[r + 1]) with
    // their levels in groupLevels, ascending.
    int period = 1;
    std::vector<std::uint32_t> laterLevel;
    std::vector<std::uint32_t> groupStart, groupEdges, groupLevels;

    // The levels that `sweeps` sweeps take (0 for none).
    std::uint32_t levels(int sweeps) const;
};

// The sweeps that the projections in order make on a channel whose sweep s, run with
// `limit` sweeps, had worst[s] as its largest excess over an edge's bound (relative to
// the bound): up to the first below kLipschitzSettled, else all `limit`. A run that made
// more (a device runs the sweeps ahead of that check) is run again with this limit.
int lipschitzSweepsMade(const double* worst, int limit);

// The schedule of the sweeps over `edges` (their order is the sweeps' order) of a lattice
// of `nodes` nodes, with `opening` sweeps (1 to 8) listed level by level.
LipschitzSchedule lipschitzSchedule(const std::vector<LatticeEdge>& edges, std::size_t nodes, int opening = 3);

}  // namespace uot
