#include "app/mpi/batch_shares.h"

#include <algorithm>
#include <fstream>
#include <numeric>

#include "core/imageio/image_header.h"

namespace uot::mpi {

namespace {

// Enough for the size of every supported format, large EXIF blocks before a JPEG's frame header included.
constexpr std::size_t kHeaderBytes = 256 * 1024;

}  // namespace

std::uint64_t headerPixelCount(const std::string& path)
{
    std::ifstream file(path, std::ios::binary);
    if (!file) return 0;
    std::vector<std::uint8_t> bytes(kHeaderBytes);
    file.read(reinterpret_cast<char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
    bytes.resize(static_cast<std::size_t>(file.gcount()));
    const ImageHeader header = peekImageHeader(bytes);
    return header.sizeKnown() ? header.width * header.height : 0;
}

std::vector<std::size_t> largestFirst(const std::vector<std::uint64_t>& work)
{
    const std::size_t n = work.size();
    std::uint64_t knownSum = 0, known = 0;
    for (const std::uint64_t w : work)
        if (w > 0) knownSum += w, ++known;
    const std::uint64_t unknown = known > 0 ? std::max<std::uint64_t>(1, knownSum / known) : 1;
    const auto weight = [&](std::size_t i) { return work[i] > 0 ? work[i] : unknown; };
    std::vector<std::size_t> order(n);
    std::iota(order.begin(), order.end(), std::size_t{0});
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return weight(a) > weight(b); });
    return order;
}

int threadsPerLocalRank(int requested, int hardwareThreads, int localRanks)
{
    if (requested > 0) return requested;
    return std::max(1, std::max(1, hardwareThreads) / std::max(1, localRanks));
}

}  // namespace uot::mpi
