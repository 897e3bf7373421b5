// Regional transfer (core/pipeline/region_recolor.h) on synthetic images:
//   - a masked recolor keeps every pixel under black bit-identical to the source
//     and gives, under white, exactly the unmasked recolor whose source palette
//     is that of the region's pixels, gathered by the test into an image of
//     their own (8- and 16-bit, RGB and gray sources);
//   - two regions with their own references: each takes its own palette's
//     transfer, pixels under neither keep the source;
//   - along a feathered mask edge the result creates no colour edge beyond that
//     of the fully recolored side (bench/quality/artifact_metrics.h's blotch
//     measure), where the hard mask does;
//   - two complementary feathered regions with one reference give, across their
//     seam, the result of one region over the whole image (no source shows
//     through), and no created colour edge beyond it;
//   - regions run concurrently give the result of the same regions run one by
//     one, bit for bit, with their own thread counts and working spaces, and each
//     region under its white is the unmasked recolor with its own palette.
#include <QtTest/QtTest>

#include <cmath>
#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "bench/quality/artifact_metrics.h"
#include "core/pipeline/region_recolor.h"
#include "tests/support/qt_checks.h"

using namespace uot;

namespace {

// An image whose sample (x, y, c) in [0, 1] is f(x, y, c), at 8 or 16 bits.
Image makeImage(int w, int h, int channels, int depth, const std::function<double(int, int, int)>& f)
{
    Image img = Image::allocate(w, h, channels, depth);
    const double top = depth == 16 ? 65535 : 255;
    for (int y = 0; y < h; ++y)
        for (int x = 0; x < w; ++x)
            for (int c = 0; c < channels; ++c) {
                const std::size_t k = (static_cast<std::size_t>(y) * w + x) * channels + c;
                const double v = std::clamp(f(x, y, c), 0.0, 1.0) * top;
                if (depth == 16) img.samples16()[k] = static_cast<std::uint16_t>(std::lround(v));
                else img.data[k] = static_cast<std::uint8_t>(std::lround(v));
            }
    return img;
}

// A source with smooth shading and texture, and a reference of other colours.
Image source(int w, int h, int channels, int depth)
{
    return makeImage(w, h, channels, depth, [w, h](int x, int y, int c) {
        return 0.2 + 0.6 * x / w + 0.15 * std::sin(0.4 * y + 1.3 * c) + 0.05 * std::cos(0.9 * x * (c + 1));
    });
}

Image reference(int w, int h)
{
    return makeImage(w, h, 3, 8, [w, h](int x, int y, int c) {
        const double base[3] = {0.85, 0.45, 0.15};
        return base[c] + 0.25 * std::sin(0.2 * x + 0.3 * y + c) * (y < h / 2 ? 1.0 : -0.6) + 0.1 * x / w;
    });
}

RecolorSettings quickSettings()
{
    RecolorSettings s;
    s.palette.size = 64;
    s.transport.eps = 0.01;
    return s;
}

double sampleAt(const Image& img, std::size_t k) { return img.depth == 16 ? img.samples16()[k] : img.data[k]; }

// The pixels of `img` where mask[i] == 1, in order, as one row (the region's own image).
Image gather(const Image& img, const Mask& mask)
{
    std::vector<std::size_t> kept;
    for (std::size_t i = 0; i < mask.values.size(); ++i)
        if (mask.values[i] == 1.0f) kept.push_back(i);
    Image row = Image::allocate(static_cast<int>(kept.size()), 1, img.channels, img.depth);
    const std::size_t bytes = static_cast<std::size_t>(img.channels) * img.bytesPerSample();
    for (std::size_t k = 0; k < kept.size(); ++k)
        std::copy_n(img.data.begin() + static_cast<std::ptrdiff_t>(kept[k] * bytes), bytes,
                    row.data.begin() + static_cast<std::ptrdiff_t>(k * bytes));
    return row;
}

// The unmasked recolor of `src` whose source palette is the palette of `regionPixels`.
Image recolorWithSourcePalette(const Image& src, const Image& regionPixels, std::shared_ptr<const Palette> ref,
                               const RecolorSettings& s)
{
    RecolorPipeline p(s);
    p.setSource(src);
    p.setReferencePalette(std::move(ref));
    p.setSourcePalette(std::make_shared<const Palette>(buildImagePalette(regionPixels, s.space, s.palette)));
    return p.run();
}

// Pixel i of `a` (RGB or RGBA) equals pixel i of `b` in every channel (a gray b as R = G = B).
bool samePixel(const Image& a, const Image& b, std::size_t i)
{
    for (int c = 0; c < a.channels; ++c)
        if (sampleAt(a, i * a.channels + c) != sampleAt(b, i * b.channels + (b.channels == 1 ? 0 : c))) return false;
    return true;
}

}  // namespace

