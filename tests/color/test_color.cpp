// Colour spaces, palettes, the colour-space map and the guided filter, checked
// against independent values: published CIELAB/Oklab coordinates, exact
// formulas evaluated in double, and analytic properties. Qt Test.
#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <random>
#include <vector>

#include "core/color/color_map.h"
#include "core/color/color_space.h"
#include "core/color/palette.h"
#include "core/transport/uot_error.h"
#include "tests/support/qt_checks.h"

using namespace uot;

class TestColor : public QObject {
    Q_OBJECT
private slots:
    void lab_of_known_colors();
    void oklab_of_known_colors();
    void exact_conversions_round_trip();
    void fast_image_conversion_matches_exact_formulas_data();
    void fast_image_conversion_matches_exact_formulas();
    void palette_weights_and_means_are_exact();
    void palette_respects_size_and_is_deterministic_data();
    void palette_respects_size_and_is_deterministic();
    void palette_of_many_pixels_is_the_same_for_any_thread_count();
    void image_palette_converts_only_the_sample_and_matches_the_full_conversion_data();
    void image_palette_converts_only_the_sample_and_matches_the_full_conversion();
    void image_pixels_to_space_checks_the_range_and_converts_the_stride();
    void palette_rejects_bad_settings();
    void guided_filter_keeps_constants_and_linear_functions_of_the_guide();
    void guided_filter_smooths_noise_but_keeps_an_edge();
    void lut_equals_barycentric_projection_at_palette_points();
    void compact_field_matches_full_resolution_guided_filter_data();
    void compact_field_matches_full_resolution_guided_filter();
};

void TestColor::lab_of_known_colors()
{
    // sRGB primaries in CIELAB (D65), as tabulated by Bruce Lindbloom's calculator.
    const double red[3] = {srgbToLinear(1), 0, 0};
    double lab[3];
    linearRgbToSpace(WorkingSpace::Lab, red, lab);
    UOT_QCOMPARE_CLOSE(lab[0], 53.24, 0.05);
    UOT_QCOMPARE_CLOSE(lab[1], 80.09, 0.1);
    UOT_QCOMPARE_CLOSE(lab[2], 67.20, 0.1);
    const double white[3] = {1, 1, 1};
    linearRgbToSpace(WorkingSpace::Lab, white, lab);
    UOT_QCOMPARE_CLOSE(lab[0], 100.0, 1e-3);
    UOT_QCOMPARE_CLOSE(lab[1], 0.0, 1e-2);
    UOT_QCOMPARE_CLOSE(lab[2], 0.0, 1e-2);
}

void TestColor::oklab_of_known_colors()
{
    // Values from Ottosson's Oklab article (white and sRGB blue).
    const double white[3] = {1, 1, 1};
    double ok[3];
    linearRgbToOklab(white, ok);
    UOT_QCOMPARE_CLOSE(ok[0], 1.0, 1e-4);
    UOT_QCOMPARE_CLOSE(ok[1], 0.0, 1e-4);
    const double blue[3] = {0, 0, 1};
    linearRgbToOklab(blue, ok);
    UOT_QCOMPARE_CLOSE(ok[0], 0.4520, 1e-3);
    UOT_QCOMPARE_CLOSE(ok[1], -0.0325, 1e-3);
    UOT_QCOMPARE_CLOSE(ok[2], -0.3115, 1e-3);
}

void TestColor::exact_conversions_round_trip()
{
    // The reverse matrices are the inverses of the forward ones: sRGB -> XYZ -> sRGB
    // and sRGB -> Oklab -> sRGB return the colour to rounding (the published
    // 7-digit XYZ -> sRGB matrix alone is off by about 1e-7).
    const double colors[][3] = {{0.2, 0.5, 0.9}, {1, 0, 0}, {0.01, 0.02, 0.005}, {0.7, 0.7, 0.1}};
    for (const auto& c : colors) {
        double xyz[3], back[3], ok[3];
        linearRgbToXyz(c, xyz);
        xyzToLinearRgb(xyz, back);
        for (int i = 0; i < 3; ++i) UOT_QCOMPARE_CLOSE(back[i], c[i], 1e-14);
        linearRgbToOklab(c, ok);
        oklabToLinearRgb(ok, back);
        for (int i = 0; i < 3; ++i) UOT_QCOMPARE_CLOSE(back[i], c[i], 1e-12);
    }
    const double white[3] = {1, 1, 1};
    UOT_QCOMPARE_CLOSE(luminance(white), 1.0, 1e-6);
}

