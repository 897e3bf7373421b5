// Matrix-free kernels (mapreduce_kernels.h), portable build (SSE2-width vectors on x86_64; any GCC/Clang target).
#include <cstddef>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

#include "core/transport/mapreduce_kernels.h"

namespace uot::kernels {
namespace {
#define UOT_MR_VECTOR_BYTES 16
#include "core/transport/mapreduce_kernels_impl.h"
#undef UOT_MR_VECTOR_BYTES
}  // namespace

const MapReduceKernels<float>& genericMapReduceKernelsFloat()
{
    static const MapReduceKernels<float> k = makeMapReduceKernels<float>();
    return k;
}

const MapReduceKernels<double>& genericMapReduceKernelsDouble()
{
    static const MapReduceKernels<double> k = makeMapReduceKernels<double>();
    return k;
}

}  // namespace uot::kernels

// Dispatch (kept in the portable file: it must not be built with wider instruction sets).
namespace uot::kernels {

#if UOT_HAVE_X86_KERNELS
const MapReduceKernels<float>& avx2MapReduceKernelsFloat();
const MapReduceKernels<double>& avx2MapReduceKernelsDouble();
const MapReduceKernels<float>& avx512MapReduceKernelsFloat();
const MapReduceKernels<double>& avx512MapReduceKernelsDouble();
#endif

#if UOT_HAVE_X86_KERNELS
namespace {
// The AVX-512 build also uses AVX512DQ (vreduce); without it, the AVX2 build.
bool hasAvx512dq()
{
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx512dq");
}
}  // namespace
#endif

const MapReduceKernels<float>& mapReduceKernelsFloat(SimdPath path)
{
#if UOT_HAVE_X86_KERNELS
    if (path == SimdPath::Avx512 && !hasAvx512dq()) path = SimdPath::Avx2;
    if (path == SimdPath::Avx512) return avx512MapReduceKernelsFloat();
    if (path == SimdPath::Avx2) return avx2MapReduceKernelsFloat();
#else
    (void)path;
#endif
    return genericMapReduceKernelsFloat();
}

const MapReduceKernels<double>& mapReduceKernelsDouble(SimdPath path)
{
#if UOT_HAVE_X86_KERNELS
    if (path == SimdPath::Avx512 && !hasAvx512dq()) path = SimdPath::Avx2;
    if (path == SimdPath::Avx512) return avx512MapReduceKernelsDouble();
    if (path == SimdPath::Avx2) return avx2MapReduceKernelsDouble();
#else
    (void)path;
#endif
    return genericMapReduceKernelsDouble();
}

template <>
const MapReduceKernels<float>& mapReduceKernels<float>()
{
    static const MapReduceKernels<float>& k = mapReduceKernelsFloat(activeSimdPath());
    return k;
}

template <>
const MapReduceKernels<double>& mapReduceKernels<double>()
{
    static const MapReduceKernels<double>& k = mapReduceKernelsDouble(activeSimdPath());
    return k;
}

}  // namespace uot::kernels
