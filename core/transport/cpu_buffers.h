#pragma once
// Storage shared by the CPU scaling variants: 64-byte aligned buffers that are
// kept between solves, the kernel matrix with its rows padded to whole cache
// lines, and the static split of rows and columns among threads.

#include <cstddef>
#include <cstdlib>
#include <memory>
#include <new>

#if defined(__linux__)
#include <sys/mman.h>
#endif

#include "core/transport/kernel_matrix.h"
#include "core/transport/row_kernels.h"
#include "core/transport/uot_error.h"

namespace uot {

// A 64-byte aligned array in host memory. resize() keeps the allocation when
// it is already the right size (buffers are reused between solves of the same
// size) and leaves the contents uninitialised.
template <typename T>
class AlignedBuffer {
public:
    T* data() { return m_data.get(); }
    const T* data() const { return m_data.get(); }
    std::size_t size() const { return m_size; }

    void resize(std::size_t n)
    {
        if (n == m_size && m_data) return;
        m_data.reset();
        m_size = 0;
        if (n == 0) return;
        const std::size_t raw = n * sizeof(T);
        const std::size_t alignment = raw >= kHugePageBytes ? kHugePageBytes : kernels::kAlignBytes;
        const std::size_t bytes = (raw + alignment - 1) / alignment * alignment;
        void* p = std::aligned_alloc(alignment, bytes);
        if (!p) {
            throw Error(ErrorCode::OutOfMemory, "could not allocate " + std::to_string(bytes >> 20) +
                                                    " MiB of host memory for the solver");
        }
#if defined(__linux__) && defined(MADV_HUGEPAGE)
        if (alignment == kHugePageBytes) (void)::madvise(p, bytes, MADV_HUGEPAGE);  // a hint; failure is harmless
#endif
        m_data.reset(static_cast<T*>(p));
        m_size = n;
    }

    void release()
    {
        m_data.reset();
        m_size = 0;
    }

private:
    static constexpr std::size_t kHugePageBytes = std::size_t(2) << 20;
    struct Free {
        void operator()(T* p) const { std::free(p); }
    };
    std::unique_ptr<T, Free> m_data;
    std::size_t m_size = 0;
};

// Builds K (see buildKernelMatrix) into `out` with row stride ld >= cols; the
// padding of each row is zero. out is resized to rows * ld.
template <typename T>
KernelBuildReport buildPaddedKernel(const UotProblem& problem, AlignedBuffer<T>& out, std::size_t ld, int threads);

extern template KernelBuildReport buildPaddedKernel<float>(const UotProblem&, AlignedBuffer<float>&, std::size_t, int);
extern template KernelBuildReport buildPaddedKernel<double>(const UotProblem&, AlignedBuffer<double>&, std::size_t,
                                                            int);

// [begin, end) of part `t` out of `parts` when `count` items are split evenly.
inline std::size_t splitBegin(std::size_t count, int parts, int t)
{
    return count * static_cast<std::size_t>(t) / static_cast<std::size_t>(parts);
}

// Same, but the boundaries are multiples of `granule` (except the last end).
inline std::size_t splitBeginAligned(std::size_t count, int parts, int t, std::size_t granule)
{
    const std::size_t units = (count + granule - 1) / granule;
    const std::size_t b = splitBegin(units, parts, t) * granule;
    return b < count ? b : count;
}

}  // namespace uot
