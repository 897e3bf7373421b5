// Portable build of the row kernels (baseline flags of the project), plus the
// run-time selection of the path.
#include <cmath>
#include <cstdlib>
#include <string>

#include "core/transport/row_kernels.h"

namespace uot::kernels {

#if UOT_HAVE_X86_KERNELS
const RowKernels<float>& avx512KernelsFloat();
const RowKernels<double>& avx512KernelsDouble();
const RowKernels<float>& avx2KernelsFloat();
const RowKernels<double>& avx2KernelsDouble();
#endif

namespace {

// A "register" of 8 lanes as a plain array: the compiler vectorises these
// loops with whatever the baseline instruction set offers.
template <typename T>
struct Lanes8 {
    using Scalar = T;
    struct Reg {
        T x[8];
    };
    static constexpr std::size_t W = 8;
    static Reg zero() { return Reg{}; }
    static Reg set1(T v)
    {
        Reg r;
        for (T& e : r.x) e = v;
        return r;
    }
    static Reg load(const T* p)
    {
        Reg r;
        for (std::size_t l = 0; l < W; ++l) r.x[l] = p[l];
        return r;
    }
    static void store(T* p, const Reg& r)
    {
        for (std::size_t l = 0; l < W; ++l) p[l] = r.x[l];
    }
    static Reg add(const Reg& a, const Reg& b)
    {
        Reg r;
        for (std::size_t l = 0; l < W; ++l) r.x[l] = a.x[l] + b.x[l];
        return r;
    }
    static Reg mul(const Reg& a, const Reg& b)
    {
        Reg r;
        for (std::size_t l = 0; l < W; ++l) r.x[l] = a.x[l] * b.x[l];
        return r;
    }
    static Reg fma(const Reg& a, const Reg& b, const Reg& c)
    {
        Reg r;
        for (std::size_t l = 0; l < W; ++l) r.x[l] = a.x[l] * b.x[l] + c.x[l];
        return r;
    }
    static T hsum(const Reg& r)
    {
        return ((r.x[0] + r.x[4]) + (r.x[1] + r.x[5])) + ((r.x[2] + r.x[6]) + (r.x[3] + r.x[7]));
    }
};

// float64 lanes for the log-domain kernels.
struct DVLanes {
    static constexpr std::size_t W = 8;
    struct Reg {
        double x[8];
    };
    static Reg zero() { return Reg{}; }
    static Reg set1(double v)
    {
        Reg r;
        for (double& e : r.x) e = v;
        return r;
    }
    template <typename T>
    static Reg loadT(const T* p)
    {
        Reg r;
        for (std::size_t l = 0; l < W; ++l) r.x[l] = static_cast<double>(p[l]);
        return r;
    }
    static Reg load(const double* p) { return loadT(p); }
    static void store(double* p, const Reg& r)
    {
        for (std::size_t l = 0; l < W; ++l) p[l] = r.x[l];
    }
    template <typename F>
    static Reg map2(const Reg& a, const Reg& b, F f)
    {
        Reg r;
        for (std::size_t l = 0; l < W; ++l) r.x[l] = f(a.x[l], b.x[l]);
        return r;
    }
    static Reg add(const Reg& a, const Reg& b) { return map2(a, b, [](double x, double y) { return x + y; }); }
    static Reg sub(const Reg& a, const Reg& b) { return map2(a, b, [](double x, double y) { return x - y; }); }
    static Reg mul(const Reg& a, const Reg& b) { return map2(a, b, [](double x, double y) { return x * y; }); }
    static Reg max(const Reg& a, const Reg& b) { return map2(a, b, [](double x, double y) { return x > y ? x : y; }); }
    static Reg exp(const Reg& a)
    {
        Reg r;
        for (std::size_t l = 0; l < W; ++l) r.x[l] = std::exp(a.x[l]);
        return r;
    }
    static double hmax(const Reg& r)
    {
        double m = r.x[0];
        for (std::size_t l = 1; l < W; ++l) m = r.x[l] > m ? r.x[l] : m;
        return m;
    }
    static double hsum(const Reg& r)
    {
        return ((r.x[0] + r.x[4]) + (r.x[1] + r.x[5])) + ((r.x[2] + r.x[6]) + (r.x[3] + r.x[7]));
    }
};

#include "core/transport/row_kernels_impl.h"

void powBatchScalar(const double* x, double y, double* out, std::size_t n)
{
    for (std::size_t k = 0; k < n; ++k) out[k] = std::pow(x[k], y);
}

void expBatchScalar(const double* x, double* out, std::size_t n)
{
    for (std::size_t k = 0; k < n; ++k) out[k] = std::exp(x[k]);
}

SimdPath detectPath()
{
    SimdPath best = SimdPath::Generic;
#if UOT_HAVE_X86_KERNELS
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) best = SimdPath::Avx2;
    if (__builtin_cpu_supports("avx512f")) best = SimdPath::Avx512;
#endif
    if (const char* env = std::getenv("UOT_SIMD")) {
        const std::string wanted = env;
        if (wanted == "generic") best = SimdPath::Generic;
        else if (wanted == "avx2" && best == SimdPath::Avx512) best = SimdPath::Avx2;
    }
    return best;
}

bool detectPipelinePreference()
{
    if (const char* env = std::getenv("UOT_ROW_PIPELINE")) {
        const std::string wanted = env;
        if (wanted == "on") return true;
        if (wanted == "off") return false;
    }
#if UOT_HAVE_X86_KERNELS
    __builtin_cpu_init();
    return __builtin_cpu_is("intel");
#else
    return false;
#endif
}

}  // namespace

