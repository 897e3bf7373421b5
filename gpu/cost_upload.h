#pragma once
// Internal to gpu/ (CUDA types): uploads a user-given dense cost matrix in
// chunks of rows through two page-locked host buffers and two device buffers,
// on a copy stream of its own, so that the kernel build of chunk k (on the
// solve's stream) runs while chunk k+1 crosses PCIe and the host copies chunk
// k+2 into page-locked memory. The full cost is never on the device: at most
// two chunks are. The buffers are kept between uploads (and so between the
// solves of one engine) while the chunk size is unchanged.

#include <algorithm>
#include <cstddef>

#include "gpu/cuda_support.h"
#include "gpu/host_copy.h"

namespace uot::gpu::detail {

class CostUploader {
public:
    // Rows per chunk for rows of `rowBytes` bytes: 1/64 of the matrix
    // (`matrixBytes`, as stored on the device; the two chunks then add 3.2% to
    // the solve's device memory), within 64 KiB to 4 MiB, at least one row and
    // at most `rows`.
    static std::size_t chunkRowsFor(std::size_t rowBytes, std::size_t rows, std::size_t matrixBytes)
    {
        constexpr std::size_t kMin = std::size_t(64) << 10, kMax = std::size_t(4) << 20;
        const std::size_t budget = std::clamp(matrixBytes / 64, kMin, kMax);
        return std::clamp<std::size_t>(budget / std::max<std::size_t>(rowBytes, 1), 1, std::max<std::size_t>(rows, 1));
    }

    // Uploads host[rows x cols] chunk by chunk and calls build(deviceChunk, firstRow, chunkRows)
    // for each, which must enqueue its work on `stream`. Returns with that work
    // enqueued (not finished): the caller synchronises `stream`. The host array
    // may be reused once this returns (every byte of it has been copied out).
    // overlapped = false: each chunk is copied from `host` (pageable) on `stream`
    // itself, then built, with no overlap (the upload before page-locked staging).
    template <typename C, typename Build>
    void upload(const C* host, std::size_t rows, std::size_t cols, std::size_t chunkRows, cudaStream_t stream,
                AllocationTracker* tracker, bool overlapped, Build&& build)
    {
        const std::size_t chunkBytes = chunkRows * cols * sizeof(C);
        if (!overlapped) {
            m_device[0].ensure(chunkBytes, tracker);
            for (std::size_t r0 = 0; r0 < rows; r0 += chunkRows) {
                const std::size_t n = std::min(chunkRows, rows - r0);
                UOT_CUDA_CHECK(cudaMemcpyAsync(m_device[0].get(), host + r0 * cols, n * cols * sizeof(C),
                                               cudaMemcpyHostToDevice, stream));
                build(reinterpret_cast<const C*>(m_device[0].get()), r0, n);
            }
            return;
        }
        reserve(chunkBytes, tracker);
        cudaStream_t copy = m_copyStream.get();
        for (std::size_t r0 = 0, k = 0; r0 < rows; r0 += chunkRows, ++k) {
            const std::size_t slot = k % 2;
            const std::size_t n = std::min(chunkRows, rows - r0);
            const std::size_t bytes = n * cols * sizeof(C);
            // The page-locked slot is free once its previous upload has landed;
            // the device slot once the build that read it has finished.
            UOT_CUDA_CHECK(cudaEventSynchronize(m_uploaded[slot].get()));
            parallelCopy(m_host[slot], host + r0 * cols, bytes);
            UOT_CUDA_CHECK(cudaStreamWaitEvent(copy, m_built[slot].get(), 0));
            UOT_CUDA_CHECK(cudaMemcpyAsync(m_device[slot].get(), m_host[slot], bytes, cudaMemcpyHostToDevice, copy));
            UOT_CUDA_CHECK(cudaEventRecord(m_uploaded[slot].get(), copy));
            UOT_CUDA_CHECK(cudaStreamWaitEvent(stream, m_uploaded[slot].get(), 0));
            build(reinterpret_cast<const C*>(m_device[slot].get()), r0, n);
            UOT_CUDA_CHECK(cudaEventRecord(m_built[slot].get(), stream));
        }
    }

    CostUploader() = default;
    ~CostUploader() { freeHost(); }
    CostUploader(const CostUploader&) = delete;
    CostUploader& operator=(const CostUploader&) = delete;

private:
    void reserve(std::size_t bytes, AllocationTracker* tracker)
    {
        if (bytes == m_bytes && m_device[0].bytes() == bytes) return;
        freeHost();
        for (int s = 0; s < 2; ++s) {
            m_device[s].ensure(bytes, tracker);
            void* p = nullptr;
            UOT_CUDA_CHECK(cudaMallocHost(&p, bytes));
            m_host[s] = static_cast<unsigned char*>(p);
        }
        m_bytes = bytes;
    }
    void freeHost() noexcept
    {
        for (auto*& p : m_host) {
            if (p) cudaFreeHost(p);
            p = nullptr;
        }
        m_bytes = 0;
    }

    Stream m_copyStream;
    Event m_uploaded[2] = {Event(false), Event(false)};
    Event m_built[2] = {Event(false), Event(false)};
    DeviceBuffer<unsigned char> m_device[2];
    unsigned char* m_host[2] = {nullptr, nullptr};
    std::size_t m_bytes = 0;
};

}  // namespace uot::gpu::detail
