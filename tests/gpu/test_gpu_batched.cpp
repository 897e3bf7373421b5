// gpu-batched and the batched recolor engine against independent float64 CPU
// solves (tests/gpu/batched_cases.h): mixed sizes in one batch (plain and TI), the iterations
// and undone steps of single solves under the same rule, an empty and a
// one-element batch, cancellation, a rejected problem, and the engine against
// the per-image GPU loop. Qt Test; skipped where no GPU is usable. The same
// checks run without Qt as `batched_bench --check` on the GPU machine.

#include <cstdio>

#include "tests/gpu/batched_cases.h"
#include "tests/gpu/gpu_test_support.h"
#include "tests/support/qt_checks.h"

using namespace uot;
using namespace uot::test;

namespace {
void expectAll(const std::vector<CheckOutcome>& outcomes)
{
    for (const CheckOutcome& o : outcomes) {
        std::printf("  %s\n", o.detail.c_str());
        UOT_QVERIFY_MSG(o.ok, o.detail);
    }
}
}  // namespace

class TestGpuBatched : public QObject {
    Q_OBJECT
private slots:
    void initTestCase() { UOT_QSKIP_WITHOUT_GPU(); }
    void registered() { QVERIFY(batchedSolverFor(DeviceKind::Gpu).value_or("") == "gpu-batched"); }
    void mixedSizesInOneBatch() { expectAll(checkMixedBatch()); }
    void translationInvariantBatch() { expectAll(checkTranslationInvariantBatch()); }
    void iterationsOfTheSingleSolves() { expectAll(checkIterationsOfSingleSolves()); }
    void safeguardUndoesSteps() { expectAll(checkSafeguardUndo()); }
    void emptyAndOneElementBatch() { expectAll(checkEmptyAndSingle()); }
    void cancellation() { expectAll(checkCancellation()); }
    void rejectsDenseCost() { expectAll({checkRejectsDenseCost()}); }
    void engineMatchesPerImageLoop() { expectAll(checkEngine()); }
};

QTEST_GUILESS_MAIN(TestGpuBatched)
#include "test_gpu_batched.moc"
