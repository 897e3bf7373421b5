// The map's bounds (core/color/map_regularizer.h) checked directly on synthetic
// maps with the defects the bounds exist for: a lightness map that folds over
// (bands), a chroma map with a cliff (blotches), a steep residual match, a field
// with steep per-window models far from the global map. Every property is checked
// with the bounds on (it must hold) and off (it must be violated, so the check can fail).
#include <QtTest/QtTest>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "core/color/color_space.h"
#include "core/color/lightness_spans.h"
#include "core/color/map_regularizer.h"

using namespace uot;

namespace {

// A 9^3 lattice over L [0, 100], a and b [-50, 50], and 6000 random colours filling it.
struct SyntheticMap {
    DisplacementLut lut;
    std::vector<float> colors;
};

SyntheticMap foldedMap()
{
    SyntheticMap m;
    DisplacementLut& lut = m.lut;
    lut.size = 9;
    lut.lo[0] = 0, lut.lo[1] = lut.lo[2] = -50;
    lut.step[0] = 100.0 / 8, lut.step[1] = lut.step[2] = 100.0 / 8;
    lut.values.assign(3 * 729, 0.0f);
    for (int i = 0; i < 9; ++i)
        for (int j = 0; j < 9; ++j)
            for (int k = 0; k < 9; ++k) {
                const double L = lut.lo[0] + i * lut.step[0], a = lut.lo[1] + j * lut.step[1];
                float* v = &lut.values[3 * ((i * 9 + j) * 9 + k)];
                v[0] = static_cast<float>(-30 * std::sin(L / 15) + 0.2 * a);  // L + dL folds over (slope 1 - 2 cos)
                v[1] = a < 0 ? -25.0f : 25.0f;                                    // a cliff of 50 across a = 0
                v[2] = static_cast<float>(0.03 * (L - 50) * (L - 50) - 20);      // steep along L at the ends
            }
    std::mt19937 rng(7);
    std::uniform_real_distribution<float> uL(0, 100), uab(-50, 50);
    for (int p = 0; p < 6000; ++p) m.colors.insert(m.colors.end(), {uL(rng), uab(rng), uab(rng)});
    return m;
}

// The composition's gamut compression written out: toward the grey of equal luminance Y
// until every linear RGB channel is in [0, 1], the lightness kept.
void compressed(double lab[3])
{
    double rgb[3];
    spaceToLinearRgb(WorkingSpace::Lab, lab, rgb);
    const double y = std::clamp(0.2126729 * rgb[0] + 0.7151522 * rgb[1] + 0.0721750 * rgb[2], 0.0, 1.0);
    double t = 1;
    for (double c : rgb) {
        if (c > 1 && c > y) t = std::min(t, (1 - y) / (c - y));
        if (c < 0 && c < y) t = std::min(t, y / (y - c));
    }
    for (double& c : rgb) c = std::clamp(y + t * (c - y), 0.0, 1.0);
    const double L = lab[0];
    linearRgbToSpace(WorkingSpace::Lab, rgb, lab);
    lab[0] = L;
}

// Two columns of a 9^3 lattice (L [0, 100], a and b [-50, 50], step 12.5), A at
// a* = -12.5 and B at a* = +12.5 (b* = 0), holding colours at the lightness rows 1..7
// (L* 12.5..87.5); every node's b* displacement is 0.45 (L - 50): along each column the
// output b* spans 0.45 x 75 = 33.75, within the slope bound along L (0.5) and inside
// the gamut on B (on A the darkest node's blue loses some chroma to it: 28.4).
SyntheticMap twoColumns()
{
    SyntheticMap m;
    DisplacementLut& lut = m.lut;
    lut.size = 9;
    lut.lo[0] = 0, lut.lo[1] = lut.lo[2] = -50;
    lut.step[0] = lut.step[1] = lut.step[2] = 12.5;
    lut.values.assign(3 * 729, 0.0f);
    for (int i = 0; i < 9; ++i)
        for (int jk = 0; jk < 81; ++jk) lut.values[3 * (i * 81 + jk) + 2] = static_cast<float>(0.45 * (12.5 * i - 50));
    for (double a : {-12.5, 12.5})
        for (int i = 1; i <= 7; ++i) m.colors.insert(m.colors.end(), {static_cast<float>(12.5 * i), static_cast<float>(a), 0.0f});
    return m;
}

// The output b* range (after the gamut) over the rows 1..7 of the column at a* = a.
double columnRange(const DisplacementLut& lut, double a)
{
    const int j = static_cast<int>(std::lround((a - lut.lo[1]) / lut.step[1])), k = 4;
    double lo = 1e9, hi = -1e9;
    for (int i = 1; i <= 7; ++i) {
        const float* v = &lut.values[3 * ((i * 9 + j) * 9 + k)];
        double lab[3] = {12.5 * i + v[0], a + v[1], v[2]};
        compressed(lab);
        lo = std::min(lo, lab[2]), hi = std::max(hi, lab[2]);
    }
    return hi - lo;
}

// A pixel of the scaled picture for LightnessSpans: its chroma (a*, b* = 0), the
// lightness span around it and its lightness gradient (no chroma gradient).
void addSpan(LightnessSpans& spans, double a, double lo, double hi, double gradient)
{
    const double pixel[LightnessSpans::kStride] = {a, 0, lo, hi, gradient, 0};
    for (double v : pixel) spans.spans.push_back(static_cast<float>(v));
}

}  // namespace

