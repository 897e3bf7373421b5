// Masks (core/color/mask.h, the regions' composite included) and the weighted
// and pooled palettes (core/color/palette.h), against hand-worked values and
// against palettes of hand-made images: the colours of weight 1 gathered by the test, an image's
// pixels repeated as many times as its weight.
#include <QtTest/QtTest>

#include <cstdint>
#include <vector>

#include "core/color/mask.h"
#include "core/color/palette.h"
#include "tests/support/qt_checks.h"

using namespace uot;

namespace {

Image image8(int width, int height, int channels, const std::vector<int>& samples)
{
    Image img = Image::allocate(width, height, channels, 8);
    for (std::size_t i = 0; i < samples.size(); ++i) img.data[i] = static_cast<std::uint8_t>(samples[i]);
    return img;
}

// A smooth, varied 8-bit RGB test image.
Image pattern(int width, int height, int seed)
{
    Image img = Image::allocate(width, height, 3, 8);
    for (int y = 0; y < height; ++y)
        for (int x = 0; x < width; ++x) {
            std::uint8_t* p = img.data.data() + 3 * (static_cast<std::size_t>(y) * width + x);
            p[0] = static_cast<std::uint8_t>((x * 7 + seed * 31) % 256);
            p[1] = static_cast<std::uint8_t>((y * 11 + x * 3 + seed * 17) % 256);
            p[2] = static_cast<std::uint8_t>((x * y + seed * 53) % 256);
        }
    return img;
}

// The pixels of `images`, one after another, as one row.
Image concatenated(const std::vector<const Image*>& images)
{
    std::size_t n = 0;
    for (const Image* img : images) n += img->pixelCount();
    Image row = Image::allocate(static_cast<int>(n), 1, 3, 8);
    std::size_t at = 0;
    for (const Image* img : images) {
        std::copy(img->data.begin(), img->data.end(), row.data.begin() + static_cast<std::ptrdiff_t>(at));
        at += img->data.size();
    }
    return row;
}

void comparePalettes(const Palette& a, const Palette& b, double tol)
{
    QCOMPARE(a.size(), b.size());
    for (std::size_t i = 0; i < a.points.size(); ++i) UOT_QCOMPARE_CLOSE(a.points[i], b.points[i], tol);
    for (std::size_t i = 0; i < a.weights.size(); ++i) UOT_QCOMPARE_CLOSE(a.weights[i], b.weights[i], tol);
    for (int c = 0; c < 3; ++c) {
        QCOMPARE(a.marginals.q[c].size(), b.marginals.q[c].size());
        for (std::size_t k = 0; k < a.marginals.q[c].size(); ++k)
            UOT_QCOMPARE_CLOSE(a.marginals.q[c][k], b.marginals.q[c][k], 1e-3);
    }
}

}  // namespace

class TestMask : public QObject {
    Q_OBJECT
private slots:
    void maskValuesFromImages()
    {
        // Gray: the value; RGB: the mean of R, G, B; RGBA: that mean times alpha.
        const Mask gray = maskFromImage(image8(3, 1, 1, {0, 255, 51}));
        QCOMPARE(gray.values[0], 0.0f);
        QCOMPARE(gray.values[1], 1.0f);
        UOT_QCOMPARE_CLOSE(gray.values[2], 0.2, 1e-7);
        const Mask rgb = maskFromImage(image8(2, 1, 3, {255, 0, 0, 255, 255, 255}));
        UOT_QCOMPARE_CLOSE(rgb.values[0], 1.0 / 3.0, 1e-7);
        QCOMPARE(rgb.values[1], 1.0f);
        const Mask rgba = maskFromImage(image8(2, 1, 4, {255, 255, 255, 0, 255, 255, 255, 51}));
        QCOMPARE(rgba.values[0], 0.0f);
        UOT_QCOMPARE_CLOSE(rgba.values[1], 0.2, 1e-7);
        Image deep = Image::allocate(2, 1, 1, 16);
        deep.samples16()[0] = 65535;
        deep.samples16()[1] = 13107;  // 65535 / 5
        const Mask m16 = maskFromImage(deep);
        QCOMPARE(m16.values[0], 1.0f);
        UOT_QCOMPARE_CLOSE(m16.values[1], 0.2, 1e-7);
        Image broken = Image::allocate(2, 2, 1, 8);
        broken.data.resize(3);
        UOT_QVERIFY_THROWS_WITH(maskFromImage(broken), "mask image");
    }

