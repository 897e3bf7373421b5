// The artifact measures of the quality bench (bench/quality/artifact_metrics.h)
// against hand-worked cases on synthetic images: the Sobel / 8 gradient of a ramp is
// its slope, identity scores 0, a chroma blob and a lightness band injected into a
// clean result are caught, a grey ramp given a cast reports that cast. Each data row
// that measures the wrong image (the source in place of the result) must not catch
// the defect: the checks depend on the result's pixels.
#include <QtTest/QtTest>

#include <cmath>
#include <vector>

#include "bench/quality/artifact_metrics.h"
#include "core/color/color_space.h"
#include "core/color/image_gradient.h"

using namespace uot;
using namespace uot::quality;

namespace {

// An 8-bit RGB image from CIELAB given per pixel.
template <typename F>
Image fromLab(int w, int h, F lab)
{
    Image img = Image::allocate(w, h, 3, 8);
    for (int y = 0; y < h; ++y)
        for (int x = 0; x < w; ++x) {
            double l[3], rgb[3];
            lab(x, y, l);
            spaceToLinearRgb(WorkingSpace::Lab, l, rgb);
            for (int c = 0; c < 3; ++c)
                img.data[3 * (static_cast<std::size_t>(y) * w + x) + c] =
                    static_cast<std::uint8_t>(std::lround(std::clamp(linearToSrgb(std::clamp(rgb[c], 0.0, 1.0)), 0.0, 1.0) * 255));
        }
    return img;
}

// A smooth evening sky: lightness from 25 (top) to 80 (bottom), steepest over the
// middle quarter of the height (about 1.7 L* per pixel at the measures' 128 px),
// blue turning to a faint orange.
void sky(int, int y, int h, double lab[3])
{
    const double t = static_cast<double>(y) / (h - 1);
    const double u = std::clamp((t - 0.375) / 0.25, 0.0, 1.0);
    lab[0] = 25 + 55 * u;
    lab[1] = -2 + 10 * t;
    lab[2] = -30 + 45 * t;
}

}  // namespace

class TestArtifactMetrics : public QObject {
    Q_OBJECT
private slots:
    void sobelOfARampIsItsSlope()
    {
        // L = 2 x + 0.5 y: Sobel / 8 gives (2, 0.5) everywhere inside (a plane is
        // reproduced exactly by the 3x3 kernels), before and after a blur.
        const int w = 24, h = 24;
        std::vector<float> x(3 * w * h, 0.0f);
        for (int y = 0; y < h; ++y)
            for (int k = 0; k < w; ++k) x[3 * (y * w + k)] = static_cast<float>(2 * k + 0.5 * y);
        std::vector<float> gx, gy;
        sobel(x, w, h, 0, gx, gy);
        QVERIFY(std::abs(gx[5 * w + 7] - 2.0f) < 1e-5f);
        QVERIFY(std::abs(gy[5 * w + 7] - 0.5f) < 1e-5f);
        gaussianBlur3(x, w, h, 1.5);  // a symmetric kernel keeps a plane away from the edges
        sobel(x, w, h, 0, gx, gy);
        QVERIFY(std::abs(gx[12 * w + 12] - 2.0f) < 1e-4f);
        QVERIFY(std::abs(gy[12 * w + 12] - 0.5f) < 1e-4f);
    }

    void scalesToTheLongSide()
    {
        const Image img = fromLab(512, 300, [](int, int, double l[3]) { l[0] = 50, l[1] = 10, l[2] = -20; });
        const AnalysisImage a = analysisImage(img);
        QCOMPARE(a.width, 128);
        QCOMPARE(a.height, 75);
        // An area average of a flat image is flat: the same Lab colour.
        QVERIFY(std::abs(a.lab[3 * 1000] - 50) < 0.5 && std::abs(a.lab[3 * 1000 + 1] - 10) < 0.8 && std::abs(a.lab[3 * 1000 + 2] + 20) < 0.8);
    }

    void identityScoresZero()
    {
        const int w = 256, h = 192;
        const Image src = fromLab(w, h, [&](int x, int y, double l[3]) {
            sky(x, y, h, l);
            if ((x / 32 + y / 32) % 2) l[1] += 20;  // colour edges too
        });
        const Artifacts a = measureArtifacts(src, src);
        QCOMPARE(a.blotch, 0.0);
        QCOMPARE(a.flip, 0.0);
        QCOMPARE(a.neutralDrift, 0.0);
        QVERIFY(a.gradientPixels > 0);
    }

