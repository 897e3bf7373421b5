// A compressed photo's 8x8 (chroma: 16x16) JPEG blocks must not be stretched into
// visible blocks by the recolor. The sample pair home <- starry_night is where
// they showed: the home's sky has chroma blocks of about half a Lab unit that the
// map widens towards the painting's many blues. Measured in float64 CIELAB from the
// 8-bit pixels, independently of the pipeline's colour code: the chroma step across
// block boundaries minus the step inside the blocks, over the sky. The bound is on the
// step itself: at most 1 Lab unit (below a just-noticeable colour difference, about
// 1-2.3 Delta E*ab), where the stretched cases reach 1.6-1.7. (The source's step is
// 0.49: a look that is a function of colour, as an exported LUT is, stretches the
// blocks by the map's slope at the sky's colours, 1.6-1.9x here, where the field
// composed directly kept 1.15-1.3x; the ratio is printed.)
// Qt Test.
#include <QtTest/QtTest>

#include <cmath>
#include <cstdio>
#include <string>

#include "core/color/color_space.h"
#include "core/imageio/image_io.h"
#include "core/pipeline/recolor_pipeline.h"
#include "tests/support/relocatable_path.h"

using namespace uot;

namespace {

const QString kSamples = uot::test::relocatablePath("UOT_SAMPLES_DIR", QStringLiteral(UOT_SAMPLES_DIR));

void labOf(const Image& img, std::size_t p, double lab[3])
{
    double rgb[3];
    for (int c = 0; c < 3; ++c) rgb[c] = srgbToLinear(img.data[p * img.channels + c] / 255.0);
    linearRgbToSpace(WorkingSpace::Lab, rgb, lab);
}

// Over rows [0, rows): the mean Lab a-b distance between horizontal and vertical
// neighbours that straddle a multiple of 8, minus the same for neighbours in the
// middle of the 8-pixel cells (the smooth gradient and noise, which both share).
double blockStep(const Image& img, int rows)
{
    const auto chroma = [&](int x, int y, double ab[2]) {
        double lab[3];
        labOf(img, static_cast<std::size_t>(y) * img.width + x, lab);
        ab[0] = lab[1], ab[1] = lab[2];
    };
    double edge = 0, inside = 0;
    long edges = 0, insides = 0;
    for (int y = 0; y + 1 < rows; ++y)
        for (int x = 0; x + 1 < img.width; ++x) {
            double here[2], right[2], below[2];
            chroma(x, y, here), chroma(x + 1, y, right), chroma(x, y + 1, below);
            const double h = std::hypot(here[0] - right[0], here[1] - right[1]);
            const double v = std::hypot(here[0] - below[0], here[1] - below[1]);
            if (x % 8 == 7) edge += h, ++edges;
            if (x % 8 == 3) inside += h, ++insides;
            if (y % 8 == 7) edge += v, ++edges;
            if (y % 8 == 3) inside += v, ++insides;
        }
    return edge / edges - inside / insides;
}

}  // namespace

class TestCompressionBlocks : public QObject {
    Q_OBJECT
private slots:
    void skyBlocksKeepTheSourceContrast_data()
    {
        QTest::addColumn<bool>("smooth");
        QTest::addColumn<double>("residualChroma");
        QTest::addColumn<double>("residualLightness");
        QTest::addColumn<double>("chromaEps");  // 0: the default
        QTest::addColumn<double>("bound");      // on the result's block step, Lab units
        QTest::addColumn<bool>("atMost");       // false: the step must exceed the bound
        const MappingSettings d;
        QTest::newRow("defaults") << true << d.residualMatch << d.residualLightness << 0.0 << 1.0 << true;
        QTest::newRow("residual match 1, lightness 1") << true << 1.0 << 1.0 << 0.0 << 1.0 << true;
        QTest::newRow("no residual match") << true << 0.0 << 0.0 << 0.0 << 1.0 << true;
        // The same pair where the blocks do get stretched: per pixel (no smoothing), and
        // with one eps on every axis of the colour guide (the session-20 defaults).
        QTest::newRow("no smoothing (blocks stretched)") << false << 1.0 << 0.0 << 0.0 << 1.0 << false;
        QTest::newRow("chroma eps = eps (blocks stretched)") << true << 1.0 << 0.0 << d.smoothEps << 1.0 << false;
    }
    void skyBlocksKeepTheSourceContrast()
    {
        QFETCH(bool, smooth);
        QFETCH(double, residualChroma);
        QFETCH(double, residualLightness);
        QFETCH(double, chromaEps);
        QFETCH(double, bound);
        QFETCH(bool, atMost);
        const Image src = readImage((kSamples + "/home.jpg").toStdString());
        const Image ref = readImage((kSamples + "/starry_night.jpg").toStdString());
        RecolorSettings s;
        s.threads = 2;
        s.mapping.smooth = smooth;
        s.mapping.residualMatch = residualChroma;
        s.mapping.residualLightness = residualLightness;
        if (chromaEps > 0) s.mapping.smoothChromaEps = chromaEps;
        // The stretching cases are the unbounded map's: the map's bounds (chroma slope)
        // stretch the blocks less even without smoothing.
        if (!atMost) s.mapping.bounds.enabled = false;
        RecolorPipeline pipeline(s);
        pipeline.setSource(src), pipeline.setReference(ref);
        const Image out = pipeline.run();
        const int sky = src.height / 3;  // the sky: the top third of the photo
        const double before = blockStep(src, sky), after = blockStep(out, sky);
        std::printf("  block step over the sky: source %.3f, result %.3f Lab units (%.2fx)\n", before, after, after / before);
        QVERIFY2(before > 0.2, "the sample has no visible JPEG blocks to test with");
        if (atMost)
            QVERIFY2(after <= bound, qPrintable(QString("block step %1 Lab units (%2x)").arg(after).arg(after / before)));
        else
            QVERIFY2(after > bound, qPrintable(QString("only %1 Lab units: the case does not stretch blocks").arg(after)));
    }
};

QTEST_GUILESS_MAIN(TestCompressionBlocks)
#include "test_compression_blocks.moc"
