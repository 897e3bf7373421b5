// The frame LUT (core/color/lut_apply.h) against applyCube's tetrahedral
// interpolation evaluated pixel by pixel: random LUTs (values beyond [0, 1],
// sizes 2 to 33, a narrowed domain), every 8-bit colour of the cube's 12 edges
// and a whole 256^3 cube, random 8- and 16-bit pixels, odd widths, padded
// strides, BGR, in place, for the portable and the AVX2 kernel; the identity
// LUT exactly; the 8-bit table against the kernel; the runner's CPU fallback
// (stand-in device backends: none, and one that fails mid-clip).

#include <QTest>

#include <memory>
#include <string>
#include <vector>

#include "core/color/lut_apply.h"
#include "core/transport/uot_error.h"
#include "tests/color/lut_apply_reference.h"
#include "tests/support/qt_checks.h"

using namespace uot;
using test::TestFrame;

namespace {

std::vector<LutKernelPath> kernelPaths()
{
    std::vector<LutKernelPath> paths{LutKernelPath::Generic};
    if (lutKernelPathSupported(LutKernelPath::Avx2)) paths.push_back(LutKernelPath::Avx2);
    return paths;
}

// Every colour on the 12 edges of the 8-bit cube (a row of 12 x 256 pixels).
TestFrame cubeEdges()
{
    TestFrame f(256, 12, FramePixelFormat::Rgb8, 0);
    int edge = 0;
    for (int axis = 0; axis < 3; ++axis)
        for (int corner = 0; corner < 4; ++corner, ++edge)
            for (int v = 0; v < 256; ++v) {
                int rgb[3];
                rgb[axis] = v;
                rgb[(axis + 1) % 3] = (corner & 1) ? 255 : 0;
                rgb[(axis + 2) % 3] = (corner & 2) ? 255 : 0;
                for (int c = 0; c < 3; ++c) f.setSample(v, edge, c, rgb[c]);
            }
    return f;
}

// All 2^24 colours, 4096 x 4096.
TestFrame wholeCube()
{
    TestFrame f(4096, 4096, FramePixelFormat::Rgb8, 0);
    for (int k = 0; k < (1 << 24); ++k) {
        std::uint8_t* p = f.bytes.data() + static_cast<std::size_t>(k) * 3;
        p[0] = static_cast<std::uint8_t>(k), p[1] = static_cast<std::uint8_t>(k >> 8), p[2] = static_cast<std::uint8_t>(k >> 16);
    }
    return f;
}

void checkAgainstApplyCube(const CubeLut& cube, const TestFrame& in, const TestFrame& out, const char* what)
{
    std::string where;
    const double worst = test::worstErrorAgainstApplyCube(cube, in, out, where);
    UOT_QVERIFY_MSG(worst <= test::roundingTolerance(in.format), what << ": " << worst << " code values off at " << where);
}

}  // namespace

class LutApplyTest : public QObject {
    Q_OBJECT

private slots:
    void identityLutIsExactOnEveryColour()
    {
        const TestFrame in = wholeCube();
        for (int size : {2, 17, 33})
            for (LutKernelPath path : kernelPaths()) {
                TestFrame out(4096, 4096, FramePixelFormat::Rgb8, 0);
                applyLutToFrame(FrameLut(identityCube(size)), in.view(), out.view(), 0, path);
                QVERIFY2(std::equal(in.bytes.begin(), in.bytes.end() - 8, out.bytes.begin()),
                         (toString(path) + " changed a colour with the identity LUT").c_str());
            }
    }

    void identityLutIsExactIn16Bit()
    {
        const TestFrame in(301, 7, FramePixelFormat::Rgb16, 6, 3);
        for (LutKernelPath path : kernelPaths()) {
            TestFrame out(301, 7, FramePixelFormat::Rgb16, 6, 4);
            applyLutToFrame(FrameLut(identityCube(33)), in.view(), out.view(), 0, path);
            for (int y = 0; y < 7; ++y)
                for (int x = 0; x < 301; ++x)
                    for (int c = 0; c < 3; ++c) QCOMPARE(out.sample(x, y, c), in.sample(x, y, c));
        }
    }

    void cubeEdgesMatchApplyCube()
    {
        const TestFrame in = cubeEdges();
        for (int size : {2, 5, 17, 33})
            for (LutKernelPath path : kernelPaths()) {
                const CubeLut cube = test::randomCube(size, static_cast<unsigned>(size));
                TestFrame out(256, 12, FramePixelFormat::Rgb8, 0);
                applyLutToFrame(FrameLut(cube), in.view(), out.view(), 0, path);
                checkAgainstApplyCube(cube, in, out, (toString(path) + " size " + std::to_string(size)).c_str());
            }
    }