class TestRegions : public QObject {
    Q_OBJECT
private slots:
    void maskedRecolorIsExactUnderBlackAndWhite_data()
    {
        QTest::addColumn<int>("channels");
        QTest::addColumn<int>("depth");
        QTest::newRow("RGB 8-bit") << 3 << 8;
        QTest::newRow("RGB 16-bit") << 3 << 16;
        QTest::newRow("RGBA 16-bit") << 4 << 16;
        QTest::newRow("gray 8-bit") << 1 << 8;
    }
    void maskedRecolorIsExactUnderBlackAndWhite()
    {
        QFETCH(int, channels);
        QFETCH(int, depth);
        const int w = 72, h = 48;
        const Image src = source(w, h, channels, depth);
        const RecolorSettings s = quickSettings();
        const auto ref = std::make_shared<const Palette>(buildImagePalette(reference(40, 30), s.space, s.palette));
        // White: a disc and the bottom rows; black elsewhere.
        Mask mask{w, h, std::vector<float>(static_cast<std::size_t>(w) * h, 0.0f)};
        for (int y = 0; y < h; ++y)
            for (int x = 0; x < w; ++x)
                if ((x - 20) * (x - 20) + (y - 18) * (y - 18) < 150 || y >= 40) mask.values[static_cast<std::size_t>(y) * w + x] = 1.0f;
        RecolorPipeline pipeline(s);
        pipeline.setSource(src);
        pipeline.setReferencePalette(ref);
        const Image masked = recolorMasked(pipeline, mask);
        const Image expected = recolorWithSourcePalette(src, gather(src, mask), ref, s);
        QCOMPARE(masked.depth, depth);
        std::size_t black = 0, white = 0, differsFromWholeImage = 0;
        RecolorPipeline whole(s);  // the plain recolor: the whole image's palette
        whole.setSource(src);
        whole.setReferencePalette(ref);
        const Image plain = whole.run();
        for (std::size_t i = 0; i < src.pixelCount(); ++i) {
            if (mask.values[i] == 0.0f) {
                QVERIFY2(samePixel(masked, src, i), qPrintable(QString("pixel %1 under black changed").arg(i)));
                ++black;
            } else {
                QVERIFY2(samePixel(masked, expected, i), qPrintable(QString("pixel %1 under white differs").arg(i)));
                differsFromWholeImage += !samePixel(masked, plain, i);
                ++white;
            }
        }
        QVERIFY(black > 1000 && white > 500);
        // The region's palette matters: the plain recolor differs on most white pixels.
        UOT_QVERIFY_MSG(differsFromWholeImage > white / 2, differsFromWholeImage << " of " << white);
        UOT_QVERIFY_THROWS_WITH(recolorMasked(pipeline, Mask{w, h - 1, std::vector<float>(static_cast<std::size_t>(w) * (h - 1), 1.0f)}),
                                "the mask is 72x47");
    }