void TestColor::fast_image_conversion_matches_exact_formulas_data()
{
    QTest::addColumn<int>("workingSpace");
    for (WorkingSpace space : {WorkingSpace::Lab, WorkingSpace::Oklab, WorkingSpace::LinearRgb})
        QTest::newRow(toString(space).c_str()) << int(space);
}

void TestColor::fast_image_conversion_matches_exact_formulas()
{
    QFETCH(int, workingSpace);
    // Every 8-bit grey level and a random set of colours, in every space.
    Image img = Image::allocate(64, 8, 3, 8);
    std::mt19937 rng(7);
    for (std::size_t k = 0; k < img.data.size(); ++k) img.data[k] = static_cast<std::uint8_t>(rng() & 255);
    {
        const WorkingSpace space = WorkingSpace(workingSpace);
        std::vector<float> out(img.pixelCount() * 3);
        imageToSpace(img, space, out.data(), 1);
        double worst = 0;
        for (std::size_t p = 0; p < img.pixelCount(); ++p) {
            const double rgb[3] = {srgbToLinear(img.data[3 * p] / 255.0), srgbToLinear(img.data[3 * p + 1] / 255.0),
                                   srgbToLinear(img.data[3 * p + 2] / 255.0)};
            double exact[3];
            linearRgbToSpace(space, rgb, exact);
            for (int a = 0; a < 3; ++a) worst = std::max(worst, std::abs(exact[a] - out[3 * p + a]) / nominalRange(space));
        }
        UOT_QVERIFY_MSG(worst < 1e-5, toString(space) << " worst relative error " << worst);
        // And back.
        std::vector<float> back = out;
        spaceToLinearRgbInPlace(space, back.data(), img.pixelCount(), 1);
        double worstBack = 0;
        for (std::size_t p = 0; p < img.pixelCount(); ++p)
            for (int a = 0; a < 3; ++a)
                worstBack = std::max(worstBack, std::abs(back[3 * p + a] - srgbToLinear(img.data[3 * p + a] / 255.0)));
        UOT_QVERIFY_MSG(worstBack < 1e-5, toString(space) << " round trip error " << worstBack);
    }
}

void TestColor::palette_weights_and_means_are_exact()
{
    // Three clusters with known sizes: the palette keeps their means and proportions.
    std::vector<float> colors;
    const float centers[3][3] = {{20, 10, -10}, {60, -30, 40}, {90, 0, 5}};
    const int sizes[3] = {100, 300, 600};
    for (int c = 0; c < 3; ++c)
        for (int k = 0; k < sizes[c]; ++k) colors.insert(colors.end(), centers[c], centers[c] + 3);
    PaletteSettings s;
    s.size = 16;
    const Palette p = buildPalette(colors.data(), 1000, WorkingSpace::Lab, s, 1);
    QVERIFY(p.size() == 3);
    const double sum = std::accumulate(p.weights.begin(), p.weights.end(), 0.0);
    UOT_QCOMPARE_CLOSE(sum, 1.0, 1e-12);
    for (std::size_t i = 0; i < p.size(); ++i) {
        int match = -1;
        for (int c = 0; c < 3; ++c)
            if (std::abs(p.points[3 * i] - centers[c][0]) < 1e-4) match = c;
        QVERIFY(match >= 0);
        if (match < 0) continue;
        UOT_QCOMPARE_CLOSE(p.weights[i], sizes[match] / 1000.0, 1e-12);
        UOT_QCOMPARE_CLOSE(p.points[3 * i + 1], centers[match][1], 1e-4);
    }
}

