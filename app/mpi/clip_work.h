#pragma once
// The size of a clip in `uot-mpi batch`: frames x pixels per frame, from the
// container's header (an image sequence: its files counted, frame 0's header),
// without decoding a frame, in the units of batch_shares.h's pixel counts (the
// clips are taken largest first, as the photos).

#include <cstdint>
#include <string>

namespace uot::mpi {

// 0 when the clip cannot be opened, its header does not say its frame count, or
// the build has no FFmpeg (largestFirst then counts it as the mean item).
std::uint64_t headerClipWork(const std::string& path);

}  // namespace uot::mpi
