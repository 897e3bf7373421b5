// gpu-nccl on ONE GPU (a 1-rank NCCL communicator) against gpu-fused and the
// float64 reference (tests/gpu/nccl_cases.h). Qt Test; skipped without a GPU or
// without NCCL in the build. The two-GPU checks are test_gpu_nccl_two.

#include <cstdio>

#include "tests/gpu/gpu_test_support.h"
#include "tests/gpu/nccl_cases.h"
#include "tests/support/qt_checks.h"

using namespace uot;
using namespace uot::test;

class TestGpuNccl : public QObject {
    Q_OBJECT
private slots:
    void initTestCase()
    {
        UOT_QSKIP_WITHOUT_GPU();
        if (!gpu::builtWithNccl()) QSKIP("no GPU: this build has no NCCL (gpu-nccl is a stub)");
    }
    void oneGpuMatchesSingleSolve()
    {
        for (const CheckOutcome& o : ncclChecks({0})) {
            std::printf("  %s\n", o.detail.c_str());
            UOT_QVERIFY_MSG(o.ok, o.detail);
        }
    }
    void badDeviceIsRejected()
    {
        const CheckOutcome o = checkBadDevice();
        UOT_QVERIFY_MSG(o.ok, o.detail);
    }
};

QTEST_GUILESS_MAIN(TestGpuNccl)
#include "test_gpu_nccl.moc"
