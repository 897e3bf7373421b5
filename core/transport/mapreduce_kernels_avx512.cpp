// Matrix-free kernels (mapreduce_kernels.h), AVX-512 build (compiled with -mavx512f -mfma; called only when the CPU has AVX-512F).
#include <cstddef>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

#include "core/transport/mapreduce_kernels.h"

namespace uot::kernels {
namespace {
#define UOT_MR_VECTOR_BYTES 64
#include "core/transport/mapreduce_kernels_impl.h"
#undef UOT_MR_VECTOR_BYTES
}  // namespace

const MapReduceKernels<float>& avx512MapReduceKernelsFloat()
{
    static const MapReduceKernels<float> k = makeMapReduceKernels<float>();
    return k;
}

const MapReduceKernels<double>& avx512MapReduceKernelsDouble()
{
    static const MapReduceKernels<double> k = makeMapReduceKernels<double>();
    return k;
}

}  // namespace uot::kernels