    void twoRegionsTakeTheirOwnReferences()
    {
        const int w = 80, h = 40;
        const Image src = source(w, h, 3, 8);
        const RecolorSettings s = quickSettings();
        const Image warm = reference(40, 30);
        const Image cool = makeImage(40, 30, 3, 8, [](int x, int y, int c) {
            const double base[3] = {0.1, 0.4, 0.8};
            return base[c] + 0.2 * std::sin(0.3 * x - 0.2 * y + 2 * c);
        });
        // Region 1: columns < 30; region 2: columns >= 50; between them neither.
        std::vector<RecolorRegion> regions(2);
        for (int r = 0; r < 2; ++r) {
            regions[r].settings = s;
            regions[r].reference =
                std::make_shared<const Palette>(buildImagePalette(r == 0 ? warm : cool, s.space, s.palette));
            regions[r].mask = Mask{w, h, std::vector<float>(static_cast<std::size_t>(w) * h, 0.0f)};
            for (int y = 0; y < h; ++y)
                for (int x = 0; x < w; ++x)
                    if (r == 0 ? x < 30 : x >= 50) regions[r].mask.values[static_cast<std::size_t>(y) * w + x] = 1.0f;
        }
        std::vector<PipelineStats> stats;
        const Image result = recolorRegions(src, regions, {}, &stats);
        QCOMPARE(stats.size(), std::size_t{2});
        const Image first = recolorWithSourcePalette(src, gather(src, regions[0].mask), regions[0].reference, s);
        const Image second = recolorWithSourcePalette(src, gather(src, regions[1].mask), regions[1].reference, s);
        for (int y = 0; y < h; ++y)
            for (int x = 0; x < w; ++x) {
                const std::size_t i = static_cast<std::size_t>(y) * w + x;
                const Image& expected = x < 30 ? first : x >= 50 ? second : src;
                QVERIFY2(samePixel(result, expected, i), qPrintable(QString("pixel (%1, %2)").arg(x).arg(y)));
            }
        UOT_QVERIFY_THROWS_WITH(recolorRegions(src, std::vector<RecolorRegion>(5, regions[0])), "at most 4 regions");
    }

    void featheredEdgeCreatesNoColourEdge()
    {
        // Left: a smooth blue "sky"; right: a textured yellow "wall"; the mask is
        // painted 5 pixels past the colour edge at x = 120, into the wall.
        const int w = 240, h = 160, edge = 120;
        const Image src = makeImage(w, h, 3, 8, [](int x, int y, int c) {
            if (x < edge) {
                const double sky[3] = {0.25, 0.45, 0.85};
                return sky[c] + 0.1 * y / 160.0;
            }
            const double wall[3] = {0.85, 0.75, 0.35};
            return wall[c] - 0.08 * std::sin(0.7 * x) * std::sin(0.5 * y);
        });
        const Image ref = makeImage(60, 40, 3, 8, [](int x, int y, int c) {
            const double dusk[3] = {0.9, 0.4, 0.45};
            return dusk[c] - 0.3 * y / 40.0 + 0.05 * std::sin(x + c);
        });
        const RecolorSettings s = quickSettings();
        const auto refPalette = std::make_shared<const Palette>(buildImagePalette(ref, s.space, s.palette));
        Mask painted{w, h, std::vector<float>(static_cast<std::size_t>(w) * h, 0.0f)};
        for (int y = 0; y < h; ++y)
            for (int x = 0; x < edge + 5; ++x) painted.values[static_cast<std::size_t>(y) * w + x] = 1.0f;
        const auto render = [&](const Mask& m) {
            RecolorPipeline p(s);
            p.setSource(src);
            p.setReferencePalette(refPalette);
            return recolorMasked(p, m);
        };
        const Image hard = render(prepareMask(painted, src, 0, s.space));
        const Image feathered = render(prepareMask(painted, src, 12, s.space));
        // Either side: the source itself, and the region's transfer everywhere.
        const Image full = recolorWithSourcePalette(src, gather(src, painted), refPalette, s);
        // Blotch pixels (created colour edges) in the analysis columns around the edge.
        const quality::ArtifactSettings as;
        const quality::AnalysisImage a = quality::analysisImage(src, as);
        const auto blotchNearEdge = [&](const Image& result) {
            std::vector<unsigned char> marks;
            quality::measureArtifacts(a, quality::analysisImage(result, as), as, &marks);
            const int centre = edge * a.width / w;
            int count = 0;
            for (int y = 0; y < a.height; ++y)
                for (int x = centre - 8; x <= centre + 8; ++x) count += marks[static_cast<std::size_t>(y) * a.width + x] & 1;
            return count;
        };
        const int fullBlotch = blotchNearEdge(full), hardBlotch = blotchNearEdge(hard),
                  featheredBlotch = blotchNearEdge(feathered);
        qInfo("blotch pixels near the edge: full transfer %d, hard mask %d, feathered %d", fullBlotch, hardBlotch,
              featheredBlotch);
        // The hard mask's painting error is a created edge (the measure sees it) ...
        QVERIFY(hardBlotch > fullBlotch + 20);
        // ... the feathered one adds none beyond that of either side (source: 0).
        QVERIFY(featheredBlotch <= fullBlotch);
    }

