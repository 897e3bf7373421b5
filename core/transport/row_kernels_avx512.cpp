// AVX-512F build of the row kernels (this file is compiled with -mavx512f -mfma;
// it is only called when the CPU reports avx512f).
#include <immintrin.h>

#include "core/transport/row_kernels_types.h"

#if UOT_HAVE_LIBMVEC
// glibc's vector pow for this instruction set (libmvec, x86_64 vector ABI).
extern "C" __m512d _ZGVeN8v_exp(__m512d x);
extern "C" __m512d _ZGVeN8vv_pow(__m512d x, __m512d y);
#endif

namespace uot::kernels {
namespace {

void powBatch(const double* x, double y, double* out, std::size_t n)
{
#if UOT_HAVE_LIBMVEC
    const __m512d yy = _mm512_set1_pd(y);
    std::size_t k = 0;
    for (; k + 8 <= n; k += 8) _mm512_storeu_pd(out + k, _ZGVeN8vv_pow(_mm512_loadu_pd(x + k), yy));
    if (k < n) {
        double in[8], res[8];
        for (std::size_t l = 0; l < 8; ++l) in[l] = k + l < n ? x[k + l] : 1.0;
        _mm512_storeu_pd(res, _ZGVeN8vv_pow(_mm512_loadu_pd(in), yy));
        for (std::size_t l = 0; k + l < n; ++l) out[k + l] = res[l];
    }
#else
    for (std::size_t k = 0; k < n; ++k) out[k] = __builtin_pow(x[k], y);
#endif
}

void expBatch(const double* x, double* out, std::size_t n)
{
#if UOT_HAVE_LIBMVEC
    std::size_t k = 0;
    for (; k + 8 <= n; k += 8) _mm512_storeu_pd(out + k, _ZGVeN8v_exp(_mm512_loadu_pd(x + k)));
    for (; k < n; ++k) out[k] = __builtin_exp(x[k]);
#else
    for (std::size_t k = 0; k < n; ++k) out[k] = __builtin_exp(x[k]);
#endif
}

struct F512 {
    using Scalar = float;
    using Reg = __m512;
    static constexpr std::size_t W = 16;
    static Reg zero() { return _mm512_setzero_ps(); }
    static Reg set1(float x) { return _mm512_set1_ps(x); }
    static Reg load(const float* p) { return _mm512_load_ps(p); }
    static void store(float* p, Reg x) { _mm512_store_ps(p, x); }
    static Reg add(Reg a, Reg b) { return _mm512_add_ps(a, b); }
    static Reg mul(Reg a, Reg b) { return _mm512_mul_ps(a, b); }
    static Reg fma(Reg a, Reg b, Reg c) { return _mm512_fmadd_ps(a, b, c); }
    static float hsum(Reg x)
    {
        // Through memory: GCC 12's _mm512_reduce_add_ps trips -Wuninitialized.
        alignas(64) float t[16];
        _mm512_store_ps(t, x);
        for (int w = 8; w > 0; w /= 2)
            for (int l = 0; l < w; ++l) t[l] += t[l + w];
        return t[0];
    }
};

struct D512 {
    using Scalar = double;
    using Reg = __m512d;
    static constexpr std::size_t W = 8;
    static Reg zero() { return _mm512_setzero_pd(); }
    static Reg set1(double x) { return _mm512_set1_pd(x); }
    static Reg load(const double* p) { return _mm512_load_pd(p); }
    static void store(double* p, Reg x) { _mm512_store_pd(p, x); }
    static Reg add(Reg a, Reg b) { return _mm512_add_pd(a, b); }
    static Reg mul(Reg a, Reg b) { return _mm512_mul_pd(a, b); }
    static Reg fma(Reg a, Reg b, Reg c) { return _mm512_fmadd_pd(a, b, c); }
    static double hsum(Reg x)
    {
        alignas(64) double t[8];
        _mm512_store_pd(t, x);
        for (int w = 4; w > 0; w /= 2)
            for (int l = 0; l < w; ++l) t[l] += t[l + w];
        return t[0];
    }
};


// float64 vector traits for the log-domain kernels.
struct DV512 {
    using Reg = __m512d;
    static constexpr std::size_t W = 8;
    static Reg zero() { return _mm512_setzero_pd(); }
    static Reg set1(double x) { return _mm512_set1_pd(x); }
    static Reg load(const double* p) { return _mm512_load_pd(p); }
    static Reg loadT(const double* p) { return _mm512_load_pd(p); }
    // Masked forms with an explicit source: GCC 12's unmasked ones use
    // _mm512_undefined_pd() and trip -Wmaybe-uninitialized.
    static Reg loadT(const float* p) { return _mm512_mask_cvtps_pd(_mm512_setzero_pd(), 0xff, _mm256_load_ps(p)); }
    static void store(double* p, Reg x) { _mm512_store_pd(p, x); }
    static Reg add(Reg a, Reg b) { return _mm512_add_pd(a, b); }
    static Reg sub(Reg a, Reg b) { return _mm512_sub_pd(a, b); }
    static Reg mul(Reg a, Reg b) { return _mm512_mul_pd(a, b); }
    static Reg max(Reg a, Reg b) { return _mm512_mask_max_pd(_mm512_setzero_pd(), 0xff, a, b); }
    static Reg exp(Reg x)
    {
#if UOT_HAVE_LIBMVEC
        return _ZGVeN8v_exp(x);
#else
        alignas(64) double t[8];
        _mm512_store_pd(t, x);
        for (double& e : t) e = __builtin_exp(e);
        return _mm512_load_pd(t);
#endif
    }
    static double hmax(Reg x)
    {
        alignas(64) double t[8];
        _mm512_store_pd(t, x);
        double m = t[0];
        for (int l = 1; l < 8; ++l) m = t[l] > m ? t[l] : m;
        return m;
    }
    static double hsum(Reg x) { return D512::hsum(x); }
};

#include "core/transport/row_kernels_impl.h"

}  // namespace

const RowKernels<float>& avx512KernelsFloat()
{
    static const RowKernels<float> k{&dotImpl<F512>, &axpyImpl<F512>, &scaleAccumulateImpl<F512>, &dotRowsImpl<F512>, &axpyRowsImpl<F512>,
        &scaleAccumulateRowsImpl<F512>, &fusedRowsImpl<F512>, &mapRowsImpl<F512>, &powBatch, &expBatch,
                                     &rowLogSumExpImpl<DV512, float>, &columnLogSumExpImpl<DV512, float>};
    return k;
}

const RowKernels<double>& avx512KernelsDouble()
{
    static const RowKernels<double> k{&dotImpl<D512>, &axpyImpl<D512>, &scaleAccumulateImpl<D512>, &dotRowsImpl<D512>, &axpyRowsImpl<D512>,
        &scaleAccumulateRowsImpl<D512>, &fusedRowsImpl<D512>, &mapRowsImpl<D512>, &powBatch, &expBatch,
                                     &rowLogSumExpImpl<DV512, double>, &columnLogSumExpImpl<DV512, double>};
    return k;
}

}  // namespace uot::kernels
