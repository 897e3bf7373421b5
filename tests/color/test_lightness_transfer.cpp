// The lightness transfer (core/color/lightness_transfer.h) against hand-worked and
// closed-form expectations:
// - the least-squares fit with bounded slopes on a few points, worked by hand;
// - an atom of the source's lightness (a black border) goes to the mean of the part of
//   the reference it is paired with, not to that part's lowest value;
// - between uniform lightness distributions the 1-D optimal transport map is affine
//   and known in closed form: its slope is the ratio of the ranges; within the slope
//   bound the curve is that map at every node, beyond it the line of the bound's slope
//   through the means (the nearest one over the source's mass);
// - on a lattice: every node's lightness output is the blend of the lattice's own
//   curve and the transfer's, monotone, and the chroma displacement is untouched;
// - no change for weight 0, bounds off, or a space without a lightness axis;
// - the transfer is kept only where the map's palette estimate says it brings the source
//   palette nearer the reference's: an identity lattice, source points at L 25 and 75,
//   the distributions 25..75 onto 0..100 (the transfer is y = 2 (L - 25)): with reference
//   points at 0 and 100 the points land on them (kept), with reference points at 25 and 75
//   the identity is exact and the transfer is refused.
#include <QtTest/QtTest>

#include <cmath>
#include <vector>

#include "core/color/lightness_transfer.h"
#include "core/transport/uot_error.h"
#include "tests/support/qt_checks.h"

using namespace uot;

namespace {

// Quantile levels of the uniform distribution on [a, b].
std::vector<float> uniformQuantiles(double a, double b, int levels = 257)
{
    std::vector<float> q(static_cast<std::size_t>(levels));
    for (int k = 0; k < levels; ++k) q[static_cast<std::size_t>(k)] = static_cast<float>(a + (b - a) * k / (levels - 1));
    return q;
}

ChannelQuantiles uniformColours(double a, double b)
{
    ChannelQuantiles q;
    q.q[0] = uniformQuantiles(a, b);
    q.q[1] = uniformQuantiles(-10, 10);
    q.q[2] = uniformQuantiles(-10, 10);
    return q;
}

// A lattice over L in [lo, lo + 4 step] (5 nodes per axis) whose lightness output is
// the identity plus `lift` and whose chroma displacement is a known pattern.
DisplacementLut lattice(double lo, double step, double lift)
{
    DisplacementLut lut;
    lut.size = 5;
    lut.lo[0] = lo, lut.lo[1] = -20, lut.lo[2] = -20;
    lut.step[0] = step, lut.step[1] = 10, lut.step[2] = 10;
    lut.values.resize(125 * 3);
    for (std::size_t node = 0; node < 125; ++node) {
        lut.values[3 * node] = static_cast<float>(lift);
        lut.values[3 * node + 1] = static_cast<float>(node % 7) - 3.0f;
        lut.values[3 * node + 2] = static_cast<float>(node % 5) - 2.0f;
    }
    return lut;
}

// An identity lattice over L 0..100 (step 25), a*, b* -20..20 (step 10).
DisplacementLut identityLattice()
{
    DisplacementLut lut;
    lut.size = 5;
    lut.lo[0] = 0, lut.lo[1] = -20, lut.lo[2] = -20;
    lut.step[0] = 25, lut.step[1] = 10, lut.step[2] = 10;
    lut.values.assign(125 * 3, 0.0f);
    return lut;
}

// Two grey points of equal weight at lightness L0 and L1, with lightness distribution
// uniform on [a, b].
Palette twoGreys(double L0, double L1, double a, double b)
{
    Palette p;
    p.points = {L0, 0, 0, L1, 0, 0};
    p.weights = {0.5, 0.5};
    p.marginals = uniformColours(a, b);
    return p;
}

// The lattice's lightness output at the grey node of lightness index k.
double greyOutput(const DisplacementLut& lut, std::size_t k)
{
    const std::size_t node = k * 25 + 2 * 5 + 2;
    return lut.lo[0] + static_cast<double>(k) * lut.step[0] + lut.values[3 * node];
}

}  // namespace