    void complementaryFeatheredRegionsLeaveNoSeam()
    {
        // A source whose right half mirrors its left, and two complementary masks,
        // each the mirror of the other, that cross over a ramp of 24 columns in the
        // middle: both regions' weighted palettes are the whole image's (every
        // colour is on both sides, and the weights of each mirrored pair add to 1),
        // so with one reference both regions map as the single region covering the
        // whole image, and so must their composite across the seam.
        const int w = 160, h = 80, ramp = 24;
        const Image src = makeImage(w, h, 3, 8, [w](int x, int y, int c) {
            const int u = std::min(x, w - 1 - x);
            return 0.25 + 0.5 * u / w + 0.2 * std::sin(0.35 * y + 1.1 * c) + 0.06 * std::cos(0.8 * u * (c + 1));
        });
        const RecolorSettings s = quickSettings();
        const auto ref = std::make_shared<const Palette>(buildImagePalette(reference(40, 30), s.space, s.palette));
        std::vector<RecolorRegion> regions(2, RecolorRegion{Mask{w, h, {}}, ref, s});
        for (RecolorRegion& region : regions) region.mask.values.resize(static_cast<std::size_t>(w) * h);
        for (int y = 0; y < h; ++y)
            for (int x = 0; x < w; ++x) {
                // Column x's weight in region 1: 0 left of the ramp, (j + 0.5) / ramp at its j-th column, 1 right of it.
                const auto weight = [&](int col) {
                    return static_cast<float>(std::clamp((col - (w - ramp) / 2 + 0.5) / ramp, 0.0, 1.0));
                };
                const std::size_t i = static_cast<std::size_t>(y) * w + x;
                regions[0].mask.values[i] = weight(x);
                regions[1].mask.values[i] = weight(w - 1 - x);
                QVERIFY(std::abs(regions[0].mask.values[i] + regions[1].mask.values[i] - 1.0f) < 1e-6f);
            }
        const Image two = recolorRegions(src, regions);
        RecolorRegion whole{Mask{w, h, std::vector<float>(static_cast<std::size_t>(w) * h, 1.0f)}, ref, s};
        const Image single = recolorRegions(src, {whole});
        // Across the seam, the composite is the single region's result within rounding
        // (the two palettes are the whole image's up to the order of their sums).
        int largest = 0, largestAtSeam = 0;
        for (int y = 0; y < h; ++y)
            for (int x = 0; x < w; ++x)
                for (int c = 0; c < 3; ++c) {
                    const std::size_t k = (static_cast<std::size_t>(y) * w + x) * 3 + c;
                    const int d = std::abs(int(two.data[k]) - int(single.data[k]));
                    largest = std::max(largest, d);
                    if (std::abs(2 * x + 1 - w) < ramp) largestAtSeam = std::max(largestAtSeam, d);
                }
        qInfo("two complementary regions vs one: largest difference %d (in the seam's columns %d) of 255", largest,
              largestAtSeam);
        QVERIFY2(largest <= 2, qPrintable(QString("largest difference %1").arg(largest)));
        // The seam creates no colour edge beyond the single region's (the blotch
        // measure in the analysis columns around the middle).
        const quality::ArtifactSettings as;
        const quality::AnalysisImage a = quality::analysisImage(src, as);
        const auto blotchAtSeam = [&](const Image& result) {
            std::vector<unsigned char> marks;
            quality::measureArtifacts(a, quality::analysisImage(result, as), as, &marks);
            const int centre = a.width / 2;
            int count = 0;
            for (int y = 0; y < a.height; ++y)
                for (int x = centre - 8; x <= centre + 8; ++x) count += marks[static_cast<std::size_t>(y) * a.width + x] & 1;
            return count;
        };
        const int singleBlotch = blotchAtSeam(single), twoBlotch = blotchAtSeam(two);
        qInfo("blotch pixels at the seam: one region %d, two regions %d", singleBlotch, twoBlotch);
        QVERIFY(twoBlotch <= singleBlotch);
    }