    void resizeShrinksByAreaAndEnlargesBilinearly()
    {
        // 4x2 -> 2x1: each target pixel the mean of a 2x2 block.
        Mask m{4, 2, {0, 1, 1, 1, 0, 0, 1, 0.5f}};
        const Mask small = resizeMask(m, 2, 1);
        UOT_QCOMPARE_CLOSE(small.values[0], 0.25, 1e-7);
        UOT_QCOMPARE_CLOSE(small.values[1], 0.875, 1e-7);
        // 3 -> 2 across: target 0 covers source [0, 1.5): (1 x a + 0.5 x b) / 1.5.
        const Mask third = resizeMask(Mask{3, 1, {0.0f, 1.0f, 0.5f}}, 2, 1);
        UOT_QCOMPARE_CLOSE(third.values[0], (0 + 0.5 * 1.0) / 1.5, 1e-7);
        UOT_QCOMPARE_CLOSE(third.values[1], (0.5 * 1.0 + 0.5) / 1.5, 1e-7);
        // 2 -> 4: centres at -0.25 (clamped to 0), 0.25, 0.75, 1.25 (clamped to 1).
        const Mask big = resizeMask(Mask{2, 1, {0.0f, 1.0f}}, 4, 1);
        QCOMPARE(big.values[0], 0.0f);
        UOT_QCOMPARE_CLOSE(big.values[1], 0.25, 1e-7);
        UOT_QCOMPARE_CLOSE(big.values[2], 0.75, 1e-7);
        QCOMPARE(big.values[3], 1.0f);
        // Uniform areas stay exactly 0 and 1 at any ratio.
        Mask half{97, 61, std::vector<float>(97 * 61, 0.0f)};
        for (int y = 0; y < 61; ++y)
            for (int x = 50; x < 97; ++x) half.values[static_cast<std::size_t>(y) * 97 + x] = 1.0f;
        for (const auto& [w, h] : {std::pair{41, 23}, std::pair{300, 170}}) {
            const Mask r = resizeMask(half, w, h);
            for (int y = 0; y < h; ++y) {
                QCOMPARE(r.values[static_cast<std::size_t>(y) * w], 0.0f);
                QCOMPARE(r.values[static_cast<std::size_t>(y) * w + w - 1], 1.0f);
            }
        }
    }

    void blendKeepsBlackAndWhiteExactly()
    {
        // 8-bit: source 100, recolored 201: m = 0 -> 100, 1 -> 201, 0.5 -> 150.5 rounded half away = 151.
        const Image src = image8(3, 1, 3, {100, 100, 100, 100, 100, 100, 100, 100, 100});
        Image out = image8(3, 1, 3, {201, 201, 201, 201, 201, 201, 201, 201, 201});
        blendMasked(src, Mask{3, 1, {0.0f, 1.0f, 0.5f}}, out);
        QCOMPARE(int(out.data[0]), 100);
        QCOMPARE(int(out.data[3]), 201);
        QCOMPARE(int(out.data[6]), 151);
        // A gray source is copied as R = G = B; 16-bit samples alike.
        Image gray = Image::allocate(2, 1, 1, 16);
        gray.samples16()[0] = 40000;
        gray.samples16()[1] = 1000;
        Image rec = Image::allocate(2, 1, 3, 16);
        for (int i = 0; i < 6; ++i) rec.samples16()[i] = 2000;
        blendMasked(gray, Mask{2, 1, {0.0f, 0.25f}}, rec);
        for (int c = 0; c < 3; ++c) QCOMPARE(int(rec.samples16()[c]), 40000);
        for (int c = 0; c < 3; ++c) QCOMPARE(int(rec.samples16()[3 + c]), 1250);
        UOT_QVERIFY_THROWS_WITH(blendMasked(src, Mask{2, 1, {0.0f, 1.0f}}, out), "do not match");
    }