void TestColor::palette_respects_size_and_is_deterministic_data()
{
    QTest::addColumn<int>("method");  // PaletteMethod
    QTest::newRow("histogram") << int(PaletteMethod::Histogram);
    QTest::newRow("k-means") << int(PaletteMethod::KMeans);
}

void TestColor::palette_respects_size_and_is_deterministic()
{
    QFETCH(int, method);
    std::mt19937 rng(3);
    std::uniform_real_distribution<float> u(-50, 50);
    std::vector<float> colors(3 * 20000);
    for (float& c : colors) c = u(rng);
    {
        const PaletteMethod m = PaletteMethod(method);
        PaletteSettings s;
        s.method = m;
        s.size = m == PaletteMethod::KMeans ? 64 : 500;
        s.finestBins = 32;
        s.seed = 11;
        const Palette a = buildPalette(colors.data(), 20000, WorkingSpace::Lab, s, 2);
        const Palette b = buildPalette(colors.data(), 20000, WorkingSpace::Lab, s, 1);
        QVERIFY(a.size() <= static_cast<std::size_t>(s.size));
        QVERIFY(a.size() >= static_cast<std::size_t>(s.size) * 3 / 4);  // close to the requested size
        QVERIFY(a.points == b.points && a.weights == b.weights);
        // Weighted mean of the palette = mean of the colours (mass and first moment kept).
        double mean = 0, pm = 0;
        for (std::size_t k = 0; k < 20000; ++k) mean += colors[3 * k] / 20000.0;
        for (std::size_t i = 0; i < a.size(); ++i) pm += a.weights[i] * a.points[3 * i];
        UOT_QCOMPARE_CLOSE(pm, mean, 1e-3);
    }
}

void TestColor::palette_of_many_pixels_is_the_same_for_any_thread_count()
{
    // Above the parallel threshold (65536 samples) each thread owns a range of
    // cells; the result must not depend on how many there are, and the palette
    // must keep the mass and the mean of the sampled colors.
    std::mt19937 rng(5);
    std::normal_distribution<float> g(0, 20);
    const std::size_t n = 300000;
    std::vector<float> colors(3 * n);
    for (float& c : colors) c = g(rng);
    PaletteSettings s;
    s.size = 2000;
    s.sampleLimit = 150000;  // stride 2
    s.seed = 3;              // offset 1
    const Palette one = buildPalette(colors.data(), n, WorkingSpace::Lab, s, 1);
    const Palette three = buildPalette(colors.data(), n, WorkingSpace::Lab, s, 3);
    QVERIFY(one.size() > 1000 && one.size() <= 2000);
    QVERIFY(one.points == three.points && one.weights == three.weights);
    double mean = 0, pm = 0;
    for (std::size_t k = 1; k < n; k += 2) mean += colors[3 * k + 2] / 150000.0;
    for (std::size_t i = 0; i < one.size(); ++i) pm += one.weights[i] * one.points[3 * i + 2];
    UOT_QCOMPARE_CLOSE(pm, mean, 1e-4);
    colors[3 * 4001 + 1] = std::nanf("");
    UOT_QVERIFY_THROWS_WITH(buildPalette(colors.data(), n, WorkingSpace::Lab, s, 2), "pixel 4001");
}

void TestColor::image_palette_converts_only_the_sample_and_matches_the_full_conversion_data()
{
    QTest::addColumn<int>("channels");
    QTest::addColumn<int>("depth");
    for (int channels : {1, 3, 4})
        for (int depth : {8, 16}) QTest::addRow("%d channels, %d bit", channels, depth) << channels << depth;
}