    void concurrentRegionsEqualOneByOne()
    {
        // Large enough for the parallel loops to split (over 65536 pixels), three
        // regions with their own references, thread counts and spaces (the third in
        // Oklab: it cannot take the first's colours in Lab), and overlapping soft
        // masks: vertical bands, white in their middle, ramps where they meet.
        const int w = 400, h = 240;
        const Image src = source(w, h, 3, 8);
        std::vector<RecolorRegion> regions(3);
        const int threads[3] = {2, 3, 1};
        for (int r = 0; r < 3; ++r) {
            RecolorRegion& region = regions[r];
            region.settings = quickSettings();
            region.settings.threads = threads[r];
            if (r == 2) region.settings.space = WorkingSpace::Oklab;
            const Image ref = makeImage(60, 40, 3, 8, [r](int x, int y, int c) {
                return 0.15 + 0.25 * ((r + c) % 3) + 0.2 * std::sin(0.25 * x + 0.15 * (r + 1) * y + c);
            });
            region.reference = std::make_shared<const Palette>(
                buildImagePalette(ref, region.settings.space, region.settings.palette));
            region.mask = Mask{w, h, std::vector<float>(static_cast<std::size_t>(w) * h)};
            for (int y = 0; y < h; ++y)
                for (int x = 0; x < w; ++x) {
                    const double centre = (r + 0.5) * w / 3.0, half = w / 6.0 + 10;
                    const double v = std::clamp((half - std::abs(x - centre)) / 20.0, 0.0, 1.0);
                    region.mask.values[static_cast<std::size_t>(y) * w + x] = static_cast<float>(v);
                }
        }
        std::vector<PipelineStats> concurrentStats, oneByOneStats;
        const Image concurrent = recolorRegions(src, regions, {}, &concurrentStats, RegionSchedule::Concurrent);
        const Image oneByOne = recolorRegions(src, regions, {}, &oneByOneStats, RegionSchedule::OneByOne);
        QCOMPARE(concurrentStats.size(), std::size_t{3});
        QCOMPARE(oneByOneStats.size(), std::size_t{3});
        QVERIFY(concurrent.data == oneByOne.data);
        // Under each region's white alone, the unmasked recolor with the palette of
        // that white's pixels (a fresh pipeline with the region's settings).
        for (int r = 0; r < 3; ++r) {
            Mask white{w, h, std::vector<float>(static_cast<std::size_t>(w) * h, 0.0f)};
            for (std::size_t i = 0; i < white.values.size(); ++i)
                if (regions[r].mask.values[i] == 1.0f) white.values[i] = 1.0f;
            RecolorRegion alone = regions[r];
            alone.mask = white;
            const Image expected = recolorWithSourcePalette(src, gather(src, white), regions[r].reference, regions[r].settings);
            const Image got = recolorRegions(src, {alone});
            for (std::size_t i = 0; i < white.values.size(); ++i)
                if (white.values[i] == 1.0f) QVERIFY2(samePixel(got, expected, i), qPrintable(QString("region %1, pixel %2").arg(r + 1).arg(i)));
            // The three-region result, where this region alone covers the pixel, is
            // this region's own recolor (its palette weighted by its whole mask).
            const Image single = recolorRegions(src, {regions[r]});
            for (std::size_t i = 0; i < white.values.size(); ++i) {
                bool others = false;
                for (int o = 0; o < 3; ++o) others = others || (o != r && regions[o].mask.values[i] > 0.0f);
                if (white.values[i] == 1.0f && !others)
                    QVERIFY2(samePixel(concurrent, single, i), qPrintable(QString("region %1, pixel %2").arg(r + 1).arg(i)));
            }
        }
    }
};

QTEST_APPLESS_MAIN(TestRegions)
#include "test_regions.moc"
