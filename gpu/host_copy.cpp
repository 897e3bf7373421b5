// gpu/host_copy.h: slices of 256 KiB shared among the OpenMP threads.

#include "gpu/host_copy.h"

#include <cstring>

namespace uot::gpu::detail {

void parallelCopy(void* dst, const void* src, std::size_t bytes)
{
    constexpr std::size_t kSlice = std::size_t(256) << 10;
    const long long slices = static_cast<long long>((bytes + kSlice - 1) / kSlice);
    auto* out = static_cast<unsigned char*>(dst);
    const auto* in = static_cast<const unsigned char*>(src);
#pragma omp parallel for schedule(static) if (slices > 1)
    for (long long s = 0; s < slices; ++s) {
        const std::size_t begin = std::size_t(s) * kSlice;
        const std::size_t count = begin + kSlice <= bytes ? kSlice : bytes - begin;
        std::memcpy(out + begin, in + begin, count);
    }
}

}  // namespace uot::gpu::detail