    void blobIsCaught_data()
    {
        QTest::addColumn<double>("blob");       // chroma added at the blob's centre (Lab a*, b*)
        QTest::addColumn<bool>("wrongImage");   // measure the source in place of the result
        QTest::addColumn<bool>("caught");
        QTest::newRow("clean shifted sky") << 0.0 << false << false;
        QTest::newRow("royal-blue blob") << 40.0 << false << true;
        QTest::newRow("faint blob (below the threshold)") << 4.0 << false << false;
        QTest::newRow("blob, measured on the source (broken)") << 40.0 << true << false;
    }
    void blobIsCaught()
    {
        QFETCH(double, blob);
        QFETCH(bool, wrongImage);
        QFETCH(bool, caught);
        const int w = 384, h = 256;
        const Image src = fromLab(w, h, [&](int x, int y, double l[3]) { sky(x, y, h, l); });
        // The clean result: the sky shifted as a whole (a global cast is no artifact);
        // the blob: a Gaussian of radius 15 px (at 128 px: 5) of saturated blue.
        const Image result = fromLab(w, h, [&](int x, int y, double l[3]) {
            sky(x, y, h, l);
            l[1] += 6, l[2] -= 8;
            const double r2 = (std::pow(x - 0.5 * w, 2) + std::pow(y - 0.25 * h, 2)) / (15.0 * 15.0);
            const double g = std::exp(-0.5 * r2);
            l[1] += 0.6 * blob * g, l[2] -= blob * g;
        });
        const Artifacts a = measureArtifacts(src, wrongImage ? src : result);
        if (caught) {
            QVERIFY2(a.blotch > 1.0, qPrintable(QString::number(a.blotch)));
        } else {
            QVERIFY2(a.blotch < 0.1, qPrintable(QString::number(a.blotch)));
        }
        QCOMPARE(a.flip, 0.0);  // the lightness is the source's
    }

    void bandIsCaught_data()
    {
        QTest::addColumn<double>("dip");       // lightness taken away inside the band
        QTest::addColumn<bool>("wrongImage");
        QTest::addColumn<bool>("caught");
        QTest::newRow("clean brighter sky") << 0.0 << false << false;
        QTest::newRow("dark band across the gradient") << 25.0 << false << true;
        QTest::newRow("band, measured on the source (broken)") << 25.0 << true << false;
    }
    void bandIsCaught()
    {
        QFETCH(double, dip);
        QFETCH(bool, wrongImage);
        QFETCH(bool, caught);
        const int w = 256, h = 384;
        const Image src = fromLab(w, h, [&](int x, int y, double l[3]) { sky(x, y, h, l); });
        // The result's lightness along the gradient: brighter by 5, with a dip of `dip`
        // units whose falling side (over 30 px of the 384, inside the steep part) turns
        // the gradient around.
        const Image result = fromLab(w, h, [&](int x, int y, double l[3]) {
            sky(x, y, h, l);
            const double t = (y - 0.45 * h) / 30.0;
            l[0] += 5 - dip * (t > 0 && t < 1 ? t : 0);
        });
        const Artifacts a = measureArtifacts(src, wrongImage ? src : result);
        if (caught) {
            QVERIFY2(a.flip > 2.0, qPrintable(QString::number(a.flip)));
        } else {
            QCOMPARE(a.flip, 0.0);
        }
    }

    void neutralCastIsReported()
    {
        // A grey ramp (chroma 0) and the same ramp with b* + 15 (a yellow cast): every
        // pixel is neutral in the source and gains 15 C* units (within the 8-bit
        // quantisation), so the drift is ~15 and all of them are over the 10-unit cast line.
        const int w = 200, h = 120;
        const Image grey = fromLab(w, h, [&](int x, int, double l[3]) { l[0] = 20 + 60.0 * x / (w - 1), l[1] = l[2] = 0; });
        const Image cast = fromLab(w, h, [&](int x, int, double l[3]) { l[0] = 20 + 60.0 * x / (w - 1), l[1] = 0, l[2] = 15; });
        const Artifacts a = measureArtifacts(grey, cast);
        QVERIFY2(std::abs(a.neutralDrift - 15) < 1.0, qPrintable(QString::number(a.neutralDrift)));
        QVERIFY(a.neutralCast > 99);
        QCOMPARE(static_cast<int>(a.neutralPixels), 128 * 77);
        const Artifacts none = measureArtifacts(grey, grey);
        QCOMPARE(none.neutralDrift, 0.0);
        // A coloured source has no neutral pixels to drift.
        QCOMPARE(static_cast<int>(measureArtifacts(cast, grey).neutralPixels), 0);
    }
};

QTEST_APPLESS_MAIN(TestArtifactMetrics)
#include "test_artifact_metrics.moc"