bool pipelinedRowsPreferred()
{
    static const bool preferred = detectPipelinePreference();
    return preferred;
}

SimdPath activeSimdPath()
{
    static const SimdPath path = detectPath();
    return path;
}

std::string toString(SimdPath path)
{
    switch (path) {
    case SimdPath::Avx512: return "avx512";
    case SimdPath::Avx2: return "avx2";
    default: return "generic";
    }
}

const RowKernels<float>& rowKernelsFloat(SimdPath path)
{
    static const RowKernels<float> generic{&dotImpl<Lanes8<float>>, &axpyImpl<Lanes8<float>>,
                                           &scaleAccumulateImpl<Lanes8<float>>, &dotRowsImpl<Lanes8<float>>, &axpyRowsImpl<Lanes8<float>>,
        &scaleAccumulateRowsImpl<Lanes8<float>>, &fusedRowsImpl<Lanes8<float>>, &mapRowsImpl<Lanes8<float>>, &powBatchScalar, &expBatchScalar,
                                           &rowLogSumExpImpl<DVLanes, float>, &columnLogSumExpImpl<DVLanes, float>};
#if UOT_HAVE_X86_KERNELS
    if (path == SimdPath::Avx512) return avx512KernelsFloat();
    if (path == SimdPath::Avx2) return avx2KernelsFloat();
#else
    (void)path;
#endif
    return generic;
}

const RowKernels<double>& rowKernelsDouble(SimdPath path)
{
    static const RowKernels<double> generic{&dotImpl<Lanes8<double>>, &axpyImpl<Lanes8<double>>,
                                            &scaleAccumulateImpl<Lanes8<double>>, &dotRowsImpl<Lanes8<double>>, &axpyRowsImpl<Lanes8<double>>,
        &scaleAccumulateRowsImpl<Lanes8<double>>, &fusedRowsImpl<Lanes8<double>>, &mapRowsImpl<Lanes8<double>>, &powBatchScalar, &expBatchScalar,
                                            &rowLogSumExpImpl<DVLanes, double>, &columnLogSumExpImpl<DVLanes, double>};
#if UOT_HAVE_X86_KERNELS
    if (path == SimdPath::Avx512) return avx512KernelsDouble();
    if (path == SimdPath::Avx2) return avx2KernelsDouble();
#else
    (void)path;
#endif
    return generic;
}

template <>
const RowKernels<float>& rowKernels<float>()
{
    static const RowKernels<float>& k = rowKernelsFloat(activeSimdPath());
    return k;
}

template <>
const RowKernels<double>& rowKernels<double>()
{
    static const RowKernels<double>& k = rowKernelsDouble(activeSimdPath());
    return k;
}

}  // namespace uot::kernels
