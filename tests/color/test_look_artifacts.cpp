// The issue's artifact cases rebuilt from the bundled images, measured by the
// quality bench's artifact measures (bench/quality/artifact_metrics.h): identity
// scores 0 and Reinhard stays near 0 on real pairs; the unbounded map (the defaults
// before MapBounds and the fold into the lattice) shows each case (a blob in rocket <- starry_night's sky, the
// orange patch on chelsea <- rocket's nose, a dark band across a smooth gradient
// sky with preserve luminance off, and a colour band across it) and the bounded map
// of today's defaults does not.
// Reads the samples (OpenCV). Qt Test.
#include <QtTest/QtTest>

#include <cmath>
#include <string>

#include "bench/quality/artifact_metrics.h"
#include "bench/quality/quality_metrics.h"
#include "core/color/color_space.h"
#include "core/imageio/image_io.h"
#include "core/pipeline/recolor_pipeline.h"
#include "tests/support/relocatable_path.h"

using namespace uot;
using namespace uot::quality;

namespace {

const QString kSamples = uot::test::relocatablePath("UOT_SAMPLES_DIR", QStringLiteral(UOT_SAMPLES_DIR));
const QString kBenchData = uot::test::relocatablePath("UOT_BENCH_DATA_DIR", QStringLiteral(UOT_BENCH_DATA_DIR));

Image load(const QString& name)
{
    for (const QString& dir : {kSamples, kBenchData}) {
        const QString path = dir + "/" + name;
        if (QFile::exists(path)) return rgb8(readImage(path.toStdString()));
    }
    throw std::runtime_error("missing test image " + name.toStdString());
}

// A smooth evening sky, 480 x 320: lightness 20 at the top to 85 at the bottom,
// rising over the middle 40 % of the height (about 1.9 L* per pixel at the measures'
// 128 px), deep blue turning to a pale orange near the horizon.
Image gradientSky()
{
    const int w = 480, h = 320;
    Image img = Image::allocate(w, h, 3, 8);
    for (int y = 0; y < h; ++y) {
        const double t = static_cast<double>(y) / (h - 1);
        const double u = std::clamp((t - 0.3) / 0.4, 0.0, 1.0);
        const double lab[3] = {20 + 65 * u, 5 + 8 * u, -40 + 60 * u};
        double rgb[3];
        spaceToLinearRgb(WorkingSpace::Lab, lab, rgb);
        for (int x = 0; x < w; ++x)
            for (int c = 0; c < 3; ++c)
                img.data[3 * (static_cast<std::size_t>(y) * w + x) + c] =
                    static_cast<std::uint8_t>(std::lround(std::clamp(linearToSrgb(std::clamp(rgb[c], 0.0, 1.0)), 0.0, 1.0) * 255));
    }
    return img;
}

Image source(const QString& name) { return name == "sky" ? gradientSky() : load(name); }

Image recolor(const Image& src, const Image& ref, bool bounded, bool preserveLuminance)
{
    RecolorSettings s;
    s.mapping.bounds.enabled = bounded;
    // The map before the issue: no bounds, and the field composed directly (folded into
    // the lattice, even the unbounded map no longer bands the gradient sky <- starry_night:
    // blotch 8.2 % -> 0.00 %).
    s.mapping.lutFaithful = bounded;
    s.mapping.preserveLuminance = preserveLuminance;
    RecolorPipeline pipeline(s);
    pipeline.setSource(src);
    pipeline.setReference(ref);
    return pipeline.run();
}

}  // namespace

class TestLookArtifacts : public QObject {
    Q_OBJECT
private slots:
    void baselinesStayNearZero_data()
    {
        QTest::addColumn<QString>("src");
        QTest::addColumn<QString>("ref");
        QTest::newRow("rocket <- starry_night") << "rocket.jpg" << "starry_night.jpg";
        QTest::newRow("chelsea <- rocket") << "chelsea.jpg" << "rocket.jpg";
        QTest::newRow("home <- starry_night") << "home.jpg" << "starry_night.jpg";
        QTest::newRow("coffee <- astronaut") << "coffee.jpg" << "astronaut.jpg";
    }
    void baselinesStayNearZero()
    {
        QFETCH(QString, src);
        QFETCH(QString, ref);
        const Image s = load(src), r = load(ref);
        const Artifacts identity = measureArtifacts(s, s);
        QCOMPARE(identity.blotch, 0.0);
        QCOMPARE(identity.flip, 0.0);
        QCOMPARE(identity.neutralDrift, 0.0);
        const Artifacts rh = measureArtifacts(s, reinhard(s, r));
        QVERIFY2(rh.blotch < 0.5 && rh.flip < 0.5, qPrintable(QString("Reinhard: blotch %1 flip %2").arg(rh.blotch).arg(rh.flip)));
    }

    void issueCases_data()
    {
        QTest::addColumn<QString>("src");
        QTest::addColumn<QString>("ref");
        QTest::addColumn<bool>("flip");       // the case's measure: flip (else blotch)
        QTest::addColumn<bool>("bounded");    // the map's bounds on (today's defaults) or off
        QTest::addColumn<double>("atLeast");  // the measure must reach this ...
        QTest::addColumn<double>("atMost");   // ... and stay at or below this (%)
        for (const bool bounded : {false, true}) {
            const char* tag = bounded ? " (bounded: clean)" : " (unbounded: flagged)";
            QTest::newRow((std::string("rocket <- starry_night, blob") + tag).c_str())
                << "rocket.jpg" << "starry_night.jpg" << false << bounded << (bounded ? 0.0 : 0.5) << (bounded ? 0.2 : 100.0);
            QTest::newRow((std::string("chelsea <- rocket, nose patch") + tag).c_str())
                << "chelsea.jpg" << "rocket.jpg" << false << bounded << (bounded ? 0.0 : 0.8) << (bounded ? 0.5 : 100.0);
            QTest::newRow((std::string("gradient sky <- home, dark band") + tag).c_str())
                << "sky" << "home.jpg" << true << bounded << (bounded ? 0.0 : 5.0) << (bounded ? 0.1 : 100.0);
            QTest::newRow((std::string("gradient sky <- starry_night, colour band") + tag).c_str())
                << "sky" << "starry_night.jpg" << false << bounded << (bounded ? 0.0 : 3.0) << (bounded ? 0.1 : 100.0);
        }
    }
    void issueCases()
    {
        QFETCH(QString, src);
        QFETCH(QString, ref);
        QFETCH(bool, flip);
        QFETCH(bool, bounded);
        QFETCH(double, atLeast);
        QFETCH(double, atMost);
        const Image s = source(src);
        const Image out = recolor(s, load(ref), bounded, false);
        const Artifacts a = measureArtifacts(s, out);
        const double v = flip ? a.flip : a.blotch;
        qInfo("%s: blotch %.2f %%, flip %.2f %%", qPrintable(src), a.blotch, a.flip);
        QVERIFY2(v >= atLeast && v <= atMost, qPrintable(QString("%1 %").arg(v)));
    }
};

QTEST_GUILESS_MAIN(TestLookArtifacts)
#include "test_look_artifacts.moc"
