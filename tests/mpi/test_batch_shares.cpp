// How `uot-mpi batch` shares its inputs out (app/mpi/batch_shares.h), against
// hand-worked orders, a simulation of ranks of different speeds taking tickets,
// and the sizes the sample files' headers give (ffprobe: fruits.jpg is 512 x
// 480, starry_night.jpg 752 x 600).
#include <QtTest/QtTest>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <fstream>
#include <numeric>
#include <string>
#include <vector>

#include "app/mpi/batch_shares.h"
#include "tests/support/qt_checks.h"

using uot::mpi::largestFirst;
using uot::mpi::TicketCursor;
using uot::mpi::headerPixelCount;
using uot::mpi::threadsPerLocalRank;

class TestBatchShares : public QObject {
    Q_OBJECT

private slots:
    void largestFirstUnknownAsTheMean()
    {
        // Unknown (0) counts as the mean of the known: (100 + 50 + 50 + 30) / 4 = 57.
        QCOMPARE(largestFirst({100, 50, 50, 0, 30}), (std::vector<std::size_t>{0, 3, 1, 2, 4}));
        QCOMPARE(largestFirst({0, 0, 0}), (std::vector<std::size_t>{0, 1, 2}));  // none known: equal, in order
        QCOMPARE(largestFirst({}), std::vector<std::size_t>{});
    }

    void everyPositionDoneOnceWhateverTheSpeeds()
    {
        // Three ranks share one counter; rank r spends (r + 1) x the time on each item
        // and asks about positions 0..n-1 in order. Simulated in event order: the rank
        // that becomes free first asks next. Every position is done by exactly one rank,
        // and the fast rank does more than the slow one.
        const std::size_t n = 40;
        std::uint64_t counter = 0;
        const auto take = [&] { return counter++; };
        std::vector<TicketCursor> ranks;
        for (int r = 0; r < 3; ++r) ranks.emplace_back(take);
        std::vector<std::size_t> next(3, 0), done(3, 0);
        std::vector<double> freeAt(3, 0.0);
        std::vector<int> doneBy(n, -1);
        for (;;) {
            int r = -1;
            for (int k = 0; k < 3; ++k)
                if (next[static_cast<std::size_t>(k)] < n && (r < 0 || freeAt[static_cast<std::size_t>(k)] < freeAt[static_cast<std::size_t>(r)]))
                    r = k;
            if (r < 0) break;
            const std::size_t rr = static_cast<std::size_t>(r);
            const std::size_t position = next[rr]++;
            if (!ranks[rr].mine(position)) continue;
            QCOMPARE(doneBy[position], -1);
            doneBy[position] = r;
            ++done[rr];
            freeAt[rr] += r + 1.0;
        }
        for (std::size_t p = 0; p < n; ++p) UOT_QVERIFY_MSG(doneBy[p] >= 0, "position " << p << " not done");
        QVERIFY(done[0] > done[2]);
        QCOMPARE(done[0] + done[1] + done[2], n);
    }

    void aTicketIsKeptUntilItsPositionComes()
    {
        std::uint64_t counter = 5;  // the other ranks took 0..4
        TicketCursor cursor([&] { return counter++; });
        QVERIFY(!cursor.mine(3));
        QVERIFY(!cursor.mine(4));
        QVERIFY(cursor.mine(5));
        QCOMPARE(counter, std::uint64_t{6});  // one ticket for the three questions
    }

    void aTicketForAPositionNobodyAsksAboutIsDropped()
    {
        // Position 1 is asked by no rank (an item every rank's plan had finished): the
        // rank that drew its ticket draws another instead of holding it forever.
        std::uint64_t counter = 0;
        TicketCursor cursor([&] { return counter++; });
        QVERIFY(cursor.mine(0));
        QVERIFY(cursor.mine(2));  // ticket 1 drawn, its position passed: dropped, ticket 2 drawn
        QCOMPARE(counter, std::uint64_t{3});
    }

    void threadsSharedOverTheNodesRanks()
    {
        QCOMPARE(threadsPerLocalRank(0, 32, 2), 16);  // two ranks of a 32-thread node: 16 each
        QCOMPARE(threadsPerLocalRank(0, 32, 8), 4);
        QCOMPARE(threadsPerLocalRank(0, 16, 1), 16);  // one rank: all of them
        QCOMPARE(threadsPerLocalRank(0, 2, 8), 1);    // more ranks than threads: one each
        QCOMPARE(threadsPerLocalRank(0, 0, 4), 1);    // hardware count unknown
        QCOMPARE(threadsPerLocalRank(3, 32, 8), 3);   // a number the user gave is kept
    }

    void pixelCountFromTheHeader()
    {
        const std::string samples = UOT_SAMPLES_DIR;
        QCOMPARE(headerPixelCount(samples + "/fruits.jpg"), std::uint64_t{512 * 480});
        QCOMPARE(headerPixelCount(samples + "/starry_night.jpg"), std::uint64_t{752 * 600});
        QCOMPARE(headerPixelCount(samples + "/no_such_file.jpg"), std::uint64_t{0});
        const QString cut = QDir::temp().filePath("uot_batch_shares_cut.jpg");
        {
            std::ifstream in(samples + "/fruits.jpg", std::ios::binary);
            std::string head(10, '\0');
            in.read(head.data(), 10);
            std::ofstream out(cut.toStdString(), std::ios::binary);
            out.write(head.data(), 10);
        }
        QCOMPARE(headerPixelCount(cut.toStdString()), std::uint64_t{0});  // no frame header: unknown
        QFile::remove(cut);
    }
};

QTEST_GUILESS_MAIN(TestBatchShares)
#include "test_batch_shares.moc"
