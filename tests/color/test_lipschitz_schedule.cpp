// The Lipschitz sweeps run by levels (core/color/lipschitz_schedule.h), as the GPU colour
// mapper runs them: a host stand-in for the device walks the schedule's levels, each
// level's projections in a shuffled order, and must leave the lattice bit for bit as
// regularizeDisplacementLut's sweeps in order; with a wrong schedule it must not.
#include <QtTest/QtTest>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "core/color/lipschitz_schedule.h"
#include "core/color/map_regularizer.h"

using namespace uot;

namespace {

// A lattice of size^3 nodes over L [0, 100], a and b [-60, 60]: a smooth displacement
// plus `noise` (uniform, +-noise), and random colours filling it.
struct Case {
    DisplacementLut lut;
    std::vector<float> colors;
};

Case makeCase(int size, double noise, int colors, unsigned seed)
{
    Case c;
    DisplacementLut& lut = c.lut;
    lut.size = size;
    lut.lo[0] = 0, lut.lo[1] = lut.lo[2] = -60;
    lut.step[0] = 100.0 / (size - 1), lut.step[1] = lut.step[2] = 120.0 / (size - 1);
    const std::size_t n = static_cast<std::size_t>(size) * size * size;
    lut.values.resize(3 * n);
    std::mt19937 rng(seed);
    std::uniform_real_distribution<double> u(-1, 1);
    for (std::size_t node = 0; node < n; ++node) {
        const double L = lut.lo[0] + static_cast<double>(node / (size * size)) * lut.step[0];
        const double a = lut.lo[1] + static_cast<double>((node / size) % size) * lut.step[1];
        lut.values[3 * node] = static_cast<float>(0.1 * (50 - L));
        lut.values[3 * node + 1] = static_cast<float>(0.2 * a + 10 * std::sin(L / 20) + noise * u(rng));
        lut.values[3 * node + 2] = static_cast<float>(-0.1 * a + 5 + noise * u(rng));
    }
    std::uniform_real_distribution<float> uL(5, 95), uab(-40, 40);
    for (int p = 0; p < colors; ++p) c.colors.insert(c.colors.end(), {uL(rng), uab(rng), uab(rng)});
    return c;
}

// One projection, as the sweeps make it (map_regularizer.cpp), restated.
void project(float* v, const LatticeEdge& e, int c, double bound, double& worst)
{
    const double d = static_cast<double>(v[3 * e.next + c]) - v[3 * e.node + c];
    const double excess = std::abs(d) - bound;
    if (excess <= 0) return;
    worst = std::max(worst, excess / bound);
    const double move = 0.5 * excess * (d > 0 ? 1 : -1);
    v[3 * e.node + c] = static_cast<float>(v[3 * e.node + c] + move);
    v[3 * e.next + c] = static_cast<float>(v[3 * e.next + c] - move);
}

// The device's way through the schedule, on the host: per channel, every level's visits
// (shuffled) up to the levels of `limit` sweeps, the worst excess of each sweep kept; run
// again with fewer sweeps when a sweep settled before the last. `wrong` walks the opening
// levels backwards (a broken schedule).
struct ByLevels {
    bool wrong = false;
    int calls = 0, reruns = 0;
    std::mt19937 rng{3};