class TestLightnessTransfer : public QObject {
    Q_OBJECT
private slots:
    void fitWorkedByHand()
    {
        // Nodes 0, 1, 2; points (0, 0), (1, 10), (2, 10); slopes in [0, 3]. Both steps end
        // at 3 (their residual gradients stay positive) and the offset makes the residuals
        // sum to 0: 3 y0 + 9 = 20, y = 11/3, 20/3, 29/3.
        const std::vector<double> y = boundedSlopeFit({0, 1, 2}, {0, 10, 10}, 0, 1, 3, 0, 3);
        QCOMPARE(y.size(), std::size_t{3});
        UOT_QCOMPARE_CLOSE(y[0], 11.0 / 3, 1e-6);
        UOT_QCOMPARE_CLOSE(y[1], 20.0 / 3, 1e-6);
        UOT_QCOMPARE_CLOSE(y[2], 29.0 / 3, 1e-6);
        // Within the bounds the points' line itself.
        const std::vector<double> line = boundedSlopeFit({0.5, 1, 1.5, 2}, {2, 3, 4, 5}, 0, 1, 3, 0, 3);
        for (int k = 0; k < 3; ++k) UOT_QCOMPARE_CLOSE(line[static_cast<std::size_t>(k)], 1 + 2 * k, 1e-6);
        UOT_QVERIFY_THROWS_WITH(boundedSlopeFit({0}, {0}, 0, 1, 3, 2, 1), "minSlope");
    }

    void anAtomGoesToTheMeanOfItsShare()
    {
        // Half the source at L = 0 (a black border), half uniform on [50, 100]; the
        // reference uniform on [0, 100]. The rearrangement pairs the atom with the
        // reference's lower half, whose mean is 25, and the rest with [50, 100] itself.
        std::vector<float> from(257);
        for (int k = 0; k < 257; ++k) from[static_cast<std::size_t>(k)] = k <= 128 ? 0.0f : static_cast<float>(50 + 50.0 * (k - 128) / 128);
        const std::vector<double> curve = lightnessTransferCurve(from, uniformQuantiles(0, 100), 0, 12.5, 9, 0, 100);
        UOT_QCOMPARE_CLOSE(curve[0], 25, 0.25);
        for (int k = 4; k < 9; ++k) UOT_QCOMPARE_CLOSE(curve[static_cast<std::size_t>(k)], 12.5 * k, 0.25);
    }

    void narrowOntoWideWithinTheBound()
    {
        // Source lightness uniform on [40, 60], reference on [10, 90]: the monotone
        // rearrangement is y = 10 + 4 (x - 40); with slopes up to 6 the curve is that map.
        const double lo = 40, step = 20.0 / 8;
        const std::vector<double> curve =
            lightnessTransferCurve(uniformQuantiles(40, 60), uniformQuantiles(10, 90), lo, step, 9, 0.2, 6);
        for (int k = 0; k < 9; ++k) {
            const double x = lo + k * step;
            UOT_QCOMPARE_CLOSE(curve[static_cast<std::size_t>(k)], 10 + 4 * (x - 40), 1e-3);
        }
    }

    void narrowOntoWideClippedThroughTheMean()
    {
        // The same with slopes up to 3: the nearest line of slope <= 3 to y = 10 + 4 (x - 40)
        // over the source's uniform mass is the one of slope 3 through (50, 50). Nodes
        // outside the source's range (no mass) continue at slope 1.
        const double lo = 30, step = 5;
        const std::vector<double> curve =
            lightnessTransferCurve(uniformQuantiles(40, 60), uniformQuantiles(10, 90), lo, step, 9, 0.2, 3);
        const double atForty = 50 - 3 * 10;
        UOT_QCOMPARE_CLOSE(curve[2], atForty, 1e-3);
        UOT_QCOMPARE_CLOSE(curve[6], 50 + 3 * 10, 1e-3);
        UOT_QCOMPARE_CLOSE(curve[0], atForty - 10, 1e-3);
        UOT_QCOMPARE_CLOSE(curve[8], 50 + 3 * 10 + 10, 1e-3);
        for (std::size_t k = 2; k < 6; ++k) UOT_QCOMPARE_CLOSE(curve[k + 1] - curve[k], 3 * step, 1e-3);
    }

