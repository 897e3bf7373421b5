// The GPU frame LUT (gpu/lut_apply.h) against applyCube's tetrahedral
// interpolation pixel by pixel and against the CPU kernel (core/color/lut_apply.h):
// random LUTs with values beyond [0, 1], 8- and 16-bit, RGB and BGR, odd widths
// and padded strides; a sequence of distinct frames through three slots (each
// output is its own frame's); a change of frame size mid-sequence; the runner
// on the GPU. Without a device the runner falls back to the CPU and says why
// (checked here too); the device cases are skipped (QSKIP) without a usable GPU.

#include <QTest>

#include <string>
#include <vector>

#include "core/color/lut_apply.h"
#include "gpu/gpu_backend.h"
#include "gpu/lut_apply.h"
#include "tests/color/lut_apply_reference.h"
#include "tests/gpu/gpu_test_support.h"

using namespace uot;
using test::TestFrame;

namespace {

void checkAgainstApplyCube(const CubeLut& cube, const TestFrame& in, const TestFrame& out, const std::string& what)
{
    std::string where;
    const double worst = test::worstErrorAgainstApplyCube(cube, in, out, where);
    UOT_QVERIFY_MSG(worst <= test::roundingTolerance(in.format), what << ": " << worst << " code values off at " << where);
}

// The largest difference from the CPU kernel's output, in code values.
int worstAgainstCpu(const FrameLut& lut, const TestFrame& in, const TestFrame& out)
{
    TestFrame cpu(in.width, in.height, out.format, 0);
    applyLutToFrame(lut, in.view(), cpu.view());
    int worst = 0;
    for (int y = 0; y < in.height; ++y)
        for (int x = 0; x < in.width; ++x)
            for (int c = 0; c < 3; ++c) worst = std::max(worst, std::abs(out.sample(x, y, c) - cpu.sample(x, y, c)));
    return worst;
}

}  // namespace

class GpuLutApplyTest : public QObject {
    Q_OBJECT

private slots:
    void framesMatchApplyCubeAndTheCpu()
    {
        UOT_QSKIP_WITHOUT_GPU();
        const FramePixelFormat formats[] = {FramePixelFormat::Rgb8, FramePixelFormat::Bgr8, FramePixelFormat::Rgb16,
                                            FramePixelFormat::Bgr16};
        unsigned seed = 40;
        for (FramePixelFormat inFormat : formats)
            for (int width : {1, 17, 333, 1920}) {
                const FramePixelFormat outFormat = (width % 2) ? inFormat
                                                   : isDeep(inFormat) ? FramePixelFormat::Bgr16 : FramePixelFormat::Bgr8;
                const CubeLut cube = test::randomCube(width % 2 ? 17 : 33, ++seed);
                const FrameLut lut(cube);
                gpu::FrameLutDevice device(lut);
                const int height = width == 1920 ? 64 : 11;
                const TestFrame in(width, height, inFormat, 10, ++seed);
                TestFrame out(width, height, outFormat, 4, ++seed);
                const TestFrame before = out;
                device.submit(in.view(), out.view());
                device.flush();
                const std::string what = "width " + std::to_string(width) + " formats " +
                                         std::to_string(static_cast<int>(inFormat)) + "->" +
                                         std::to_string(static_cast<int>(outFormat));
                checkAgainstApplyCube(cube, in, out, what);
                UOT_QVERIFY_MSG(worstAgainstCpu(lut, in, out) <= 1, what);
                const std::size_t row = static_cast<std::size_t>(width) * bytesPerPixel(outFormat);
                for (int y = 0; y < height; ++y)
                    for (std::size_t k = row; k < out.stride; ++k)
                        QCOMPARE(out.bytes[y * out.stride + k], before.bytes[y * out.stride + k]);
            }
    }

    void aSequenceKeepsEveryFrameItsOwnOutput()
    {
        UOT_QSKIP_WITHOUT_GPU();
        const CubeLut cube = test::randomCube(33, 77);
        const FrameLut lut(cube);
        gpu::FrameLutDevice device(lut, 0, 3);
        QCOMPARE(device.inFlight(), 3);
        // Eight 720p frames through three slots, then two of another size and depth.
        std::vector<TestFrame> ins, outs;
        for (int k = 0; k < 8; ++k) ins.emplace_back(1280, 720, FramePixelFormat::Rgb8, 0, 100 + k);
        ins.emplace_back(641, 3, FramePixelFormat::Rgb16, 2, 200);
        ins.emplace_back(641, 3, FramePixelFormat::Rgb16, 2, 201);
        for (const TestFrame& f : ins) outs.emplace_back(f.width, f.height, f.format, 2, 9);
        for (std::size_t k = 0; k < ins.size(); ++k) {
            TestFrame scratch = ins[k];  // the caller's buffer is reused at once
            device.submit(scratch.view(), outs[k].view());
            std::fill(scratch.bytes.begin(), scratch.bytes.end(), std::uint8_t(0));
        }
        device.flush();
        for (std::size_t k = 0; k < ins.size(); ++k) {
            UOT_QVERIFY_MSG(worstAgainstCpu(lut, ins[k], outs[k]) <= 1, "frame " << k);
            if (k == 0 || k + 1 == ins.size()) checkAgainstApplyCube(cube, ins[k], outs[k], "frame " + std::to_string(k));
        }
    }

    void runnerUsesTheGpuWhenAskedAndPresent()
    {
        UOT_QSKIP_WITHOUT_GPU();
        const CubeLut cube = test::randomCube(17, 5);
        FrameLutRunner::Options options;
        options.useGpu = true;
        FrameLutRunner runner(cube, options);
        QVERIFY2(runner.onDevice(), runner.fallbackMessage().c_str());
        QVERIFY2(runner.describe().find("GPU 0") == 0, runner.describe().c_str());
        const TestFrame in(99, 7, FramePixelFormat::Bgr8, 0, 6);
        TestFrame out(99, 7, FramePixelFormat::Bgr8, 0);
        runner.submit(in.view(), out.view());
        runner.flush();
        checkAgainstApplyCube(cube, in, out, "runner");
    }

    void runnerWithoutAGpuFallsBackAndSaysWhy()
    {
        if (gpu::unavailableReason().empty()) QSKIP("a GPU is present: the fallback is checked on machines without one");
        const CubeLut cube = test::randomCube(9, 3);
        FrameLutRunner::Options options;
        options.useGpu = true;
        FrameLutRunner runner(cube, options);
        QVERIFY(!runner.onDevice());
        const std::string& why = runner.fallbackMessage();
        QVERIFY2(why.find("GPU LUT mapping unavailable (") == 0 && why.find("on the CPU") != std::string::npos,
                 why.c_str());
        const TestFrame in(40, 3, FramePixelFormat::Rgb8, 0, 4);
        TestFrame out(40, 3, FramePixelFormat::Rgb8, 0);
        runner.submit(in.view(), out.view());
        checkAgainstApplyCube(cube, in, out, "CPU fallback");
    }
};

QTEST_GUILESS_MAIN(GpuLutApplyTest)
#include "test_gpu_lut_apply.moc"
