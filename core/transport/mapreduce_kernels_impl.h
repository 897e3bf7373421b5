// The matrix-free kernels of mapreduce_kernels.h, written once with GCC/Clang
// vector extensions. Each including file defines UOT_MR_VECTOR_BYTES (16, 32
// or 64), is compiled for its instruction set with -ffp-contract=fast (so
// a * b + c becomes one FMA), and includes this inside an anonymous namespace.
// No header is included here: nothing inline may be shared between the builds.

template <typename T>
struct MrVec;

template <>
struct MrVec<float> {
    typedef float V __attribute__((vector_size(UOT_MR_VECTOR_BYTES)));
    typedef int I __attribute__((vector_size(UOT_MR_VECTOR_BYTES)));
    static constexpr std::size_t W = UOT_MR_VECTOR_BYTES / sizeof(float);
    static constexpr int kMantissaBits = 23;
    static constexpr float kRound = 12582912.0f;  // 1.5 * 2^23: x + kRound - kRound rounds x to an integer
    // 2^f on [-1/2, 1/2], degree 5, interpolated at the Chebyshev nodes
    // (relative error 1.6e-7 in float arithmetic).
    static V pow2Fraction(V f)
    {
        V p = f * 0.00133908633f + 0.00967603177f;
        p = p * f + 0.0555035695f;
        p = p * f + 0.240221068f;
        p = p * f + 0.693147182f;
        return p * f + 1.00000012f;
    }
};

template <>
struct MrVec<double> {
    typedef double V __attribute__((vector_size(UOT_MR_VECTOR_BYTES)));
    typedef long long I __attribute__((vector_size(UOT_MR_VECTOR_BYTES)));
    static constexpr std::size_t W = UOT_MR_VECTOR_BYTES / sizeof(double);
    static constexpr int kMantissaBits = 52;
    static constexpr double kRound = 6755399441055744.0;  // 1.5 * 2^52
    // 2^f on [-1/2, 1/2]: Taylor series of exp(f ln 2) to degree 12
    // (truncation below 1.8e-16 relative). Coefficients (ln 2)^k / k!.
    static V pow2Fraction(V f)
    {
        V p = f * 2.5678435993488206e-11 + 4.4455382718708116e-10;
        p = p * f + 7.0549116208011234e-09;
        p = p * f + 1.0178086009239700e-07;
        p = p * f + 1.3215486790144310e-06;
        p = p * f + 1.5252733804059841e-05;
        p = p * f + 1.5403530393381609e-04;
        p = p * f + 1.3333558146428443e-03;
        p = p * f + 9.6181291076284769e-03;
        p = p * f + 5.5504108664821583e-02;
        p = p * f + 2.4022650695910072e-01;
        p = p * f + 6.9314718055994529e-01;
        return p * f + 1.0;
    }
};

// AVX-512 (F + DQ) has the two instructions 2^x needs: vreduce (x minus its
// rounded value) and vscalef (p * 2^floor(x), with exact underflow to 0 and
// overflow to inf), so no clamp is needed there.
#if UOT_MR_VECTOR_BYTES == 64 && defined(__AVX512F__) && defined(__AVX512DQ__)
#define UOT_MR_SCALEF 1
#else
#define UOT_MR_SCALEF 0
#endif