    void compositeSharesPixelsByWeight()
    {
        // Source 100, region 1's result 200, region 2's 40, worked by hand with
        // S = w1 + w2: source + min(1, S) ((w1 200 + w2 40) / S - source).
        const Image src = image8(5, 1, 3, std::vector<int>(15, 100));
        const Image first = image8(5, 1, 3, std::vector<int>(15, 200));
        const Image second = image8(5, 1, 3, std::vector<int>(15, 40));
        const Mask m1{5, 1, {0.0f, 0.5f, 0.5f, 1.0f, 0.25f}}, m2{5, 1, {0.0f, 0.5f, 0.25f, 1.0f, 0.0f}};
        const Image out = compositeRegions(src, {&m1, &m2}, {&first, &second});
        // (0, 0): the source; (0.5, 0.5): (100 + 20) / 1 = 120, no source; (0.5, 0.25):
        // 0.25 x 100 + 100 + 10 = 135; (1, 1): the mean, 120; (0.25, 0): 100 + 0.25 x 100 = 125.
        const int expected[5] = {100, 120, 135, 120, 125};
        for (int i = 0; i < 5; ++i)
            for (int c = 0; c < 3; ++c) QCOMPARE(int(out.data[static_cast<std::size_t>(3 * i + c)]), expected[i]);
        // One region is blendMasked's result (a gray 16-bit source as R = G = B).
        Image gray = Image::allocate(3, 1, 1, 16);
        gray.samples16()[0] = 40000;
        gray.samples16()[1] = 1000;
        gray.samples16()[2] = 7;
        Image rec = Image::allocate(3, 1, 3, 16);
        for (int i = 0; i < 9; ++i) rec.samples16()[i] = 2000;
        const Mask m{3, 1, {0.0f, 0.25f, 1.0f}};
        const Image one = compositeRegions(gray, {&m}, {&rec});
        const int expectedGray[3] = {40000, 1250, 2000};
        for (int i = 0; i < 3; ++i)
            for (int c = 0; c < 3; ++c) QCOMPARE(int(one.samples16()[static_cast<std::size_t>(3 * i + c)]), expectedGray[i]);
        UOT_QVERIFY_THROWS_WITH(compositeRegions(src, {&m1}, {&first, &second}), "one result per mask");
        UOT_QVERIFY_THROWS_WITH(compositeRegions(src, {&m}, {&rec}), "do not match");
    }

    void featherFollowsColourEdges()
    {
        // Left half red, right half blue; the mask is white on the left and on the
        // first 3 columns of the right (painted past the edge). Feathered, its
        // largest step moves to the colour edge (between columns 31 and 32), the red
        // side stays selected, the blue side fades monotonically to 0 within 2 x the
        // radius of the painted edge (the exact filter), and far areas keep their values exactly.
        const int w = 96, h = 16, radius = 6;
        std::vector<float> guide(3 * w * h);
        Mask m{w, h, std::vector<float>(w * h, 0.0f)};
        for (int y = 0; y < h; ++y)
            for (int x = 0; x < w; ++x) {
                const std::size_t i = static_cast<std::size_t>(y) * w + x;
                const bool left = x < 32;
                guide[3 * i] = 50, guide[3 * i + 1] = left ? 60.0f : -20.0f, guide[3 * i + 2] = left ? 40.0f : -60.0f;
                m.values[i] = x < 35 ? 1.0f : 0.0f;
            }
        Mask f = m;
        featherMask(f, guide.data(), WorkingSpace::Lab, radius);
        for (int y = 0; y < h; ++y) {
            const float* row = f.values.data() + static_cast<std::size_t>(y) * w;
            QCOMPARE(row[0], 1.0f);
            QCOMPARE(row[w - 1], 0.0f);
            for (int x = 0; x < 32; ++x) QVERIFY2(row[x] > 0.99f, "the red side stays selected");
            int steepest = 0;
            for (int x = 0; x + 1 < w; ++x)
                if (row[x] - row[x + 1] > row[steepest] - row[steepest + 1]) steepest = x;
            QCOMPARE(steepest, 31);
            for (int x = 32; x + 1 < w; ++x) QVERIFY(row[x + 1] <= row[x]);
            QVERIFY(row[32] < 0.6f);
            QCOMPARE(row[35 + 2 * radius], 0.0f);
        }
        // The fast filter (radius 16: models on 4x4 block means): beyond 2.5 x the
        // radius of the painted edge the mask keeps its value exactly.
        Mask wide = m;
        featherMask(wide, guide.data(), WorkingSpace::Lab, 16);
        for (int y = 0; y < h; ++y) {
            const float* row = wide.values.data() + static_cast<std::size_t>(y) * w;
            for (int x = 35 + 40; x < w; ++x) QCOMPARE(row[x], 0.0f);
            QVERIFY(row[31] - row[32] > 0.3f);  // still a step at the colour edge
        }
        UOT_QVERIFY_THROWS_WITH(featherMask(f, guide.data(), WorkingSpace::Lab, -1), "radius");
    }

