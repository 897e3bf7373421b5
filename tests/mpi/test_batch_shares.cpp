// How `uot-mpi batch` splits its inputs (app/mpi/batch_shares.h), against
// hand-worked splits and the sizes the sample files' headers give (ffprobe:
// fruits.jpg is 512 x 480, starry_night.jpg 752 x 600).
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

using uot::mpi::assignByWork;
using uot::mpi::headerPixelCount;
using uot::mpi::threadsPerLocalRank;

class TestBatchShares : public QObject {
    Q_OBJECT

private slots:
    void largestFirstToTheLeastLoadedRank()
    {
        // Unknown (0) counts as the mean of the known: (100 + 50 + 50 + 30) / 4 = 57.
        // Order 100 (0), 57 (3), 50 (1), 50 (2), 30 (4); loads: r0 100, r1 57, r1 107,
        // r0 150, r1 137.
        const std::vector<int> owners = assignByWork({100, 50, 50, 0, 30}, 2);
        QCOMPARE(owners, (std::vector<int>{0, 1, 0, 1, 1}));
    }

    void equalWorkGoesRoundTheRanks()
    {
        const std::vector<int> owners = assignByWork(std::vector<std::uint64_t>(7, 10), 3);
        QCOMPARE(owners, (std::vector<int>{0, 1, 2, 0, 1, 2, 0}));
    }

    void balancedWithinTheLargestItem()
    {
        // 40 sizes from a fixed sequence over 8 ranks: every rank's work is within the
        // largest item of the mean (the bound of the largest-first rule).
        std::vector<std::uint64_t> work;
        std::uint64_t x = 12345;
        for (int i = 0; i < 40; ++i) {
            x = x * 6364136223846793005ULL + 1442695040888963407ULL;
            work.push_back(100000 + (x >> 40) % 900000);
        }
        const std::vector<int> owners = assignByWork(work, 8);
        QCOMPARE(owners, assignByWork(work, 8));  // deterministic
        std::vector<std::uint64_t> load(8, 0);
        for (std::size_t i = 0; i < work.size(); ++i) load[static_cast<std::size_t>(owners[i])] += work[i];
        const double mean = static_cast<double>(std::accumulate(work.begin(), work.end(), std::uint64_t{0})) / 8;
        const double largest = static_cast<double>(*std::max_element(work.begin(), work.end()));
        for (const std::uint64_t l : load)
            UOT_QVERIFY_MSG(std::abs(static_cast<double>(l) - mean) <= largest, "load " << l << " mean " << mean);
    }

    void moreRanksThanItems()
    {
        QCOMPARE(assignByWork({5, 9}, 4), (std::vector<int>{1, 0}));
        QCOMPARE(assignByWork({}, 3), std::vector<int>{});
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