#if defined(__SSE2__)
inline MrVec<float>::V vmax(MrVec<float>::V a, MrVec<float>::V b)
{
#if UOT_MR_VECTOR_BYTES == 64
    return _mm512_mask_max_ps(a, __mmask16(0xFFFF), a, b);  // masked: GCC 12 -Wmaybe-uninitialized
#elif UOT_MR_VECTOR_BYTES == 32
    return _mm256_max_ps(a, b);
#else
    return _mm_max_ps(a, b);
#endif
}
inline MrVec<float>::V vmin(MrVec<float>::V a, MrVec<float>::V b)
{
#if UOT_MR_VECTOR_BYTES == 64
    return _mm512_mask_min_ps(a, __mmask16(0xFFFF), a, b);
#elif UOT_MR_VECTOR_BYTES == 32
    return _mm256_min_ps(a, b);
#else
    return _mm_min_ps(a, b);
#endif
}
inline MrVec<double>::V vmax(MrVec<double>::V a, MrVec<double>::V b)
{
#if UOT_MR_VECTOR_BYTES == 64
    return _mm512_mask_max_pd(a, __mmask8(0xFF), a, b);
#elif UOT_MR_VECTOR_BYTES == 32
    return _mm256_max_pd(a, b);
#else
    return _mm_max_pd(a, b);
#endif
}
inline MrVec<double>::V vmin(MrVec<double>::V a, MrVec<double>::V b)
{
#if UOT_MR_VECTOR_BYTES == 64
    return _mm512_mask_min_pd(a, __mmask8(0xFF), a, b);
#elif UOT_MR_VECTOR_BYTES == 32
    return _mm256_min_pd(a, b);
#else
    return _mm_min_pd(a, b);
#endif
}
#else
template <typename V>
inline V vmax(V a, V b)
{
    return a > b ? a : b;
}
template <typename V>
inline V vmin(V a, V b)
{
    return a < b ? a : b;
}
#endif

template <typename T>
inline typename MrVec<T>::V splat(T x)
{
    return typename MrVec<T>::V{} + x;
}

template <typename T>
inline typename MrVec<T>::V loadV(const T* p)
{
    typename MrVec<T>::V v;
    __builtin_memcpy(&v, p, sizeof v);
    return v;
}

// 2^t. Off AVX-512, t must be clamped to [kLow, kHigh] first (the caller does):
// round t to n, 2^(t - n) by the polynomial, and n added to the exponent bits.
template <typename T>
inline typename MrVec<T>::V pow2(typename MrVec<T>::V x)
{
    using M = MrVec<T>;
    using V = typename M::V;
    using I = typename M::I;
    const V round = splat<T>(M::kRound);
    const V k = x + round;        // n in the low mantissa bits
    const V f = x - (k - round);  // in [-1/2, 1/2]
    const V p = M::pow2Fraction(f);
    return reinterpret_cast<V>(reinterpret_cast<I>(p) + (reinterpret_cast<I>(k) << M::kMantissaBits));
}

#if UOT_MR_SCALEF
inline MrVec<float>::V pow2Shifted(MrVec<float>::V t)
{
    // g = t - floor(t) in [0, 1) (one vreduce), 2^g by the polynomial of
    // MrVec<float> re-expanded about 1/2 and scaled by 2^(1/2), so that it
    // covers [0, 1) with the same error (2.0e-7 relative); then q * 2^floor(t)
    // (one vscalef): no rounding constant, no clamp, no integer exponent add.
    using V = MrVec<float>::V;
    const V g = _mm512_reduce_ps(t, _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC);
    V q = g * 0.001893754f + 0.00894958992f;
    q = q * g + 0.0558603369f;
    q = q * g + 0.240141809f;
    q = q * g + 0.693154514f;
    q = q * g + 0.99999994f;
    return _mm512_mask_scalef_ps(q, __mmask16(0xFFFF), q, t);  // (the unmasked form trips GCC 12 -Wmaybe-uninitialized)
}
inline MrVec<double>::V pow2Shifted(MrVec<double>::V t)
{
    using V = MrVec<double>::V;
    const V f = _mm512_reduce_pd(t, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);  // t - round(t)
    const V p = MrVec<double>::pow2Fraction(f);
    return _mm512_mask_scalef_pd(p, __mmask8(0xFF), p, t - f);
}
#else
template <typename V>
inline V pow2Shifted(V t)
{
    using T = decltype(t[0] + 0);
    const V lo = splat<T>(MapReduceLimits<T>::kLow), hi = splat<T>(MapReduceLimits<T>::kHigh);
    return pow2<T>(vmin(vmax(t, lo), hi));
}
#endif

// The lanes' sum in float64, as a pairwise tree (short dependency chains; a
// fixed order, so results do not depend on timing).
template <typename T>
inline double horizontalSum(typename MrVec<T>::V v)
{
    constexpr std::size_t W = MrVec<T>::W;
    double t[W];
    for (std::size_t l = 0; l < W; ++l) t[l] = static_cast<double>(v[l]);
    for (std::size_t w = W / 2; w >= 1; w /= 2)
        for (std::size_t l = 0; l < w; ++l) t[l] += t[l + w];
    return t[0];
}