    void wideOntoNarrowHeldAtTheSlopeFloor()
    {
        // Reverse: [10, 90] onto [45, 55] has slope 1/8, below the floor 0.2: the nearest
        // line of slope 0.2, through (50, 50).
        const std::vector<double> curve =
            lightnessTransferCurve(uniformQuantiles(10, 90), uniformQuantiles(45, 55), 10, 10, 9, 0.2, 3);
        for (int k = 0; k < 9; ++k) UOT_QCOMPARE_CLOSE(curve[static_cast<std::size_t>(k)], 50 + 0.2 * (10 + 10 * k - 50), 1e-3);
    }

    void latticeBlendsTowardTheTransfer()
    {
        // The lattice's own curve: L + 2. The transfer (slope bound 6): 10 + 4 (L - 40).
        // Weight 0.5: every node's L output is the mean of the two, chroma unchanged.
        const double lo = 40, step = 5;
        DisplacementLut lut = lattice(lo, step, 2);
        const DisplacementLut before = lut;
        MapBounds bounds;
        bounds.lightnessMaxSlope = 6;
        transferLightness(lut, WorkingSpace::Lab, bounds, uniformColours(40, 60), uniformColours(10, 90), 0.5);
        for (std::size_t node = 0; node < 125; ++node) {
            const double L = lo + static_cast<double>(node / 25) * step;
            const double expected = 0.5 * (L + 2) + 0.5 * (10 + 4 * (L - 40));
            UOT_QCOMPARE_CLOSE(L + lut.values[3 * node], expected, 1e-3);
            QCOMPARE(lut.values[3 * node + 1], before.values[3 * node + 1]);
            QCOMPARE(lut.values[3 * node + 2], before.values[3 * node + 2]);
        }
    }

    void keptOnlyWhereThePaletteComesNearer()
    {
        MapBounds bounds;
        bounds.lightnessTransfer = 1;
        const Palette source = twoGreys(25, 75, 25, 75);
        const float colors[6] = {25, 0, 0, 75, 0, 0};
        // Reference points at 0 and 100: the transfer carries 25 -> 0 and 75 -> 100.
        DisplacementLut lut = identityLattice();
        boundWithLightnessTransfer(lut, WorkingSpace::Lab, bounds, colors, 2, LatticeNodes::NextToColors, 1, nullptr, source,
                                   twoGreys(0, 100, 0, 100));
        UOT_QCOMPARE_CLOSE(greyOutput(lut, 1), 0, 0.05);
        UOT_QCOMPARE_CLOSE(greyOutput(lut, 3), 100, 0.05);
        UOT_QCOMPARE_CLOSE(paletteDistanceThrough(lut, source, twoGreys(0, 100, 0, 100)), 0, 0.05);
        // Reference points at 25 and 75 (its distribution said 0..100): the identity is exact, the
        // transfer would put both points 25 away (25 / sqrt(3) by the estimate), so it is refused.
        lut = identityLattice();
        const Palette nearer = twoGreys(25, 75, 0, 100);
        UOT_QCOMPARE_CLOSE(paletteDistanceThrough(lut, twoGreys(25, 75, 25, 75), nearer), 0, 1e-9);
        boundWithLightnessTransfer(lut, WorkingSpace::Lab, bounds, colors, 2, LatticeNodes::NextToColors, 1, nullptr, source,
                                   nearer);
        UOT_QCOMPARE_CLOSE(greyOutput(lut, 1), 25, 0.05);
        UOT_QCOMPARE_CLOSE(greyOutput(lut, 3), 75, 0.05);
    }

    void noChangeWhenOff()
    {
        const DisplacementLut before = lattice(40, 5, 2);
        MapBounds bounds;
        DisplacementLut lut = before;
        transferLightness(lut, WorkingSpace::Lab, bounds, uniformColours(40, 60), uniformColours(10, 90), 0);
        QVERIFY(lut.values == before.values);
        transferLightness(lut, WorkingSpace::LinearRgb, bounds, uniformColours(40, 60), uniformColours(10, 90), 1);
        QVERIFY(lut.values == before.values);
        transferLightness(lut, WorkingSpace::Lab, bounds, ChannelQuantiles{}, uniformColours(10, 90), 1);
        QVERIFY(lut.values == before.values);
        bounds.enabled = false;
        transferLightness(lut, WorkingSpace::Lab, bounds, uniformColours(40, 60), uniformColours(10, 90), 1);
        QVERIFY(lut.values == before.values);
    }
};

QTEST_APPLESS_MAIN(TestLightnessTransfer)
#include "test_lightness_transfer.moc"