class TestMapRegularizer : public QObject {
    Q_OBJECT
private slots:
    void isotonicFitByHand()
    {
        // PAVA of (1, 3, 2, 4) with equal weights pools 3 and 2 into 2.5.
        const std::vector<double> w(4, 1.0);
        std::vector<double> f = isotonicFit({1, 3, 2, 4}, w, 0, 100);
        QCOMPARE(f, (std::vector<double>{1, 2.5, 2.5, 4}));
        // Steps >= 0.5: z = y - 0.5 k = (1, 2.5, 1, 2.5) pools (2.5, 1) into 1.75: y = (1, 2.25, 2.75, 4);
        // then steps <= 1 walking from the first point (all weights equal): (1, 2, 2.75, 3.75).
        f = isotonicFit({1, 3, 2, 4}, w, 0.5, 1);
        QVERIFY(std::abs(f[0] - 1) < 1e-12 && std::abs(f[1] - 2) < 1e-12 && std::abs(f[2] - 2.75) < 1e-12 &&
                std::abs(f[3] - 3.75) < 1e-12);
        // A free (weight 0) point between two pooled ones is interpolated.
        f = isotonicFit({0, 99, 2}, {1, 0, 1}, 0, 100);
        QVERIFY(std::abs(f[1] - 1) < 1e-12);
    }

    void lightnessIsMonotone_data()
    {
        QTest::addColumn<bool>("bounded");
        QTest::newRow("bounds on") << true;
        QTest::newRow("bounds off (the check must find inversions)") << false;
    }
    void lightnessIsMonotone()
    {
        QFETCH(bool, bounded);
        SyntheticMap m = foldedMap();
        MapBounds b;
        b.enabled = bounded;
        const std::size_t n = m.colors.size() / 3;
        regularizeDisplacementLut(m.lut, WorkingSpace::Lab, b, m.colors.data(), n, LatticeNodes::NextToColors, 1);
        std::vector<float> d(m.colors.size());
        applyDisplacementLut(m.lut, m.colors.data(), n, d.data(), 1);
        // Random pairs of the colours (any chroma): the brighter one must not come out
        // darker, and must gain at least minSlope x the difference.
        std::mt19937 rng(3);
        std::uniform_int_distribution<std::size_t> pick(0, n - 1);
        int inversions = 0, tooFlat = 0;
        for (int t = 0; t < 20000; ++t) {
            std::size_t p = pick(rng), q = pick(rng);
            if (m.colors[3 * p] > m.colors[3 * q]) std::swap(p, q);
            const double dl = m.colors[3 * q] - m.colors[3 * p];
            const double out = (m.colors[3 * q] + d[3 * q]) - (m.colors[3 * p] + d[3 * p]);
            inversions += out < -1e-3;
            tooFlat += out < b.lightnessMinSlope * dl - 1e-3;
        }
        if (bounded) {
            QCOMPARE(inversions, 0);
            QCOMPARE(tooFlat, 0);
        } else {
            QVERIFY(inversions > 100);
        }
    }