    void everyColourMatchesApplyCube()
    {
        const TestFrame in = wholeCube();
        const CubeLut cube = test::randomCube(9, 99);
        for (LutKernelPath path : kernelPaths()) {
            TestFrame out(4096, 4096, FramePixelFormat::Rgb8, 0);
            applyLutToFrame(FrameLut(cube), in.view(), out.view(), 0, path);
            checkAgainstApplyCube(cube, in, out, toString(path).c_str());
        }
    }

    void randomPixelsOddWidthsAndStridesMatchApplyCube()
    {
        const FramePixelFormat formats[] = {FramePixelFormat::Rgb8, FramePixelFormat::Bgr8, FramePixelFormat::Rgb16,
                                            FramePixelFormat::Bgr16};
        unsigned seed = 1;
        for (FramePixelFormat format : formats)
            for (int width : {1, 2, 3, 17, 333})
                for (LutKernelPath path : kernelPaths()) {
                    CubeLut cube = test::randomCube(width % 2 ? 17 : 33, ++seed);
                    if (width == 17) {  // a narrowed domain: inputs outside it clamp to the edge nodes
                        for (int a = 0; a < 3; ++a) cube.domainMin[a] = 0.1 + 0.05 * a, cube.domainMax[a] = 0.8;
                    }
                    const TestFrame in(width, 9, format, 10, ++seed);
                    TestFrame out(width, 9, format, 6, ++seed);
                    const TestFrame before = out;
                    applyLutToFrame(FrameLut(cube), in.view(), out.view(), 2, path);
                    const std::string what = toString(path) + " width " + std::to_string(width) + " format " +
                                             std::to_string(static_cast<int>(format));
                    checkAgainstApplyCube(cube, in, out, what.c_str());
                    // The padding after each row and past the frame is left alone.
                    const std::size_t row = static_cast<std::size_t>(width) * bytesPerPixel(format);
                    for (int y = 0; y < 9; ++y)
                        for (std::size_t k = row; k < out.stride; ++k)
                            QCOMPARE(out.bytes[y * out.stride + k], before.bytes[y * out.stride + k]);
                    QVERIFY(std::equal(out.bytes.end() - 8, out.bytes.end(), before.bytes.end() - 8));
                }
    }

    void bgrOutputIsTheRgbOutputSwappedAndInPlaceWorks()
    {
        const CubeLut cube = test::randomCube(17, 5);
        const FrameLut lut(cube);
        for (LutKernelPath path : kernelPaths()) {
            const TestFrame in(129, 5, FramePixelFormat::Rgb8, 3, 8);
            TestFrame rgb(129, 5, FramePixelFormat::Rgb8, 0), bgr(129, 5, FramePixelFormat::Bgr8, 0);
            applyLutToFrame(lut, in.view(), rgb.view(), 1, path);
            applyLutToFrame(lut, in.view(), bgr.view(), 1, path);
            TestFrame inPlace = in;
            applyLutToFrame(lut, inPlace.view(), inPlace.view(), 1, path);
            for (int y = 0; y < 5; ++y)
                for (int x = 0; x < 129; ++x)
                    for (int c = 0; c < 3; ++c) {
                        QCOMPARE(bgr.sample(x, y, c), rgb.sample(x, y, c));  // sample() reads BGR's order
                        QCOMPARE(inPlace.sample(x, y, c), rgb.sample(x, y, c));
                    }
        }
    }

    void eightBitTableEqualsTheKernel()
    {
        const CubeLut cube = test::randomCube(33, 12);
        const FrameLut lut(cube);
        const FrameLutCache8 table(lut);
        const TestFrame in(257, 31, FramePixelFormat::Bgr8, 5, 13);
        TestFrame viaTable(257, 31, FramePixelFormat::Rgb8, 1), viaKernel(257, 31, FramePixelFormat::Rgb8, 1);
        table.apply(in.view(), viaTable.view());
        applyLutToFrame(lut, in.view(), viaKernel.view());
        for (int y = 0; y < 31; ++y)
            for (int x = 0; x < 257; ++x)
                for (int c = 0; c < 3; ++c) QCOMPARE(viaTable.sample(x, y, c), viaKernel.sample(x, y, c));
        checkAgainstApplyCube(cube, in, viaTable, "8-bit table");
        UOT_QVERIFY_THROWS_WITH(table.apply(TestFrame(4, 4, FramePixelFormat::Rgb16, 0).view(),
                                            TestFrame(4, 4, FramePixelFormat::Rgb16, 0).view()),
                                "8-bit");
    }

