// gpu-nccl over TWO GPUs against gpu-fused on one and the float64 reference
// (tests/gpu/nccl_cases.h): rows split unevenly, a GPU with no rows, chunked
// overlap. Exits 77 (CTest: skipped) where fewer than 2 GPUs are visible or the
// build has no NCCL. Qt Test otherwise. Run with NCCL_NVLS_ENABLE=0 (no NVLink
// multicast) on the lent multi-GPU machines.

#include <cstdio>

#include "tests/gpu/nccl_cases.h"
#include "tests/support/qt_checks.h"

using namespace uot;
using namespace uot::test;

class TestGpuNcclTwo : public QObject {
    Q_OBJECT
private slots:
    void twoGpusMatchSingleSolve()
    {
        for (const CheckOutcome& o : ncclChecks({0, 1})) {
            std::printf("  %s\n", o.detail.c_str());
            UOT_QVERIFY_MSG(o.ok, o.detail);
        }
    }
};

int main(int argc, char** argv)
{
    const int gpus = gpu::unavailableReason().empty() ? visibleGpus() : 0;
    if (!gpu::builtWithNccl() || gpus < 2) {
        std::printf("SKIP: test_gpu_nccl_two needs NCCL and 2 GPUs (this build %s NCCL; %d GPU(s) visible)\n",
                    gpu::builtWithNccl() ? "has" : "has no", gpus);
        return 77;
    }
    TestGpuNcclTwo test;
    return QTest::qExec(&test, argc, argv);
}

#include "test_gpu_nccl_two.moc"