    void chromaSlopeIsBounded_data()
    {
        QTest::addColumn<bool>("bounded");
        QTest::newRow("bounds on") << true;
        QTest::newRow("bounds off (the check must find steep edges)") << false;
    }
    void chromaSlopeIsBounded()
    {
        QFETCH(bool, bounded);
        SyntheticMap m = foldedMap();
        MapBounds b;
        b.enabled = bounded;
        // The slope projection's own guarantee: the chroma's range along lightness, applied
        // again after it, takes precedence near the gamut's edge (chromaRangeAlongLightness
        // below; on this map the slopes then reach 0.94 along L and 1.39 along a*, b*).
        b.chromaLightnessRange = std::numeric_limits<double>::infinity();
        regularizeDisplacementLut(m.lut, WorkingSpace::Lab, b, m.colors.data(), m.colors.size() / 3,
                                  LatticeNodes::NextToColors, 1);
        // Finite differences over every lattice edge (the colours fill every cell, so every node carries a value).
        const DisplacementLut& lut = m.lut;
        double worst[3] = {0, 0, 0};  // per axis, over both chroma channels
        for (int i = 0; i < 9; ++i)
            for (int j = 0; j < 9; ++j)
                for (int k = 0; k < 9; ++k) {
                    const int node = (i * 9 + j) * 9 + k;
                    const int next[3] = {i < 8 ? node + 81 : -1, j < 8 ? node + 9 : -1, k < 8 ? node + 1 : -1};
                    for (int a = 0; a < 3; ++a) {
                        if (next[a] < 0) continue;
                        for (int c = 1; c < 3; ++c)
                            worst[a] = std::max(worst[a], std::abs(lut.values[3 * next[a] + c] - lut.values[3 * node + c]) /
                                                              lut.step[a]);
                    }
                }
        const double bound[3] = {b.chromaLightnessSlope, b.chromaSlope, b.chromaSlope};
        bool within = true;
        for (int a = 0; a < 3; ++a) within = within && worst[a] <= bound[a] * (1 + 1e-4);
        QVERIFY2(within == bounded, qPrintable(QString("slopes %1 %2 %3").arg(worst[0]).arg(worst[1]).arg(worst[2])));
    }

    // MapBounds::chromaLightnessRange: over each column of the lattice along L, the output
    // chroma (node + displacement, then the composition's gamut compression: toward the
    // grey of equal luminance Y until every linear RGB channel is in [0, 1], written out
    // here) spans at most the range per axis. foldedMap's chroma displacement spans 50
    // units along L in every column (b: 0.03 (L - 50)^2), and its near-black nodes can hold
    // no chroma.
    void chromaRangeAlongLightness_data()
    {
        QTest::addColumn<bool>("bounded");
        QTest::newRow("range bound (defaults)") << true;
        QTest::newRow("no range bound (the check must find wide columns)") << false;
    }
    void chromaRangeAlongLightness()
    {
        QFETCH(bool, bounded);
        SyntheticMap m = foldedMap();
        MapBounds b;
        const double range = b.chromaLightnessRange;
        QVERIFY(std::isfinite(range));
        if (!bounded) b.chromaLightnessRange = std::numeric_limits<double>::infinity();
        regularizeDisplacementLut(m.lut, WorkingSpace::Lab, b, m.colors.data(), m.colors.size() / 3,
                                  LatticeNodes::NextToColors, 1);
        const DisplacementLut& lut = m.lut;
        double widest = 0;
        for (int j = 0; j < 9; ++j)
            for (int k = 0; k < 9; ++k) {
                double lo[2] = {1e9, 1e9}, hi[2] = {-1e9, -1e9};
                for (int i = 0; i < 9; ++i) {
                    const float* v = &lut.values[3 * ((i * 9 + j) * 9 + k)];
                    double lab[3] = {lut.lo[0] + i * lut.step[0] + v[0], lut.lo[1] + j * lut.step[1] + v[1],
                                     lut.lo[2] + k * lut.step[2] + v[2]};
                    compressed(lab);
                    for (int c = 0; c < 2; ++c) lo[c] = std::min(lo[c], lab[c + 1]), hi[c] = std::max(hi[c], lab[c + 1]);
                }
                widest = std::max({widest, hi[0] - lo[0], hi[1] - lo[1]});
            }
        qInfo("widest column: %.3f (range %.1f)", widest, range);
        if (bounded)
            QVERIFY2(widest <= range + 0.01, qPrintable(QString("a column spans %1").arg(widest)));
        else
            QVERIFY2(widest > 2 * range, qPrintable(QString("widest column %1").arg(widest)));
    }

