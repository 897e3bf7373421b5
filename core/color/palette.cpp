#include "core/color/palette.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <random>
#include <string>

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

// The non-empty cells of the finest grid over the colors' bounding box.
std::vector<Cell> fineCells(const float* colors, std::size_t n, const PaletteSettings& s, int bins, int threads)
{
    const std::size_t stride = (s.sampleLimit == 0 || n <= s.sampleLimit) ? 1 : (n + s.sampleLimit - 1) / s.sampleLimit;
    const std::size_t offset = stride > 1 ? static_cast<std::size_t>(s.seed % stride) : 0;
    const std::size_t samples = offset < n ? (n - offset + stride - 1) / stride : 0;

    float lo[3] = {std::numeric_limits<float>::max(), std::numeric_limits<float>::max(), std::numeric_limits<float>::max()};
    float hi[3] = {std::numeric_limits<float>::lowest(), std::numeric_limits<float>::lowest(),
                   std::numeric_limits<float>::lowest()};
    for (std::size_t k = 0; k < samples; ++k) {
        const float* c = colors + 3 * (offset + k * stride);
        for (int a = 0; a < 3; ++a) {
            if (!std::isfinite(c[a]))
                throw Error(ErrorCode::InvalidArgument, "palette: a color is not finite (pixel " +
                                                            std::to_string(offset + k * stride) + ")");
            lo[a] = std::min(lo[a], c[a]);
            hi[a] = std::max(hi[a], c[a]);
        }
    }
    float inv[3];
    for (int a = 0; a < 3; ++a) inv[a] = hi[a] > lo[a] ? static_cast<float>(bins) / (hi[a] - lo[a]) : 0.0f;

    std::vector<std::uint32_t> cellOf(samples);
    const std::ptrdiff_t count = static_cast<std::ptrdiff_t>(samples);
#pragma omp parallel for num_threads(threads) schedule(static) if (count > 65536)
    for (std::ptrdiff_t k = 0; k < count; ++k) {
        const float* c = colors + 3 * (offset + static_cast<std::size_t>(k) * stride);
        std::uint32_t idx[3];
        for (int a = 0; a < 3; ++a) {
            const int q = static_cast<int>((c[a] - lo[a]) * inv[a]);
            idx[a] = static_cast<std::uint32_t>(std::clamp(q, 0, bins - 1));
        }
        cellOf[static_cast<std::size_t>(k)] = (idx[0] * bins + idx[1]) * bins + idx[2];
    }
    const std::size_t total = static_cast<std::size_t>(bins) * bins * bins;
    std::vector<std::int32_t> slot(total, -1);
    std::vector<Cell> cells;
    for (std::size_t k = 0; k < samples; ++k) {
        const std::uint32_t idx = cellOf[k];
        if (slot[idx] < 0) {
            slot[idx] = static_cast<std::int32_t>(cells.size());
            cells.push_back(Cell{idx, 0, {0, 0, 0}});
        }
        Cell& cell = cells[static_cast<std::size_t>(slot[idx])];
        const float* c = colors + 3 * (offset + k * stride);
        cell.count += 1;
        for (int a = 0; a < 3; ++a) cell.sum[a] += c[a];
    }
    std::sort(cells.begin(), cells.end(), [](const Cell& x, const Cell& y) { return x.index < y.index; });
    return cells;
}

std::uint32_t coarseIndex(std::uint32_t fine, int bins, int shift)
{
    const std::uint32_t b = static_cast<std::uint32_t>(bins);
    const std::uint32_t z = fine % b, y = (fine / b) % b, x = fine / (b * b);
    const std::uint32_t cb = b >> shift;
    return ((x >> shift) * cb + (y >> shift)) * cb + (z >> shift);
}

