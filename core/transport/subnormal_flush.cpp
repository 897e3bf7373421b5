#include "core/transport/subnormal_flush.h"

#include <omp.h>

#include "core/transport/kernel_matrix.h"

#if defined(__SSE2__) || defined(__x86_64__)
#include <xmmintrin.h>
#define UOT_HAVE_MXCSR 1
#else
#define UOT_HAVE_MXCSR 0
#endif

namespace uot {

namespace {

#if UOT_HAVE_MXCSR
constexpr unsigned kFlushBits = 0x8000u /* FTZ */ | 0x0040u /* DAZ */;

void setFlushBits(unsigned bits) { _mm_setcsr((_mm_getcsr() & ~kFlushBits) | (bits & kFlushBits)); }
#endif

// Sets the bits on every thread of a team of `threads` (and so on the threads
// that the solve's own parallel regions of that size will run on).
void setOnTeam(int threads, unsigned bits)
{
#if UOT_HAVE_MXCSR
    setFlushBits(bits);
    if (threads > 1) {
#pragma omp parallel num_threads(threads)
        setFlushBits(bits);
    }
#else
    (void)threads;
    (void)bits;
#endif
}

}  // namespace

SubnormalFlushScope::SubnormalFlushScope(int threads) : m_threads(resolveThreadCount(threads)), m_savedBits(0)
{
#if UOT_HAVE_MXCSR
    m_savedBits = _mm_getcsr() & kFlushBits;
    setOnTeam(m_threads, kFlushBits);
#endif
}

SubnormalFlushScope::~SubnormalFlushScope() { setOnTeam(m_threads, m_savedBits); }

bool SubnormalFlushScope::callingThreadFlushes()
{
#if UOT_HAVE_MXCSR
    return (_mm_getcsr() & kFlushBits) == kFlushBits;
#else
    return false;
#endif
}

}  // namespace uot
