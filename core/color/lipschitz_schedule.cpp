#include "core/color/lipschitz_schedule.h"

#include <algorithm>

#include "core/transport/uot_error.h"

namespace uot {

std::uint32_t LipschitzSchedule::levels(int sweeps) const
{
    if (sweeps <= 0 || laterLevel.empty()) return 0;
    if (sweeps <= opening) {
        // The last level holding a visit of a sweep below `sweeps`.
        for (std::size_t l = openingStart.size() - 1; l > 0; --l)
            for (std::uint32_t k = openingStart[l - 1]; k < openingStart[l]; ++k)
                if (static_cast<int>(openingVisits[k] & 7u) < sweeps) return static_cast<std::uint32_t>(l);
        return 0;
    }
    const std::uint32_t last = *std::max_element(laterLevel.begin(), laterLevel.end());
    return last + 1 + static_cast<std::uint32_t>(period) * static_cast<std::uint32_t>(sweeps - 1 - opening);
}

int lipschitzSweepsMade(const double* worst, int limit)
{
    for (int sweep = 0; sweep < limit; ++sweep)
        if (worst[sweep] < kLipschitzSettled) return sweep + 1;
    return limit;
}

LipschitzSchedule lipschitzSchedule(const std::vector<LatticeEdge>& edges, std::size_t nodes, int opening)
{
    if (opening < 1 || opening > 8 || edges.size() >= (std::size_t(1) << 29))
        throw Error(ErrorCode::InvalidArgument, "lipschitzSchedule: 1 to 8 opening sweeps, fewer than 2^29 edges");
    LipschitzSchedule s;
    s.opening = opening;
    // last[node]: the level of the node's latest visit + 1 (0: none yet).
    std::vector<std::uint32_t> last(nodes, 0);
    const auto place = [&](const LatticeEdge& e) {
        if (e.node >= nodes || e.next >= nodes) throw Error(ErrorCode::InvalidArgument, "lipschitzSchedule: edge outside the lattice");
        const std::uint32_t level = std::max(last[e.node], last[e.next]);
        last[e.node] = last[e.next] = level + 1;
        return level;
    };
    std::vector<std::uint32_t> visitLevel(static_cast<std::size_t>(opening) * edges.size());
    std::uint32_t openingLevels = 0;
    for (int sweep = 0; sweep < opening; ++sweep)
        for (std::size_t e = 0; e < edges.size(); ++e) {
            const std::uint32_t level = place(edges[e]);
            visitLevel[static_cast<std::size_t>(sweep) * edges.size() + e] = level;
            openingLevels = std::max(openingLevels, level + 1);
        }
    // The visits by level (counting sort; within a level in sweep order, which does not matter).
    s.openingStart.assign(openingLevels + 1, 0);
    for (std::uint32_t level : visitLevel) ++s.openingStart[level + 1];
    for (std::size_t l = 0; l < openingLevels; ++l) s.openingStart[l + 1] += s.openingStart[l];
    s.openingVisits.resize(visitLevel.size());
    std::vector<std::uint32_t> fill(s.openingStart.begin(), s.openingStart.end() - 1);
    for (std::size_t k = 0; k < visitLevel.size(); ++k) {
        const std::uint32_t edge = static_cast<std::uint32_t>(k % edges.size());
        const std::uint32_t sweep = static_cast<std::uint32_t>(k / edges.size());
        s.openingVisits[fill[visitLevel[k]]++] = edge * 8 + sweep;
    }
    // Sweep `opening` as early as it can come; the period: one more than the largest
    // spread between a node's first and last visit in it, so that sweep s + 1's first
    // visit of each node comes after sweep s's last.
    s.laterLevel.resize(edges.size());
    std::vector<std::uint32_t> firstVisit(nodes, 0xffffffffu), lastVisit(nodes, 0);
    for (std::size_t e = 0; e < edges.size(); ++e) {
        const std::uint32_t level = place(edges[e]);
        s.laterLevel[e] = level;
        for (std::uint32_t node : {edges[e].node, edges[e].next}) {
            firstVisit[node] = std::min(firstVisit[node], level);
            lastVisit[node] = std::max(lastVisit[node], level);
        }
    }
    std::uint32_t spread = 0;
    for (std::size_t n = 0; n < nodes; ++n)
        if (firstVisit[n] != 0xffffffffu) spread = std::max(spread, lastVisit[n] - firstVisit[n]);
    s.period = static_cast<int>(spread) + 1;
    // The groups by level % period, each ascending in level (a counting sort by level first).
    const std::uint32_t p = static_cast<std::uint32_t>(s.period);
    std::vector<std::uint32_t> order(edges.size());
    for (std::size_t e = 0; e < edges.size(); ++e) order[e] = static_cast<std::uint32_t>(e);
    std::stable_sort(order.begin(), order.end(), [&](std::uint32_t a, std::uint32_t b) { return s.laterLevel[a] < s.laterLevel[b]; });
    s.groupStart.assign(p + 1, 0);
    for (std::uint32_t level : s.laterLevel) ++s.groupStart[level % p + 1];
    for (std::uint32_t r = 0; r < p; ++r) s.groupStart[r + 1] += s.groupStart[r];
    s.groupEdges.resize(edges.size());
    s.groupLevels.resize(edges.size());
    std::vector<std::uint32_t> at(s.groupStart.begin(), s.groupStart.end() - 1);
    for (std::uint32_t e : order) {
        const std::uint32_t k = at[s.laterLevel[e] % p]++;
        s.groupEdges[k] = e;
        s.groupLevels[k] = s.laterLevel[e];
    }
    return s;
}

}  // namespace uot