// Merges fine cells by their coarse index at `shift`; returns groups (lists of fine-cell positions).
std::vector<std::vector<std::size_t>> groupCells(const std::vector<Cell>& cells, int bins, int shift)
{
    std::vector<std::pair<std::uint32_t, std::size_t>> keyed(cells.size());
    for (std::size_t i = 0; i < cells.size(); ++i) keyed[i] = {coarseIndex(cells[i].index, bins, shift), i};
    std::sort(keyed.begin(), keyed.end());
    std::vector<std::vector<std::size_t>> groups;
    for (std::size_t i = 0; i < keyed.size(); ++i) {
        if (i == 0 || keyed[i].first != keyed[i - 1].first) groups.emplace_back();
        groups.back().push_back(keyed[i].second);
    }
    return groups;
}

void appendGroup(const std::vector<Cell>& cells, const std::vector<std::size_t>& members, Palette& palette)
{
    double count = 0, sum[3] = {0, 0, 0};
    for (std::size_t m : members) {
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
    std::vector<std::vector<std::size_t>> groups = groupCells(cells, bins, 0);
    while (groups.size() > size && shift < levels) {
        ++shift;
        groups = groupCells(cells, bins, shift);
    }
    Palette palette;
    if (shift == 0) {  // everything fits at the finest level (the coarsest level, one cell, always fits)
        for (const auto& g : groups) appendGroup(cells, g, palette);
        return palette;
    }
    // Split the heaviest coarse cells into their children one level down while it fits.
    std::vector<std::pair<double, std::size_t>> order(groups.size());
    for (std::size_t g = 0; g < groups.size(); ++g) {
        double w = 0;
        for (std::size_t m : groups[g]) w += cells[m].count;
        order[g] = {-w, g};
    }
    std::sort(order.begin(), order.end());
    std::size_t count = groups.size();
    std::vector<char> split(groups.size(), 0);
    std::vector<std::vector<std::vector<std::size_t>>> children(groups.size());
    for (const auto& [negWeight, g] : order) {
        std::vector<std::pair<std::uint32_t, std::size_t>> keyed;
        for (std::size_t m : groups[g]) keyed.emplace_back(coarseIndex(cells[m].index, bins, shift - 1), m);
        std::sort(keyed.begin(), keyed.end());
        std::vector<std::vector<std::size_t>> sub;
        for (std::size_t i = 0; i < keyed.size(); ++i) {
            if (i == 0 || keyed[i].first != keyed[i - 1].first) sub.emplace_back();
            sub.back().push_back(keyed[i].second);
        }
        if (count + sub.size() - 1 > size) continue;
        count += sub.size() - 1;
        split[g] = 1;
        children[g] = std::move(sub);
    }
    for (std::size_t g = 0; g < groups.size(); ++g) {
        if (split[g])
            for (const auto& c : children[g]) appendGroup(cells, c, palette);
        else
            appendGroup(cells, groups[g], palette);
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

Palette buildPalette(const float* colors, std::size_t n, WorkingSpace space, const PaletteSettings& settings, int threads)
{
    if (n == 0 || colors == nullptr) throw Error(ErrorCode::InvalidArgument, "palette: the image has no pixels");
    if (settings.size < 1 || settings.size > 65536)
        throw Error(ErrorCode::InvalidArgument,
                    "palette size must be between 1 and 65536 (got " + std::to_string(settings.size) + ")");
    const int bins = settings.finestBins;
    if (bins < 8 || bins > 256 || (bins & (bins - 1)) != 0)
        throw Error(ErrorCode::InvalidArgument,
                    "palette bins must be a power of two between 8 and 256 (got " + std::to_string(bins) + ")");
    if (settings.kmeansIterations < 0 || settings.kmeansIterations > 1000)
        throw Error(ErrorCode::InvalidArgument, "k-means iterations must be between 0 and 1000");
    const int t = resolveThreadCount(threads);
    const std::vector<Cell> cells = fineCells(colors, n, settings, bins, t);
    const std::size_t size = static_cast<std::size_t>(settings.size);
    Palette palette = settings.method == PaletteMethod::KMeans ? kmeansPalette(cells, size, settings, t)
                                                               : histogramPalette(cells, bins, size);
    palette.space = space;
    const double total = std::accumulate(palette.weights.begin(), palette.weights.end(), 0.0);
    for (double& w : palette.weights) w /= total;
    return palette;
}

}  // namespace uot
