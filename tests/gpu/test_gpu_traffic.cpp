// Host-only (no GPU needed, runs in CI): the bytes per iteration the GPU
// variants report, in particular gpu-fused's switch to the two-pass cuBLAS path
// when a row does not fit its one-pass kernel (gpu/fused_limits.h).

#include <cstdint>

#include "gpu/gpu_solver.h"
#include "tests/support/qt_checks.h"

using namespace uot;
using namespace uot::gpu::detail;

class TestGpuTraffic : public QObject {
    Q_OBJECT
private slots:
    void fusedIsOneReadWhereTheRowFits();
    void fusedLimitDependsOnTheDevicesSharedMemory();
    void bf16StorageMovesTwoBytesPerEntry();
    void otherVariantsMoveFixedMultiples();
};

void TestGpuTraffic::fusedIsOneReadWhereTheRowFits()
{
    const std::uint64_t m = 1024;
    // fp32: 16384 columns = 4096 vectors = 512 threads x 8; one more vector does not fit.
    QVERIFY2(fusedOnePass(16384, 4, kH100SharedOptinBytes), "fusedOnePass(16384, 4, kH100SharedOptinBytes)");
    QVERIFY2(!fusedOnePass(16385, 4, kH100SharedOptinBytes), "!fusedOnePass(16385, 4, kH100SharedOptinBytes)");
    QVERIFY2(!fusedOnePass(20000, 4, kH100SharedOptinBytes), "!fusedOnePass(20000, 4, kH100SharedOptinBytes)");
    QCOMPARE(bytesPerIterationFor(Variant::Fused, m, 8192, 4), std::uint64_t(m * 8192 * 4));
    QCOMPARE(bytesPerIterationFor(Variant::Fused, m, 16384, 4), std::uint64_t(m * 16384 * 4));
    QCOMPARE(bytesPerIterationFor(Variant::Fused, m, 16385, 4), std::uint64_t(2 * m * 16385 * 4));
    QCOMPARE(bytesPerIterationFor(Variant::Fused, m, 20000, 4), std::uint64_t(2 * m * 20000 * 4));
    // fp64: half as many columns per vector.
    QCOMPARE(bytesPerIterationFor(Variant::Fused, m, 8192, 8), std::uint64_t(m * 8192 * 8));
    QCOMPARE(bytesPerIterationFor(Variant::Fused, m, 8193, 8), std::uint64_t(2 * m * 8193 * 8));
    // Odd widths round up to whole vectors: 1, 3, 4097 columns fit.
    QCOMPARE(bytesPerIterationFor(Variant::Fused, 3, 1, 4), std::uint64_t(12));
    QCOMPARE(bytesPerIterationFor(Variant::Fused, 3, 4097, 4), std::uint64_t(3 * 4097 * 4));
}

void TestGpuTraffic::fusedLimitDependsOnTheDevicesSharedMemory()
{
    // 99 KiB of opt-in shared memory (e.g. compute capability 8.6): 8192 fp32
    // columns = 256 threads x 8 vectors = 32 KiB a row, three rows 96 KiB > 99 - 6 KiB.
    const std::size_t optin = 101376;
    QVERIFY2(!fusedOnePass(8192, 4, optin), "!fusedOnePass(8192, 4, optin)");
    QVERIFY2(fusedOnePass(4096, 4, optin), "fusedOnePass(4096, 4, optin)");
    QCOMPARE(bytesPerIterationFor(Variant::Fused, 100, 8192, 4, optin), std::uint64_t(2 * 100 * 8192 * 4));
    QCOMPARE(bytesPerIterationFor(Variant::Fused, 100, 4096, 4, optin), std::uint64_t(100 * 4096 * 4));
    const FusedRowShape shape = fusedRowShape(8192, 4);
    QCOMPARE(shape.items, 8);
    QCOMPARE(shape.threads, 256);
    QCOMPARE(shape.slotBytes, std::size_t(32768));
    QVERIFY(shape.fitsThreads);
}

void TestGpuTraffic::bf16StorageMovesTwoBytesPerEntry()
{
    // gpu-fused-bf16: 8 entries per vector, at most 4 vectors per thread, so rows
    // of up to 512 x 4 x 8 = 16384 entries fit, as for fp32, and one read is M N 2.
    QCOMPARE(storedElementBytes(Storage::Bf16, 4), std::size_t(2));
    QCOMPARE(storedElementBytes(Storage::Native, 8), std::size_t(8));
    QVERIFY2(fusedOnePass(16384, 2, kH100SharedOptinBytes), "fusedOnePass(16384, 2, kH100SharedOptinBytes)");
    QVERIFY2(!fusedOnePass(16385, 2, kH100SharedOptinBytes), "!fusedOnePass(16385, 2, kH100SharedOptinBytes)");
    QCOMPARE(bytesPerIterationFor(Variant::Fused, 1024, 8192, 2), std::uint64_t(1024u * 8192 * 2));
    QCOMPARE(bytesPerIterationFor(Variant::Fused, 3, 4097, 2), std::uint64_t(3u * 4097 * 2));
    const FusedRowShape wide = fusedRowShape(16384, 2);
    QCOMPARE(wide.items, 4);
    QCOMPARE(wide.threads, 512);
    QCOMPARE(wide.slotBytes, std::size_t(32768));
    QVERIFY(wide.fitsThreads);
    const FusedRowShape mid = fusedRowShape(8192, 2);
    QCOMPARE(mid.items, 4);
    QCOMPARE(mid.threads, 256);
    QCOMPARE(mid.slotBytes, std::size_t(16384));
    const FusedRowShape narrow = fusedRowShape(1, 2);
    QCOMPARE(narrow.items, 1);
    QCOMPARE(narrow.threads, 32);
    QVERIFY(narrow.fitsThreads);
}

void TestGpuTraffic::otherVariantsMoveFixedMultiples()
{
    const std::uint64_t matrix = std::uint64_t(300) * 20000 * 4;
    QCOMPARE(bytesPerIterationFor(Variant::PotStyle, 300, 20000, 4), std::uint64_t(2 * matrix));
    QCOMPARE(bytesPerIterationFor(Variant::MapUot, 300, 20000, 4), std::uint64_t(4 * matrix));
    QCOMPARE(bytesPerIterationFor(Variant::Log, 300, 20000, 4), std::uint64_t(2 * matrix));
}


QTEST_APPLESS_MAIN(TestGpuTraffic)
#include "test_gpu_traffic.moc"
