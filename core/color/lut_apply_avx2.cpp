// The AVX2 + FMA row kernel of core/color/lut_apply.h: two pixels per 256-bit
// register, each half holding one pixel's (R, G, B, pad) so that a tetrahedron
// corner is one 128-bit load of the prepared lattice, and the four corners
// blend in three fused multiply-adds; the pair's six samples are packed in
// registers and written with two stores. Built with -mavx2 -mfma and called only
// where the CPU has both (lutKernelPathSupported).

#include <immintrin.h>

#include <cstring>

#include "core/color/lut_apply_kernels.h"
#include "core/color/lut_apply_pixel.h"

namespace uot::lutkernels {
namespace {

inline __m256 pairOf(const float* lo, const float* hi)
{
    return _mm256_insertf128_ps(_mm256_castps128_ps256(_mm_loadu_ps(lo)), _mm_loadu_ps(hi), 1);
}

inline __m256 weightsOf(float lo, float hi) { return _mm256_set_m128(_mm_set1_ps(hi), _mm_set1_ps(lo)); }

// Rounded code values (R, G, B, pad) of one pixel into 3 samples at `out`.
template <bool Deep>
inline void storePixel(__m128i v, std::uint8_t* out)
{
    if constexpr (Deep) {
        const std::uint64_t packed = static_cast<std::uint64_t>(_mm_cvtsi128_si64(_mm_packus_epi32(v, v)));
        std::memcpy(out, &packed, 6);
    } else {
        const __m128i w = _mm_packs_epi32(v, v);
        const std::uint32_t packed = static_cast<std::uint32_t>(_mm_cvtsi128_si32(_mm_packus_epi16(w, w)));
        std::memcpy(out, &packed, 3);
    }
}

// Both pixels of a pair (q: R G B pad of the first, then of the second) into
// six samples at `out`: packed and shuffled in registers, two stores.
template <bool Deep>
inline void storePair(__m256i q, std::uint8_t* out)
{
    const __m128i lo = _mm256_castsi256_si128(q), hi = _mm256_extracti128_si256(q, 1);
    if constexpr (Deep) {
        const __m128i v = _mm_shuffle_epi8(_mm_packus_epi32(lo, hi),
                                           _mm_setr_epi8(0, 1, 2, 3, 4, 5, 8, 9, 10, 11, 12, 13, -1, -1, -1, -1));
        _mm_storel_epi64(reinterpret_cast<__m128i*>(out), v);
        const std::uint32_t tail = static_cast<std::uint32_t>(_mm_extract_epi32(v, 2));
        std::memcpy(out + 8, &tail, 4);
    } else {
        const __m128i w = _mm_packs_epi32(lo, hi);
        const __m128i v = _mm_shuffle_epi8(_mm_packus_epi16(w, w),
                                           _mm_setr_epi8(0, 1, 2, 4, 5, 6, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1));
        const std::uint64_t packed = static_cast<std::uint64_t>(_mm_cvtsi128_si64(v));
        const std::uint32_t head = static_cast<std::uint32_t>(packed);
        const std::uint16_t tail = static_cast<std::uint16_t>(packed >> 32);
        std::memcpy(out, &head, 4);
        std::memcpy(out + 4, &tail, 2);
    }
}

template <bool Deep, bool InBgr, bool OutBgr>
void mapRowT(const FrameLut& lut, const std::uint8_t* in, std::uint8_t* out, int width)
{
    const float* nodes = lut.nodes().data();
    constexpr int bytes = Deep ? 6 : 3;
    const __m256 zero = _mm256_setzero_ps(), one = _mm256_set1_ps(1.0f);
    const __m256 scale = _mm256_set1_ps(Deep ? 65535.0f : 255.0f), half = _mm256_set1_ps(0.5f);
    auto finish = [&](__m256 sum) {
        const __m256 v = _mm256_fmadd_ps(_mm256_min_ps(_mm256_max_ps(sum, zero), one), scale, half);
        __m256i q = _mm256_cvttps_epi32(v);
        if constexpr (OutBgr) q = _mm256_shuffle_epi32(q, _MM_SHUFFLE(3, 0, 1, 2));
        return q;
    };
    int x = 0;
    for (; x + 2 <= width; x += 2) {
        // Both inputs are read before either output is written (in place).
        const LutAxisEntry *ra, *ga, *ba, *rb, *gb, *bb;
        pixelAxes<Deep, InBgr>(lut, in, x, ra, ga, ba);
        pixelAxes<Deep, InBgr>(lut, in, x + 1, rb, gb, bb);
        const LutTetra a = locateTetra(lut, *ra, *ga, *ba);
        const LutTetra b = locateTetra(lut, *rb, *gb, *bb);
        __m256 sum = _mm256_mul_ps(weightsOf(a.weight[0], b.weight[0]), pairOf(nodes + a.node[0], nodes + b.node[0]));
        for (int k = 1; k < 4; ++k)
            sum = _mm256_fmadd_ps(weightsOf(a.weight[k], b.weight[k]), pairOf(nodes + a.node[k], nodes + b.node[k]), sum);
        storePair<Deep>(finish(sum), out + static_cast<std::size_t>(x) * bytes);
    }
    if (x < width) {
        const LutAxisEntry *r, *g, *b;
        pixelAxes<Deep, InBgr>(lut, in, x, r, g, b);
        const LutTetra t = locateTetra(lut, *r, *g, *b);
        __m256 sum = _mm256_mul_ps(weightsOf(t.weight[0], 0), pairOf(nodes + t.node[0], nodes + t.node[0]));
        for (int k = 1; k < 4; ++k)
            sum = _mm256_fmadd_ps(weightsOf(t.weight[k], 0), pairOf(nodes + t.node[k], nodes + t.node[k]), sum);
        storePixel<Deep>(_mm256_castsi256_si128(finish(sum)), out + static_cast<std::size_t>(x) * bytes);
    }
}

}  // namespace

void mapRowAvx2(const FrameLut& lut, const std::uint8_t* in, FramePixelFormat inFormat, std::uint8_t* out,
                FramePixelFormat outFormat, int width)
{
    forFormats(inFormat, outFormat, [&](auto deep, auto inBgr, auto outBgr) {
        mapRowT<decltype(deep)::value, decltype(inBgr)::value, decltype(outBgr)::value>(lut, in, out, width);
    });
}

}  // namespace uot::lutkernels
