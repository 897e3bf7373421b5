#pragma once
// How `uot-mpi batch` shares its inputs out over the ranks: every rank gets the
// whole list, largest first (by pixel count, read from each image's header, no
// decoding), and the ranks take the items from it one at a time as each becomes
// free (a ticket from a counter all ranks share: shared_counters.h), so that a
// rank with slow files does fewer of them and the ranks end together.

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace uot::mpi {

// Width x height from the file's header (core/imageio/image_header.h); 0 when
// the file cannot be read or its header does not say.
std::uint64_t headerPixelCount(const std::string& path);

// The items' indices, the largest first (ties: the lower index). An item of
// unknown size (0) counts as the mean of the known ones (1 when none is known).
std::vector<std::size_t> largestFirst(const std::vector<std::uint64_t>& work);

// Which positions of a list this rank does, when every rank takes its next
// position as a ticket from one shared counter: asked about positions in
// increasing order (one call at a time), it takes a ticket when it holds none,
// or holds one for a position that was not asked about (nobody's: the ranks ask
// about the same positions), and keeps it until that position comes.
class TicketCursor {
public:
    explicit TicketCursor(std::function<std::uint64_t()> takeTicket) : m_takeTicket(std::move(takeTicket)) {}
    bool mine(std::uint64_t position)
    {
        while (!m_held || *m_held < position) m_held = m_takeTicket();
        if (*m_held != position) return false;
        m_held.reset();
        return true;
    }

private:
    std::function<std::uint64_t()> m_takeTicket;
    std::optional<std::uint64_t> m_held;
};

// CPU threads of one rank: `requested` when the user named a number (> 0), else
// the node's hardware threads shared out over the ranks on that node (at least
// one each), so that P ranks of one node do not each start a thread per core.
int threadsPerLocalRank(int requested, int hardwareThreads, int localRanks);

}  // namespace uot::mpi
