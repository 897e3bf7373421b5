// Matrix-free kernels (mapreduce_kernels.h), AVX2 + FMA build (compiled with -mavx2 -mfma; called only when the CPU has both).
#include <cstddef>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

#include "core/transport/mapreduce_kernels.h"

namespace uot::kernels {
namespace {
#define UOT_MR_VECTOR_BYTES 32
#include "core/transport/mapreduce_kernels_impl.h"
#undef UOT_MR_VECTOR_BYTES
}  // namespace

const MapReduceKernels<float>& avx2MapReduceKernelsFloat()
{
    static const MapReduceKernels<float> k = makeMapReduceKernels<float>();
    return k;
}

const MapReduceKernels<double>& avx2MapReduceKernelsDouble()
{
    static const MapReduceKernels<double> k = makeMapReduceKernels<double>();
    return k;
}

}  // namespace uot::kernels