void TestColor::image_palette_converts_only_the_sample_and_matches_the_full_conversion()
{
    QFETCH(int, channels);
    QFETCH(int, depth);
    // buildImagePalette converts only the sampled pixels; its palette must equal,
    // bit for bit, the palette of the fully converted image, for gray, RGB and
    // RGBA, 8 and 16 bit, with and without a sampling stride.
    std::mt19937 rng(9);
    Image image = Image::allocate(301, 257, channels, depth);
    for (std::size_t i = 0; i < image.pixelCount() * static_cast<std::size_t>(channels); ++i) {
        if (depth == 8) image.samples8()[i] = static_cast<std::uint8_t>(rng() & 0xff);
        else image.samples16()[i] = static_cast<std::uint16_t>(rng() & 0xffff);
    }
    for (std::size_t limit : {std::size_t(0), std::size_t(20000)}) {
        PaletteSettings s;
        s.size = 700;
        s.sampleLimit = limit;
        s.seed = 4;
        std::vector<float> full(image.pixelCount() * 3);
        imageToSpace(image, WorkingSpace::Oklab, full.data(), 2);
        const Palette expected = buildPalette(full.data(), image.pixelCount(), WorkingSpace::Oklab, s, 2);
        const Palette got = buildImagePalette(image, WorkingSpace::Oklab, s, 2);
        QVERIFY(got.size() > 1 && got.space == WorkingSpace::Oklab);
        QVERIFY(got.points == expected.points && got.weights == expected.weights);
    }
}

void TestColor::image_pixels_to_space_checks_the_range_and_converts_the_stride()
{
    std::vector<float> out(9);
    Image tiny = Image::allocate(2, 2, 3, 8);
    for (std::size_t i = 0; i < tiny.data.size(); ++i) tiny.data[i] = static_cast<std::uint8_t>(20 * i + 7);
    UOT_QVERIFY_THROWS_WITH(imagePixelsToSpace(tiny, WorkingSpace::Lab, 1, 2, 3, out.data()), "past the image");
    imagePixelsToSpace(tiny, WorkingSpace::Lab, 1, 2, 2, out.data());  // pixels 1 and 3: the last one
    std::vector<float> all(12);
    imageToSpace(tiny, WorkingSpace::Lab, all.data());
    QVERIFY(std::equal(out.begin(), out.begin() + 3, all.begin() + 3) && std::equal(out.begin() + 3, out.begin() + 6, all.begin() + 9));
}

void TestColor::palette_rejects_bad_settings()
{
    std::vector<float> colors(30, 1.0f);
    PaletteSettings s;
    s.size = 0;
    UOT_QVERIFY_THROWS_WITH(buildPalette(colors.data(), 10, WorkingSpace::Lab, s), "palette size");
    s.size = 16;
    s.finestBins = 48;
    UOT_QVERIFY_THROWS_WITH(buildPalette(colors.data(), 10, WorkingSpace::Lab, s), "power of two");
}

void TestColor::guided_filter_keeps_constants_and_linear_functions_of_the_guide()
{
    // q = a I + b exactly reproduces p when p is an affine function of I (any radius, eps small),
    // and a constant field stays constant.
    const int w = 40, h = 30;
    std::vector<float> guide(w * h), field(w * h * 2);
    std::mt19937 rng(5);
    std::uniform_real_distribution<float> u(0, 1);
    for (int k = 0; k < w * h; ++k) {
        guide[k] = u(rng);
        field[2 * k] = 3.0f * guide[k] - 1.0f;
        field[2 * k + 1] = 0.25f;
    }
    guidedFilter(guide.data(), field.data(), w, h, 2, 4, 1e-8, 1, 1);
    double worst = 0;
    for (int k = 0; k < w * h; ++k) {
        worst = std::max(worst, std::abs(field[2 * k] - (3.0 * guide[k] - 1.0)));
        worst = std::max(worst, std::abs(field[2 * k + 1] - 0.25));
    }
    UOT_QVERIFY_MSG(worst < 1e-3, "worst " << worst);
}