    bool operator()(float* v, std::size_t nodes, int first, const double bound[3], const std::vector<LatticeEdge>& edges)
    {
        ++calls;
        const LipschitzSchedule s = lipschitzSchedule(edges, nodes);
        const std::vector<float> start(v, v + 3 * nodes);
        const std::uint32_t openingLevels = static_cast<std::uint32_t>(s.openingStart.size() - 1);
        for (int c = first; c < 3; ++c) {
            int limit = kLipschitzSweeps;
            for (;;) {
                for (std::size_t i = 0; i < nodes; ++i) v[3 * i + c] = start[3 * i + c];
                std::vector<double> worst(static_cast<std::size_t>(limit), 0.0);
                std::vector<std::pair<std::uint32_t, int>> visits;  // edge, sweep
                const std::uint32_t levels = s.levels(limit);
                for (std::uint32_t level = 0; level < levels; ++level) {
                    visits.clear();
                    if (level < openingLevels) {
                        const std::uint32_t l = wrong ? openingLevels - 1 - level : level;
                        for (std::uint32_t k = s.openingStart[l]; k < s.openingStart[l + 1]; ++k)
                            if (static_cast<int>(s.openingVisits[k] & 7u) < limit)
                                visits.push_back({s.openingVisits[k] >> 3, static_cast<int>(s.openingVisits[k] & 7u)});
                    }
                    const std::uint32_t r = level % static_cast<std::uint32_t>(s.period);
                    for (std::uint32_t k = s.groupStart[r]; k < s.groupStart[r + 1]; ++k) {
                        if (s.groupLevels[k] > level) break;
                        const int sweep = s.opening + static_cast<int>((level - s.groupLevels[k]) / s.period);
                        if (sweep < limit) visits.push_back({s.groupEdges[k], sweep});
                    }
                    std::shuffle(visits.begin(), visits.end(), rng);
                    for (const auto& [e, sweep] : visits)
                        project(v, edges[e], c, bound[edges[e].axis], worst[static_cast<std::size_t>(sweep)]);
                }
                const int made = lipschitzSweepsMade(worst.data(), limit);
                if (made == limit) break;
                limit = made;
                ++reruns;
            }
        }
        return true;
    }
};

MapBounds chromaBounds(double slope)
{
    MapBounds b;
    b.enabled = true;
    if (slope > 0) b.chromaSlope = b.chromaLightnessSlope = slope;
    b.chromaLightnessRange = std::numeric_limits<double>::infinity();  // the sweeps alone between the lightness curve and the shrink
    return b;
}

}  // namespace

class TestLipschitzSchedule : public QObject {
    Q_OBJECT
private slots:
    void levelsGiveTheSweepsResult_data()
    {
        QTest::addColumn<int>("size");
        QTest::addColumn<double>("noise");
        QTest::addColumn<bool>("allNodes");
        QTest::addColumn<double>("slope");  // 0: the default bounds
        QTest::newRow("25^3 all nodes, noisy") << 25 << 8.0 << true << 0.0;
        QTest::newRow("17^3 next to colours, noisy") << 17 << 8.0 << false << 0.0;
        QTest::newRow("9^3 next to colours, smooth (settles early)") << 9 << 0.0 << false << 0.0;
        QTest::newRow("12^3 all nodes, slightly noisy") << 12 << 0.5 << true << 0.0;
        // Bounds of 1e-6 a node: float rounding leaves excesses of more than 1 % of them,
        // so every sweep is made (as in the pipeline's lattices, which never settle).
        QTest::newRow("25^3 all nodes, all 200 sweeps") << 25 << 8.0 << true << 1e-6;
    }
    void levelsGiveTheSweepsResult()
    {
        QFETCH(int, size);
        QFETCH(double, noise);
        QFETCH(bool, allNodes);
        QFETCH(double, slope);
        const Case c = makeCase(size, noise, allNodes ? 20000 : 300, 11);
        const LatticeNodes nodes = allNodes ? LatticeNodes::All : LatticeNodes::NextToColors;
        const MapBounds bounds = chromaBounds(slope);
        const std::size_t n = c.colors.size() / 3;
        DisplacementLut inOrder = c.lut, byLevels = c.lut, wrong = c.lut;
        regularizeDisplacementLut(inOrder, WorkingSpace::Lab, bounds, c.colors.data(), n, nodes, 1);
        ByLevels levels;
        const LipschitzSweeper sweeper = std::ref(levels);
        regularizeDisplacementLut(byLevels, WorkingSpace::Lab, bounds, c.colors.data(), n, nodes, 1, nullptr, &sweeper);
        QCOMPARE(levels.calls, 1);
        std::size_t moved = 0, differ = 0;
        for (std::size_t i = 0; i < c.lut.values.size(); ++i) {
            moved += inOrder.values[i] != c.lut.values[i];
            differ += std::memcmp(&inOrder.values[i], &byLevels.values[i], sizeof(float)) != 0;
        }
        std::printf("  %zu of %zu values moved by the bounds, %zu differ by levels (%d reruns)\n", moved,
                    c.lut.values.size(), differ, levels.reruns);
        QVERIFY2(moved > c.lut.values.size() / 20, "the bounds moved too little for the test to tell");
        QCOMPARE(differ, std::size_t(0));
        if (noise == 0.0) QVERIFY2(levels.reruns > 0, "the smooth case must settle before the last sweep");
        if (slope > 0) QVERIFY2(levels.reruns == 0, "the case of tiny bounds must make every sweep");
        // A wrong schedule (the opening levels backwards) changes a noisy lattice's result: the
        // comparison can fail (the smooth lattice's few moves do not meet in the opening).
        if (noise == 0.0) return;
        ByLevels broken;
        broken.wrong = true;
        const LipschitzSweeper brokenSweeper = std::ref(broken);
        regularizeDisplacementLut(wrong, WorkingSpace::Lab, bounds, c.colors.data(), n, nodes, 1, nullptr, &brokenSweeper);
        std::size_t wrongDiffer = 0;
        for (std::size_t i = 0; i < c.lut.values.size(); ++i) wrongDiffer += inOrder.values[i] != wrong.values[i];
        QVERIFY2(wrongDiffer > 0, "a wrong schedule gave the same lattice");
    }

