// The pieces of a clip's look that are plain arithmetic, against hand-worked values:
// the LUT cross-fade at a cut (ClipLook::lutFor), the histogram distance that finds
// cuts, and the names of clips and sequence frames (clip_paths.h).

#include <QTest>

#include "core/video/clip_look.h"
#include "core/video/clip_paths.h"
#include "tests/support/qt_checks.h"

using namespace uot;

namespace {

// A 2-node LUT whose every output value is v.
CubeLut constantLut(float v)
{
    CubeLut lut = identityCube(2);
    for (float& x : lut.values) x = v;
    return lut;
}

Image solid(int width, int height, std::uint8_t r, std::uint8_t g, std::uint8_t b)
{
    Image image = Image::allocate(width, height, 3, 8);
    for (std::size_t p = 0; p < image.pixelCount(); ++p) {
        image.samples8()[3 * p] = r;
        image.samples8()[3 * p + 1] = g;
        image.samples8()[3 * p + 2] = b;
    }
    return image;
}

}  // namespace

class ClipLookTest : public QObject {
    Q_OBJECT

private slots:
    void crossFadeBlendsTheTwoShotsLutsAroundTheCut()
    {
        ClipLook look;
        look.shots.resize(2);
        look.shots[0].firstFrame = 0;
        look.shots[0].endFrame = 10;
        look.shots[0].lut = constantLut(0.0f);
        look.shots[1].firstFrame = 10;
        look.shots[1].endFrame = 20;
        look.shots[1].lut = constantLut(1.0f);
        look.crossFadeFrames = 4;
        // Frames 8..11 blend (2 before the cut, 2 from it): weights of the second shot
        // (i - 8 + 0.5) / 4 = 0.125, 0.375, 0.625, 0.875; frames 7 and 12 are their shots' own.
        const double expected[] = {0, 0.125, 0.375, 0.625, 0.875, 1};
        CubeLut blend;
        for (long long frame = 7; frame <= 12; ++frame) {
            const CubeLut& lut = look.lutFor(frame, blend);
            QCOMPARE(lut.values.size(), std::size_t(2 * 2 * 2 * 3));
            for (float v : lut.values) UOT_QCOMPARE_CLOSE(v, expected[frame - 7], 1e-6);
        }
        QVERIFY(&look.lutFor(0, blend) == &look.shots[0].lut);
        QVERIFY(&look.lutFor(19, blend) == &look.shots[1].lut);
        look.crossFadeFrames = 0;  // switch at the cut
        QVERIFY(&look.lutFor(9, blend) == &look.shots[0].lut);
        QVERIFY(&look.lutFor(10, blend) == &look.shots[1].lut);
    }

    void histogramDistanceIsHalfTheL1DistanceOfTheBinFractions()
    {
        const Image red = solid(8, 8, 255, 0, 0), blue = solid(8, 8, 0, 0, 255);
        UOT_QCOMPARE_CLOSE(histogramDistance(red, red), 0.0, 1e-12);
        UOT_QCOMPARE_CLOSE(histogramDistance(red, blue), 1.0, 1e-12);
        // Half red, half blue against all red: half the mass moved.
        Image half = red;
        for (std::size_t p = 0; p < half.pixelCount() / 2; ++p) {
            half.samples8()[3 * p] = 0;
            half.samples8()[3 * p + 2] = 255;
        }
        UOT_QCOMPARE_CLOSE(histogramDistance(half, red), 0.5, 1e-12);
        // Values within one bin (32 codes wide) are the same bin.
        UOT_QCOMPARE_CLOSE(histogramDistance(solid(4, 4, 0, 0, 0), solid(4, 4, 31, 31, 31)), 0.0, 1e-12);
    }

    void clipPathsAndSequenceFrames()
    {
        QVERIFY(isVideoFile("a/b.MP4") && isVideoFile("x.mkv") && isVideoFile("x.webm") && isVideoFile("x.mov"));
        QVERIFY(!isVideoFile("x.png") && !isVideoFile("x.avi"));
        QVERIFY(isImageSequencePattern("out/frame_%05d.png") && isImageSequencePattern("f%d.tif"));
        QVERIFY(!isImageSequencePattern("frame_%05d.mp4") && !isImageSequencePattern("frame.png") &&
                !isImageSequencePattern("a_%d_%d.png") && !isImageSequencePattern("50%.png"));
        QCOMPARE(sequenceFramePath("out/frame_%05d.png", 7), std::string("out/frame_00007.png"));
        QCOMPARE(sequenceFramePath("f%d.tif", 123), std::string("f123.tif"));
        QCOMPARE(sequenceFramePath("f%3d.png", 5), std::string("f  5.png"));
        QCOMPARE(sequenceFramePath("f_%02d.png", 123), std::string("f_123.png"));
    }
};

QTEST_GUILESS_MAIN(ClipLookTest)
#include "test_clip_look.moc"
