// gpu-mapreduce (matrix-free, fp32) against the float64 CPU solvers: the
// reference solver step for step on the held-out-style shapes in d = 1, 3, 8,
// the log-domain solver at eps 1e-3 and 1e-4 (no NaN), warm start, the
// translation-invariant mode's fixed point, the final plan evaluation, and the
// refusals (fp64, dense cost) and cancellation, each work schedule of a pass on
// problems where blocks cross row blocks. Skips without a usable GPU, except the
// schedule arithmetic (gpu/mapreduce_schedule.h), checked by enumeration on the host.

#include <QTest>

#include <algorithm>
#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "gpu/gpu_backend.h"
#include "gpu/mapreduce_schedule.h"
#include "tests/gpu/mapreduce_cases.h"

using namespace uot;
using namespace uot::test;

// QSKIP returns from the calling test function, so this must stay a macro.
#define REQUIRE_GPU()                                                   \
    do {                                                                \
        const std::string reason = gpu::unavailableReason();            \
        if (!reason.empty()) QSKIP(reason.c_str());                     \
    } while (0)

class GpuMapReduceTest : public QObject {
    Q_OBJECT

private:
    static void verify(const CheckOutcome& o)
    {
        qInfo("%s", o.detail.c_str());
        QVERIFY2(o.ok, o.detail.c_str());
    }

private slots:
    void againstReference_data()
    {
        QTest::addColumn<int>("index");
        const auto cases = referenceCases();
        for (std::size_t k = 0; k < cases.size(); ++k)
            QTest::newRow(cases[k].name.c_str()) << static_cast<int>(k);
    }
    void againstReference()
    {
        REQUIRE_GPU();
        QFETCH(int, index);
        verify(checkAgainstReference(referenceCases().at(static_cast<std::size_t>(index))));
    }

    void smallEpsWithoutNaN_data()
    {
        QTest::addColumn<int>("index");
        const auto cases = smallEpsCases();
        for (std::size_t k = 0; k < cases.size(); ++k)
            QTest::newRow(cases[k].name.c_str()) << static_cast<int>(k);
    }
    void smallEpsWithoutNaN()
    {
        REQUIRE_GPU();
        QFETCH(int, index);
        verify(checkSmallEps(smallEpsCases().at(static_cast<std::size_t>(index))));
    }

    void schedulesAgreeWithTheReference_data()
    {
        QTest::addColumn<int>("index");
        const auto cases = scheduleCases();
        for (std::size_t k = 0; k < cases.size(); ++k)
            QTest::newRow((cases[k].cloud.name + ", " + cases[k].label).c_str()) << static_cast<int>(k);
    }
    void schedulesAgreeWithTheReference()
    {
        REQUIRE_GPU();
        QFETCH(int, index);
        verify(checkSchedule(scheduleCases().at(static_cast<std::size_t>(index))));
    }

