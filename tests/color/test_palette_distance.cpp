// The map's palette distance estimate (core/color/palette_distance.h) against
// hand-worked values:
// - two single points p and q: every direction u gives |u . (p - q)|, and the 13
//   directions' mean u u^T is I / 3, so the distance is |p - q| / sqrt(3) whatever
//   the direction of p - q;
// - weights matter: {0, 2} (half each) against {1} along x is 1 / sqrt(3) per the same
//   rule (each half moves 1), and {0 (3/4), 4 (1/4)} against {0 (1/4), 4 (3/4)} moves
//   half the mass by 4 along x: sqrt(8 / 3);
// - the weights are normalised (scaling them changes nothing), and zero-weight points
//   are ignored; a set without weight gives 0, mismatched sizes throw.
#include <QtTest/QtTest>

#include <cmath>
#include <vector>

#include "core/color/palette_distance.h"
#include "core/transport/uot_error.h"
#include "tests/support/qt_checks.h"

using namespace uot;

class TestPaletteDistance : public QObject {
    Q_OBJECT
private slots:
    void twoPointsAreTheirDistanceOverRootThree()
    {
        for (const std::vector<double>& q : {std::vector<double>{3, 0, 0}, {0, 0, -3}, {1, 2, 2}, {-2, 1, 2}}) {
            const double norm = std::sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2]);
            UOT_QCOMPARE_CLOSE(slicedPaletteDistance({0, 0, 0}, {1}, q, {1}), norm / std::sqrt(3.0), 1e-12);
        }
    }

    void weightsAreMass()
    {
        UOT_QCOMPARE_CLOSE(slicedPaletteDistance({0, 0, 0, 2, 0, 0}, {0.5, 0.5}, {1, 0, 0}, {1}), 1 / std::sqrt(3.0), 1e-12);
        UOT_QCOMPARE_CLOSE(slicedPaletteDistance({0, 0, 0, 4, 0, 0}, {0.75, 0.25}, {0, 0, 0, 4, 0, 0}, {0.25, 0.75}),
                           std::sqrt(8.0 / 3.0), 1e-12);
        // Scaled weights and a point of no weight: the same.
        UOT_QCOMPARE_CLOSE(slicedPaletteDistance({0, 0, 0, 4, 0, 0, 50, 50, 50}, {3, 1, 0}, {0, 0, 0, 4, 0, 0}, {1, 3}),
                           std::sqrt(8.0 / 3.0), 1e-12);
    }

    void degenerateInputs()
    {
        QCOMPARE(slicedPaletteDistance({0, 0, 0}, {0}, {1, 0, 0}, {1}), 0.0);
        UOT_QVERIFY_THROWS_WITH(slicedPaletteDistance({0, 0}, {1}, {1, 0, 0}, {1}), "3 coordinates");
    }
};

QTEST_APPLESS_MAIN(TestPaletteDistance)
#include "test_palette_distance.moc"
