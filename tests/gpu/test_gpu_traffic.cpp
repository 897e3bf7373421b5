// Host-only (no GPU needed, runs in CI): the bytes per iteration the GPU
// variants report, in particular gpu-fused's switch to the two-pass cuBLAS path
// when a row does not fit its one-pass kernel (gpu/fused_limits.h).

#include <cstdint>

#include "gpu/gpu_solver.h"
#include "tests/support/test_harness.h"

using namespace uot;
using namespace uot::gpu::detail;

UOT_TEST(fusedIsOneReadWhereTheRowFits)
{
    const std::uint64_t m = 1024;
    // fp32: 16384 columns = 4096 vectors = 512 threads x 8; one more vector does not fit.
    UOT_CHECK(fusedOnePass(16384, 4, kH100SharedOptinBytes));
    UOT_CHECK(!fusedOnePass(16385, 4, kH100SharedOptinBytes));
    UOT_CHECK(!fusedOnePass(20000, 4, kH100SharedOptinBytes));
    UOT_CHECK(bytesPerIterationFor(Variant::Fused, m, 8192, 4) == m * 8192 * 4);
    UOT_CHECK(bytesPerIterationFor(Variant::Fused, m, 16384, 4) == m * 16384 * 4);
    UOT_CHECK(bytesPerIterationFor(Variant::Fused, m, 16385, 4) == 2 * m * 16385 * 4);
    UOT_CHECK(bytesPerIterationFor(Variant::Fused, m, 20000, 4) == 2 * m * 20000 * 4);
    // fp64: half as many columns per vector.
    UOT_CHECK(bytesPerIterationFor(Variant::Fused, m, 8192, 8) == m * 8192 * 8);
    UOT_CHECK(bytesPerIterationFor(Variant::Fused, m, 8193, 8) == 2 * m * 8193 * 8);
    // Odd widths round up to whole vectors: 1, 3, 4097 columns fit.
    UOT_CHECK(bytesPerIterationFor(Variant::Fused, 3, 1, 4) == 12);
    UOT_CHECK(bytesPerIterationFor(Variant::Fused, 3, 4097, 4) == 3 * 4097 * 4);
}

UOT_TEST(fusedLimitDependsOnTheDevicesSharedMemory)
{
    // 99 KiB of opt-in shared memory (e.g. compute capability 8.6): 8192 fp32
    // columns = 256 threads x 8 vectors = 32 KiB a row, three rows 96 KiB > 99 - 6 KiB.
    const std::size_t optin = 101376;
    UOT_CHECK(!fusedOnePass(8192, 4, optin));
    UOT_CHECK(fusedOnePass(4096, 4, optin));
    UOT_CHECK(bytesPerIterationFor(Variant::Fused, 100, 8192, 4, optin) == 2 * 100 * 8192 * 4);
    UOT_CHECK(bytesPerIterationFor(Variant::Fused, 100, 4096, 4, optin) == 100 * 4096 * 4);
    const FusedRowShape shape = fusedRowShape(8192, 4);
    UOT_CHECK(shape.items == 8 && shape.threads == 256 && shape.slotBytes == 32768 && shape.fitsThreads);
}

UOT_TEST(bf16StorageMovesTwoBytesPerEntry)
{
    // gpu-fused-bf16: 8 entries per vector, at most 4 vectors per thread, so rows
    // of up to 512 x 4 x 8 = 16384 entries fit, as for fp32, and one read is M N 2.
    UOT_CHECK(storedElementBytes(Storage::Bf16, 4) == 2 && storedElementBytes(Storage::Native, 8) == 8);
    UOT_CHECK(fusedOnePass(16384, 2, kH100SharedOptinBytes));
    UOT_CHECK(!fusedOnePass(16385, 2, kH100SharedOptinBytes));
    UOT_CHECK(bytesPerIterationFor(Variant::Fused, 1024, 8192, 2) == 1024u * 8192 * 2);
    UOT_CHECK(bytesPerIterationFor(Variant::Fused, 3, 4097, 2) == 3u * 4097 * 2);
    const FusedRowShape wide = fusedRowShape(16384, 2);
    UOT_CHECK(wide.items == 4 && wide.threads == 512 && wide.slotBytes == 32768 && wide.fitsThreads);
    const FusedRowShape mid = fusedRowShape(8192, 2);
    UOT_CHECK(mid.items == 4 && mid.threads == 256 && mid.slotBytes == 16384);
    const FusedRowShape narrow = fusedRowShape(1, 2);
    UOT_CHECK(narrow.items == 1 && narrow.threads == 32 && narrow.fitsThreads);
}

UOT_TEST(otherVariantsMoveFixedMultiples)
{
    const std::uint64_t matrix = std::uint64_t(300) * 20000 * 4;
    UOT_CHECK(bytesPerIterationFor(Variant::PotStyle, 300, 20000, 4) == 2 * matrix);
    UOT_CHECK(bytesPerIterationFor(Variant::MapUot, 300, 20000, 4) == 4 * matrix);
    UOT_CHECK(bytesPerIterationFor(Variant::Log, 300, 20000, 4) == 2 * matrix);
}