    // The range only where the source's lightness levels meet (LightnessSpans): column A
    // holds one pixel whose span meets every row (a sharp edge from L* 12.5 to 87.5),
    // column B only pixels whose spans meet neighbouring rows (a smooth ramp: [12.5, 25],
    // [25, 37.5], ..., [75, 87.5], chained). A's output b* is brought within the range
    // (16 < 33.75); B's chain allows 16 between neighbouring rows (5.6 apart) and 16 per
    // link beyond, so B keeps its 33.75. Without the spans (the range over whole columns)
    // B is bounded too, and the check on B fails.
    void chromaRangeOnlyWhereLevelsMeet_data()
    {
        QTest::addColumn<bool>("withSpans");
        QTest::newRow("source spans") << true;
        QTest::newRow("no spans: whole columns (the check must find B narrowed)") << false;
    }
    void chromaRangeOnlyWhereLevelsMeet()
    {
        QFETCH(bool, withSpans);
        SyntheticMap m = twoColumns();
        QVERIFY(columnRange(m.lut, -12.5) > 28 && columnRange(m.lut, 12.5) > 33.7);
        MapBounds b;
        b.chromaRangeExempt = 0;  // every meeting bound (chromaRangeExemption below)
        LightnessSpans spans;
        addSpan(spans, -12.5, 12.5, 87.5, 20);
        for (int i = 1; i < 7; ++i) addSpan(spans, 12.5, 12.5 * i, 12.5 * (i + 1), 0.5);
        regularizeDisplacementLut(m.lut, WorkingSpace::Lab, b, m.colors.data(), m.colors.size() / 3,
                                  LatticeNodes::NextToColors, 1, withSpans ? &spans : nullptr);
        const double a = columnRange(m.lut, -12.5), ramp = columnRange(m.lut, 12.5);
        qInfo("output b* range: edge column %.3f, ramp column %.3f (range %.1f)", a, ramp, b.chromaLightnessRange);
        QVERIFY2(a <= b.chromaLightnessRange + 0.01, qPrintable(QString("edge column %1").arg(a)));
        if (withSpans)
            QVERIFY2(std::abs(ramp - 33.75) < 0.05, qPrintable(QString("ramp column %1").arg(ramp)));
        else
            QVERIFY2(ramp <= b.chromaLightnessRange + 0.01, qPrintable(QString("ramp column %1").arg(ramp)));
    }

    // MapBounds::chromaRangeExempt: A holds one edge pixel (span L* 12.5..87.5, lightness
    // gradient 10 a pixel: the map's b* step 33.75 over 75 L* times 10 = 4.5 > the
    // measure's 3, marked; held to the range, 16 / 75 x 10 = 2.1, not), B one such edge
    // pixel among 99 flat ones (span L* 50..50). With 1 % of the 101 pixels (1.01) exempt,
    // the column whose freeing marks the fewest pixels for its weight (B: 1 of 100) is
    // freed and keeps its 33.75; A (1 of 1) no longer fits the budget and is bounded. With
    // no exemption both are bounded (the check on B fails). With gradient 20 the range
    // itself leaves both pixels marked (2 > 1.01): the budget is spent, nothing is freed.
    void chromaRangeExemption_data()
    {
        QTest::addColumn<double>("exempt");
        QTest::addColumn<double>("gradient");
        QTest::newRow("1 % exempt") << 1.0 << 10.0;
        QTest::newRow("none exempt (the check must find B narrowed)") << 0.0 << 10.0;
        QTest::newRow("1 % exempt, the range's own marks spend it (gradient 20: 16 / 75 x 20 = 4.3 > 3)") << 1.0 << 20.0;
    }
    void chromaRangeExemption()
    {
        QFETCH(double, exempt);
        QFETCH(double, gradient);
        SyntheticMap m = twoColumns();
        MapBounds b;
        b.chromaRangeExempt = exempt;
        LightnessSpans spans;
        addSpan(spans, -12.5, 12.5, 87.5, gradient);
        addSpan(spans, 12.5, 12.5, 87.5, gradient);
        for (int p = 0; p < 99; ++p) addSpan(spans, 12.5, 50, 50, 0);
        regularizeDisplacementLut(m.lut, WorkingSpace::Lab, b, m.colors.data(), m.colors.size() / 3,
                                  LatticeNodes::NextToColors, 1, &spans);
        const double a = columnRange(m.lut, -12.5), free = columnRange(m.lut, 12.5);
        qInfo("output b* range: A %.3f, B %.3f", a, free);
        QVERIFY2(a <= b.chromaLightnessRange + 0.01, qPrintable(QString("A %1").arg(a)));
        if (exempt > 0 && gradient < 14)
            QVERIFY2(std::abs(free - 33.75) < 0.05, qPrintable(QString("B %1").arg(free)));
        else
            QVERIFY2(free <= b.chromaLightnessRange + 0.01, qPrintable(QString("B %1").arg(free)));
    }

