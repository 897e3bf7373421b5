// How `uot-mpi solve` splits the rows over the ranks (app/mpi/row_split.h),
// against hand-worked splits.
#include <QtTest/QtTest>
#include <cmath>
#include <cstddef>
#include <vector>

#include "app/mpi/row_split.h"

using uot::mpi::balancedRowSplit;
using uot::mpi::evenRowSplit;
using uot::mpi::moveGainSeconds;
using Bounds = std::vector<std::size_t>;

class TestRowSplit : public QObject {
    Q_OBJECT

private slots:
    void evenIsMrOverP()
    {
        QCOMPARE(evenRowSplit(10, 3), (Bounds{0, 3, 6, 10}));
        QCOMPARE(evenRowSplit(2, 3), (Bounds{0, 0, 1, 2}));  // a rank without rows
        QCOMPARE(evenRowSplit(16384, 1), (Bounds{0, 16384}));
    }

    void rowsFollowTheMeasuredSpeed()
    {
        // 100 rows each in 1, 1 and 2 s: speeds 100, 100, 50 rows/s, shares 2/5, 2/5, 1/5 of 300.
        QCOMPARE(balancedRowSplit({100, 100, 100}, {1.0, 1.0, 2.0}, 300), (Bounds{0, 120, 240, 300}));
        // 8 ranks of 2048 rows, two of them at 39.6 ms a pass, six at 28.0 ms (the 2 x H200 host's
        // map-by-core run): shares 16384 / (6 / 28 + 2 / 39.6) = 73270.6.. over 28 = 2209.83 and over
        // 39.6 = 1562.51; floors 6 x 2209 + 2 x 1562 = 16378, the 6 rows left to the remainders .83.
        const Bounds b =
            balancedRowSplit(std::vector<std::size_t>(8, 2048), {28, 28, 39.6, 28, 28, 39.6, 28, 28}, 16384);
        QCOMPARE(b, (Bounds{0, 2210, 4420, 5982, 8192, 10402, 11964, 14174, 16384}));
    }

    void leftoverRowsGoToTheLargestRemaindersThenTheLowerRank()
    {
        // Equal speeds, 10 rows over 3: 3.33 each, the leftover row to rank 0.
        QCOMPARE(balancedRowSplit({5, 5, 5}, {1.0, 1.0, 1.0}, 10), (Bounds{0, 4, 7, 10}));
        // Speeds 1, 2: shares 3.33 and 6.67 of 10: floors 3, 6; the remainder .67 wins.
        QCOMPARE(balancedRowSplit({1, 2}, {1.0, 1.0}, 10), (Bounds{0, 3, 10}));
    }

    void unknownSpeedCountsAsTheMean()
    {
        // Rank 0 had no rows (and a rank with a time of 0 or NaN): it counts at the mean speed.
        QCOMPARE(balancedRowSplit({0, 100, 100}, {0.0, 1.0, 1.0}, 300), (Bounds{0, 100, 200, 300}));
        QCOMPARE(balancedRowSplit({100, 100}, {qQNaN(), 2.0}, 100), (Bounds{0, 50, 100}));
        // Nothing known: the even split.
        QCOMPARE(balancedRowSplit({0, 0, 0}, {0.0, 0.0, 0.0}, 10), evenRowSplit(10, 3));
    }

    void aMoveIsWorthItWhenItsSavingBeatsItsCost()
    {
        // 100 rows each; rank 0 took 1 s over 10 iterations (100 rows/s), rank 1 2 s (50
        // rows/s). On {0, 133, 200}: 1.33 s and 1.34 s, so 0.066 s saved a pass, 1.32 s over
        // 20 passes. Rank 0 sets up rows 100..132 (33 rows), rank 1 none: the move costs
        // 33 x 0.01 s = 0.33 s, and saves 0.99 s net.
        const Bounds now{0, 100, 200}, next{0, 133, 200};
        QVERIFY(std::abs(moveGainSeconds(now, next, {1.0, 2.0}, 10, 20, {0.01, 0.01}) - 0.99) < 1e-12);
        // At 0.05 s a row it costs 1.65 s: not worth it (-0.33 s).
        QVERIFY(std::abs(moveGainSeconds(now, next, {1.0, 2.0}, 10, 20, {0.05, 0.05}) + 0.33) < 1e-12);
        // A rank without rows counts at the mean speed (100 rows/s): {0, 50, 100} takes 0.5 s
        // against 1 s over 10 passes, 0.5 s saved over 10 more; its 50 new rows cost 0.05 s.
        QVERIFY(std::abs(moveGainSeconds({0, 0, 100}, {0, 50, 100}, {0.0, 1.0}, 10, 10, {0.001, 0.001}) - 0.45) <
                1e-12);
    }
};

QTEST_GUILESS_MAIN(TestRowSplit)
#include "test_row_split.moc"
