#include "core/color/color_map.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "core/color/color_map_inline.h"
#include "core/color/color_space_inline.h"
#include "core/color/guided_filter.h"
#include "core/color/map_regularizer.h"
#include "core/transport/kernel_matrix.h"
#include "core/transport/plan_evaluation.h"
#include "core/transport/uot_error.h"

namespace uot {

std::string toString(GamutMode mode) { return mode == GamutMode::Clip ? "clip" : "compress"; }

std::string toString(SmoothingGuide guide)
{
    switch (guide) {
    case SmoothingGuide::Lightness: return "lightness";
    case SmoothingGuide::Color: return "color";
    case SmoothingGuide::Split: return "split";
    }
    return "?";
}

SmoothingGuide parseSmoothingGuide(const std::string& text)
{
    if (text == "lightness") return SmoothingGuide::Lightness;
    if (text == "color" || text == "colour") return SmoothingGuide::Color;
    if (text == "split") return SmoothingGuide::Split;
    throw Error(ErrorCode::InvalidArgument, "unknown smoothing guide '" + text + "' (expected lightness, color or split)");
}

GamutMode parseGamutMode(const std::string& text)
{
    if (text == "clip") return GamutMode::Clip;
    if (text == "compress") return GamutMode::Compress;
    throw Error(ErrorCode::InvalidArgument, "unknown gamut mode '" + text + "' (expected clip or compress)");
}

void barycentricProjection(const UotProblem& problem, std::span<const double> logU, std::span<const double> logV,
                           const Palette& source, const Palette& reference, std::vector<double>& target,
                           std::vector<double>* mass, int threads)
{
    const std::size_t rows = source.size(), cols = reference.size();
    if (problem.rows() != rows || problem.cols() != cols || logU.size() != rows || logV.size() != cols)
        throw Error(ErrorCode::InvalidArgument, "barycentricProjection: the plan's size does not match the palettes");
    target.assign(3 * rows, 0.0);
    if (mass) mass->assign(rows, 0.0);
    const double* y = reference.points.data();
    forEachPlanRow(
        problem, logU, logV,
        [&](std::size_t i, const double* row) {
            double m = 0, t[3] = {0, 0, 0};
            for (std::size_t j = 0; j < cols; ++j) {
                m += row[j];
                t[0] += row[j] * y[3 * j];
                t[1] += row[j] * y[3 * j + 1];
                t[2] += row[j] * y[3 * j + 2];
            }
            for (int a = 0; a < 3; ++a) target[3 * i + a] = m > 0 ? t[a] / m : source.points[3 * i + a];
            if (mass) (*mass)[i] = m;
        },
        threads);
}

namespace {

void boundingBox(const float* colors, std::size_t n, double lo[3], double hi[3], int threads)
{
    float l0 = std::numeric_limits<float>::max(), l1 = l0, l2 = l0;
    float h0 = std::numeric_limits<float>::lowest(), h1 = h0, h2 = h0;
    const std::ptrdiff_t count = static_cast<std::ptrdiff_t>(n);
#pragma omp parallel for num_threads(threads) schedule(static) reduction(min : l0, l1, l2) reduction(max : h0, h1, h2) if (count > 65536)
    for (std::ptrdiff_t p = 0; p < count; ++p) {
        const float* c = colors + 3 * p;
        l0 = std::min(l0, c[0]), l1 = std::min(l1, c[1]), l2 = std::min(l2, c[2]);
        h0 = std::max(h0, c[0]), h1 = std::max(h1, c[1]), h2 = std::max(h2, c[2]);
    }
    lo[0] = l0, lo[1] = l1, lo[2] = l2;
    hi[0] = h0, hi[1] = h1, hi[2] = h2;
}

struct LutCoord {
    int i0[3];
    float f[3];
};

inline LutCoord lutCoord(const DisplacementLut& lut, const float* c)
{
    LutCoord k;
    for (int a = 0; a < 3; ++a) {
        float t = static_cast<float>((c[a] - lut.lo[a]) / lut.step[a]);
        t = std::clamp(t, 0.0f, static_cast<float>(lut.size - 1));
        int i = static_cast<int>(t);
        if (i >= lut.size - 1) i = lut.size - 2;
        k.i0[a] = i;
        k.f[a] = t - static_cast<float>(i);
    }
    return k;
}

inline void lutLookup(const DisplacementLut& lut, const float* c, float* r)
{
    color_detail::lutLookupRaw(lut.values.data(), lut.size, lut.lo, lut.step, c, r);
}

// The lattice nodes at the corners of the cells that hold at least one color.
std::vector<unsigned char> markNodesNextToColors(const DisplacementLut& lut, const float* colors, std::size_t n, int t)
{
    const std::size_t s = static_cast<std::size_t>(lut.size);
    const std::size_t nodes = s * s * s;
    std::vector<unsigned char> needed(nodes, 0);
    const std::ptrdiff_t count = static_cast<std::ptrdiff_t>(n);
#pragma omp parallel for num_threads(t) schedule(static) if (count > 65536)
    for (std::ptrdiff_t p = 0; p < count; ++p) {
        const LutCoord k = lutCoord(lut, colors + 3 * p);
        const std::size_t base = (static_cast<std::size_t>(k.i0[0]) * s + k.i0[1]) * s + k.i0[2];
        // Several threads may mark the same cell: an atomic store (relaxed, a
        // plain byte store on x86), not a data race.
        std::atomic_ref<unsigned char>(needed[base]).store(1, std::memory_order_relaxed);
    }
    std::vector<unsigned char> mark(nodes, 0);
    for (std::size_t cell = 0; cell < nodes; ++cell) {
        if (!needed[cell]) continue;
        for (std::size_t d = 0; d < 8; ++d) {
            const std::size_t node = cell + ((d >> 2) & 1) * s * s + ((d >> 1) & 1) * s + (d & 1);
            if (node < nodes) mark[node] = 1;
        }
    }
    return mark;
}

}  // namespace

std::vector<unsigned char> latticeNodeMask(const DisplacementLut& lut, const float* colors, std::size_t n, LatticeNodes nodes,
                                           int threads)
{
    if (nodes == LatticeNodes::All)
        return std::vector<unsigned char>(static_cast<std::size_t>(lut.size) * lut.size * lut.size, 1);
    return markNodesNextToColors(lut, colors, n, resolveThreadCount(threads));
}

DisplacementLut buildDisplacementLut(const UotProblem& problem, std::span<const double> logV, const Palette& reference,
                                     const float* colors, std::size_t n, int lutSize, int threads,
                                     LatticeNodes which, const EntropicLattice* elsewhere)
{
    if (lutSize < 2 || lutSize > 257)
        throw Error(ErrorCode::InvalidArgument, "LUT size must be between 2 and 257 (got " + std::to_string(lutSize) + ")");
    const auto* cloud = std::get_if<PointCloudCost>(&problem.cost);
    if (!cloud || cloud->dim != 3 || cloud->cols != reference.size() || logV.size() != reference.size())
        throw Error(ErrorCode::InvalidArgument, "buildDisplacementLut: needs the palettes' point-cloud cost");
    const int t = resolveThreadCount(threads);
    DisplacementLut lut;
    lut.size = lutSize;
    double hi[3];
    boundingBox(colors, n, lut.lo, hi, t);
    for (int a = 0; a < 3; ++a) {
        const double span = std::max(hi[a] - lut.lo[a], 1e-6);
        lut.step[a] = span / (lutSize - 1);
    }
    const std::size_t s = static_cast<std::size_t>(lutSize);
    const std::size_t nodes = s * s * s;
    lut.values.assign(3 * nodes, 0.0f);

    const std::vector<unsigned char> mark = latticeNodeMask(lut, colors, n, which, t);
    std::vector<std::size_t> work;
    for (std::size_t node = 0; node < nodes; ++node)
        if (mark[node]) work.push_back(node);

    // The entropic map per node, in float with a vectorisable exp (the sums are
    // normalised, so float's relative error is what matters; values below
    // exp(-80) of the largest term are dropped).
    const std::size_t cols = reference.size();
    const float factor = static_cast<float>(cloud->scale / problem.eps);
    std::vector<float> yx(cols), yy(cols), yz(cols), logW0(cols);
    for (std::size_t j = 0; j < cols; ++j) {
        yx[j] = static_cast<float>(reference.points[3 * j]);
        yy[j] = static_cast<float>(reference.points[3 * j + 1]);
        yz[j] = static_cast<float>(reference.points[3 * j + 2]);
        logW0[j] = static_cast<float>(logV[j] + (problem.reference == ReferenceMeasure::Product ? std::log(problem.b[j]) : 0.0));
    }
    if (elsewhere && *elsewhere && (*elsewhere)(lut, work, yx.data(), yy.data(), yz.data(), logW0.data(), cols, factor))
        return lut;
    const std::ptrdiff_t workCount = static_cast<std::ptrdiff_t>(work.size());
#pragma omp parallel num_threads(t)
    {
        std::vector<float> e(cols);
        float* ep = e.data();
        const float *px = yx.data(), *py = yy.data(), *pz = yz.data(), *pw = logW0.data();
#pragma omp for schedule(dynamic, 16)
        for (std::ptrdiff_t w = 0; w < workCount; ++w) {
            const std::size_t node = work[static_cast<std::size_t>(w)];
            const std::size_t ix = node / (s * s), iy = (node / s) % s, iz = node % s;
            const float x0 = static_cast<float>(lut.lo[0] + ix * lut.step[0]);
            const float x1 = static_cast<float>(lut.lo[1] + iy * lut.step[1]);
            const float x2 = static_cast<float>(lut.lo[2] + iz * lut.step[2]);
            float best = -3.0e38f;
#pragma omp simd reduction(max : best)
            for (std::size_t j = 0; j < cols; ++j) {
                const float d0 = x0 - px[j], d1 = x1 - py[j], d2 = x2 - pz[j];
                const float v = pw[j] - factor * (d0 * d0 + d1 * d1 + d2 * d2);
                ep[j] = v;
                best = v > best ? v : best;
            }
            float sum = 0, t0 = 0, t1 = 0, t2 = 0;
#pragma omp simd reduction(+ : sum, t0, t1, t2)
            for (std::size_t j = 0; j < cols; ++j) {
                const float wgt = color_detail::fastExpNegative(ep[j] - best);
                sum += wgt;
                t0 += wgt * px[j];
                t1 += wgt * py[j];
                t2 += wgt * pz[j];
            }
            lut.values[3 * node] = t0 / sum - x0;
            lut.values[3 * node + 1] = t1 / sum - x1;
            lut.values[3 * node + 2] = t2 / sum - x2;
        }
    }
    return lut;
}

void applyDisplacementLut(const DisplacementLut& lut, const float* colors, std::size_t n, float* out, int threads)
{
    const int t = resolveThreadCount(threads);
    const std::ptrdiff_t count = static_cast<std::ptrdiff_t>(n);
#pragma omp parallel for num_threads(t) schedule(static) if (count > 16384)
    for (std::ptrdiff_t p = 0; p < count; ++p) lutLookup(lut, colors + 3 * p, out + 3 * p);
}

namespace {

using color_detail::Bilinear;
inline Bilinear bilinear(int x, int s, int lowSize) { return color_detail::bilinearAt(x, s, lowSize); }

}  // namespace

namespace {

struct SrgbEncoder {
    static constexpr int kSize = color_detail::kSrgbEncodeSize;
    std::vector<float> table;
    SrgbEncoder() : table(kSize + 2)
    {
        for (int i = 0; i <= kSize + 1; ++i) table[i] = static_cast<float>(linearToSrgb(std::min(1.0, i / double(kSize))));
    }
    float operator()(float v) const { return color_detail::srgbEncode(table.data(), v); }
};

}  // namespace

namespace {

struct Composer {
    const SrgbEncoder& encoder;
    WorkingSpace space;
    float strength;
    bool keepL;
    GamutMode gamut;
    bool copyAlpha;
    int rc;
    bool deep;
    float maxValue;
    const Image& source;
    Image& result;
    const LookAdjustment* look;  // null when the look controls are at their defaults

