#pragma once
// Internal to gpu/: the shape limits of gpu-fused's one-pass kernel, as plain
// host arithmetic (no CUDA types), so that the bytes a gpu-fused solve moves can
// be stated without a device (bytesPerIterationFor) and tested on any host.

#include <cstddef>

namespace uot::gpu::detail {

inline constexpr int kFusedMaxThreads = 512;  // threads per block of the fused kernel at most
inline constexpr int kFusedMaxItems = 8;      // 128-bit vectors per thread per row at most
// bf16 storage (8 entries per vector): at most 4 vectors per thread, so that a
// thread holds at most 32 float entries of v and of its column partials, as fp32 does.
inline constexpr int kFusedMaxItemsBf16 = 4;
inline constexpr int kFusedStages = 3;        // rows staged in shared memory per block (pipeline depth)
// Static shared memory of the fused kernel (up to 4.2 KB) and the per-block reserve.
inline constexpr std::size_t kFusedSharedHeadroom = 6144;
// cudaDevAttrMaxSharedMemoryPerBlockOptin of the H100 (227 KiB), assumed where no device answers.
inline constexpr std::size_t kH100SharedOptinBytes = 232448;

// Shape of one row in the fused kernel: `items` 128-bit vectors per thread,
// `threads` threads (a multiple of 32), slotBytes = shared bytes one row takes.
struct FusedRowShape {
    int items = 1;
    int threads = 0;
    std::size_t slotBytes = 0;
    bool fitsThreads = false;  // the row fits kFusedMaxThreads x kFusedMaxItems vectors
};

// Row shape for rows of `cols` elements of `elementBytes` (2 = bf16, 4 or 8) bytes,
// padded to the 16-byte vector width: blocks of about 256 threads (two per
// multiprocessor), up to kFusedMaxItems vectors per thread (kFusedMaxItemsBf16 for bf16).
inline FusedRowShape fusedRowShape(std::size_t cols, std::size_t elementBytes)
{
    FusedRowShape shape;
    const std::size_t E = 16 / elementBytes;
    const std::size_t nv = (cols + E - 1) / E;
    const int maxItems = elementBytes == 2 ? kFusedMaxItemsBf16 : kFusedMaxItems;
    while (shape.items < maxItems && (nv + shape.items - 1) / shape.items > 256) shape.items *= 2;
    const std::size_t perThread = (nv + shape.items - 1) / shape.items;
    shape.fitsThreads = perThread <= static_cast<std::size_t>(kFusedMaxThreads);
    shape.threads = static_cast<int>((perThread + 31) / 32 * 32);
    shape.slotBytes = static_cast<std::size_t>(shape.threads) * shape.items * 16;
    return shape;
}

// True when gpu-fused runs its one-pass kernel on rows of `cols` elements on a
// device whose per-block opt-in shared memory is sharedOptinBytes; false when it
// takes the two-pass cuBLAS path (K v, then K^T u: 2 M N s bytes per iteration).
// fp32 and bf16 on the H100: up to 16384 columns; fp64: up to 8192.
inline bool fusedOnePass(std::size_t cols, std::size_t elementBytes, std::size_t sharedOptinBytes)
{
    const FusedRowShape shape = fusedRowShape(cols, elementBytes);
    if (!shape.fitsThreads) return false;
    const std::size_t budget = sharedOptinBytes > kFusedSharedHeadroom ? sharedOptinBytes - kFusedSharedHeadroom : 0;
    return budget >= static_cast<std::size_t>(kFusedStages) * shape.slotBytes;
}

}  // namespace uot::gpu::detail