// Sources per chunk (L2-resident: each pair-vector of a block of targets needs
// (D + 1) vector loads, far below L2 bandwidth, while the per-chunk horizontal
// sums cost less the longer the chunk), and targets per tile (a tile's sums
// stay in L1 while its chunks stream through).
template <typename T, int D>
constexpr std::size_t chunkSources()
{
    constexpr std::size_t bytes = 65536;
    constexpr std::size_t n = bytes / ((D + 1) * sizeof(T));
    return n / 16 * 16;
}
constexpr std::size_t kTargetTile = 64;
// Targets per register block: enough independent chains to hide latency, few
// enough that the broadcast weights stay in registers.
constexpr int kBlockTargets = UOT_MR_VECTOR_BYTES == 64 ? 4 : 2;

template <typename T, int D, int R>
inline void sumBlock(const CloudSources<T>& src, std::size_t s0, std::size_t s1, const T* w, const T* shift,
                     double* sums)
{
    using M = MrVec<T>;
    using V = typename M::V;
    constexpr std::size_t W = M::W;
    V wv[R][D], sh[R], acc[R];
    for (int r = 0; r < R; ++r) {
        for (int d = 0; d < D; ++d) wv[r][d] = splat<T>(w[r * D + d]);
        sh[r] = splat<T>(shift[r]);
        acc[r] = V{};
    }
    for (std::size_t s = s0; s < s1; s += W) {
        V q[D];
        for (int d = 0; d < D; ++d) q[d] = loadV(src.q + d * src.ld + s);
        const V h = loadV(src.h + s);
        for (int r = 0; r < R; ++r) {
            V y = h - sh[r];
            for (int d = 0; d < D; ++d) y = wv[r][d] * q[d] + y;
            acc[r] += pow2Shifted(y);
        }
    }
    for (int r = 0; r < R; ++r) sums[r] += horizontalSum<T>(acc[r]);
}

template <typename T, int D>
void shiftedSumsImpl(const CloudSources<T>& src, const T* w, const T* shift, std::size_t count, double* sums)
{
    constexpr std::size_t chunk = chunkSources<T, D>();
    constexpr std::size_t R = kBlockTargets;
    for (std::size_t t0 = 0; t0 < count; t0 += kTargetTile) {
        const std::size_t t1 = t0 + kTargetTile < count ? t0 + kTargetTile : count;
        for (std::size_t t = t0; t < t1; ++t) sums[t] = 0;
        for (std::size_t s0 = 0; s0 < src.ld; s0 += chunk) {
            const std::size_t s1 = s0 + chunk < src.ld ? s0 + chunk : src.ld;
            std::size_t t = t0;
            for (; t + R <= t1; t += R) sumBlock<T, D, R>(src, s0, s1, w + t * D, shift + t, sums + t);
            for (; t < t1; ++t) sumBlock<T, D, 1>(src, s0, s1, w + t * D, shift + t, sums + t);
        }
    }
}

template <typename T, int D>
void maxScoresImpl(const CloudSources<T>& src, const T* w, std::size_t count, T* out)
{
    using M = MrVec<T>;
    using V = typename M::V;
    constexpr std::size_t W = M::W;
    for (std::size_t t = 0; t < count; ++t) {
        V wv[D];
        for (int d = 0; d < D; ++d) wv[d] = splat<T>(w[t * D + d]);
        // The running maximum starts below every score: starting it at h alone (the
        // score without the w.q term) overstates the maximum whenever w.q < 0 for the
        // leading source, and at a small eps (large weights) by so much that every
        // 2^(y - shift) of the following sum underflows to 0 (log S = -inf).
        V mx = splat<T>(-__builtin_inf());
        for (std::size_t s = 0; s < src.ld; s += W) {
            V y = loadV(src.h + s);
            for (int d = 0; d < D; ++d) y = wv[d] * loadV(src.q + d * src.ld + s) + y;
            mx = vmax(mx, y);
        }
        T m = mx[0];
        for (std::size_t l = 1; l < W; ++l) m = mx[l] > m ? mx[l] : m;
        out[t] = m;
    }
}

