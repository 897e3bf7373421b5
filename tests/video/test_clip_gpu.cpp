// A clip's frames mapped on the GPU inside the decode-map-encode pipeline
// (applyClipLook with useGpu), against the look's LUT evaluated pixel by pixel
// with applyCube (core/color/cube_lut.h, independent of the frame kernels) and against the
// same clip mapped on the CPU. Without a usable GPU the run must still map
// every frame (on the CPU) and say why; with one, the frames must come out in
// order and agree with the CPU run within the frame kernels' rounding (one code
// value; PSNR >= 50 dB per frame). The clip is an image sequence the test
// writes (clip_test_frames.h).

#include <QTemporaryDir>
#include <QTest>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>

#include "core/color/cube_lut.h"
#include "core/imageio/image_io.h"
#include "core/video/clip_recolor.h"
#include "gpu/gpu_backend.h"
#include "tests/support/qt_checks.h"
#include "tests/video/clip_test_frames.h"

using namespace uot;

namespace {

constexpr int kFrames = 40;  // beyond the CPU runner's switch to its 8-bit table (24 frames)
constexpr int kWidth = 96, kHeight = 64;

// A smooth, non-linear look on 17^3 nodes.
CubeLut look17()
{
    CubeLut lut = identityCube(17);
    for (std::size_t i = 0; i < lut.values.size(); i += 3) {
        const float r = lut.values[i], g = lut.values[i + 1], b = lut.values[i + 2];
        lut.values[i] = std::pow(r, 0.8f) * 0.9f + 0.05f * b;
        lut.values[i + 1] = 0.6f * g + 0.3f * r * b + 0.05f;
        lut.values[i + 2] = std::clamp(1.1f * b - 0.1f * g, 0.0f, 1.0f);
    }
    return lut;
}

std::string framePath(const QTemporaryDir& dir, const char* stem, int t)
{
    char name[64];
    std::snprintf(name, sizeof name, "%s_%05d.png", stem, t);
    return dir.filePath(name).toStdString();
}

ClipRecolorReport mapClip(const QTemporaryDir& dir, const ClipLook& look, const char* stem, bool useGpu)
{
    ClipRecolorOptions options;
    options.useGpu = useGpu;
    return applyClipLook(dir.filePath("in_%05d.png").toStdString(), look,
                         dir.filePath(QString(stem) + "_%05d.png").toStdString(), options);
}

// The largest difference from the look evaluated by applyCube, rounded to code values.
int worstAgainstReference(const CubeLut& lut, const Image& in, const Image& out)
{
    int worst = 0;
    for (std::size_t p = 0; p < in.pixelCount(); ++p) {
        const std::uint8_t* s = in.samples8() + 3 * p;
        const float rgb[3] = {s[0] / 255.0f, s[1] / 255.0f, s[2] / 255.0f};
        float v[3];
        applyCube(lut, rgb, v, CubeInterpolation::Tetrahedral);
        for (int c = 0; c < 3; ++c) {
            const int expected = int(std::lround(std::clamp(double(v[c]), 0.0, 1.0) * 255));
            worst = std::max(worst, std::abs(expected - int(out.samples8()[3 * p + std::size_t(c)])));
        }
    }
    return worst;
}

double psnr(const Image& a, const Image& b)
{
    double sum = 0;
    for (std::size_t i = 0; i < a.data.size(); ++i) {
        const double d = double(a.data[i]) - double(b.data[i]);
        sum += d * d;
    }
    return sum == 0 ? INFINITY : 10 * std::log10(255.0 * 255.0 * double(a.data.size()) / sum);
}

}  // namespace

class ClipGpuTest : public QObject {
    Q_OBJECT

private slots:
    void gpuRunMatchesTheLookAndTheCpuRun()
    {
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        test::writeFrameSequence(dir, kFrames, kWidth, kHeight);
        ClipLook look;
        look.shots.resize(1);
        look.shots[0].endFrame = kFrames;
        look.shots[0].lut = look17();

        const ClipRecolorReport cpu = mapClip(dir, look, "cpu", false);
        const ClipRecolorReport gpu = mapClip(dir, look, "gpu", true);
        QCOMPARE(cpu.frames, kFrames);
        QCOMPARE(gpu.frames, kFrames);
        QVERIFY2(cpu.mapDevice.rfind("CPU", 0) == 0 && cpu.mapNote.empty(), cpu.mapDevice.c_str());
        const std::string noGpu = gpu::unavailableReason();
        if (noGpu.empty()) {
            QVERIFY2(gpu.mapDevice.rfind("GPU 0", 0) == 0, (gpu.mapDevice + "; " + gpu.mapNote).c_str());
            QVERIFY2(gpu.mapNote.empty(), gpu.mapNote.c_str());
        } else {
            // No GPU: every frame mapped on the CPU, and the report says why.
            QVERIFY2(gpu.mapDevice.rfind("CPU", 0) == 0, gpu.mapDevice.c_str());
            QVERIFY2(gpu.mapNote.rfind("GPU LUT mapping unavailable (", 0) == 0 &&
                         gpu.mapNote.find("on the CPU") != std::string::npos,
                     gpu.mapNote.c_str());
        }
        for (int t = 0; t < kFrames; ++t) {
            const Image in = test::movingFrame(t, kWidth, kHeight);
            const Image outCpu = readImage(framePath(dir, "cpu", t));
            const Image outGpu = readImage(framePath(dir, "gpu", t));
            UOT_QVERIFY_MSG(worstAgainstReference(look.shots[0].lut, in, outCpu) <= 1, "CPU frame " << t);
            UOT_QVERIFY_MSG(worstAgainstReference(look.shots[0].lut, in, outGpu) <= 1, "GPU frame " << t);
            int worst = 0;
            for (std::size_t i = 0; i < outCpu.data.size(); ++i)
                worst = std::max(worst, std::abs(int(outCpu.data[i]) - int(outGpu.data[i])));
            UOT_QVERIFY_MSG(worst <= 1 && psnr(outCpu, outGpu) >= 50.0,
                            "frame " << t << ": " << worst << " code values apart, " << psnr(outCpu, outGpu) << " dB");
            if (!noGpu.empty()) QCOMPARE(worst, 0);  // both on the CPU: the same kernels
        }
    }
};

QTEST_GUILESS_MAIN(ClipGpuTest)
#include "test_clip_gpu.moc"
