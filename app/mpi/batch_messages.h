#pragma once
// The messages of `uot-mpi batch` as bytes for MPI: a finished item (its index
// in the whole batch and its BatchItemResult), an item a rank has taken (its
// index), the end of a rank's share (fine, or the error that stopped it), and
// the list of inputs rank 0 sends every rank.

#include <cstdint>
#include <string>
#include <vector>

#include "core/pipeline/batch_engine.h"

namespace uot::mpi {

using Bytes = std::vector<char>;

Bytes packItem(std::uint64_t index, const BatchItemResult& item);
// Throws std::runtime_error for a message that is not one packItem made.
BatchItemResult unpackItem(const Bytes& bytes, std::uint64_t& index);

Bytes packClaim(std::uint64_t index);
// Throws std::runtime_error for a message that is not one packClaim made.
std::uint64_t unpackClaim(const Bytes& bytes);

// How a rank's share ended: kind 0 fine, 1 usage error, 2 uot::Error (code),
// 3 any other exception.
struct ShareEnd {
    int kind = 0;
    int code = 0;
    std::string message;
};
Bytes packShareEnd(const ShareEnd& end);
ShareEnd unpackShareEnd(const Bytes& bytes);

// One input of the shared list every rank gets: its index in the whole batch,
// and whether it is a clip (done whole through the clip path of `uot batch`) or
// an image.
struct SharedInput {
    std::uint64_t index = 0;
    BatchInput input;
    bool clip = false;
};
Bytes packShares(std::uint64_t total, const std::vector<SharedInput>& inputs);
std::vector<SharedInput> unpackShares(const Bytes& bytes, std::uint64_t& total);

}  // namespace uot::mpi