template <typename T>
double probeExpImpl(std::size_t rounds)
{
    using V = typename MrVec<T>::V;
    constexpr std::size_t S = kProbeStreams;
    V x[S], acc[S];
    for (std::size_t k = 0; k < S; ++k) {
        for (std::size_t l = 0; l < MrVec<T>::W; ++l) x[k][l] = T(-0.37) * T(k + 1) - T(0.011) * T(l);
        acc[k] = V{};
    }
    const V step = splat<T>(T(1e-7));
    for (std::size_t i = 0; i < rounds; ++i) {
        for (std::size_t k = 0; k < S; ++k) {
            acc[k] += pow2Shifted(x[k]);
            x[k] -= step;
        }
    }
    double total = 0;
    for (std::size_t k = 0; k < S; ++k) total += horizontalSum<T>(acc[k]);
    return total;
}

// The kernel's arithmetic for pairs of 3-D points, in registers: per round, a
// source vector (h varies, q fixed) against 4 targets: score (shift, 3 FMAs),
// one 2^x and the accumulation each. kProbeStreams / 2 rounds' worth per call
// unit, so that `rounds` counts kProbeStreams pair-vectors like probeExpImpl.
template <typename T>
double probePairImpl(std::size_t rounds)
{
    using V = typename MrVec<T>::V;
    constexpr int R = 4;
    V w[R][3], sh[R], acc[R], q[3];
    for (int r = 0; r < R; ++r) {
        for (int d = 0; d < 3; ++d) w[r][d] = splat<T>(T(0.3) * T(r + 1) - T(0.2) * T(d));
        sh[r] = splat<T>(T(r));
        acc[r] = V{};
    }
    for (int d = 0; d < 3; ++d)
        for (std::size_t l = 0; l < MrVec<T>::W; ++l) q[d][l] = T(0.01) * T(l) - T(0.1) * T(d);
    V h = splat<T>(T(-0.5));
    const V step = splat<T>(T(1e-7));
    const std::size_t groups = rounds * (kProbeStreams / R);
    for (std::size_t i = 0; i < groups; ++i) {
        for (int r = 0; r < R; ++r) {
            V y = h - sh[r];
            for (int d = 0; d < 3; ++d) y = w[r][d] * q[d] + y;
            acc[r] += pow2Shifted(y);
        }
        h -= step;
    }
    double total = 0;
    for (int r = 0; r < R; ++r) total += horizontalSum<T>(acc[r]);
    return total;
}

template <typename T>
double probeFmaImpl(std::size_t rounds)
{
    using V = typename MrVec<T>::V;
    constexpr std::size_t S = kProbeStreams;
    V acc[S];
    for (std::size_t k = 0; k < S; ++k) acc[k] = splat<T>(T(k) * T(0.001));
    const V a = splat<T>(T(0.999999)), b = splat<T>(T(1e-6));
    for (std::size_t i = 0; i < rounds; ++i) {
        for (std::size_t k = 0; k < S; ++k) acc[k] = acc[k] * a + b;
    }
    double total = 0;
    for (std::size_t k = 0; k < S; ++k) total += horizontalSum<T>(acc[k]);
    return total;
}

template <typename T>
MapReduceKernels<T> makeMapReduceKernels()
{
    return MapReduceKernels<T>{
        {&shiftedSumsImpl<T, 1>, &shiftedSumsImpl<T, 2>, &shiftedSumsImpl<T, 3>, &shiftedSumsImpl<T, 4>,
         &shiftedSumsImpl<T, 5>, &shiftedSumsImpl<T, 6>, &shiftedSumsImpl<T, 7>, &shiftedSumsImpl<T, 8>},
        {&maxScoresImpl<T, 1>, &maxScoresImpl<T, 2>, &maxScoresImpl<T, 3>, &maxScoresImpl<T, 4>,
         &maxScoresImpl<T, 5>, &maxScoresImpl<T, 6>, &maxScoresImpl<T, 7>, &maxScoresImpl<T, 8>},
        &probeExpImpl<T>,
        &probePairImpl<T>,
        &probeFmaImpl<T>,
        MrVec<T>::W};
}