    void weightedPaletteOfBinaryWeightsIsThePaletteOfTheKeptColours()
    {
        const Image img = pattern(40, 30, 1);
        std::vector<float> weights(img.pixelCount());
        std::vector<int> kept;
        for (std::size_t i = 0; i < weights.size(); ++i) {
            weights[i] = (i % 7 < 3) ? 1.0f : 0.0f;
            if (weights[i] > 0) kept.push_back(static_cast<int>(i));
        }
        Image row = Image::allocate(static_cast<int>(kept.size()), 1, 3, 8);
        for (std::size_t k = 0; k < kept.size(); ++k)
            for (int c = 0; c < 3; ++c) row.data[3 * k + c] = img.data[3 * static_cast<std::size_t>(kept[k]) + c];
        for (PaletteMethod method : {PaletteMethod::Histogram, PaletteMethod::KMeans}) {
            PaletteSettings s;
            s.size = 64;
            s.method = method;
            const Palette expected = buildImagePalette(row, WorkingSpace::Lab, s);
            const Palette weighted = buildWeightedImagePalette(img, weights.data(), WorkingSpace::Lab, s);
            QVERIFY(expected.points == weighted.points);
            QVERIFY(expected.weights == weighted.weights);
            // The unweighted palette of the whole image is not it.
            QVERIFY(buildImagePalette(img, WorkingSpace::Lab, s).points != weighted.points);
        }
        std::vector<float> none(img.pixelCount(), 0.0f);
        UOT_QVERIFY_THROWS_WITH(buildWeightedImagePalette(img, none.data(), WorkingSpace::Lab, {}), "every weight is zero");
    }

    void weightTwoCountsAsTwoCopies()
    {
        const Image img = pattern(24, 20, 2);
        std::vector<float> colours(3 * img.pixelCount());
        imageToSpace(img, WorkingSpace::Lab, colours.data());
        std::vector<float> weights(img.pixelCount()), copies;
        for (std::size_t i = 0; i < weights.size(); ++i) {
            weights[i] = 1.0f + static_cast<float>(i % 2);  // 1, 2, 1, 2, ...
            for (int r = 0; r < static_cast<int>(weights[i]); ++r)
                copies.insert(copies.end(), colours.begin() + static_cast<std::ptrdiff_t>(3 * i),
                              colours.begin() + static_cast<std::ptrdiff_t>(3 * i + 3));
        }
        PaletteSettings s;
        s.size = 48;
        const Palette expected = buildPalette(copies.data(), copies.size() / 3, WorkingSpace::Lab, s);
        const Palette weighted = buildWeightedPalette(colours.data(), weights.data(), img.pixelCount(), WorkingSpace::Lab, s);
        comparePalettes(weighted, expected, 1e-9);
    }

    void pooledReferencesAreTheConcatenatedImage()
    {
        // Two references of one size: weights 1,1 pool like the concatenated image,
        // weights 1,2 like it with the second image twice.
        const Image a = pattern(30, 20, 3), b = pattern(30, 20, 4);
        PaletteSettings s;
        s.size = 96;
        comparePalettes(buildPooledPalette({&a, &b}, {}, WorkingSpace::Lab, s),
                        buildImagePalette(concatenated({&a, &b}), WorkingSpace::Lab, s), 1e-6);
        comparePalettes(buildPooledPalette({&a, &b}, {1.0, 2.0}, WorkingSpace::Lab, s),
                        buildImagePalette(concatenated({&a, &b, &b}), WorkingSpace::Lab, s), 1e-6);
        // Equal weights whatever the sizes: a 60x20 image counts as much as a 30x20 one.
        const Image wide = pattern(60, 20, 5);
        comparePalettes(buildPooledPalette({&a, &wide}, {}, WorkingSpace::Lab, s),
                        buildImagePalette(concatenated({&a, &a, &wide}), WorkingSpace::Lab, s), 1e-6);
        UOT_QVERIFY_THROWS_WITH(buildPooledPalette({&a, &b}, {1.0}, WorkingSpace::Lab, s), "1 weights for 2 images");
        UOT_QVERIFY_THROWS_WITH(buildPooledPalette({&a, &b}, {1.0, 0.0}, WorkingSpace::Lab, s), "finite number > 0");
    }
};

QTEST_APPLESS_MAIN(TestMask)
#include "test_mask.moc"