void TestColor::guided_filter_smooths_noise_but_keeps_an_edge()
{
    // Guide: a step edge. Field: the same step plus noise. Output: noise reduced, step kept.
    const int w = 64, h = 32;
    std::vector<float> guide(w * h), field(w * h);
    std::mt19937 rng(9);
    std::normal_distribution<float> noise(0, 0.1f);
    for (int y = 0; y < h; ++y)
        for (int x = 0; x < w; ++x) {
            guide[y * w + x] = x < w / 2 ? 0.2f : 0.8f;
            field[y * w + x] = (x < w / 2 ? 0.0f : 1.0f) + noise(rng);
        }
    guidedFilter(guide.data(), field.data(), w, h, 1, 5, 1e-3, 1, 1);
    double err = 0;
    for (int y = 0; y < h; ++y)
        for (int x = 0; x < w; ++x) err += std::pow(field[y * w + x] - (x < w / 2 ? 0.0 : 1.0), 2);
    err = std::sqrt(err / (w * h));
    UOT_QVERIFY_MSG(err < 0.04, "rms error " << err << " (noise was 0.1)");
    QVERIFY(field[5 * w + w / 2 - 1] < 0.2f && field[5 * w + w / 2] > 0.8f);
}

void TestColor::lut_equals_barycentric_projection_at_palette_points()
{
    // A small plan between two palettes; the entropic map at a source palette point is the
    // barycentric projection of that point (the LUT interpolates it between nodes).
    std::vector<double> x = {20, 0, 0, 50, 10, 10, 80, -10, 20}, y = {30, 20, -20, 60, 0, 30, 70, -30, 0};
    Palette src, ref;
    src.points = x;
    src.weights = {0.3, 0.3, 0.4};
    ref.points = y;
    ref.weights = {0.2, 0.5, 0.3};
    UotProblem problem;
    problem.cost = PointCloudCost{src.points.data(), ref.points.data(), 3, 3, 3, 1e-4};
    problem.a = src.weights;
    problem.b = ref.weights;
    problem.eps = 0.01;
    problem.tauA = kInfinity;
    problem.tauB = 1.0;
    const std::vector<double> logU = {0.1, -0.2, 0.3}, logV = {0.5, -0.1, 0.2};
    std::vector<double> target;
    barycentricProjection(problem, logU, logV, src, ref, target, nullptr, 1);
    // Independent: the plan entries by hand.
    for (int i = 0; i < 3; ++i) {
        double m = 0, t0 = 0;
        for (int j = 0; j < 3; ++j) {
            double c = 0;
            for (int a = 0; a < 3; ++a) c += (x[3 * i + a] - y[3 * j + a]) * (x[3 * i + a] - y[3 * j + a]);
            const double p = std::exp(logU[i] + logV[j] - 1e-4 * c / 0.01);
            m += p;
            t0 += p * y[3 * j];
        }
        UOT_QCOMPARE_CLOSE(target[3 * i], t0 / m, 1e-9);
    }
    // Pixels at exactly the palette points; a fine LUT reproduces T(x) - x.
    std::vector<float> colors(x.begin(), x.end());
    const DisplacementLut lut = buildDisplacementLut(problem, logV, ref, colors.data(), 3, 65, 1);
    std::vector<float> d(9);
    applyDisplacementLut(lut, colors.data(), 3, d.data(), 1);
    for (int k = 0; k < 9; ++k) UOT_QCOMPARE_CLOSE(d[k], target[k] - x[k], 1e-3);
}

void TestColor::compact_field_matches_full_resolution_guided_filter_data()
{
    QTest::addColumn<int>("guideKind");
    for (SmoothingGuide g : {SmoothingGuide::Lightness, SmoothingGuide::Color, SmoothingGuide::Split})
        QTest::newRow(toString(g).c_str()) << int(g);
}