    void scheduleSharesNoNodeWithinALevel()
    {
        // Every (edge, sweep) once, no two visits of one level on a node, each node's
        // visits in the sweeps' order, on a 25^3 lattice with every node marked.
        const Case c = makeCase(25, 0, 0, 1);
        std::vector<LatticeEdge> edges;
        const std::uint32_t s = 25;
        for (std::uint32_t node = 0; node < s * s * s; ++node) {
            const std::uint32_t ijk[3] = {node / (s * s), (node / s) % s, node % s}, strides[3] = {s * s, s, 1};
            for (int a = 0; a < 3; ++a)
                if (ijk[a] + 1 < s) edges.push_back({node, node + strides[a], a});
        }
        const LipschitzSchedule sch = lipschitzSchedule(edges, s * s * s);
        const int sweeps = 6;
        std::vector<std::int64_t> seen(edges.size() * sweeps, -1);  // level of each visit
        const std::uint32_t levels = sch.levels(sweeps);
        for (std::uint32_t level = 0; level < levels; ++level) {
            if (level + 1 < sch.openingStart.size())
                for (std::uint32_t k = sch.openingStart[level]; k < sch.openingStart[level + 1]; ++k)
                    seen[(sch.openingVisits[k] & 7u) * edges.size() + (sch.openingVisits[k] >> 3)] = level;
            const std::uint32_t r = level % static_cast<std::uint32_t>(sch.period);
            for (std::uint32_t k = sch.groupStart[r]; k < sch.groupStart[r + 1] && sch.groupLevels[k] <= level; ++k) {
                const int sweep = sch.opening + static_cast<int>((level - sch.groupLevels[k]) / sch.period);
                if (sweep < sweeps) seen[static_cast<std::size_t>(sweep) * edges.size() + sch.groupEdges[k]] = level;
            }
        }
        std::vector<std::int64_t> last(s * s * s, -1);
        for (int sweep = 0; sweep < sweeps; ++sweep)
            for (std::size_t e = 0; e < edges.size(); ++e) {
                const std::int64_t level = seen[static_cast<std::size_t>(sweep) * edges.size() + e];
                QVERIFY(level >= 0);
                QVERIFY(level > last[edges[e].node] && level > last[edges[e].next]);
                last[edges[e].node] = last[edges[e].next] = level;
            }
        std::printf("  25^3: period %d, %u levels for 200 sweeps (%zu edges a sweep)\n", sch.period,
                    sch.levels(kLipschitzSweeps), edges.size());
        QCOMPARE(sch.period, 6);  // the wavefront of the full lattice: a sweep every 6 levels
    }
};

QTEST_GUILESS_MAIN(TestLipschitzSchedule)
#include "test_lipschitz_schedule.moc"
