#include "core/color/float_buffer.h"

#include <cstdlib>
#include <string>

#if defined(__linux__)
#include <sys/mman.h>
#endif

#include "core/transport/uot_error.h"

namespace uot {

FloatBuffer::FloatBuffer(std::size_t n)
{
    if (n == 0) return;
    constexpr std::size_t kHuge = std::size_t(2) << 20;
    const std::size_t bytes = n * sizeof(float);
    const std::size_t alignment = bytes >= kHuge ? kHuge : 64;
    const std::size_t rounded = (bytes + alignment - 1) / alignment * alignment;
    void* p = std::aligned_alloc(alignment, rounded);
    if (!p)
        throw Error(ErrorCode::OutOfMemory, "cannot allocate " + std::to_string(rounded >> 20) + " MiB for the image's colors");
#if defined(__linux__) && defined(MADV_HUGEPAGE)
    if (alignment == kHuge) (void)::madvise(p, rounded, MADV_HUGEPAGE);  // a hint; failure is harmless
#endif
    m_data.reset(static_cast<float*>(p));
    m_size = n;
}

void FloatBuffer::Free::operator()(float* p) const { std::free(p); }

}  // namespace uot