    void pixel(std::size_t p, const float* c, const float* d) const
    {
        float rgb[3];
        if (look) {
            // The controls act on the fully transferred colour; strength then fades toward the source.
            float e[3];
            look->applyToDisplacement(c, d, e);
            color_detail::composeLinear(space, strength, keepL, gamut, c, e, rgb);
        } else {
            color_detail::composeLinear(space, strength, keepL, gamut, c, d, rgb);
        }
        for (int k = 0; k < 3; ++k) {
            const float e = encoder(rgb[k]) * maxValue + 0.5f;
            if (deep)
                result.samples16()[p * rc + k] = static_cast<std::uint16_t>(e);
            else
                result.samples8()[p * rc + k] = static_cast<std::uint8_t>(e);
        }
        if (rc == 4) {
            if (deep)
                result.samples16()[p * rc + 3] = copyAlpha ? source.samples16()[p * 4 + 3] : 65535;
            else
                result.samples8()[p * rc + 3] = copyAlpha ? source.samples8()[p * 4 + 3] : 255;
        }
    }
};

const SrgbEncoder& srgbEncoder()
{
    static const SrgbEncoder encoder;
    return encoder;
}

Composer makeComposer(WorkingSpace space, const MappingSettings& settings, const Image& source, Image& result,
                      const LookAdjustment* look)
{
    if (result.width != source.width || result.height != source.height || (result.channels != 3 && result.channels != 4))
        throw Error(ErrorCode::InvalidArgument, "compose: the result must have the source's size and 3 or 4 channels");
    validateImage(result, "result");
    return Composer{srgbEncoder(),
                    space,
                    static_cast<float>(settings.strength),
                    settings.preserveLuminance,
                    settings.gamut,
                    result.channels == 4 && source.channels == 4 && source.depth == result.depth,
                    result.channels,
                    result.depth == 16,
                    result.depth == 16 ? 65535.0f : 255.0f,
                    source,
                    result,
                    look && look->active ? look : nullptr};
}

}  // namespace

void composeResult(const float* colors, const float* displacement, WorkingSpace space, const MappingSettings& settings,
                   const Image& source, Image& result, int threads, const LookAdjustment* look)
{
    const Composer composer = makeComposer(space, settings, source, result, look);
    const int t = resolveThreadCount(threads);
    const std::ptrdiff_t count = static_cast<std::ptrdiff_t>(source.pixelCount());
#pragma omp parallel for num_threads(t) schedule(static) if (count > 16384)
    for (std::ptrdiff_t p = 0; p < count; ++p)
        composer.pixel(static_cast<std::size_t>(p), colors + 3 * p, displacement + 3 * p);
}

float guideValue(WorkingSpace space, const float* c) { return color_detail::guideOf(space, c); }

int smoothingRadiusPixels(const MappingSettings& settings, int width, int height)
{
    if (!settings.smooth) return 0;
    return static_cast<int>(std::lround(settings.smoothRadius * std::max(width, height)));
}

int smoothingSubsample(const MappingSettings& settings, int radius)
{
    return settings.smoothSubsample > 0 ? settings.smoothSubsample : std::clamp(radius / 4, 1, 8);
}

DisplacementFieldFitter::DisplacementFieldFitter(const LowResolution& low, int width, int height,
                                                 const MappingSettings& settings, int threads)
    : m_low(low), m_settings(settings), m_width(width), m_height(height), m_threads(resolveThreadCount(threads))
{
    const int radius = smoothingRadiusPixels(settings, width, height);
    if (radius < 1) return;
    if ((width + low.subsample - 1) / low.subsample != low.width || (height + low.subsample - 1) / low.subsample != low.height)
        throw Error(ErrorCode::InvalidArgument, "fitDisplacementField: the block means are of another image size");
    m_radius = std::max(1, static_cast<int>(std::lround(static_cast<double>(radius) / low.subsample)));
    if (settings.smoothGuide == SmoothingGuide::Lightness) return;
    // Guide = colour / nominal range, so that eps has the lightness guide's units; in
    // Lab / Oklab the chroma axes of the guide take their own regulariser.
    const std::size_t nl = static_cast<std::size_t>(low.width) * low.height;
    const float k = static_cast<float>(1.0 / nominalRange(low.space));
    std::vector<float> g(3 * nl);
    for (std::size_t i = 0; i < g.size(); ++i) g[i] = low.colors[i] * k;
    const std::array<double, 3> channelEps = {settings.smoothEps, settings.smoothChromaEps, settings.smoothChromaEps};
    m_colorGuide = std::make_unique<ColorGuideWindows>(g.data(), low.width, low.height, m_radius, settings.smoothEps,
                                                       m_threads, hasLightnessAxis(low.space) ? &channelEps : nullptr);
}

DisplacementFieldFitter::~DisplacementFieldFitter() = default;

DisplacementField DisplacementFieldFitter::fit(const float* P) const
{
    DisplacementField field;
    field.width = m_width;
    field.height = m_height;
    if (m_radius < 1) return field;
    const int wl = m_low.width, hl = m_low.height, r = m_radius, t = m_threads;
    const WorkingSpace space = m_low.space;
    const MappingSettings& settings = m_settings;
    const std::size_t nl = static_cast<std::size_t>(wl) * hl;
    // The lightness guide is L / range: result L = L + a L / range + b, so a slope
    // floor m on d(result L) / dL is a >= (m - 1) range on the lightness channel.
    const double none = -std::numeric_limits<double>::infinity();
    std::array<double, 3> slopes = {none, none, none};
    if (hasLightnessAxis(space)) slopes[0] = (settings.smoothMinSlope - 1) * nominalRange(space);
    const float* lowGuide = m_low.guide.data();
    if (m_colorGuide) {
        const float k = static_cast<float>(1.0 / nominalRange(space));
        field.coefficients.assign(12 * nl, 0.0f);
        if (settings.smoothGuide == SmoothingGuide::Split && hasLightnessAxis(space)) {
            // The lightness displacement by the gray filter on the lightness guide (the first
            // channel / nominal range: row 0 of A is (a k, 0, 0)), the two chroma
            // displacements by the colour guide: each filter fits only its own channels.
            std::vector<float> lightness(nl), chroma(2 * nl);
            for (std::size_t node = 0; node < nl; ++node) {
                lightness[node] = P[3 * node];
                chroma[2 * node] = P[3 * node + 1], chroma[2 * node + 1] = P[3 * node + 2];
            }
            const std::vector<float> gray =
                grayGuidedCoefficients(lowGuide, lightness.data(), wl, hl, 1, r, settings.smoothEps, t, slopes.data());
            const std::vector<float> color = m_colorGuide->coefficients(chroma.data(), 2, t);
            for (std::size_t node = 0; node < nl; ++node) {
                float* m = &field.coefficients[12 * node];
                const float* c = &color[8 * node];  // [A (2 x 3), b (2)]
                m[0] = gray[2 * node] * k;
                for (int j = 0; j < 6; ++j) m[3 + j] = c[j] * k;  // A acts on the unscaled colour
                m[9] = gray[2 * node + 1], m[10] = c[6], m[11] = c[7];
            }
        } else {
            field.coefficients = m_colorGuide->coefficients(P, 3, t);
            for (std::size_t node = 0; node < nl; ++node)
                for (int j = 0; j < 9; ++j) field.coefficients[12 * node + j] *= k;  // A acts on the unscaled colour
        }
        field.colorGuided = true;
    } else {
        field.coefficients = grayGuidedCoefficients(lowGuide, P, wl, hl, 3, r, settings.smoothEps, t, slopes.data());
    }
    field.smoothed = true;
    field.subsample = m_low.subsample;
    field.lowWidth = wl;
    field.lowHeight = hl;
    // The bounds of the map on the per-window models (slopes, distance to the global map).
    boundFieldChroma(field, m_low, P, settings.bounds, t);
    return field;
}

DisplacementField computeDisplacementField(const DisplacementLut& lut, const float* colors, int width, int height,
                                           WorkingSpace space, const MappingSettings& settings, int threads)
{
    DisplacementField field;
    field.width = width;
    field.height = height;
    const int radius = smoothingRadiusPixels(settings, width, height);
    if (radius < 1) return field;
    const int t = resolveThreadCount(threads);
    const int s = smoothingSubsample(settings, radius);
    const int wl = (width + s - 1) / s, hl = (height + s - 1) / s;
    const std::size_t nl = static_cast<std::size_t>(wl) * hl;
    LowResolution low;
    low.space = space;
    low.width = wl, low.height = hl, low.subsample = s;
    low.colors.resize(nl * 3), low.guide.resize(nl);
    float* I = low.guide.data();
    float* C = low.colors.data();
    std::vector<float> P(nl * 3);
    // Block means of the colours, the guide and the LUT displacement, in one pass over the pixels.
#pragma omp parallel for num_threads(t) schedule(static)
    for (int ly = 0; ly < hl; ++ly) {
        const int y1 = std::min(height, (ly + 1) * s);
        for (int lx = 0; lx < wl; ++lx) {
            const int x1 = std::min(width, (lx + 1) * s);
            double g = 0, d0 = 0, d1 = 0, d2 = 0, c0 = 0, c1 = 0, c2 = 0;
            int cnt = 0;
            for (int y = ly * s; y < y1; ++y)
                for (int x = lx * s; x < x1; ++x, ++cnt) {
                    const float* c = colors + 3 * (static_cast<std::size_t>(y) * width + x);
                    float d[3];
                    lutLookup(lut, c, d);
                    g += guideValue(space, c);
                    d0 += d[0], d1 += d[1], d2 += d[2];
                    c0 += c[0], c1 += c[1], c2 += c[2];
                }
            const std::size_t k = static_cast<std::size_t>(ly) * wl + lx;
            I[k] = static_cast<float>(g / cnt);
            P[3 * k] = static_cast<float>(d0 / cnt);
            P[3 * k + 1] = static_cast<float>(d1 / cnt);
            P[3 * k + 2] = static_cast<float>(d2 / cnt);
            C[3 * k] = static_cast<float>(c0 / cnt);
            C[3 * k + 1] = static_cast<float>(c1 / cnt);
            C[3 * k + 2] = static_cast<float>(c2 / cnt);
        }
    }
    return DisplacementFieldFitter(low, width, height, settings, t).fit(P.data());
}

LowResolution downsampleColors(const float* colors, int width, int height, WorkingSpace space, int subsample, int threads)
{
    if (width <= 0 || height <= 0 || subsample < 1)
        throw Error(ErrorCode::InvalidArgument, "downsampleColors: invalid size or subsample");
    const int t = resolveThreadCount(threads);
    const int s = subsample;
    LowResolution low;
    low.space = space;
    low.subsample = s;
    low.width = (width + s - 1) / s;
    low.height = (height + s - 1) / s;
    const std::size_t nl = static_cast<std::size_t>(low.width) * low.height;
    low.colors.resize(nl * 3);
    low.guide.resize(nl);
    const int wl = low.width;
#pragma omp parallel num_threads(t)
    {
        std::vector<double> acc(static_cast<std::size_t>(wl) * 3);
        std::vector<int> cnt(static_cast<std::size_t>(wl));
#pragma omp for schedule(static)
        for (int ly = 0; ly < low.height; ++ly) {
            std::fill(acc.begin(), acc.end(), 0.0);
            std::fill(cnt.begin(), cnt.end(), 0);
            const int y1 = std::min(height, (ly + 1) * s);
            for (int y = ly * s; y < y1; ++y) {
                const float* row = colors + 3 * static_cast<std::size_t>(y) * width;
                for (int x = 0; x < width; ++x) {
                    const int lx = x / s;
                    acc[3 * lx] += row[3 * x];
                    acc[3 * lx + 1] += row[3 * x + 1];
                    acc[3 * lx + 2] += row[3 * x + 2];
                    ++cnt[static_cast<std::size_t>(lx)];
                }
            }
            for (int lx = 0; lx < wl; ++lx) {
                const std::size_t k = static_cast<std::size_t>(ly) * wl + lx;
                for (int a = 0; a < 3; ++a)
                    low.colors[3 * k + a] = static_cast<float>(acc[3 * lx + a] / cnt[static_cast<std::size_t>(lx)]);
                // The guide is affine in the color for Lab/Oklab (L) and linear RGB (Y): mean of guide = guide of mean.
                low.guide[k] = guideValue(space, &low.colors[3 * k]);
            }
        }
    }
    return low;
}

std::vector<float> blockDisplacements(const DisplacementLut& lut, const LowResolution& low, int threads)
{
    const std::size_t nl = static_cast<std::size_t>(low.width) * low.height;
    std::vector<float> P(nl * 3);
    applyDisplacementLut(lut, low.colors.data(), nl, P.data(), resolveThreadCount(threads));
    return P;
}

DisplacementField fitDisplacementField(const LowResolution& low, const float* blockDisplacement, int width, int height,
                                       const MappingSettings& settings, int threads)
{
    return DisplacementFieldFitter(low, width, height, settings, threads).fit(blockDisplacement);
}

DisplacementField computeDisplacementField(const DisplacementLut& lut, const LowResolution& low, int width, int height,
                                           const MappingSettings& settings, int threads)
{
    if (smoothingRadiusPixels(settings, width, height) < 1) return fitDisplacementField(low, nullptr, width, height, settings, threads);
    const std::vector<float> P = blockDisplacements(lut, low, threads);
    return fitDisplacementField(low, P.data(), width, height, settings, threads);
}

namespace {

// Calls f(p, c, d) for the pixels (x, y) with x and y multiples of `step`: c the
// pixel's working-space colour, d its displacement from the field (or the LUT when
// the field is not smoothed). Rows run in parallel. With `within`, only the pixels
// whose weight is > 0.
template <typename F>
void forEachDisplacement(const float* colors, const DisplacementLut& lut, const DisplacementField& field, WorkingSpace space,
                         int width, int height, int step, int t, F&& f, const float* within = nullptr)
{
    if (!field.smoothed) {
#pragma omp parallel for num_threads(t) schedule(static)
        for (int y = 0; y < height; y += step)
            for (int x = 0; x < width; x += step) {
                const std::size_t p = static_cast<std::size_t>(y) * width + x;
                if (within && !(within[p] > 0.0f)) continue;
                float d[3];
                lutLookup(lut, colors + 3 * p, d);
                f(p, colors + 3 * p, d);
            }
        return;
    }
    if (field.width != width || field.height != height)
        throw Error(ErrorCode::InvalidArgument, "composeMapped: the field was computed for another image size");
    const int s = field.subsample, wl = field.lowWidth, hl = field.lowHeight;
    std::vector<Bilinear> bxs(static_cast<std::size_t>(width));
    for (int x = 0; x < width; ++x) bxs[static_cast<std::size_t>(x)] = bilinear(x, s, wl);
    const float* coef = field.coefficients.data();
    const std::size_t len = field.colorGuided ? 12 : 6;
    if (field.coefficients.size() != len * static_cast<std::size_t>(wl) * hl)
        throw Error(ErrorCode::InvalidArgument, "composeMapped: the field's coefficients do not match its size");
#pragma omp parallel num_threads(t)
    {
        // The coefficients interpolated along y once per row, then along x per pixel.
        std::vector<float> row(static_cast<std::size_t>(wl) * len);
#pragma omp for schedule(static)
        for (int y = 0; y < height; y += step) {
            const Bilinear by = bilinear(y, s, hl);
            const float* r0 = coef + static_cast<std::size_t>(by.i0) * wl * len;
            const float* r1 = coef + static_cast<std::size_t>(by.i1) * wl * len;
            for (std::size_t k = 0; k < row.size(); ++k) row[k] = r0[k] + by.w * (r1[k] - r0[k]);
            for (int x = 0; x < width; x += step) {
                const Bilinear& bx = bxs[static_cast<std::size_t>(x)];
                const float* c0 = &row[static_cast<std::size_t>(bx.i0) * len];
                const float* c1 = &row[static_cast<std::size_t>(bx.i1) * len];
                const std::size_t p = static_cast<std::size_t>(y) * width + x;
                if (within && !(within[p] > 0.0f)) continue;
                const float* c = colors + 3 * p;
                float m[12], d[3];
                for (std::size_t k = 0; k < len; ++k) m[k] = c0[k] + bx.w * (c1[k] - c0[k]);
                color_detail::fieldDisplacement(m, field.colorGuided, c, field.colorGuided ? 0.0f : guideValue(space, c), d);
                f(p, c, d);
            }
        }
    }
}

}  // namespace

std::vector<float> sampleMappedColors(const float* colors, const DisplacementLut& lut, const DisplacementField& field,
                                      WorkingSpace space, int width, int height, int step, int threads)
{
    if (width <= 0 || height <= 0 || step < 1)
        throw Error(ErrorCode::InvalidArgument, "sampleMappedColors: invalid size or step");
    const std::size_t cols = static_cast<std::size_t>((width + step - 1) / step);
    const std::size_t rows = static_cast<std::size_t>((height + step - 1) / step);
    std::vector<float> out(3 * cols * rows);
    forEachDisplacement(colors, lut, field, space, width, height, step, resolveThreadCount(threads),
                        [&](std::size_t p, const float* c, const float* d) {
                            const std::size_t y = p / static_cast<std::size_t>(width), x = p % static_cast<std::size_t>(width);
                            float* o = &out[3 * ((y / step) * cols + x / step)];
                            for (int k = 0; k < 3; ++k) o[k] = c[k] + d[k];
                        });
    return out;
}

namespace {

// The residual match of MappingSettings: per channel, the strength with which the
// fully transferred colour c + d moves to the marginal map's value
// (settings.residualLightness on the lightness axis of Lab / Oklab,
// settings.residualMatch on the others).
struct ResidualMatch {
    const MarginalMap* map = nullptr;
    float strength[3] = {0, 0, 0};

