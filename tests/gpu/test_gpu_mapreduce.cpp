// gpu-mapreduce (matrix-free, fp32) against the float64 CPU solvers: the
// reference solver step for step on the held-out-style shapes in d = 1, 3, 8,
// the log-domain solver at eps 1e-3 and 1e-4 (no NaN), warm start, the
// translation-invariant mode's fixed point, the final plan evaluation, and the
// refusals (fp64, dense cost) and cancellation. Skips without a usable GPU.

#include <QTest>

#include <string>

#include "gpu/gpu_backend.h"
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
