#pragma once
// How `uot-mpi batch` splits its inputs over the ranks: by pixel count, read
// from each image's header (no decoding), so that every rank gets about the same
// work. Deterministic: the same inputs and rank count give the same split.

#include <cstdint>
#include <string>
#include <vector>

namespace uot::mpi {

// Width x height from the file's header (core/imageio/image_header.h); 0 when
// the file cannot be read or its header does not say.
std::uint64_t headerPixelCount(const std::string& path);

// The rank of each item: the largest first (ties: the lower index), each to the
// rank with the least work so far (ties: the lower rank). An item of unknown
// size (0) counts as the mean of the known ones (1 when none is known).
std::vector<int> assignByWork(const std::vector<std::uint64_t>& work, int ranks);

// CPU threads of one rank: `requested` when the user named a number (> 0), else
// the node's hardware threads shared out over the ranks on that node (at least
// one each), so that P ranks of one node do not each start a thread per core.
int threadsPerLocalRank(int requested, int hardwareThreads, int localRanks);

}  // namespace uot::mpi