    // Every (row block, tile) unit belongs to exactly one block, blockOf inverts
    // the ranges, the blocks meeting a row block hold distinct slots below
    // segments(r) <= maxSegments; balanced launches no more blocks than slots,
    // with a largest share of ceil(units / slot count) and all but the last equal.
    void scheduleCoversEveryUnitOnce_data()
    {
        QTest::addColumn<int>("kind");  // gpu::MapReduceWork
        QTest::addColumn<qulonglong>("own");
        QTest::addColumn<qulonglong>("other");
        QTest::addColumn<int>("rowsPerBlock");
        QTest::addColumn<int>("resident");
        for (const int kind : {0, 2}) {
            const char* names[] = {"split", "", "balanced"};
            const auto row = [&](const char* name, qulonglong own, qulonglong other, int rows, int resident) {
                QTest::addRow("%s %s", names[kind], name) << kind << own << other << rows << resident;
            };
            row("65536^2, 660 slots", 65536, 65536, 1024, 660);
            row("16384^2, 660 slots", 16384, 16384, 1024, 660);
            row("131072^2, 660 slots", 131072, 131072, 1024, 660);
            row("2^20 x 2^20, 660 slots", 1u << 20, 1u << 20, 1024, 660);
            row("10^6 x 10^6, 660 slots", 1000000, 1000000, 1024, 660);
            row("2500x1800, 7 slots", 2500, 1800, 1024, 7);
            row("1x7, 660 slots", 1, 7, 1024, 660);
            row("3000x37 d8, 5 slots", 3000, 37, 512, 5);
            row("37x3000 d8, 5 slots", 37, 3000, 512, 5);
        }
    }
    void scheduleCoversEveryUnitOnce()
    {
        using uot::gpu::detail::MapReduceSchedule;
        QFETCH(int, kind);
        QFETCH(qulonglong, own);
        QFETCH(qulonglong, other);
        QFETCH(int, rowsPerBlock);
        QFETCH(int, resident);
        constexpr int kTile = 256;
        namespace d = uot::gpu::detail;
        const MapReduceSchedule s = kind == 0 ? d::splitMapReduceSchedule(own, other, rowsPerBlock, kTile, resident)
                                              : d::balancedMapReduceSchedule(own, other, rowsPerBlock, kTile, resident);
        const std::uint64_t rowBlocks = (own + rowsPerBlock - 1) / rowsPerBlock, tiles = (other + kTile - 1) / kTile;
        QCOMPARE(s.rowBlocks, rowBlocks);
        QCOMPARE(s.tiles, tiles);
        const std::uint64_t units = rowBlocks * tiles;
        const std::uint64_t shared = std::min<std::uint64_t>(std::uint64_t(resident), units);
        if (kind == 2) QVERIFY(std::uint64_t(s.blocks) <= shared);
        std::vector<unsigned char> covered(units, 0);
        std::vector<std::set<int>> slotsOf(rowBlocks);  // slots written into each row block
        std::vector<int> blocksMeeting(rowBlocks, 0);
        std::uint64_t largest = 0;
        std::vector<std::uint64_t> shares;
        for (int b = 0; b < s.blocks; ++b) {
            std::uint64_t begin = 0, end = 0;
            s.range(b, begin, end);
            QVERIFY2(begin < end && end <= units, "a block with no work or past the end");
            largest = std::max(largest, end - begin);
            shares.push_back(end - begin);
            for (std::uint64_t u = begin; u < end; ++u) {
                QVERIFY2(!covered[u], "a unit reduced twice");
                covered[u] = 1;
                if (s.blockOf(u) != b) QFAIL(qPrintable(QString("blockOf(%1) = %2, not %3").arg(u).arg(s.blockOf(u)).arg(b)));
            }
            for (std::uint64_t r = begin / tiles; r <= (end - 1) / tiles; ++r) {
                const int slot = s.slot(b, r);
                QVERIFY(slot >= 0 && slot < s.segments(r));
                QVERIFY2(slotsOf[r].insert(slot).second, "two blocks write the same slot of a row block");
                ++blocksMeeting[r];
            }
        }
        QVERIFY2(std::all_of(covered.begin(), covered.end(), [](unsigned char c) { return c == 1; }),
                 "a unit no block reduces");
        for (std::uint64_t r = 0; r < rowBlocks; ++r) {
            QCOMPARE(s.segments(r), blocksMeeting[r]);  // the finalize step reads every slot it is told of
            QVERIFY(s.segments(r) <= s.maxSegments);
        }
        if (kind == 2) {
            QCOMPARE(largest, (units + shared - 1) / shared);  // the least largest share over `shared` blocks
            for (std::size_t b = 0; b + 1 < shares.size(); ++b) QCOMPARE(shares[b], largest);  // all but the last
        }
    }

    void warmStartContinuesTheIteration()
    {
        REQUIRE_GPU();
        verify(checkWarmStart());
    }

    void translationInvariantReachesTheFixedPoint_data()
    {
        QTest::addColumn<int>("m");
        QTest::addColumn<int>("n");
        QTest::newRow("37x53") << 37 << 53;
        QTest::newRow("513x1025") << 513 << 1025;
    }
    void translationInvariantReachesTheFixedPoint()
    {
        REQUIRE_GPU();
        QFETCH(int, m);
        QFETCH(int, n);
        verify(checkTranslationInvariant(static_cast<std::size_t>(m), static_cast<std::size_t>(n)));
    }

    void overRelaxationConvergesInFewerPasses_data()
    {
        QTest::addColumn<int>("m");
        QTest::addColumn<int>("n");
        QTest::addColumn<bool>("ti");
        QTest::newRow("plain 37x53") << 37 << 53 << false;
        QTest::newRow("TI 37x53") << 37 << 53 << true;
        QTest::newRow("TI 513x1025") << 513 << 1025 << true;
    }
    void overRelaxationConvergesInFewerPasses()
    {
        REQUIRE_GPU();
        QFETCH(int, m);
        QFETCH(int, n);
        QFETCH(bool, ti);
        verify(checkOverRelaxed(static_cast<std::size_t>(m), static_cast<std::size_t>(n),
                                ti ? IterationMode::TranslationInvariant : IterationMode::Plain));
    }

    void finalPlanEvaluation()
    {
        REQUIRE_GPU();
        verify(checkFinalEvaluation());
    }

    void refusesFp64AndDenseCostAndHonoursCancel()
    {
        REQUIRE_GPU();
        verify(checkRefusalsAndCancel());
    }
};

QTEST_GUILESS_MAIN(GpuMapReduceTest)
#include "test_gpu_mapreduce.moc"
