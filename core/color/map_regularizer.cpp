#include "core/color/map_regularizer.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <limits>

#include "core/color/color_map_inline.h"
#include "core/color/color_space.h"
#include "core/color/lightness_spans.h"
#include "core/transport/kernel_matrix.h"

namespace uot {

std::vector<double> isotonicFit(const std::vector<double>& y, const std::vector<double>& w, double minStep, double maxStep)
{
    const std::size_t n = y.size();
    std::vector<double> out(n, 0.0);
    // Pool adjacent violators on z_k = y_k - minStep k (non-decreasing z <=> steps >= minStep).
    struct Block {
        double value, weight;
        std::size_t first, last;
    };
    std::vector<Block> blocks;
    for (std::size_t k = 0; k < n; ++k) {
        if (!(w[k] > 0)) continue;
        blocks.push_back({y[k] - minStep * static_cast<double>(k), w[k], k, k});
        while (blocks.size() > 1 && blocks[blocks.size() - 2].value > blocks.back().value) {
            Block b = blocks.back();
            blocks.pop_back();
            Block& a = blocks.back();
            a.value = (a.value * a.weight + b.value * b.weight) / (a.weight + b.weight);
            a.weight += b.weight;
            a.last = b.last;
        }
    }
    if (blocks.empty()) return y;
    // Weighted points carry their block's value; the free ones between them are
    // interpolated, the ones outside continue at the smallest step.
    std::vector<std::size_t> known;
    for (const Block& b : blocks)
        for (std::size_t k = b.first; k <= b.last; ++k)
            if (w[k] > 0) {
                out[k] = b.value + minStep * static_cast<double>(k);
                known.push_back(k);
            }
    for (std::size_t i = 0; i + 1 < known.size(); ++i)
        for (std::size_t k = known[i] + 1; k < known[i + 1]; ++k) {
            const double f = static_cast<double>(k - known[i]) / static_cast<double>(known[i + 1] - known[i]);
            out[k] = out[known[i]] + f * (out[known[i + 1]] - out[known[i]]);
        }
    for (std::size_t k = 0; k < known.front(); ++k)
        out[k] = out[known.front()] - minStep * static_cast<double>(known.front() - k);
    for (std::size_t k = known.back() + 1; k < n; ++k) out[k] = out[known.back()] + minStep * static_cast<double>(k - known.back());
    // The steepest steps: clamped walking out from the heaviest point (kept).
    const std::size_t anchor = static_cast<std::size_t>(std::max_element(w.begin(), w.end()) - w.begin());
    for (std::size_t k = anchor; k + 1 < n; ++k) out[k + 1] = std::clamp(out[k + 1], out[k] + minStep, out[k] + maxStep);
    for (std::size_t k = anchor; k > 0; --k) out[k - 1] = std::clamp(out[k - 1], out[k] - maxStep, out[k] - minStep);
    return out;
}

double latticeSlope(const DisplacementLut& lut, const std::vector<unsigned char>& marked, int channel, int axis)
{
    const std::size_t s = static_cast<std::size_t>(lut.size);
    const std::size_t stride = axis == 0 ? s * s : (axis == 1 ? s : 1);
    double worst = 0;
    for (std::size_t node = 0; node < s * s * s; ++node) {
        const std::size_t i = axis == 0 ? node / (s * s) : (axis == 1 ? (node / s) % s : node % s);
        if (i + 1 >= s || !marked[node] || !marked[node + stride]) continue;
        worst = std::max(worst, std::abs(static_cast<double>(lut.values[3 * (node + stride) + channel]) -
                                         lut.values[3 * node + channel]) / lut.step[axis]);
    }
    return worst;
}

namespace {

// The lattice's lightness displacement replaced by g(L) - L, g the weighted isotonic
// fit (slopes in [minSlope, maxSlope]) of L + dL over the colours present, each
// colour's displacement spread over its two nearest L slices: one monotone curve of
// the source lightness, whatever the chroma.
void monotoneLightness(DisplacementLut& lut, const MapBounds& bounds, const float* colors, std::size_t n,
                       const std::vector<unsigned char>& mark)
{
    const int s = lut.size;
    const std::size_t ss = static_cast<std::size_t>(s);
    std::vector<double> sum(ss, 0.0), weight(ss, 0.0);
    const std::size_t stride = std::max<std::size_t>(1, n / (1u << 20));
    for (std::size_t p = 0; p < n; p += stride) {
        const float* c = colors + 3 * p;
        float d[3];
        color_detail::lutLookupRaw(lut.values.data(), s, lut.lo, lut.step, c, d);
        const double t = std::clamp((c[0] - lut.lo[0]) / lut.step[0], 0.0, static_cast<double>(s - 1));
        const std::size_t i = std::min(static_cast<std::size_t>(t), ss - 2);
        const double f = t - static_cast<double>(i);
        sum[i] += (1 - f) * d[0], weight[i] += 1 - f;
        sum[i + 1] += f * d[0], weight[i + 1] += f;
    }
    std::vector<double> g(ss);
    for (std::size_t k = 0; k < ss; ++k)
        g[k] = lut.lo[0] + static_cast<double>(k) * lut.step[0] + (weight[k] > 0 ? sum[k] / weight[k] : 0.0);
    const std::vector<double> fit =
        isotonicFit(g, weight, bounds.lightnessMinSlope * lut.step[0], bounds.lightnessMaxSlope * lut.step[0]);
    for (std::size_t node = 0; node < ss * ss * ss; ++node)
        if (mark[node]) {
            const std::size_t k = node / (ss * ss);
            lut.values[3 * node] = static_cast<float>(fit[k] - (lut.lo[0] + static_cast<double>(k) * lut.step[0]));
        }
}

// The lattice edges of marked nodes in the order of the cyclic projections below. Built
// once per lattice and mask and shared by the channels.
std::vector<LatticeEdge> markedEdges(const DisplacementLut& lut, const std::vector<unsigned char>& mark)
{
    const std::size_t s = static_cast<std::size_t>(lut.size);
    const std::size_t strides[3] = {s * s, s, 1};
    std::vector<LatticeEdge> edges;
    edges.reserve(3 * s * s * s);
    for (std::size_t i = 0; i < s; ++i)
        for (std::size_t j = 0; j < s; ++j)
            for (std::size_t k = 0; k < s; ++k) {
                const std::size_t node = (i * s + j) * s + k;
                if (!mark[node]) continue;
                const bool inside[3] = {i + 1 < s, j + 1 < s, k + 1 < s};
                for (int a = 0; a < 3; ++a)
                    if (inside[a] && mark[node + strides[a]])
                        edges.push_back({static_cast<std::uint32_t>(node), static_cast<std::uint32_t>(node + strides[a]), a});
            }
    return edges;
}

// Lipschitz bounds on channels first..2 of the lattice's displacement: |v(node + e_a) - v(node)|
// <= slope[a] step[a] on every edge of marked nodes. Per channel, cyclic projections onto the
// edges' constraints (each moves both ends symmetrically), then, if any edge is still above
// its bound, the channel's deviation from its mean shrunk until none is. The channels are
// independent (each reads and moves its own values, in the same order as alone, and stops
// at its own sweep); their sweeps walk the edges together, so that the core overlaps their
// chains of dependent loads and stores. The sweeps by `sweeper` when it runs them.
void lipschitzChannels(DisplacementLut& lut, int first, const double slope[3], const std::vector<unsigned char>& mark,
                       const std::vector<LatticeEdge>& edges, const LipschitzSweeper* sweeper)
{
    const std::size_t s = static_cast<std::size_t>(lut.size);
    const std::size_t nodes = s * s * s;
    double bound[3];
    for (int a = 0; a < 3; ++a) bound[a] = slope[a] * lut.step[a];
    float* v = lut.values.data();
    const bool elsewhere = sweeper && *sweeper && (*sweeper)(v, nodes, first, bound, edges);
    bool active[3] = {first <= 0 && !elsewhere, first <= 1 && !elsewhere, !elsewhere};
    for (int sweep = 0; sweep < kLipschitzSweeps && (active[0] || active[1] || active[2]); ++sweep) {
        double worst[3] = {0, 0, 0};
        for (const LatticeEdge& e : edges)
            for (int c = first; c < 3; ++c) {
                if (!active[c]) continue;
                const double d = static_cast<double>(v[3 * e.next + c]) - v[3 * e.node + c];
                const double excess = std::abs(d) - bound[e.axis];
                if (excess <= 0) continue;
                worst[c] = std::max(worst[c], excess / bound[e.axis]);
                const double move = 0.5 * excess * (d > 0 ? 1 : -1);
                v[3 * e.node + c] = static_cast<float>(v[3 * e.node + c] + move);
                v[3 * e.next + c] = static_cast<float>(v[3 * e.next + c] - move);
            }
        for (int c = first; c < 3; ++c) active[c] = active[c] && !(worst[c] < kLipschitzSettled);  // the shrink below removes the rest
    }
    for (int c = first; c < 3; ++c) {
        double ratio = 0, mean = 0, count = 0;
        for (std::size_t node = 0; node < nodes; ++node)
            if (mark[node]) mean += v[3 * node + c], ++count;
        for (const LatticeEdge& e : edges)
            ratio = std::max(ratio, std::abs(static_cast<double>(v[3 * e.next + c]) - v[3 * e.node + c]) / bound[e.axis]);
        if (ratio <= 1 || count == 0) continue;
        mean /= count;
        const double k = 1 / (ratio * (1 + 1e-6));
        for (std::size_t node = 0; node < nodes; ++node)
            if (mark[node]) v[3 * node + c] = static_cast<float>(mean + k * (v[3 * node + c] - mean));
    }
}

// Working-space colour w after the composition's gamut compression (GamutMode::Compress:
// toward the grey of equal luminance), back in the space, its lightness kept.
void gamutCompressed(WorkingSpace space, double w[3])
{
    double rgb[3];
    spaceToLinearRgb(space, w, rgb);
    float f[3] = {static_cast<float>(rgb[0]), static_cast<float>(rgb[1]), static_cast<float>(rgb[2])};
    color_detail::gamutMapPixel(GamutMode::Compress, f);
    const double back[3] = {f[0], f[1], f[2]};
    const double lightness = w[0];
    linearRgbToSpace(space, back, w);
    w[0] = lightness;
}

// The outputs of lattice column (j, k)'s nodes in `near` (node colour + displacement,
// after the gamut's compression), their nodes and their rows along L (increasing).
void columnOutputs(const DisplacementLut& lut, WorkingSpace space, const std::vector<unsigned char>& near, std::size_t j,
                   std::size_t k, std::vector<std::size_t>& column, std::vector<std::size_t>& rows,
                   std::vector<std::array<double, 3>>& out)
{
    const std::size_t s = static_cast<std::size_t>(lut.size);
    const double a = lut.lo[1] + static_cast<double>(j) * lut.step[1], b = lut.lo[2] + static_cast<double>(k) * lut.step[2];
    column.clear();
    rows.clear();
    out.clear();
    for (std::size_t i = 0; i < s; ++i) {
        const std::size_t node = (i * s + j) * s + k;
        if (!near[node]) continue;
        const float* d = &lut.values[3 * node];
        std::array<double, 3> w = {lut.lo[0] + static_cast<double>(i) * lut.step[0] + d[0], a + d[1], b + d[2]};
        gamutCompressed(space, w.data());
        column.push_back(node);
        rows.push_back(i);
        out.push_back(w);
    }
}

// The chroma outputs of each lattice column along L (the nodes in `near`: node colour +
// displacement, the lightness from the monotone curve, after the gamut's compression)
// brought within a bound. Each round `project(column, rows, out)` moves the outputs `out`
// of the column's nodes (lattice rows `rows`, increasing) to colours within the bound
// and returns true, or returns false when they are within it already; the moved colours
// are compressed by the gamut again, until the column fits: a node the gamut holds
// (near-black has no chroma to give) pulls the others toward it.
template <class Project>
void boundColumnChroma(DisplacementLut& lut, WorkingSpace space, const std::vector<unsigned char>& near, Project&& project)
{
    const std::size_t s = static_cast<std::size_t>(lut.size);
    std::vector<std::size_t> column, rows;
    std::vector<std::array<double, 3>> out, target;
    std::vector<bool> clamped;
    for (std::size_t j = 0; j < s; ++j)
        for (std::size_t k = 0; k < s; ++k) {
            const double a = lut.lo[1] + static_cast<double>(j) * lut.step[1], b = lut.lo[2] + static_cast<double>(k) * lut.step[2];
            columnOutputs(lut, space, near, j, k, column, rows, out);
            if (column.size() < 2) continue;
            clamped.assign(column.size(), false);
            for (int round = 0; round < 40; ++round) {
                target = out;
                if (!project(j * s + k, rows, target)) break;
                for (std::size_t t = 0; t < column.size(); ++t) {
                    clamped[t] = clamped[t] || target[t][1] != out[t][1] || target[t][2] != out[t][2];
                    out[t] = target[t];
                    gamutCompressed(space, out[t].data());
                }
            }
            // In a column that had to be moved, every node takes `target`: when the column
            // came to fit, the round that found it so left its colours after the gamut there
            // (what the composition makes of them); when the 40 rounds ran out, a moved node
            // takes the last round's projected colour (the composition compresses it as the
            // rounds did) and the others their colour after the gamut. So no node keeps a
            // displacement far outside the gamut for the slope projection to pull the others
            // toward. Other columns are left as they are.
            if (std::find(clamped.begin(), clamped.end(), true) == clamped.end()) continue;
            for (std::size_t t = 0; t < column.size(); ++t) {
                const std::array<double, 3>& w = clamped[t] ? target[t] : out[t];
                lut.values[3 * column[t] + 1] = static_cast<float>(w[1] - a);
                lut.values[3 * column[t] + 2] = static_cast<float>(w[2] - b);
            }
        }
}

// MapBounds::chromaLightnessRange (`width`, working-space units) over whole columns: each
// column's outputs within an interval of `width` per axis, clamped into the interval
// centred on the column's midrange.
void chromaRangeAlongLightness(DisplacementLut& lut, WorkingSpace space, double width, const std::vector<unsigned char>& near)
{
    boundColumnChroma(lut, space, near,
                      [width](std::size_t, const std::vector<std::size_t>&, std::vector<std::array<double, 3>>& out) {
                          double lo[3] = {0, 1e300, 1e300}, hi[3] = {0, -1e300, -1e300};
                          for (const auto& w : out)
                              for (int c = 1; c < 3; ++c) lo[c] = std::min(lo[c], w[c]), hi[c] = std::max(hi[c], w[c]);
                          if (hi[1] - lo[1] <= width && hi[2] - lo[2] <= width) return false;
                          for (auto& w : out)
                              for (int c = 1; c < 3; ++c)
                                  w[c] = std::clamp(w[c], 0.5 * (lo[c] + hi[c]) - 0.5 * width, 0.5 * (lo[c] + hi[c]) + 0.5 * width);
                          return true;
                      });
}

// The lightness meetings of `spans` on the lattice: for each pixel, its span's rows
// first..last (the nodes around its lowest and highest lightness) in each column of its
// chroma's interpolation cell, with the bilinear weight, the pixel's lightness gradient
// and the blotch measure's threshold at the pixel; sorted by column.
struct Meeting {
    std::size_t column, first, last;
    double weight, gradient, threshold;  // the pixel's lightness gradient, the measure's threshold there
};

std::vector<Meeting> spanMeetings(const DisplacementLut& lut, WorkingSpace space, const LightnessSpans& spans)
{
    const double scale = nominalRange(space) / 100;
    const int s = lut.size;
    const std::size_t ss = static_cast<std::size_t>(s);
    std::vector<Meeting> meetings;
    meetings.reserve(4 * spans.size());
    const auto cell = [&](double v, int axis, int& first, double& f) {
        const double t = std::clamp((v - lut.lo[axis]) / lut.step[axis], 0.0, static_cast<double>(s - 1));
        first = std::min(s - 2, static_cast<int>(std::floor(t)));
        f = t - first;
    };
    const auto row = [&](double l, bool up) {
        const double t = std::clamp((l - lut.lo[0]) / lut.step[0], 0.0, static_cast<double>(s - 1));
        return static_cast<std::size_t>(up ? std::ceil(t) : std::floor(t));
    };
    for (std::size_t p = 0; p < spans.size(); ++p) {
        const float* sp = &spans.spans[LightnessSpans::kStride * p];
        int j, k;
        double fj, fk;
        cell(sp[0], 1, j, fj);
        cell(sp[1], 2, k, fk);
        const std::size_t i0 = row(sp[2], false), i1 = row(sp[3], true);
        for (int dj = 0; dj < 2; ++dj)
            for (int dk = 0; dk < 2; ++dk) {
                const double w = (dj ? fj : 1 - fj) * (dk ? fk : 1 - fk);
                if (w > 0)
                    meetings.push_back(
                        {static_cast<std::size_t>(j + dj) * ss + static_cast<std::size_t>(k + dk), i0, i1, w, sp[4],
                         kMarkedChromaGain * sp[5] + kMarkedChromaGradient * scale});
            }
    }
    std::stable_sort(meetings.begin(), meetings.end(), [](const Meeting& x, const Meeting& y) { return x.column < y.column; });
    return meetings;
}

// MapBounds::chromaRangeExempt: the columns left free. A pixel is marked where the
// column's outputs would give it a chroma gradient above the blotch measure's threshold
// there: the chroma step between its span's darkest and brightest nodes present, over
// their lightness difference, times its lightness gradient; counted once with the
// outputs as they are (the column free) and once with each axis's step capped at
// `width` (the column held by the range, which a sharp edge can still mark). The
// budget, `exempt` per cent of the picture's pixels, pays first for what the range leaves
// marked in every column; what is left frees the columns whose freeing marks the fewest
// more pixels for their weight, while it lasts.
std::vector<bool> exemptColumns(const DisplacementLut& lut, WorkingSpace space, double width,
                                const std::vector<unsigned char>& near, const std::vector<Meeting>& meetings,
                                std::size_t pixels, double exempt)
{
    const std::size_t s = static_cast<std::size_t>(lut.size);
    std::vector<bool> free(s * s, false);
    if (!(exempt > 0)) return free;
    std::vector<double> marked(s * s, 0.0), held(s * s, 0.0), mass(s * s, 0.0);
    std::vector<std::size_t> column, rows;
    std::vector<std::array<double, 3>> out;
    std::size_t current = s * s;
    for (const Meeting& m : meetings) {
        if (m.column != current) {
            current = m.column;
            columnOutputs(lut, space, near, m.column / s, m.column % s, column, rows, out);
        }
        mass[m.column] += m.weight;
        const auto first = std::lower_bound(rows.begin(), rows.end(), m.first);
        const auto last = std::upper_bound(rows.begin(), rows.end(), m.last);
        if (last - first < 2) continue;
        const std::array<double, 3>& dark = out[static_cast<std::size_t>(first - rows.begin())];
        const std::array<double, 3>& bright = out[static_cast<std::size_t>(last - rows.begin()) - 1];
        const double perStep = m.gradient / (static_cast<double>(*(last - 1) - *first) * lut.step[0]);
        const double da = std::abs(bright[1] - dark[1]), db = std::abs(bright[2] - dark[2]);
        if (std::hypot(da, db) * perStep > m.threshold) marked[m.column] += m.weight;
        if (std::hypot(std::min(da, width), std::min(db, width)) * perStep > m.threshold) held[m.column] += m.weight;
    }
    double left = exempt / 100 * static_cast<double>(pixels);
    std::vector<std::size_t> order;
    for (std::size_t c = 0; c < s * s; ++c)
        if (mass[c] > 0) {
            order.push_back(c);
            left -= held[c];
            marked[c] -= held[c];  // what freeing the column adds
        }
    std::stable_sort(order.begin(), order.end(),
                     [&](std::size_t x, std::size_t y) { return marked[x] * mass[y] < marked[y] * mass[x]; });
    for (std::size_t c : order) {
        if (marked[c] > left) continue;
        left -= marked[c];
        free[c] = true;
    }
    return free;
}

// MapBounds::chromaLightnessRange where the source's lightness levels meet: in each
// column, two nodes within one pixel's lightness span differ by at most `width` per
// axis, and two nodes joined by a chain of h overlapping spans (and no shorter one) by at
// most h `width`; nodes joined by no chain are free. The outputs are moved to the
// midpoint of their lower and upper envelopes over the column's nodes (each node's
// value minus / plus the bound to it): within every bound, and a node is left as it is
// unless a bound through it is broken.
void chromaRangeAlongSpans(DisplacementLut& lut, WorkingSpace space, double width, const std::vector<unsigned char>& near,
                           const std::vector<Meeting>& meetings, const std::vector<bool>& free)
{
    const std::size_t s = static_cast<std::size_t>(lut.size);
    // reach[column * size + i0]: the highest row of a meeting from row i0 (-1: none).
    std::vector<int> reach(s * s * s, -1);
    for (const Meeting& m : meetings) {
        int& r = reach[m.column * s + m.first];
        r = std::max(r, static_cast<int>(m.last));
    }
    std::vector<int> farthest(s);
    std::vector<double> bound;
    const double none = std::numeric_limits<double>::infinity();
    boundColumnChroma(lut, space, near,
                      [&](std::size_t col, const std::vector<std::size_t>& rows, std::vector<std::array<double, 3>>& out) {
                          if (free[col]) return false;
                          // farthest[i]: the highest row sharing a span with row i (i itself when none).
                          int prefix = -1;
                          for (std::size_t i = 0; i < s; ++i) {
                              prefix = std::max(prefix, reach[col * s + i]);
                              farthest[i] = std::max(static_cast<int>(i), prefix);
                          }
                          // bound[t m + u]: width times the fewest spans chaining rows[t] to rows[u].
                          const std::size_t m = rows.size();
                          bound.assign(m * m, 0.0);
                          for (std::size_t t = 0; t < m; ++t) {
                              int front = static_cast<int>(rows[t]);
                              double hops = 0;
                              for (std::size_t u = t + 1; u < m; ++u) {
                                  while (hops < none && static_cast<int>(rows[u]) > front) {
                                      const int next = farthest[static_cast<std::size_t>(front)];
                                      hops = next > front ? hops + 1 : none;
                                      front = next;
                                  }
                                  bound[t * m + u] = bound[u * m + t] = hops * width;
                              }
                          }
                          bool broken = false;
                          std::vector<std::array<double, 3>> moved = out;
                          for (int c = 1; c < 3; ++c)
                              for (std::size_t t = 0; t < m; ++t) {
                                  double lower = out[t][c], upper = out[t][c];
                                  for (std::size_t u = 0; u < m; ++u) {
                                      lower = std::max(lower, out[u][c] - bound[t * m + u]);
                                      upper = std::min(upper, out[u][c] + bound[t * m + u]);
                                  }
                                  broken = broken || lower > out[t][c] + 1e-6 * width || upper < out[t][c] - 1e-6 * width;
                                  moved[t][c] = 0.5 * (lower + upper);
                              }
                          if (broken) out = moved;
                          return broken;
                      });
}

}  // namespace

void regularizeDisplacementLut(DisplacementLut& lut, WorkingSpace space, const MapBounds& bounds, const float* colors,
                               std::size_t n, LatticeNodes nodes, int threads, const LightnessSpans* spans,
                               const LipschitzSweeper* sweeper)
{
    if (!bounds.enabled || lut.size < 2) return;
    const std::vector<unsigned char> mark = latticeNodeMask(lut, colors, n, nodes, threads);
    const bool lightness = hasLightnessAxis(space);
    const double slope[3] = {lightness ? bounds.chromaLightnessSlope : bounds.chromaSlope, bounds.chromaSlope,
                             bounds.chromaSlope};
    // The lightness curve first (it reads the lattice's lightness only): the chroma's range
    // along lightness needs each node's output lightness. The range is applied before the
    // slope projection, so that the projection does not pull nodes toward displacements far
    // outside the gamut, and again after it, where it takes precedence: the range holds
    // exactly, the slopes up to the second step's moves (near the gamut's edge).
    if (lightness) monotoneLightness(lut, bounds, colors, n, mark);
    const bool range = lightness && std::isfinite(bounds.chromaLightnessRange);
    std::vector<unsigned char> near;
    if (range)
        near = nodes == LatticeNodes::NextToColors ? mark : latticeNodeMask(lut, colors, n, LatticeNodes::NextToColors, threads);
    const double width = bounds.chromaLightnessRange * nominalRange(space) / 100;
    // With the source's spans: its meetings, and the columns exempted, chosen once.
    const bool meet = range && spans && spans->size() > 0;
    std::vector<Meeting> meetings;
    std::vector<bool> free;
    if (meet) {
        meetings = spanMeetings(lut, space, *spans);
        free = exemptColumns(lut, space, width, near, meetings, spans->size(), bounds.chromaRangeExempt);
    }
    const auto chromaRange = [&] {
        if (meet)
            chromaRangeAlongSpans(lut, space, width, near, meetings, free);
        else
            chromaRangeAlongLightness(lut, space, width, near);
    };
    if (range) chromaRange();
    const std::vector<LatticeEdge> edges = markedEdges(lut, mark);
    lipschitzChannels(lut, lightness ? 1 : 0, slope, mark, edges, sweeper);
    if (range) chromaRange();
}

void boundResidualMap(MarginalMap& map, const MapBounds& bounds)
{
    if (bounds.enabled && !map.empty()) map.limitSlopes(bounds.residualMinSlope, bounds.residualMaxSlope);
}

void boundFieldChroma(DisplacementField& field, const LowResolution& low, const float* target, const MapBounds& bounds,
                      int threads)
{
    if (!bounds.enabled || !field.smoothed || !hasLightnessAxis(low.space)) return;
    const std::size_t nl = static_cast<std::size_t>(low.width) * low.height;
    const std::size_t len = field.colorGuided ? 12 : 6;
    if (field.coefficients.size() != len * nl) return;
    const double range = nominalRange(low.space);
    const double deviation = bounds.fieldDeviation * range / 100;
    const double lightnessDeviation = bounds.fieldLightnessDeviation * range / 100;
    const double lMin = bounds.lightnessMinSlope - 1, lMax = bounds.lightnessMaxSlope - 1;
    const int t = resolveThreadCount(threads);
#pragma omp parallel for num_threads(t) schedule(static)
    for (std::ptrdiff_t i = 0; i < static_cast<std::ptrdiff_t>(nl); ++i) {
        const std::size_t node = static_cast<std::size_t>(i);
        float* m = &field.coefficients[len * node];
        const float* c = &low.colors[3 * node];
        const double g = low.guide[node];
        if (field.colorGuided) {
            // Row k: d_k = A_k . c + b_k; keep d_k at the block's mean colour while clamping A.
            for (int k = 0; k < 3; ++k) {
                double shift = 0;
                for (int j = 0; j < 3; ++j) {
                    const double lim = k == 0 ? (j == 0 ? 0 : bounds.chromaLightnessSlope)
                                              : (j == 0 ? bounds.chromaLightnessSlope : bounds.chromaSlope);
                    const double lo = k == 0 && j == 0 ? lMin : -lim, hi = k == 0 && j == 0 ? lMax : lim;
                    if (k == 0 && j != 0) continue;  // the lightness row's chroma terms (zero in the split guide)
                    const double a = m[3 * k + j], b = std::clamp(a, lo, hi);
                    shift += (a - b) * c[j];
                    m[3 * k + j] = static_cast<float>(b);
                }
                m[9 + k] = static_cast<float>(m[9 + k] + shift);
            }
        } else {
            // Row k: d_k = a_k g + b_k with g = L / range: slope along L = a_k / range.
            for (int k = 0; k < 3; ++k) {
                const double lo = k == 0 ? lMin : -bounds.chromaLightnessSlope, hi = k == 0 ? lMax : bounds.chromaLightnessSlope;
                const double a = m[k], b = std::clamp(a / range, lo, hi) * range;
                m[k] = static_cast<float>(b);
                m[3 + k] = static_cast<float>(m[3 + k] + (a - b) * g);
            }
        }
        if (!target) continue;
        float d[3];
        color_detail::fieldDisplacement(m, field.colorGuided, c, static_cast<float>(g), d);
        for (int k = 0; k < 3; ++k) {
            const double dev = d[k] - target[3 * node + static_cast<std::size_t>(k)];
            const double limit = k == 0 ? lightnessDeviation : deviation;
            const double fix = std::clamp(dev, -limit, limit) - dev;
            m[(field.colorGuided ? 9 : 3) + k] = static_cast<float>(m[(field.colorGuided ? 9 : 3) + k] + fix);
        }
    }
}

}  // namespace uot