void TestColor::compact_field_matches_full_resolution_guided_filter()
{
    // Two routes to the same result when no subsampling happens: (a) the LUT at every
    // pixel, the full-resolution filter (lightness: guidedFilter on L / 100; colour:
    // colorGuidedFilter on the colour / 100; split: channel 0 from the first, 1 and 2
    // from the second), composeResult; (b) downsampleColors(1),
    // computeDisplacementField, composeMapped (what the pipeline runs). They must agree
    // to a quantisation level.
    QFETCH(int, guideKind);
    const SmoothingGuide kind = static_cast<SmoothingGuide>(guideKind);
    const int w = 48, h = 32;
    Image src = Image::allocate(w, h, 3, 8);
    for (int y = 0; y < h; ++y)
        for (int x = 0; x < w; ++x) {
            std::uint8_t* p = &src.data[(static_cast<std::size_t>(y) * w + x) * 3];
            p[0] = static_cast<std::uint8_t>(40 + 4 * x);
            p[1] = static_cast<std::uint8_t>(x > w / 2 ? 200 : 60);
            p[2] = static_cast<std::uint8_t>(30 + 5 * y);
        }
    std::vector<float> colors(src.pixelCount() * 3);
    imageToSpace(src, WorkingSpace::Lab, colors.data(), 1);
    Palette ref;
    ref.points = {30, 40, 20, 60, -20, 50, 85, 10, -30};
    ref.weights = {0.3, 0.4, 0.3};
    Palette srcPal;
    srcPal.points = {50, 0, 0};
    srcPal.weights = {1.0};
    UotProblem problem;
    problem.cost = PointCloudCost{srcPal.points.data(), ref.points.data(), 1, 3, 3, 1e-4};
    problem.a = srcPal.weights;
    problem.b = ref.weights;
    problem.eps = 0.01;
    const std::vector<double> logV = {0.2, -0.1, 0.4};
    const DisplacementLut lut = buildDisplacementLut(problem, logV, ref, colors.data(), src.pixelCount(), 17, 1);

    MappingSettings ms;
    ms.smoothGuide = kind;
    ms.smoothRadius = 0.1;  // 5 pixels
    ms.smoothSubsample = 1;
    ms.smoothMinSlope = -std::numeric_limits<double>::infinity();  // the full-resolution filters below have no floor
    ms.smoothChromaEps = ms.smoothEps;                               // and one eps on every guide channel
    ms.bounds.enabled = false;                                       // nor the map's bounds
    const int radius = smoothingRadiusPixels(ms, w, h);
    QVERIFY(radius == 5);
    std::vector<float> field(src.pixelCount() * 3), guide(src.pixelCount());
    applyDisplacementLut(lut, colors.data(), src.pixelCount(), field.data(), 1);
    for (std::size_t p = 0; p < src.pixelCount(); ++p) guide[p] = guideValue(WorkingSpace::Lab, &colors[3 * p]);
    std::vector<float> byColor = field, colorGuide(colors.size());
    for (std::size_t k = 0; k < colors.size(); ++k) colorGuide[k] = colors[k] / 100.0f;
    guidedFilter(guide.data(), field.data(), w, h, 3, radius, ms.smoothEps, 1, 1);
    colorGuidedFilter(colorGuide.data(), byColor.data(), w, h, 3, radius, ms.smoothEps, 1, 1);
    for (std::size_t p = 0; p < src.pixelCount(); ++p)
        for (int c = 0; c < 3; ++c)
            if (kind == SmoothingGuide::Color || (kind == SmoothingGuide::Split && c > 0)) field[3 * p + c] = byColor[3 * p + c];
    Image a = Image::allocate(w, h, 3, 8), b = Image::allocate(w, h, 3, 8);
    composeResult(colors.data(), field.data(), WorkingSpace::Lab, ms, src, a, 1);

    const LowResolution low = downsampleColors(colors.data(), w, h, WorkingSpace::Lab, 1, 1);
    const DisplacementField compact = computeDisplacementField(lut, low, w, h, ms, 1);
    QVERIFY(compact.smoothed && compact.lowWidth == w);
    QVERIFY(compact.colorGuided == (kind != SmoothingGuide::Lightness));
    composeMapped(colors.data(), lut, compact, WorkingSpace::Lab, ms, src, b, 1);
    int worst = 0;
    for (std::size_t k = 0; k < a.data.size(); ++k) worst = std::max(worst, std::abs(int(a.data[k]) - int(b.data[k])));
    UOT_QVERIFY_MSG(worst <= 1, "worst difference " << worst << " levels");
    // And the map did something.
    int moved = 0;
    for (std::size_t k = 0; k < a.data.size(); ++k) moved = std::max(moved, std::abs(int(a.data[k]) - int(src.data[k])));
    QVERIFY(moved > 10);
}

QTEST_GUILESS_MAIN(TestColor)
#include "test_color.moc"
