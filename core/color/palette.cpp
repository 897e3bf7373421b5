#include "core/color/palette.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <numeric>
#include <random>
#include <span>
#include <cstring>
#include <string>

#include "core/color/float_buffer.h"
#include "core/transport/kernel_matrix.h"
#include "core/transport/uot_error.h"

namespace uot {

std::string toString(PaletteMethod method) { return method == PaletteMethod::KMeans ? "kmeans" : "histogram"; }

PaletteMethod parsePaletteMethod(const std::string& text)
{
    if (text == "histogram" || text == "hist") return PaletteMethod::Histogram;
    if (text == "kmeans" || text == "k-means") return PaletteMethod::KMeans;
    throw Error(ErrorCode::InvalidArgument, "unknown palette method '" + text + "' (expected histogram or kmeans)");
}

namespace {

struct Cell {
    std::uint32_t index = 0;  // fine-grid cell index (x major, z fastest)
    double count = 0;
    double sum[3] = {0, 0, 0};
};

// The pixels a palette reads: first, first + stride, ... (count of them); a
// regular stride keeps at most settings.sampleLimit of the n pixels, its offset
// chosen by the seed.
struct PixelSample {
    std::size_t first = 0;
    std::size_t stride = 1;
    std::size_t count = 0;
};

PixelSample samplePixels(std::size_t n, const PaletteSettings& s)
{
    PixelSample sample;
    sample.stride = (s.sampleLimit == 0 || n <= s.sampleLimit) ? 1 : (n + s.sampleLimit - 1) / s.sampleLimit;
    sample.first = sample.stride > 1 ? static_cast<std::size_t>(s.seed % sample.stride) : 0;
    sample.count = sample.first < n ? (n - sample.first + sample.stride - 1) / sample.stride : 0;
    return sample;
}

// The non-empty cells of the finest grid over the bounding box of the sampled
// colors: colors holds sample.count colors (interleaved, host memory), the k-th
// being pixel sample.first + k * sample.stride (named in error messages).
// Parallel, with the same result for any thread count: each thread owns a range
// of cells and adds its samples in pixel order. weights (or null: 1 each): the
// k-th colour's mass.
std::vector<Cell> fineCells(const float* colors, const float* weights, const PixelSample& sample, int bins, int threads)
{
    const std::ptrdiff_t count = static_cast<std::ptrdiff_t>(sample.count);
    float lo0 = std::numeric_limits<float>::max(), lo1 = lo0, lo2 = lo0;
    float hi0 = std::numeric_limits<float>::lowest(), hi1 = hi0, hi2 = hi0;
    bool finite = true;
#pragma omp parallel for num_threads(threads) schedule(static) if (count > 65536) \
    reduction(min : lo0, lo1, lo2) reduction(max : hi0, hi1, hi2) reduction(&& : finite)
    for (std::ptrdiff_t k = 0; k < count; ++k) {
        const float* c = colors + 3 * k;
        finite = finite && std::isfinite(c[0]) && std::isfinite(c[1]) && std::isfinite(c[2]);
        lo0 = std::min(lo0, c[0]), lo1 = std::min(lo1, c[1]), lo2 = std::min(lo2, c[2]);
        hi0 = std::max(hi0, c[0]), hi1 = std::max(hi1, c[1]), hi2 = std::max(hi2, c[2]);
    }
    if (!finite) {
        std::size_t k = 0;
        while (k < sample.count && std::isfinite(colors[3 * k]) && std::isfinite(colors[3 * k + 1]) &&
               std::isfinite(colors[3 * k + 2]))
            ++k;
        throw Error(ErrorCode::InvalidArgument,
                    "palette: a color is not finite (pixel " + std::to_string(sample.first + k * sample.stride) + ")");
    }
    const float lo[3] = {lo0, lo1, lo2}, hi[3] = {hi0, hi1, hi2};
    float inv[3];
    for (int a = 0; a < 3; ++a) inv[a] = hi[a] > lo[a] ? static_cast<float>(bins) / (hi[a] - lo[a]) : 0.0f;

    std::vector<std::uint32_t> cellOf(sample.count);
#pragma omp parallel for num_threads(threads) schedule(static) if (count > 65536)
    for (std::ptrdiff_t k = 0; k < count; ++k) {
        const float* c = colors + 3 * k;
        std::uint32_t idx[3];
        for (int a = 0; a < 3; ++a) {
            const int q = static_cast<int>((c[a] - lo[a]) * inv[a]);
            idx[a] = static_cast<std::uint32_t>(std::clamp(q, 0, bins - 1));
        }
        cellOf[static_cast<std::size_t>(k)] = (idx[0] * bins + idx[1]) * bins + idx[2];
    }
    const std::size_t total = static_cast<std::size_t>(bins) * bins * bins;
    std::vector<std::int32_t> slot(total, -1);
    const int parts = count > 65536 ? threads : 1;
    std::vector<std::vector<Cell>> owned(static_cast<std::size_t>(parts));
#pragma omp parallel for num_threads(parts) schedule(static, 1)
    for (int t = 0; t < parts; ++t) {
        const std::uint32_t begin = static_cast<std::uint32_t>(total * static_cast<std::size_t>(t) / parts);
        const std::uint32_t end = static_cast<std::uint32_t>(total * static_cast<std::size_t>(t + 1) / parts);
        std::vector<Cell>& cells = owned[static_cast<std::size_t>(t)];
        for (std::size_t k = 0; k < sample.count; ++k) {
            const std::uint32_t idx = cellOf[k];
            if (idx < begin || idx >= end) continue;
            if (slot[idx] < 0) {
                slot[idx] = static_cast<std::int32_t>(cells.size());
                cells.push_back(Cell{idx, 0, {0, 0, 0}});
            }
            Cell& cell = cells[static_cast<std::size_t>(slot[idx])];
            const float* c = colors + 3 * k;
            if (weights) {
                const double w = weights[k];
                cell.count += w;
                for (int a = 0; a < 3; ++a) cell.sum[a] += w * c[a];
            } else {
                cell.count += 1;
                for (int a = 0; a < 3; ++a) cell.sum[a] += c[a];
            }
        }
        std::vector<Cell> sorted;  // in fine-index order, read off the slot table
        sorted.reserve(cells.size());
        for (std::uint32_t idx = begin; idx < end; ++idx)
            if (slot[idx] >= 0) sorted.push_back(cells[static_cast<std::size_t>(slot[idx])]);
        cells = std::move(sorted);
    }
    std::vector<Cell> cells;
    for (const auto& part : owned) cells.insert(cells.end(), part.begin(), part.end());
    return cells;
}

std::uint32_t coarseIndex(std::uint32_t fine, int bins, int shift)
{
    const std::uint32_t b = static_cast<std::uint32_t>(bins);
    const std::uint32_t z = fine % b, y = (fine / b) % b, x = fine / (b * b);
    const std::uint32_t cb = b >> shift;
    return ((x >> shift) * cb + (y >> shift)) * cb + (z >> shift);
}

// Fine cells merged by their coarse index at `shift`: groups in ascending coarse
// index, the members of each in ascending cell position.
struct CellGroups {
    std::vector<std::uint32_t> members;  // cell positions, group after group
    std::vector<std::uint32_t> start;    // group g is members[start[g], start[g + 1])
    std::size_t size() const { return start.size() - 1; }
    std::span<const std::uint32_t> group(std::size_t g) const
    {
        return {members.data() + start[g], members.data() + start[g + 1]};
    }
};

// `cells` sorted by fine index (as fineCells returns them). A stable counting
// sort by coarse index: O(cells + (bins >> shift)^3).
CellGroups groupCells(const std::vector<Cell>& cells, int bins, int shift)
{
    const std::uint32_t n = static_cast<std::uint32_t>(cells.size());
    CellGroups groups;
    groups.members.resize(n);
    if (shift == 0) {  // fine indices are distinct: every cell is its own group
        groups.start.resize(n + 1);
        std::iota(groups.members.begin(), groups.members.end(), 0u);
        std::iota(groups.start.begin(), groups.start.end(), 0u);
        return groups;
    }
    const std::size_t side = static_cast<std::size_t>(bins >> shift);
    std::vector<std::uint32_t> key(n), next(side * side * side + 1, 0);
    for (std::uint32_t i = 0; i < n; ++i) {
        key[i] = coarseIndex(cells[i].index, bins, shift);
        ++next[key[i] + 1];
    }
    for (std::size_t b = 0; b + 1 < next.size(); ++b) {
        if (next[b + 1] > 0) groups.start.push_back(next[b]);
        next[b + 1] += next[b];
    }
    groups.start.push_back(n);
    for (std::uint32_t i = 0; i < n; ++i) groups.members[next[key[i]]++] = i;
    return groups;
}

void appendGroup(const std::vector<Cell>& cells, std::span<const std::uint32_t> members, Palette& palette)
{
    double count = 0, sum[3] = {0, 0, 0};
    for (std::uint32_t m : members) {
        count += cells[m].count;
        for (int a = 0; a < 3; ++a) sum[a] += cells[m].sum[a];
    }
    for (int a = 0; a < 3; ++a) palette.points.push_back(sum[a] / count);
    palette.weights.push_back(count);
}

Palette histogramPalette(const std::vector<Cell>& cells, int bins, std::size_t size)
{
    int levels = 0;
    while ((bins >> levels) > 1) ++levels;
    // Coarsest-to-finest: find the finest level whose cell count fits.
    int shift = 0;
    CellGroups groups = groupCells(cells, bins, 0);
    while (groups.size() > size && shift < levels) {
        ++shift;
        groups = groupCells(cells, bins, shift);
    }
    Palette palette;
    if (shift == 0) {  // everything fits at the finest level (the coarsest level, one cell, always fits)
        for (std::size_t g = 0; g < groups.size(); ++g) appendGroup(cells, groups.group(g), palette);
        return palette;
    }
    // Split the heaviest coarse cells into their (up to 8) children one level
    // down while it fits. A child's rank among its siblings, (x, y, z) bits of
    // the finer level, orders them as their coarse indices would.
    std::vector<std::pair<double, std::size_t>> order(groups.size());
    for (std::size_t g = 0; g < groups.size(); ++g) {
        double w = 0;
        for (std::uint32_t m : groups.group(g)) w += cells[m].count;
        order[g] = {-w, g};
    }
    std::sort(order.begin(), order.end());
    const std::uint32_t b = static_cast<std::uint32_t>(bins), bit = static_cast<std::uint32_t>(shift - 1);
    const auto childOf = [&](std::uint32_t m) {
        const std::uint32_t fine = cells[m].index;
        const std::uint32_t z = fine % b, y = (fine / b) % b, x = fine / (b * b);
        return (((x >> bit) & 1u) << 2) | (((y >> bit) & 1u) << 1) | ((z >> bit) & 1u);
    };
    std::size_t count = groups.size();
    std::vector<char> split(groups.size(), 0);
    std::vector<std::uint32_t> byChild;  // the split groups' members, child after child
    std::vector<std::array<std::uint32_t, 9>> childStart(groups.size());
    std::vector<std::size_t> childBase(groups.size(), 0);
    for (const auto& [negWeight, g] : order) {
        const auto members = groups.group(g);
        std::array<std::uint32_t, 9> start{};
        for (std::uint32_t m : members) ++start[childOf(m) + 1];
        std::size_t children = 0;
        for (int c = 0; c < 8; ++c) children += start[c + 1] > 0;
        if (count + children - 1 > size) continue;
        count += children - 1;
        split[g] = 1;
        for (int c = 0; c < 8; ++c) start[c + 1] += start[c];
        childStart[g] = start;
        childBase[g] = byChild.size();
        byChild.resize(byChild.size() + members.size());
        std::array<std::uint32_t, 9> next = start;
        for (std::uint32_t m : members) byChild[childBase[g] + next[childOf(m)]++] = m;
    }
    for (std::size_t g = 0; g < groups.size(); ++g) {
        if (!split[g]) {
            appendGroup(cells, groups.group(g), palette);
            continue;
        }
        for (int c = 0; c < 8; ++c)
            if (childStart[g][c + 1] > childStart[g][c])
                appendGroup(cells,
                            {byChild.data() + childBase[g] + childStart[g][c], byChild.data() + childBase[g] + childStart[g][c + 1]},
                            palette);
    }
    return palette;
}

Palette kmeansPalette(const std::vector<Cell>& cells, std::size_t size, const PaletteSettings& s, int threads)
{
    const std::size_t n = cells.size();
    std::vector<double> x(3 * n), w(n);
    for (std::size_t i = 0; i < n; ++i) {
        w[i] = cells[i].count;
        for (int a = 0; a < 3; ++a) x[3 * i + a] = cells[i].sum[a] / cells[i].count;
    }
    Palette palette;
    if (n <= size) {
        palette.points = x;
        palette.weights = w;
        return palette;
    }
    // k-means++ seeding (weighted), deterministic for the seed.
    std::mt19937_64 rng(s.seed);
    std::vector<double> centers;
    centers.reserve(3 * size);
    std::vector<double> d2(n, std::numeric_limits<double>::max());
    std::discrete_distribution<std::size_t> first(w.begin(), w.end());
    std::size_t pick = first(rng);
    const auto dist2 = [&](std::size_t i, const double* c) {
        const double* p = &x[3 * i];
        return (p[0] - c[0]) * (p[0] - c[0]) + (p[1] - c[1]) * (p[1] - c[1]) + (p[2] - c[2]) * (p[2] - c[2]);
    };
    for (std::size_t k = 0; k < size; ++k) {
        centers.insert(centers.end(), &x[3 * pick], &x[3 * pick] + 3);
        const double* c = &centers[3 * k];
        double total = 0;
        for (std::size_t i = 0; i < n; ++i) {
            d2[i] = std::min(d2[i], dist2(i, c));
            total += w[i] * d2[i];
        }
        if (total <= 0) break;
        std::uniform_real_distribution<double> u(0.0, total);
        double r = u(rng), acc = 0;
        pick = n - 1;
        for (std::size_t i = 0; i < n; ++i) {
            acc += w[i] * d2[i];
            if (acc >= r) {
                pick = i;
                break;
            }
        }
    }
    const std::size_t k = centers.size() / 3;
    std::vector<std::size_t> label(n, 0);
    for (int it = 0; it < s.kmeansIterations; ++it) {
        const std::ptrdiff_t count = static_cast<std::ptrdiff_t>(n);
#pragma omp parallel for num_threads(threads) schedule(static)
        for (std::ptrdiff_t i = 0; i < count; ++i) {
            double best = std::numeric_limits<double>::max();
            std::size_t bestK = 0;
            for (std::size_t c = 0; c < k; ++c) {
                const double d = dist2(static_cast<std::size_t>(i), &centers[3 * c]);
                if (d < best) best = d, bestK = c;
            }
            label[static_cast<std::size_t>(i)] = bestK;
        }
        std::vector<double> sum(3 * k, 0.0), weight(k, 0.0);
        for (std::size_t i = 0; i < n; ++i) {
            weight[label[i]] += w[i];
            for (int a = 0; a < 3; ++a) sum[3 * label[i] + a] += w[i] * x[3 * i + a];
        }
        for (std::size_t c = 0; c < k; ++c)
            if (weight[c] > 0)
                for (int a = 0; a < 3; ++a) centers[3 * c + a] = sum[3 * c + a] / weight[c];
    }
    std::vector<double> weight(k, 0.0), sum(3 * k, 0.0);
    for (std::size_t i = 0; i < n; ++i) {
        weight[label[i]] += w[i];
        for (int a = 0; a < 3; ++a) sum[3 * label[i] + a] += w[i] * x[3 * i + a];
    }
    for (std::size_t c = 0; c < k; ++c) {
        if (weight[c] <= 0) continue;
        for (int a = 0; a < 3; ++a) palette.points.push_back(sum[3 * c + a] / weight[c]);
        palette.weights.push_back(weight[c]);
    }
    return palette;
}

}  // namespace

namespace {

void checkPaletteSettings(const PaletteSettings& settings)
{
    if (settings.size < 1 || settings.size > kMaxPaletteSize)
        throw Error(ErrorCode::InvalidArgument, "palette size must be between 1 and " +
                                                    std::to_string(kMaxPaletteSize) + " (got " +
                                                    std::to_string(settings.size) + ")");
    const int bins = settings.finestBins;
    if (bins < 8 || bins > 256 || (bins & (bins - 1)) != 0)
        throw Error(ErrorCode::InvalidArgument,
                    "palette bins must be a power of two between 8 and 256 (got " + std::to_string(bins) + ")");
    if (settings.kmeansIterations < 0 || settings.kmeansIterations > 1000)
        throw Error(ErrorCode::InvalidArgument, "k-means iterations must be between 0 and 1000");
}

// The palette of the sampled colors (see fineCells for `colors`, `weights` and `sample`).
Palette paletteOfSample(const float* colors, const PixelSample& sample, WorkingSpace space,
                        const PaletteSettings& settings, int threads, const float* weights = nullptr)
{
    const int t = resolveThreadCount(threads);
    const std::vector<Cell> cells = fineCells(colors, weights, sample, settings.finestBins, t);
    const std::size_t size = static_cast<std::size_t>(settings.size);
    Palette palette = settings.method == PaletteMethod::KMeans ? kmeansPalette(cells, size, settings, t)
                                                               : histogramPalette(cells, settings.finestBins, size);
    palette.space = space;
    // The per-channel distributions (the residual match's target) from at most about
    // 2^18 of the sampled colours, evenly strided: a 12 MP source would otherwise
    // spend 50 ms on them.
    const std::size_t stride = std::max<std::size_t>(1, sample.count / 262144);
    palette.marginals = channelQuantiles(colors, sample.count, stride, 257, 4096, weights);
    const double total = std::accumulate(palette.weights.begin(), palette.weights.end(), 0.0);
    for (double& w : palette.weights) w /= total;
    return palette;
}

}  // namespace

Palette buildPalette(const float* colors, std::size_t n, WorkingSpace space, const PaletteSettings& settings, int threads)
{
    if (n == 0 || colors == nullptr) throw Error(ErrorCode::InvalidArgument, "palette: the image has no pixels");
    checkPaletteSettings(settings);
    const PixelSample sample = samplePixels(n, settings);
    if (sample.stride == 1) return paletteOfSample(colors, sample, space, settings, threads);
    FloatBuffer sampled(sample.count * 3);
    const std::ptrdiff_t count = static_cast<std::ptrdiff_t>(sample.count);
#pragma omp parallel for num_threads(resolveThreadCount(threads)) schedule(static)
    for (std::ptrdiff_t k = 0; k < count; ++k)
        std::memcpy(sampled.data() + 3 * k, colors + 3 * (sample.first + static_cast<std::size_t>(k) * sample.stride),
                    3 * sizeof(float));
    return paletteOfSample(sampled.data(), sample, space, settings, threads);
}

Palette buildImagePalette(const Image& image, WorkingSpace space, const PaletteSettings& settings, int threads)
{
    validateImage(image, "image");
    if (image.pixelCount() == 0) throw Error(ErrorCode::InvalidArgument, "palette: the image has no pixels");
    checkPaletteSettings(settings);
    const PixelSample sample = samplePixels(image.pixelCount(), settings);
    FloatBuffer sampled(sample.count * 3);
    imagePixelsToSpace(image, space, sample.first, sample.stride, sample.count, sampled.data(), threads);
    return paletteOfSample(sampled.data(), sample, space, settings, threads);
}

namespace {

// The positions of the positive weights among n (throws when a weight is negative
// or not finite, or none is positive).
std::vector<std::size_t> positiveWeights(const float* weights, std::size_t n)
{
    std::vector<std::size_t> kept;
    for (std::size_t i = 0; i < n; ++i) {
        const float w = weights[i];
        if (!(w >= 0.0f) || !std::isfinite(w))
            throw Error(ErrorCode::InvalidArgument, "palette: weight " + std::to_string(i) + " is negative or not finite");
        if (w > 0.0f) kept.push_back(i);
    }
    if (kept.empty()) throw Error(ErrorCode::InvalidArgument, "palette: every weight is zero (an empty mask?)");
    return kept;
}

// The pixels `sample` picks among `positions` (of `image`), in order, as one row.
Image gatherPixels(const Image& image, const std::vector<std::size_t>& positions, const PixelSample& sample)
{
    Image row = Image::allocate(static_cast<int>(sample.count), 1, image.channels, image.depth);
    const std::size_t bytes = static_cast<std::size_t>(image.channels) * image.bytesPerSample();
    for (std::size_t k = 0; k < sample.count; ++k)
        std::memcpy(row.data.data() + k * bytes, image.data.data() + positions[sample.first + k * sample.stride] * bytes,
                    bytes);
    return row;
}

}  // namespace

Palette buildWeightedPalette(const float* colors, const float* weights, std::size_t n, WorkingSpace space,
                             const PaletteSettings& settings, int threads)
{
    if (n == 0 || colors == nullptr || weights == nullptr)
        throw Error(ErrorCode::InvalidArgument, "palette: the image has no pixels");
    checkPaletteSettings(settings);
    const std::vector<std::size_t> kept = positiveWeights(weights, n);
    const PixelSample sample = samplePixels(kept.size(), settings);
    FloatBuffer sampled(sample.count * 3);
    std::vector<float> sampledWeights(sample.count);
    for (std::size_t k = 0; k < sample.count; ++k) {
        const std::size_t i = kept[sample.first + k * sample.stride];
        std::memcpy(sampled.data() + 3 * k, colors + 3 * i, 3 * sizeof(float));
        sampledWeights[k] = weights[i];
    }
    return paletteOfSample(sampled.data(), sample, space, settings, threads, sampledWeights.data());
}

Palette buildWeightedImagePalette(const Image& image, const float* weights, WorkingSpace space,
                                  const PaletteSettings& settings, int threads)
{
    validateImage(image, "image");
    if (image.pixelCount() == 0 || weights == nullptr)
        throw Error(ErrorCode::InvalidArgument, "palette: the image has no pixels");
    checkPaletteSettings(settings);
    const std::vector<std::size_t> kept = positiveWeights(weights, image.pixelCount());
    const PixelSample sample = samplePixels(kept.size(), settings);
    const Image row = gatherPixels(image, kept, sample);
    FloatBuffer sampled(sample.count * 3);
    imageToSpace(row, space, sampled.data(), threads);
    std::vector<float> sampledWeights(sample.count);
    for (std::size_t k = 0; k < sample.count; ++k) sampledWeights[k] = weights[kept[sample.first + k * sample.stride]];
    return paletteOfSample(sampled.data(), sample, space, settings, threads, sampledWeights.data());
}

Palette buildPooledPalette(const std::vector<const Image*>& images, const std::vector<double>& imageWeights,
                           WorkingSpace space, const PaletteSettings& settings, int threads)
{
    if (images.empty()) throw Error(ErrorCode::InvalidArgument, "palette: no reference image");
    if (!imageWeights.empty() && imageWeights.size() != images.size())
        throw Error(ErrorCode::InvalidArgument, "palette: " + std::to_string(imageWeights.size()) + " weights for " +
                                                    std::to_string(images.size()) + " images");
    checkPaletteSettings(settings);
    double total = 0;
    for (std::size_t i = 0; i < images.size(); ++i) {
        const double w = imageWeights.empty() ? 1.0 : imageWeights[i];
        if (!(w > 0) || !std::isfinite(w))
            throw Error(ErrorCode::InvalidArgument, "palette: image weight " + std::to_string(i + 1) +
                                                        " must be a finite number > 0");
        total += w;
    }
    // Each image is read with its share of the sample limit; its pixels share its weight.
    PaletteSettings each = settings;
    if (settings.sampleLimit > 0) each.sampleLimit = std::max<std::size_t>(1, settings.sampleLimit / images.size());
    std::vector<PixelSample> samples;
    std::size_t count = 0;
    for (const Image* image : images) {
        validateImage(*image, "reference image");
        if (image->pixelCount() == 0) throw Error(ErrorCode::InvalidArgument, "palette: a reference image has no pixels");
        samples.push_back(samplePixels(image->pixelCount(), each));
        count += samples.back().count;
    }
    FloatBuffer pooled(count * 3);
    std::vector<float> weights(count);
    std::size_t at = 0;
    for (std::size_t i = 0; i < images.size(); ++i) {
        const PixelSample& s = samples[i];
        imagePixelsToSpace(*images[i], space, s.first, s.stride, s.count, pooled.data() + 3 * at, threads);
        const double w = (imageWeights.empty() ? 1.0 : imageWeights[i]) / total / static_cast<double>(s.count);
        std::fill(weights.begin() + static_cast<std::ptrdiff_t>(at), weights.begin() + static_cast<std::ptrdiff_t>(at + s.count),
                  static_cast<float>(w));
        at += s.count;
    }
    PixelSample all;
    all.count = count;
    return paletteOfSample(pooled.data(), all, space, settings, threads, weights.data());
}

}  // namespace uot
