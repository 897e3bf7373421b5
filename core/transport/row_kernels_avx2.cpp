// AVX2 + FMA build of the row kernels (this file is compiled with -mavx2 -mfma;
// it is only called when the CPU reports both).
#include <immintrin.h>

#include "core/transport/row_kernels_types.h"

#if UOT_HAVE_LIBMVEC
// glibc's vector pow for this instruction set (libmvec, x86_64 vector ABI).
extern "C" __m256d _ZGVdN4v_exp(__m256d x);
extern "C" __m256d _ZGVdN4vv_pow(__m256d x, __m256d y);
#endif

namespace uot::kernels {
namespace {

void powBatch(const double* x, double y, double* out, std::size_t n)
{
#if UOT_HAVE_LIBMVEC
    const __m256d yy = _mm256_set1_pd(y);
    std::size_t k = 0;
    for (; k + 4 <= n; k += 4) _mm256_storeu_pd(out + k, _ZGVdN4vv_pow(_mm256_loadu_pd(x + k), yy));
    if (k < n) {
        double in[4], res[4];
        for (std::size_t l = 0; l < 4; ++l) in[l] = k + l < n ? x[k + l] : 1.0;
        _mm256_storeu_pd(res, _ZGVdN4vv_pow(_mm256_loadu_pd(in), yy));
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
    for (; k + 4 <= n; k += 4) _mm256_storeu_pd(out + k, _ZGVdN4v_exp(_mm256_loadu_pd(x + k)));
    for (; k < n; ++k) out[k] = __builtin_exp(x[k]);
#else
    for (std::size_t k = 0; k < n; ++k) out[k] = __builtin_exp(x[k]);
#endif
}

struct F256 {
    using Scalar = float;
    using Reg = __m256;
    static constexpr std::size_t W = 8;
    static Reg zero() { return _mm256_setzero_ps(); }
    static Reg set1(float x) { return _mm256_set1_ps(x); }
    static Reg load(const float* p) { return _mm256_load_ps(p); }
    static void store(float* p, Reg x) { _mm256_store_ps(p, x); }
    static Reg add(Reg a, Reg b) { return _mm256_add_ps(a, b); }
    static Reg mul(Reg a, Reg b) { return _mm256_mul_ps(a, b); }
    static Reg fma(Reg a, Reg b, Reg c) { return _mm256_fmadd_ps(a, b, c); }
    static float hsum(Reg x)
    {
        const __m128 s = _mm_add_ps(_mm256_castps256_ps128(x), _mm256_extractf128_ps(x, 1));
        const __m128 t = _mm_add_ps(s, _mm_movehl_ps(s, s));
        return _mm_cvtss_f32(_mm_add_ss(t, _mm_shuffle_ps(t, t, 1)));
    }
};

struct D256 {
    using Scalar = double;
    using Reg = __m256d;
    static constexpr std::size_t W = 4;
    static Reg zero() { return _mm256_setzero_pd(); }
    static Reg set1(double x) { return _mm256_set1_pd(x); }
    static Reg load(const double* p) { return _mm256_load_pd(p); }
    static void store(double* p, Reg x) { _mm256_store_pd(p, x); }
    static Reg add(Reg a, Reg b) { return _mm256_add_pd(a, b); }
    static Reg mul(Reg a, Reg b) { return _mm256_mul_pd(a, b); }
    static Reg fma(Reg a, Reg b, Reg c) { return _mm256_fmadd_pd(a, b, c); }
    static double hsum(Reg x)
    {
        const __m128d s = _mm_add_pd(_mm256_castpd256_pd128(x), _mm256_extractf128_pd(x, 1));
        return _mm_cvtsd_f64(_mm_add_sd(s, _mm_unpackhi_pd(s, s)));
    }
};


// float64 vector traits for the log-domain kernels.
struct DV256 {
    using Reg = __m256d;
    static constexpr std::size_t W = 4;
    static Reg zero() { return _mm256_setzero_pd(); }
    static Reg set1(double x) { return _mm256_set1_pd(x); }
    static Reg load(const double* p) { return _mm256_load_pd(p); }
    static Reg loadT(const double* p) { return _mm256_load_pd(p); }
    static Reg loadT(const float* p) { return _mm256_cvtps_pd(_mm_load_ps(p)); }
    static void store(double* p, Reg x) { _mm256_store_pd(p, x); }
    static Reg add(Reg a, Reg b) { return _mm256_add_pd(a, b); }
    static Reg sub(Reg a, Reg b) { return _mm256_sub_pd(a, b); }
    static Reg mul(Reg a, Reg b) { return _mm256_mul_pd(a, b); }
    static Reg max(Reg a, Reg b) { return _mm256_max_pd(a, b); }
    static Reg exp(Reg x)
    {
#if UOT_HAVE_LIBMVEC
        return _ZGVdN4v_exp(x);
#else
        alignas(32) double t[4];
        _mm256_store_pd(t, x);
        for (double& e : t) e = __builtin_exp(e);
        return _mm256_load_pd(t);
#endif
    }
    static double hmax(Reg x)
    {
        alignas(32) double t[4];
        _mm256_store_pd(t, x);
        double m = t[0];
        for (int l = 1; l < 4; ++l) m = t[l] > m ? t[l] : m;
        return m;
    }
    static double hsum(Reg x) { return D256::hsum(x); }
};

#include "core/transport/row_kernels_impl.h"

}  // namespace

const RowKernels<float>& avx2KernelsFloat()
{
    static const RowKernels<float> k{&dotImpl<F256>, &axpyImpl<F256>, &scaleAccumulateImpl<F256>, &dotRowsImpl<F256>, &axpyRowsImpl<F256>,
        &scaleAccumulateRowsImpl<F256>, &fusedRowsImpl<F256>, &mapRowsImpl<F256>, &powBatch, &expBatch,
                                     &rowLogSumExpImpl<DV256, float>, &columnLogSumExpImpl<DV256, float>};
    return k;
}

const RowKernels<double>& avx2KernelsDouble()
{
    static const RowKernels<double> k{&dotImpl<D256>, &axpyImpl<D256>, &scaleAccumulateImpl<D256>, &dotRowsImpl<D256>, &axpyRowsImpl<D256>,
        &scaleAccumulateRowsImpl<D256>, &fusedRowsImpl<D256>, &mapRowsImpl<D256>, &powBatch, &expBatch,
                                     &rowLogSumExpImpl<DV256, double>, &columnLogSumExpImpl<DV256, double>};
    return k;
}

}  // namespace uot::kernels
