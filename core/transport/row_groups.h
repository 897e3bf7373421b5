#pragma once
// The order in which the fused and MAP-UOT passes visit one thread's rows
// [r0, r1): groups of rows a constant `stride()` apart, which the row-group
// kernels take as one strided block (row_kernels.h). Two orders:
//  - adjacent(r0, r1, size): groups of `size` neighbouring rows (stride 1);
//  - stretches(r0, r1, streams): the rows cut into `streams` consecutive
//    stretches, group g taking row g of every stretch (stride = stretch
//    length), so that each stretch is read front to back as one long
//    sequential stream across groups and the hardware prefetchers keep fetching
//    while the core works on a group already in cache.
// forRowLength() picks the one that measured faster on the EPYC VM
// (docs/notes/benchmark-history.md, "Row-group kernels").

#include <algorithm>
#include <cstddef>

#include "core/transport/row_kernels_types.h"

namespace uot {

struct RowGroup {
    std::size_t first = 0;  // its first row
    std::size_t count = 0;  // rows first, first + stride, ... (at least 1)
};

class RowGroups {
public:
    static RowGroups adjacent(std::size_t r0, std::size_t r1, std::size_t size)
    {
        const std::size_t rows = r1 > r0 ? r1 - r0 : 0;
        return RowGroups(r0, rows, 1, size, (rows + size - 1) / size);
    }

    static RowGroups stretches(std::size_t r0, std::size_t r1, std::size_t streams)
    {
        const std::size_t rows = r1 > r0 ? r1 - r0 : 0;
        const std::size_t length = (rows + streams - 1) / streams;
        return RowGroups(r0, rows, length, streams, length);
    }

    // Rows of `rowBytes` bytes: 8 adjacent rows while 8 rows fit in 128 KiB,
    // else 4 stretches (the group must stay small enough to be re-read from L2).
    static RowGroups forRowLength(std::size_t r0, std::size_t r1, std::size_t rowBytes)
    {
        return rowBytes * kernels::kMaxGroupRows <= (std::size_t(128) << 10) ? adjacent(r0, r1, kernels::kMaxGroupRows)
                                                                               : stretches(r0, r1, 4);
    }

    std::size_t size() const { return m_groups; }
    std::size_t stride() const { return m_stride; }
    // The most rows in a group.
    std::size_t maxCount() const { return m_perGroup; }

    RowGroup operator[](std::size_t g) const
    {
        if (m_stride == 1) return {m_r0 + g * m_perGroup, std::min(m_perGroup, m_rows - g * m_perGroup)};
        // Stretches: the ones still long enough to have a row g.
        return {m_r0 + g, std::min(m_perGroup, (m_rows - 1 - g) / m_stride + 1)};
    }

private:
    RowGroups(std::size_t r0, std::size_t rows, std::size_t stride, std::size_t perGroup, std::size_t groups)
        : m_r0(r0), m_rows(rows), m_stride(stride), m_perGroup(perGroup), m_groups(groups)
    {
    }

    std::size_t m_r0, m_rows, m_stride, m_perGroup, m_groups;
};

// The fused and MAP-UOT passes' walk over the groups, with the per-row
// factors of the current and the next group (T, at most kMaxGroupRows each):
//   dots(g)                   the dot products of group g (into the caller's buffer)
//   finish(g, factors)        its scalings from them, into factors[0 .. g.count)
//   work(g, factors, after)   its cache-resident work (column update / rescaling);
//                             `after` is the group read next (g itself at the end)
//   interleaved(next, cur, f) dots(next) interleaved with work(cur, f), when
//                             `interleave` (pipelinedRowsPreferred()); same results.
template <typename T, typename Dots, typename Finish, typename Work, typename Interleaved>
void runGroupPipeline(const RowGroups& groups, bool interleave, Dots dots, Finish finish, Work work,
                      Interleaved interleaved)
{
    if (groups.size() == 0) return;
    T cur[kernels::kMaxGroupRows], next[kernels::kMaxGroupRows];
    RowGroup g = groups[0];
    dots(g);
    finish(g, cur);
    for (std::size_t i = 1; i < groups.size(); ++i) {
        const RowGroup n = groups[i];
        if (interleave) {
            interleaved(n, g, cur);
        } else {
            work(g, cur, n);
            dots(n);
        }
        finish(n, next);
        std::copy(next, next + n.count, cur);
        g = n;
    }
    work(g, cur, g);
}

}  // namespace uot