    ResidualMatch(const MarginalMap* residual, WorkingSpace space, const MappingSettings& settings)
    {
        const float chroma = static_cast<float>(settings.residualMatch);
        strength[0] = hasLightnessAxis(space) ? static_cast<float>(settings.residualLightness) : chroma;
        strength[1] = strength[2] = chroma;
        if (residual && !residual->empty() && (strength[0] > 0 || strength[1] > 0)) map = residual;
    }
    // e = the displacement d of colour c after the match: c + d goes strength[k] of
    // the way to its mapped value.
    void apply(const float* c, const float* d, float e[3]) const
    {
        for (int k = 0; k < 3; ++k) e[k] = strength[k] > 0 ? d[k] + strength[k] * ((*map)(k, c[k] + d[k]) - (c[k] + d[k])) : d[k];
    }
};

}  // namespace

void composeMapped(const float* colors, const DisplacementLut& lut, const DisplacementField& field, WorkingSpace space,
                   const MappingSettings& settings, const Image& source, Image& result, int threads,
                   const LookAdjustment* look, const float* within)
{
    const Composer composer = makeComposer(space, settings, source, result, look);
    forEachDisplacement(
        colors, lut, field, space, source.width, source.height, 1, resolveThreadCount(threads),
        [&](std::size_t p, const float* c, const float* d) { composer.pixel(p, c, d); }, within);
}

void addResidualShift(std::vector<float>& blockDisplacement, const LowResolution& low, const DisplacementField& field,
                      const MarginalMap& residual, const MappingSettings& settings, int threads)
{
    const std::size_t nl = static_cast<std::size_t>(low.width) * low.height;
    const std::size_t len = field.colorGuided ? 12 : 6;
    if (!field.smoothed || field.lowWidth != low.width || field.lowHeight != low.height ||
        field.coefficients.size() != len * nl || blockDisplacement.size() != 3 * nl)
        throw Error(ErrorCode::InvalidArgument, "addResidualShift: the field, the block means and the displacements differ in size");
    const ResidualMatch match(&residual, low.space, settings);
    if (!match.map) return;
    const int t = resolveThreadCount(threads);
#pragma omp parallel for num_threads(t) schedule(static)
    for (std::ptrdiff_t node = 0; node < static_cast<std::ptrdiff_t>(nl); ++node) {
        const float* c = &low.colors[3 * static_cast<std::size_t>(node)];
        const float* m = &field.coefficients[len * static_cast<std::size_t>(node)];
        // The field's displacement at the block (its node, its mean colour), then the match's shift of it.
        float d[3], e[3];
        color_detail::fieldDisplacement(m, field.colorGuided, c, low.guide[static_cast<std::size_t>(node)], d);
        match.apply(c, d, e);
        for (int k = 0; k < 3; ++k) blockDisplacement[3 * static_cast<std::size_t>(node) + k] += e[k] - d[k];
    }
}

void addResidualShiftToLut(DisplacementLut& lut, const std::vector<unsigned char>& mark, WorkingSpace space,
                           const MarginalMap& residual, const MappingSettings& settings)
{
    const std::size_t s = static_cast<std::size_t>(lut.size);
    if (mark.size() != s * s * s || lut.values.size() != 3 * mark.size())
        throw Error(ErrorCode::InvalidArgument, "addResidualShiftToLut: the node mask is of another lattice");
    const ResidualMatch match(&residual, space, settings);
    if (!match.map) return;
    for (std::size_t node = 0; node < mark.size(); ++node) {
        if (!mark[node]) continue;
        const float c[3] = {static_cast<float>(lut.lo[0] + static_cast<double>(node / (s * s)) * lut.step[0]),
                            static_cast<float>(lut.lo[1] + static_cast<double>((node / s) % s) * lut.step[1]),
                            static_cast<float>(lut.lo[2] + static_cast<double>(node % s) * lut.step[2])};
        float* d = &lut.values[3 * node];
        float e[3];
        match.apply(c, d, e);
        for (int k = 0; k < 3; ++k) d[k] = e[k];
    }
}

}  // namespace uot