    void runnerFallsBackToTheCpuAndSaysWhy()
    {
        // Stand-in device backends (the real one, linked through uot::solvers, is
        // tested in tests/gpu/test_gpu_lut_apply.cpp): one with no device, one
        // that runs out of memory at its second frame.
        struct FailingDevice : DeviceFrameLut {
            int frames = 0;
            void submit(const ConstFrameView&, const FrameView& out) override
            {
                if (++frames == 2) throw Error(ErrorCode::OutOfMemory, "test: out of device memory");
                std::fill(out.data, out.data + out.strideBytes * out.height, std::uint8_t(7));
            }
            void flush() override {}
            int inFlight() const override { return 1; }
            std::string deviceName() const override { return "test device"; }
        };
        const CubeLut cube = test::randomCube(17, 21);
        FrameLutRunner::Options options;
        options.useGpu = true;
        const TestFrame in(64, 4, FramePixelFormat::Rgb8, 0, 22);

        registerDeviceFrameLutFactory([](const FrameLut&, int) -> std::unique_ptr<DeviceFrameLut> {
            throw Error(ErrorCode::Unavailable, "test: no device");
        });
        {
            FrameLutRunner runner(cube, options);
            QVERIFY(!runner.onDevice());
            QCOMPARE(runner.fallbackMessage(), std::string("GPU LUT mapping unavailable (test: no device); mapping frames on the CPU"));
            QVERIFY2(runner.describe().find("CPU (") == 0, runner.describe().c_str());
            TestFrame out(64, 4, FramePixelFormat::Rgb8, 0);
            runner.submit(in.view(), out.view());
            runner.flush();
            checkAgainstApplyCube(cube, in, out, "runner without a device");
        }
        registerDeviceFrameLutFactory([](const FrameLut&, int) -> std::unique_ptr<DeviceFrameLut> {
            return std::make_unique<FailingDevice>();
        });
        {
            FrameLutRunner runner(cube, options);
            QVERIFY(runner.onDevice());
            QCOMPARE(runner.describe(), std::string("test device"));
            TestFrame first(64, 4, FramePixelFormat::Rgb8, 0), second(64, 4, FramePixelFormat::Rgb8, 0);
            runner.submit(in.view(), first.view());
            QCOMPARE(int(first.bytes[0]), 7);  // the stand-in device's output
            runner.submit(in.view(), second.view());
            QVERIFY(!runner.onDevice());
            QCOMPARE(runner.fallbackMessage(),
                     std::string("GPU LUT mapping failed (test: out of device memory); mapping the remaining frames on the CPU"));
            checkAgainstApplyCube(cube, in, second, "frame after the device failed");
        }
        registerDeviceFrameLutFactory({});
        FrameLutRunner cpu(cube, FrameLutRunner::Options{});
        QVERIFY(cpu.fallbackMessage().empty() && !cpu.onDevice());
        FrameLutRunner none(cube, options);
        QVERIFY2(none.fallbackMessage().find("no GPU backend linked") != std::string::npos, none.fallbackMessage().c_str());
    }

    void runnerSwitchesLongClipsToTheEightBitTable()
    {
        const CubeLut cube = test::randomCube(33, 31);
        FrameLutRunner::Options options;
        options.table8AfterFrames = 3;
        FrameLutRunner runner(cube, options);
        for (int k = 0; k < 5; ++k) {
            const TestFrame in(97, 13, k % 2 ? FramePixelFormat::Bgr8 : FramePixelFormat::Rgb8, 2, 50 + k);
            TestFrame out(97, 13, FramePixelFormat::Rgb8, 0);
            runner.submit(in.view(), out.view());
            checkAgainstApplyCube(cube, in, out, ("frame " + std::to_string(k)).c_str());
            const bool table = runner.describe().find("8-bit table") != std::string::npos;
            UOT_QVERIFY_MSG(table == (k >= 3), "frame " << k << ": " << runner.describe());
        }
        // 16-bit frames keep the kernel.
        const TestFrame deep(31, 3, FramePixelFormat::Rgb16, 0, 60);
        TestFrame deepOut(31, 3, FramePixelFormat::Rgb16, 0);
        runner.submit(deep.view(), deepOut.view());
        checkAgainstApplyCube(cube, deep, deepOut, "16-bit frame");
    }

    void inconsistentFramesAreRejected()
    {
        const FrameLut lut(identityCube(5));
        TestFrame a(8, 2, FramePixelFormat::Rgb8, 0), b(9, 2, FramePixelFormat::Rgb8, 0), deep(8, 2, FramePixelFormat::Rgb16, 0);
        UOT_QVERIFY_THROWS_WITH(applyLutToFrame(lut, a.view(), b.view()), "sizes differ");
        UOT_QVERIFY_THROWS_WITH(applyLutToFrame(lut, a.view(), deep.view()), "depths differ");
        FrameView shortRows = a.view();
        shortRows.strideBytes = 20;
        UOT_QVERIFY_THROWS_WITH(applyLutToFrame(lut, a.view(), shortRows), "stride");
        CubeLut broken = identityCube(5);
        broken.values.pop_back();
        UOT_QVERIFY_THROWS_WITH(FrameLut{broken}, "invalid LUT");
    }
};

QTEST_GUILESS_MAIN(LutApplyTest)
#include "test_lut_apply.moc"
