#include "core/color/mask.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>

#include "core/color/guided_filter.h"
#include "core/transport/kernel_matrix.h"
#include "core/transport/uot_error.h"

namespace uot {

namespace {

template <typename T>
void readMask(const T* samples, const Image& image, float* out)
{
    const double top = image.depth == 16 ? 65535.0 : 255.0;
    const int c = image.channels;
    const std::ptrdiff_t n = static_cast<std::ptrdiff_t>(image.pixelCount());
#pragma omp parallel for schedule(static) if (n > 65536)
    for (std::ptrdiff_t i = 0; i < n; ++i) {
        const T* p = samples + i * c;
        if (c == 1) {
            out[i] = static_cast<float>(p[0] / top);
        } else {
            const double mean = (static_cast<double>(p[0]) + p[1] + p[2]) / (3.0 * top);
            out[i] = static_cast<float>(c == 4 ? mean * (p[3] / top) : mean);
        }
    }
}

// One axis of a resize: target j reads source pixels first[j] .. first[j] + weights[j].size() - 1.
struct AxisWeights {
    std::vector<int> first;
    std::vector<std::vector<double>> weights;
};

AxisWeights axisWeights(int from, int to)
{
    AxisWeights a;
    a.first.resize(static_cast<std::size_t>(to));
    a.weights.resize(static_cast<std::size_t>(to));
    const double scale = static_cast<double>(from) / to;
    for (int j = 0; j < to; ++j) {
        std::vector<double>& w = a.weights[static_cast<std::size_t>(j)];
        if (from == to) {
            a.first[static_cast<std::size_t>(j)] = j;
            w = {1.0};
        } else if (from > to) {  // box: the overlap of [j, j + 1) x scale with each source pixel
            const double lo = j * scale, hi = (j + 1) * scale;
            const int i0 = static_cast<int>(std::floor(lo));
            const int i1 = std::min(from - 1, static_cast<int>(std::ceil(hi)) - 1);
            a.first[static_cast<std::size_t>(j)] = i0;
            for (int i = i0; i <= i1; ++i) w.push_back(std::min<double>(hi, i + 1) - std::max<double>(lo, i));
        } else {  // bilinear between pixel centres
            const double x = std::clamp((j + 0.5) * scale - 0.5, 0.0, static_cast<double>(from - 1));
            const int i0 = std::min(static_cast<int>(std::floor(x)), from - 1);
            const double f = x - i0;
            a.first[static_cast<std::size_t>(j)] = i0;
            w = i0 + 1 < from ? std::vector<double>{1.0 - f, f} : std::vector<double>{1.0};
        }
    }
    return a;
}

// Along rows: each of `lines` rows of `from` values (row-major) to `to` values.
void resizeRows(const float* in, float* out, const AxisWeights& a, int lines, int from)
{
    const int to = static_cast<int>(a.first.size());
#pragma omp parallel for schedule(static) if (static_cast<long long>(lines) * to > 65536)
    for (int l = 0; l < lines; ++l) {
        const float* row = in + static_cast<std::ptrdiff_t>(l) * from;
        for (int j = 0; j < to; ++j) {
            const std::vector<double>& w = a.weights[static_cast<std::size_t>(j)];
            const float* at = row + a.first[static_cast<std::size_t>(j)];
            double sum = 0, total = 0;
            for (std::size_t k = 0; k < w.size(); ++k) sum += w[k] * at[k], total += w[k];
            out[static_cast<std::ptrdiff_t>(l) * to + j] = static_cast<float>(sum / total);
        }
    }
}

// Along columns: output row j is the weighted mean of input rows first[j] .. (rows of `width` values),
// row by row (contiguous reads).
void resizeColumns(const float* in, float* out, const AxisWeights& a, int width)
{
    const int to = static_cast<int>(a.first.size());
#pragma omp parallel for schedule(static) if (static_cast<long long>(width) * to > 65536)
    for (int j = 0; j < to; ++j) {
        const std::vector<double>& w = a.weights[static_cast<std::size_t>(j)];
        double total = 0;
        for (double v : w) total += v;
        float* row = out + static_cast<std::ptrdiff_t>(j) * width;
        const float* first = in + static_cast<std::ptrdiff_t>(a.first[static_cast<std::size_t>(j)]) * width;
        for (int x = 0; x < width; ++x) {
            double sum = 0;
            for (std::size_t k = 0; k < w.size(); ++k) sum += w[k] * first[static_cast<std::ptrdiff_t>(k) * width + x];
            row[x] = static_cast<float>(sum / total);
        }
    }
}

template <typename T>
void compositeSamples(const T* src, int srcChannels, const std::vector<const float*>& masks,
                      const std::vector<const T*>& results, T* out, int outChannels, std::size_t n, int threads)
{
    const std::ptrdiff_t count = static_cast<std::ptrdiff_t>(n);
    const std::size_t regions = masks.size();
#pragma omp parallel for num_threads(threads) schedule(static) if (count > 65536)
    for (std::ptrdiff_t i = 0; i < count; ++i) {
        T* o = out + i * outChannels;
        const T* s = src + i * srcChannels;
        double sum = 0, mixed[4] = {0, 0, 0, 0};
        for (std::size_t r = 0; r < regions; ++r) {
            const float w = masks[r][i];
            if (!(w > 0.0f)) continue;
            sum += w;
            const T* v = results[r] + i * outChannels;
            for (int c = 0; c < outChannels; ++c) mixed[c] += static_cast<double>(w) * v[c];
        }
        for (int c = 0; c < outChannels; ++c) {
            const T from = s[srcChannels == 1 ? 0 : c];
            if (sum <= 0) {
                o[c] = from;
            } else {
                const double v = from + std::min(1.0, sum) * (mixed[c] / sum - from);
                o[c] = static_cast<T>(std::lround(v));
            }
        }
    }
}

}  // namespace

Mask maskFromImage(const Image& image)
{
    validateImage(image, "mask image");
    Mask mask;
    mask.width = image.width;
    mask.height = image.height;
    mask.values.resize(image.pixelCount());
    if (image.depth == 16)
        readMask(image.samples16(), image, mask.values.data());
    else
        readMask(image.samples8(), image, mask.values.data());
    return mask;
}

Mask resizeMask(const Mask& mask, int width, int height)
{
    if (mask.empty() || width <= 0 || height <= 0)
        throw Error(ErrorCode::InvalidArgument, "resizeMask: an empty mask or target size");
    if (mask.width == width && mask.height == height) return mask;
    // Rows first (mask.height lines of mask.width -> width), then columns.
    std::vector<float> rows(static_cast<std::size_t>(width) * mask.height);
    resizeRows(mask.values.data(), rows.data(), axisWeights(mask.width, width), mask.height, mask.width);
    Mask out;
    out.width = width;
    out.height = height;
    out.values.resize(static_cast<std::size_t>(width) * height);
    resizeColumns(rows.data(), out.values.data(), axisWeights(mask.height, height), width);
    return out;
}

void featherMask(Mask& mask, const float* guide, WorkingSpace space, int radius, int threads)
{
    if (radius < 0) throw Error(ErrorCode::InvalidArgument, "mask feather radius must be >= 0 (got " +
                                                                std::to_string(radius) + ")");
    if (radius == 0 || mask.empty()) return;
    // kMaskFeatherEps is in (guide / range)^2 units: the same filter on the guide as
    // it is, with eps x range^2 (no normalised copy of a 12 MP guide).
    const double range = nominalRange(space);
    // The fast filter (models on block means of radius / 4 pixels) from a radius of
    // 8: its interpolated coefficients still vanish exactly where the mask is uniform.
    const int subsample = radius >= 8 ? radius / 4 : 1;
    colorGuidedFilter(guide, mask.values.data(), mask.width, mask.height, 1, radius, kMaskFeatherEps * range * range,
                      subsample, resolveThreadCount(threads));
    // Rounding in the filter's sums may leave 1 - 1e-7 inside a white area: within
    // 1e-5 of 0 or 1 counts as 0 or 1.
    for (float& v : mask.values) v = v < 1e-5f ? 0.0f : v > 1.0f - 1e-5f ? 1.0f : v;
}

void blendMasked(const Image& source, const Mask& mask, Image& recolored, int threads)
{
    validateImage(source, "source image");
    validateImage(recolored, "recolored image");
    if (mask.width != source.width || mask.height != source.height || recolored.width != source.width ||
        recolored.height != source.height || recolored.depth != source.depth ||
        (source.channels != 1 && recolored.channels != source.channels) || recolored.channels < 3)
        throw Error(ErrorCode::InvalidArgument, "blendMasked: the mask, source and result shapes do not match");
    // One region's composite, written over the result in place (compositeSamples reads
    // a pixel's result before it writes it): the source where the mask is 0, the
    // result where it is 1, the blend between.
    const int t = resolveThreadCount(threads);
    if (source.depth == 16)
        compositeSamples(source.samples16(), source.channels, {mask.values.data()},
                         std::vector<const std::uint16_t*>{recolored.samples16()}, recolored.samples16(),
                         recolored.channels, source.pixelCount(), t);
    else
        compositeSamples(source.samples8(), source.channels, {mask.values.data()},
                         std::vector<const std::uint8_t*>{recolored.samples8()}, recolored.samples8(),
                         recolored.channels, source.pixelCount(), t);
}

Image compositeRegions(const Image& source, const std::vector<const Mask*>& masks, const std::vector<const Image*>& results,
                       int threads)
{
    validateImage(source, "source image");
    if (masks.empty() || masks.size() != results.size())
        throw Error(ErrorCode::InvalidArgument, "compositeRegions: one result per mask, at least one");
    const Image& shape = *results.front();
    for (std::size_t r = 0; r < masks.size(); ++r) {
        const Image& result = *results[r];
        const Mask& mask = *masks[r];
        if (mask.width != source.width || mask.height != source.height || result.width != source.width ||
            result.height != source.height || result.depth != source.depth || result.channels != shape.channels ||
            (source.channels != 1 && result.channels != source.channels) || result.channels < 3 ||
            result.data.size() != result.byteSize())
            throw Error(ErrorCode::InvalidArgument, "compositeRegions: the masks, source and results shapes do not match");
    }
    std::vector<const float*> weights;
    for (const Mask* mask : masks) weights.push_back(mask->values.data());
    Image out = Image::allocate(source.width, source.height, shape.channels, source.depth);
    const int t = resolveThreadCount(threads);
    if (source.depth == 16) {
        std::vector<const std::uint16_t*> samples;
        for (const Image* result : results) samples.push_back(result->samples16());
        compositeSamples(source.samples16(), source.channels, weights, samples, out.samples16(), out.channels,
                         source.pixelCount(), t);
    } else {
        std::vector<const std::uint8_t*> samples;
        for (const Image* result : results) samples.push_back(result->samples8());
        compositeSamples(source.samples8(), source.channels, weights, samples, out.samples8(), out.channels,
                         source.pixelCount(), t);
    }
    return out;
}

}  // namespace uot
