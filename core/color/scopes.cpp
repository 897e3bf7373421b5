#include "core/color/scopes.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "core/transport/kernel_matrix.h"
#include "core/transport/uot_error.h"

#include <omp.h>

namespace uot {

namespace {

// Counts of one thread: waveform, parade R, G, B (columns x levels each), vectorscope.
struct ScopeCounts {
    std::vector<std::uint32_t> waveform, vectorscope;
    std::array<std::vector<std::uint32_t>, 3> parade;
};

// round(v (bins - 1)) clamped to the bins (v >= 0 rounds half up, as std::lround).
int bin(double v, int bins) { return std::clamp(static_cast<int>(v * (bins - 1) + 0.5), 0, bins - 1); }

template <typename T>
void countRows(const Image& image, const ScopeSettings& s, int step, ScopeCounts& c, int rowBegin, int rowEnd)
{
    const double top = image.depth == 16 ? 65535.0 : 255.0;
    const T* samples = reinterpret_cast<const T*>(image.data.data());
    const int ch = image.channels, L = s.levels, V = s.vectorscopeSize;
    std::vector<int> columnOf((static_cast<std::size_t>(image.width) + step - 1) / step);
    for (std::size_t k = 0; k < columnOf.size(); ++k)
        columnOf[k] = static_cast<int>(static_cast<long long>(k) * step * s.columns / image.width);
    for (int y = rowBegin; y < rowEnd; y += step) {
        const T* row = samples + static_cast<std::size_t>(y) * image.width * ch;
        for (int x = 0; x < image.width; x += step) {
            const T* p = row + static_cast<std::size_t>(x) * ch;
            const double r = p[0] / top, g = p[ch >= 3 ? 1 : 0] / top, b = p[ch >= 3 ? 2 : 0] / top;
            const double luma = 0.2126 * r + 0.7152 * g + 0.0722 * b;
            const int column = columnOf[static_cast<std::size_t>(x / step)];
            const auto cell = [&](double v) {
                return static_cast<std::size_t>(L - 1 - bin(v, L)) * s.columns + column;
            };
            ++c.waveform[cell(luma)];
            ++c.parade[0][cell(r)];
            ++c.parade[1][cell(g)];
            ++c.parade[2][cell(b)];
            // B' - Y' and R' - Y' as differences of the channels: exactly 0 for a neutral.
            const double cb = (0.2126 * (b - r) + 0.7152 * (b - g)) / 1.8556;
            const double cr = (0.7152 * (r - g) + 0.0722 * (r - b)) / 1.5748;
            ++c.vectorscope[static_cast<std::size_t>(V - 1 - bin(cr + 0.5, V)) * V + bin(cb + 0.5, V)];
        }
    }
}

ScopePlot toPlot(const std::vector<std::uint32_t>& counts, int width, int height)
{
    ScopePlot plot;
    plot.width = width;
    plot.height = height;
    plot.counts.assign(counts.begin(), counts.end());
    return plot;
}

}  // namespace

Scopes computeScopes(const Image& image, const ScopeSettings& s)
{
    validateImage(image, "image");
    if (s.columns < 1 || s.levels < 2 || s.vectorscopeSize < 2)
        throw Error(ErrorCode::InvalidArgument, "scopes: columns must be >= 1, levels and vectorscope size >= 2");
    const std::size_t n = image.pixelCount();
    int step = 1;
    if (s.sampleLimit > 0 && n > s.sampleLimit)
        step = static_cast<int>(std::ceil(std::sqrt(static_cast<double>(n) / static_cast<double>(s.sampleLimit))));
    const std::size_t plotSize = static_cast<std::size_t>(s.columns) * s.levels;
    const std::size_t vsSize = static_cast<std::size_t>(s.vectorscopeSize) * s.vectorscopeSize;
    const int rows = (image.height + step - 1) / step;  // rows read
    const int threads = std::max(1, std::min(resolveThreadCount(s.threads), rows));
    std::vector<ScopeCounts> parts(static_cast<std::size_t>(threads));
#pragma omp parallel num_threads(threads)
    {
        const int t = omp_get_thread_num(), count = omp_get_num_threads();
        ScopeCounts& c = parts[static_cast<std::size_t>(t)];
        c.waveform.assign(plotSize, 0);
        for (auto& p : c.parade) p.assign(plotSize, 0);
        c.vectorscope.assign(vsSize, 0);
        // Thread t reads the rows read t * rows / count .. (t + 1) * rows / count - 1.
        const int begin = static_cast<int>(static_cast<long long>(rows) * t / count) * step;
        const int end = std::min(image.height, static_cast<int>(static_cast<long long>(rows) * (t + 1) / count) * step);
        if (image.depth == 16)
            countRows<std::uint16_t>(image, s, step, c, begin, end);
        else
            countRows<std::uint8_t>(image, s, step, c, begin, end);
    }
    for (std::size_t t = 1; t < parts.size(); ++t) {
        const auto add = [](std::vector<std::uint32_t>& into, const std::vector<std::uint32_t>& from) {
            for (std::size_t i = 0; i < into.size(); ++i) into[i] += from[i];
        };
        add(parts[0].waveform, parts[t].waveform);
        for (int k = 0; k < 3; ++k) add(parts[0].parade[k], parts[t].parade[k]);
        add(parts[0].vectorscope, parts[t].vectorscope);
    }
    Scopes out;
    out.waveform = toPlot(parts[0].waveform, s.columns, s.levels);
    for (int k = 0; k < 3; ++k) out.parade[k] = toPlot(parts[0].parade[k], s.columns, s.levels);
    out.vectorscope = toPlot(parts[0].vectorscope, s.vectorscopeSize, s.vectorscopeSize);
    out.step = step;
    out.samples = static_cast<std::size_t>(rows) * static_cast<std::size_t>((image.width + step - 1) / step);
    return out;
}

std::vector<std::uint8_t> scopeToGray8(const ScopePlot& plot)
{
    std::vector<std::uint8_t> gray(plot.counts.size(), 0);
    const float largest = plot.counts.empty() ? 0.0f : *std::max_element(plot.counts.begin(), plot.counts.end());
    if (largest <= 0) return gray;
    for (std::size_t i = 0; i < gray.size(); ++i)
        gray[i] = static_cast<std::uint8_t>(std::lround(255.0 * std::sqrt(plot.counts[i] / static_cast<double>(largest))));
    return gray;
}

}  // namespace uot
