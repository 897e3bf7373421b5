#pragma once
// Internal to gpu/ (no CUDA types): a host-to-host copy spread over the
// process's OpenMP threads, for filling page-locked staging buffers faster
// than one core can (gpu/cost_upload.h).

#include <cstddef>

namespace uot::gpu::detail {

void parallelCopy(void* dst, const void* src, std::size_t bytes);

}  // namespace uot::gpu::detail