    void residualMatchSlopeIsBounded_data()
    {
        QTest::addColumn<bool>("bounded");
        QTest::newRow("bounds on") << true;
        QTest::newRow("bounds off (the check must find a cliff)") << false;
    }
    void residualMatchSlopeIsBounded()
    {
        QFETCH(bool, bounded);
        // From uniform on [0, 10] (every channel) to half the mass at 0 and half at 100:
        // the monotone map jumps by 100 at the median.
        ChannelQuantiles from, to;
        for (int c = 0; c < 3; ++c)
            for (int k = 0; k < 65; ++k) {
                from.q[c].push_back(10.0f * k / 64);
                to.q[c].push_back(k < 32 ? 0.0f : (k == 32 ? 50.0f : 100.0f));
            }
        MarginalMap map(from, to, 512);
        MapBounds b;
        b.enabled = bounded;
        boundResidualMap(map, b);
        double lo = 1e9, hi = -1e9;
        for (int c = 0; c < 3; ++c)
            for (std::size_t i = 0; i + 1 < map.gridSize(c); ++i) lo = std::min(lo, map.slopeAt(c, i)), hi = std::max(hi, map.slopeAt(c, i));
        const bool within = lo >= b.residualMinSlope - 1e-3 && hi <= b.residualMaxSlope + 1e-3;
        QVERIFY2(within == bounded, qPrintable(QString("slopes %1..%2").arg(lo).arg(hi)));
    }

    void fieldStaysNearTheGlobalMap_data()
    {
        QTest::addColumn<bool>("bounded");
        QTest::newRow("bounds on") << true;
        QTest::newRow("bounds off (the check must find an island)") << false;
    }
    void fieldStaysNearTheGlobalMap()
    {
        QFETCH(bool, bounded);
        // A 2 x 2 colour-guided field whose chroma models are steep (slope 4 on every
        // axis) and, at block 3, 30 units away from the global map's displacement (an
        // island), and whose lightness slope is 6 (250 L* off the global map at L 50).
        LowResolution low;
        low.space = WorkingSpace::Lab;
        low.width = low.height = 2;
        low.subsample = 4;
        low.colors = {50, 0, 0, 60, 10, -5, 40, -10, 5, 55, 20, 20};
        low.guide = {0.5f, 0.6f, 0.4f, 0.55f};
        DisplacementField field;
        field.smoothed = field.colorGuided = true;
        field.width = field.height = 8;
        field.subsample = 4;
        field.lowWidth = field.lowHeight = 2;
        field.coefficients.assign(48, 0.0f);
        for (int node = 0; node < 4; ++node) {
            float* m = &field.coefficients[12 * node];
            for (int r = 1; r < 3; ++r)
                for (int j = 0; j < 3; ++j) m[3 * r + j] = 4.0f;
            m[10] = m[11] = node == 3 ? 30.0f : 0.0f;
            m[0] = 5.0f;  // lightness row: d(out L)/dL = 1 + 5 = 6, above the bound of 3
        }
        std::vector<float> target(12);
        for (int node = 0; node < 4; ++node) {  // the global map: the field's own value at the block without the island
            const float* c = &low.colors[3 * node];
            for (int r = 1; r < 3; ++r) target[3 * node + r] = 4.0f * (c[0] + c[1] + c[2]);
        }
        MapBounds b;
        b.enabled = bounded;
        boundFieldChroma(field, low, target.data(), b, 1);
        double worstSlope = 0, worstDistance = 0;
        for (int node = 0; node < 4; ++node) {
            const float* m = &field.coefficients[12 * node];
            const float* c = &low.colors[3 * node];
            // The lightness row: out L slope within [lightnessMinSlope, lightnessMaxSlope] and the
            // lightness displacement within fieldLightnessDeviation of the global map's (0 here).
            const double lightSlope = 1 + m[0];
            if (lightSlope > b.lightnessMaxSlope + 1e-6 || lightSlope < b.lightnessMinSlope - 1e-6) worstSlope = 2;
            worstDistance = std::max(worstDistance, std::abs(m[0] * c[0] + m[9] - target[3 * node]) *
                                                        b.fieldDeviation / b.fieldLightnessDeviation);
            for (int r = 1; r < 3; ++r) {
                worstSlope = std::max({worstSlope, std::abs(m[3 * r]) / b.chromaLightnessSlope,
                                       std::abs(m[3 * r + 1]) / b.chromaSlope, std::abs(m[3 * r + 2]) / b.chromaSlope});
                const double d = m[3 * r] * c[0] + m[3 * r + 1] * c[1] + m[3 * r + 2] * c[2] + m[9 + r];
                worstDistance = std::max(worstDistance, std::abs(d - target[3 * node + r]));
            }
        }
        const bool within = worstSlope <= 1 + 1e-6 && worstDistance <= b.fieldDeviation + 1e-3;
        QVERIFY2(within == bounded, qPrintable(QString("slope ratio %1, distance %2").arg(worstSlope).arg(worstDistance)));
    }
};

QTEST_APPLESS_MAIN(TestMapRegularizer)
#include "test_map_regularizer.moc"
