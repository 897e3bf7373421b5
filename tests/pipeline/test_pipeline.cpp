// The recolor pipeline on decoded buffers (no files): smooth gradients stay
// smooth, strength 0 is the identity, identical images give (nearly) the
// source, results are reproducible, caches are reused and cancellation works.
// Qt Test.
#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <limits>
#include <vector>

#include "core/color/color_space.h"
#include "core/pipeline/recolor_pipeline.h"
#include "core/transport/uot_error.h"
#include "core/registry/device_registry.h"
#include "tests/support/qt_checks.h"
#include "tests/support/synthetic_scene.h"

using namespace uot;
using uot::test::scene;

namespace {

// Horizontal gradient between two sRGB colours (8 or 16 bit).
Image gradient(int w, int h, const double from[3], const double to[3], int depth = 8)
{
    Image img = Image::allocate(w, h, 3, depth);
    const double maxv = depth == 16 ? 65535 : 255;
    for (int y = 0; y < h; ++y)
        for (int x = 0; x < w; ++x)
            for (int c = 0; c < 3; ++c) {
                const double v = from[c] + (to[c] - from[c]) * x / (w - 1);
                const auto q = static_cast<unsigned>(std::lround(v * maxv));
                const std::size_t k = (static_cast<std::size_t>(y) * w + x) * 3 + c;
                if (depth == 16) img.samples16()[k] = static_cast<std::uint16_t>(q);
                else img.data[k] = static_cast<std::uint8_t>(q);
            }
    return img;
}

// Two grey strips, dark (sRGB 40..85) on the left `darkShare` of the width and
// light (165..235) on the rest, blue raised by 0..2 by row.
Image twoStrips(int w, int h, double darkShare)
{
    Image img = Image::allocate(w, h, 3, 8);
    const int nd = static_cast<int>(std::lround(w * darkShare));
    for (int y = 0; y < h; ++y)
        for (int x = 0; x < w; ++x) {
            const double g = x < nd ? 40 + 45.0 * x / (nd - 1) : 165 + 70.0 * (x - nd) / (w - nd - 1);
            const int v = static_cast<int>(std::lround(g));
            const std::size_t k = (static_cast<std::size_t>(y) * w + x) * 3;
            img.data[k] = img.data[k + 1] = static_cast<std::uint8_t>(v);
            img.data[k + 2] = static_cast<std::uint8_t>(std::min(255, v + y % 3));
        }
    return img;
}

RecolorSettings fastSettings()
{
    RecolorSettings s;
    s.palette.size = 256;
    s.mapping.lutSize = 17;
    s.transport.eps = 0.003;
    s.threads = 2;
    return s;
}

// CIELAB of pixel p of an 8- or 16-bit image.
void labOf(const Image& img, std::size_t p, double lab[3])
{
    double rgb[3];
    for (int c = 0; c < 3; ++c) {
        const double v = img.depth == 16 ? img.samples16()[p * img.channels + c] / 65535.0 : img.data[p * img.channels + c] / 255.0;
        rgb[c] = srgbToLinear(v);
    }
    linearRgbToSpace(WorkingSpace::Lab, rgb, lab);
}

double labL(const Image& img, std::size_t p)
{
    double lab[3];
    labOf(img, p, lab);
    return lab[0];
}

}  // namespace

class TestPipeline : public QObject {
    Q_OBJECT
private slots:
    void gradient_stays_monotone_and_band_free_data();
    void gradient_stays_monotone_and_band_free();
    void strength_zero_returns_the_source_exactly();
    void identical_source_and_reference_give_nearly_the_source();
    void same_seed_gives_identical_output_and_strength_change_reuses_the_plan();
    void gpu_solver_gives_the_cpu_result();
    void colour_guide_keeps_an_edge_that_lightness_does_not_see();
    void residual_match_gives_the_reference_chroma_distribution();
    void lightness_slope_floor_keeps_the_order_of_lightness_at_an_edge();
    void stage_calls_keep_the_timings_of_the_stages_that_ran();
    void alpha_gray_and_16_bit_sources();
    void cancellation_and_bad_input();
    void mass_on_flushed_kernel_entries_switches_to_the_log_domain();
};

void TestPipeline::gradient_stays_monotone_and_band_free_data()
{
    QTest::addColumn<bool>("smooth");
    QTest::newRow("smoothed") << true;
    QTest::newRow("not smoothed") << false;
}

void TestPipeline::gradient_stays_monotone_and_band_free()
{
    QFETCH(bool, smooth);
    const double a0[3] = {0.05, 0.10, 0.35}, a1[3] = {0.95, 0.90, 0.60};  // dark blue -> light cream
    const double b0[3] = {0.30, 0.02, 0.05}, b1[3] = {0.70, 1.00, 0.95};  // dark red -> light cyan
    {
        RecolorSettings s = fastSettings();
        s.mapping.smooth = smooth;
        RecolorPipeline pipeline(s);
        pipeline.setSource(gradient(512, 8, a0, a1));
        pipeline.setReference(gradient(300, 8, b0, b1));
        const Image out = pipeline.run();
        QVERIFY(out.width == 512 && out.height == 8 && out.channels == 3 && out.depth == 8);
        // Lightness along the middle row: monotone (within quantisation) and without jumps:
        // no step between neighbours above 4x the mean step (banding / posterisation).
        std::vector<double> L(512);
        for (int x = 0; x < 512; ++x) L[x] = labL(out, 4 * 512 + x);
        double maxDrop = 0, maxStep = 0;
        for (int x = 1; x < 512; ++x) {
            maxDrop = std::max(maxDrop, L[x - 1] - L[x]);
            maxStep = std::max(maxStep, std::abs(L[x] - L[x - 1]));
        }
        const double meanStep = std::abs(L[511] - L[0]) / 511;
        UOT_QVERIFY_MSG(L[511] - L[0] > 40, "lightness range collapsed: " << L[0] << " .. " << L[511]);
        UOT_QVERIFY_MSG(maxDrop < 0.6, "not monotone: drop of " << maxDrop << " L units (smooth=" << smooth << ")");
        UOT_QVERIFY_MSG(maxStep < 4 * meanStep + 0.6,
                      "band: step " << maxStep << " vs mean " << meanStep << " (smooth=" << smooth << ")");
        // The colours moved toward the reference: the dark end is now reddish (a* > 0).
        const double rgb[3] = {srgbToLinear(out.data[4 * 512 * 3] / 255.0), srgbToLinear(out.data[4 * 512 * 3 + 1] / 255.0),
                               srgbToLinear(out.data[4 * 512 * 3 + 2] / 255.0)};
        double lab[3];
        linearRgbToSpace(WorkingSpace::Lab, rgb, lab);
        UOT_QVERIFY_MSG(lab[1] > 5, "dark end a* = " << lab[1]);
    }
}

void TestPipeline::strength_zero_returns_the_source_exactly()
{
    RecolorSettings s = fastSettings();
    s.mapping.strength = 0;
    RecolorPipeline pipeline(s);
    const Image src = scene(96, 64, 1);
    pipeline.setSource(src);
    pipeline.setReference(scene(80, 60, 2));
    const Image out = pipeline.run();
    QVERIFY(out.data == src.data && out.width == src.width && out.channels == src.channels);
}

void TestPipeline::identical_source_and_reference_give_nearly_the_source()
{
    RecolorSettings s = fastSettings();
    s.transport.adherence = 10;
    RecolorPipeline pipeline(s);
    const Image src = scene(128, 96, 3);
    pipeline.setSource(src);
    pipeline.setReference(src);
    const Image out = pipeline.run();
    double sum = 0;
    int worst = 0;
    for (std::size_t k = 0; k < src.data.size(); ++k) {
        const int d = std::abs(static_cast<int>(out.data[k]) - static_cast<int>(src.data[k]));
        sum += d;
        worst = std::max(worst, d);
    }
    const double mean = sum / src.data.size();
    UOT_QVERIFY_MSG(mean < 2.0, "mean abs difference " << mean << " levels");
    UOT_QVERIFY_MSG(worst < 40, "worst difference " << worst << " levels");
}

void TestPipeline::same_seed_gives_identical_output_and_strength_change_reuses_the_plan()
{
    RecolorSettings s = fastSettings();
    s.palette.method = PaletteMethod::KMeans;
    s.palette.size = 48;
    s.palette.seed = 42;
    const Image src = scene(96, 64, 4), ref = scene(70, 50, 5);
    RecolorPipeline a(s), b(s);
    a.setSource(src), a.setReference(ref), b.setSource(src), b.setReference(ref);
    const Image ra = a.run(), rb = b.run();
    QVERIFY(ra.data == rb.data);
    // A different seed changes the k-means palette (and so, in general, the output).
    s.palette.seed = 43;
    RecolorPipeline c(s);
    c.setSource(src), c.setReference(ref);
    QVERIFY(c.run().data != ra.data || c.sourcePalette()->points != a.sourcePalette()->points);

    // New strength: the plan and the smoothed field are reused, only composition runs.
    RecolorSettings half = a.settings();
    half.mapping.strength = 0.5;
    a.setSettings(half);
    const Image rh = a.render();
    QVERIFY(a.stats().planFromCache && a.stats().fieldFromCache && a.stats().paletteFromCache);
    QVERIFY(rh.data != ra.data);
    // Halfway: each sample lies between the source and the full transfer (within rounding).
    std::size_t outside = 0;
    for (std::size_t k = 0; k < src.data.size(); ++k) {
        const int lo = std::min(src.data[k], ra.data[k]) - 2, hi = std::max(src.data[k], ra.data[k]) + 2;
        if (rh.data[k] < lo || rh.data[k] > hi) ++outside;
    }
    UOT_QVERIFY_MSG(outside < src.data.size() / 100, outside << " samples outside [source, full]");
    // New eps: palettes reused, the plan recomputed.
    RecolorSettings other = a.settings();
    other.transport.eps = 0.02;
    a.setSettings(other);
    a.render();
    QVERIFY(a.stats().paletteFromCache && !a.stats().planFromCache);
}

void TestPipeline::gpu_solver_gives_the_cpu_result()
{
    // With a gpu-* solver the source palette converts only its sampled pixels,
    // the coarse warm start runs on the CPU, and the fine solve and the mapping
    // run on the GPU when there is one. The palettes must be the CPU path's bit
    // for bit. Without a GPU everything falls back to the CPU: the output must be
    // the CPU variant's, byte for byte, and the stats must say why; with a GPU it
    // must agree with the CPU output to a few levels (fp32 solve on the device).
    RecolorSettings s = fastSettings();
    s.palette.sampleLimit = 1000;  // a sampling stride
    s.palette.size = 300;
    s.transport.coarseSize = 40;   // exercises the multiscale warm start
    s.mapping.smoothGuide = SmoothingGuide::Lightness;  // the guide the GPU mapping implements
    s.mapping.smoothMinSlope = -std::numeric_limits<double>::infinity();  // no floor, no residual match:
    s.mapping.residualMatch = 0;                                         // what the GPU mapping implements
    const Image src = scene(96, 64, 6), ref = scene(70, 50, 7);
    s.transport.solver = "fused";
    RecolorPipeline cpu(s);
    cpu.setSource(src), cpu.setReference(ref);
    const Image expected = cpu.run();
    s.transport.solver = "gpu-fused";
    RecolorPipeline gpu(s);
    gpu.setSource(src), gpu.setReference(ref);
    const Image got = gpu.run();
    QVERIFY(gpu.sourcePalette()->points == cpu.sourcePalette()->points);
    QVERIFY(gpu.sourcePalette()->weights == cpu.sourcePalette()->weights);
    QVERIFY(got.data.size() == expected.data.size());
    if (!gpuUnavailableReason().empty()) {
        QVERIFY(got.data == expected.data);
        QVERIFY(!gpu.stats().solvedOnGpu && !gpu.stats().mappedOnGpu);
        UOT_QVERIFY_MSG(gpu.stats().gpuNote.find("GPU unavailable") != std::string::npos, gpu.stats().gpuNote);
        return;
    }
    UOT_QVERIFY_MSG(gpu.stats().solvedOnGpu && gpu.stats().mappedOnGpu, gpu.stats().gpuNote);
    int worst = 0;
    for (std::size_t k = 0; k < got.data.size() && k < expected.data.size(); ++k)
        worst = std::max(worst, std::abs(int(got.data[k]) - int(expected.data[k])));
    UOT_QVERIFY_MSG(worst <= 3, "GPU and CPU outputs differ by " << worst << " levels");
}

void TestPipeline::colour_guide_keeps_an_edge_that_lightness_does_not_see()
{
    // Source: red | teal of equal lightness, so the lightness guide sees no edge; the
    // reference: blue and yellow. The plan sends each half to one reference colour,
    // and the unsmoothed map (--no-smooth: the LUT per pixel) is the reference for the
    // chroma next to the edge. The lightness guide blends the two chroma shifts over
    // the filter's radius; the colour guide must keep them apart, split most of it.
    const int w = 64, h = 32;
    const auto labOfRgb = [](int r, int g, int b, double lab[3]) {
        const double rgb[3] = {srgbToLinear(r / 255.0), srgbToLinear(g / 255.0), srgbToLinear(b / 255.0)};
        linearRgbToSpace(WorkingSpace::Lab, rgb, lab);
    };
    double red[3], best = 1e9;
    labOfRgb(200, 60, 60, red);
    int green = 0;
    for (int g = 0; g < 256; ++g) {
        double lab[3];
        labOfRgb(40, g, 140, lab);
        if (std::abs(lab[0] - red[0]) < best) best = std::abs(lab[0] - red[0]), green = g;
    }
    QVERIFY(best < 0.5);
    Image src = Image::allocate(w, h, 3, 8), ref = Image::allocate(w, h, 3, 8);
    for (int y = 0; y < h; ++y)
        for (int x = 0; x < w; ++x) {
            const std::size_t p = static_cast<std::size_t>(y) * w + x;
            const bool left = x < w / 2;
            const std::uint8_t s[3] = {std::uint8_t(left ? 200 : 40), std::uint8_t(left ? 60 : green), std::uint8_t(left ? 60 : 140)};
            const std::uint8_t r[3] = {std::uint8_t(left ? 40 : 230), std::uint8_t(left ? 60 : 200), std::uint8_t(left ? 200 : 40)};
            for (int c = 0; c < 3; ++c) src.data[3 * p + c] = s[c], ref.data[3 * p + c] = r[c];
        }
    const auto recolor = [&](bool smooth, SmoothingGuide guide) {
        RecolorSettings s = fastSettings();
        s.mapping.bounds.enabled = false;  // the unbounded map (the bounds are tested in tests/color)
        s.mapping.lutFaithful = false;     // the field itself (the fold into the lattice drops what depends on position)
        s.mapping.smooth = smooth;
        s.mapping.smoothGuide = guide;
        s.mapping.smoothRadius = 0.1;  // 6 pixels
        RecolorPipeline pipeline(s);
        pipeline.setSource(src), pipeline.setReference(ref);
        return pipeline.run();
    };
    const Image exact = recolor(false, SmoothingGuide::Lightness);
    // Worst chroma difference to the unsmoothed map over the columns next to the edge.
    const auto chromaError = [&](const Image& img) {
        double worst = 0;
        for (int y = 0; y < h; ++y)
            for (int x = w / 2 - 6; x < w / 2 + 6; ++x) {
                const std::size_t p = static_cast<std::size_t>(y) * w + x;
                double a[3], b[3];
                labOf(img, p, a), labOf(exact, p, b);
                worst = std::max(worst, std::hypot(a[1] - b[1], a[2] - b[2]));
            }
        return worst;
    };
    const double byLightness = chromaError(recolor(true, SmoothingGuide::Lightness));
    const double byColour = chromaError(recolor(true, SmoothingGuide::Color));
    const double split = chromaError(recolor(true, SmoothingGuide::Split));
    std::printf("  chroma error next to the edge: lightness guide %.2f, colour %.2f, split %.2f (Lab units)\n", byLightness,
                byColour, split);
    QVERIFY2(byLightness > 20, "the lightness guide should blend the two chroma shifts at this edge");
    QVERIFY2(byColour < 3, "the colour guide should keep the edge");
    // Split keeps the chroma shift but smooths the lightness shift by lightness, which
    // blends here (the targets differ by about 60 L); the blue at the yellow's
    // lightness leaves the gamut and the compression costs some chroma.
    QVERIFY2(split < byLightness / 3, "the split guide should keep most of the chroma edge");
}

void TestPipeline::residual_match_gives_the_reference_chroma_distribution()
{
    // The result's a and b distributions against the reference image's, both from
    // the 8-bit pixels in CIELAB, sorted in float64 (independent of the quantile
    // tables). The match goes through the smoothed field (a few rounds of sample,
    // map, refit), so it is close, not exact: with residualMatch 1 the quantiles
    // 5%..95% must agree on average (a 1-D Wasserstein distance) within 0.6 Lab
    // units and at most half the unmatched gap. (The worst single quantile is not
    // a measure here: it sits at the jump between the reference's two populations,
    // where a small shift in rank is a large one in value.) L must not move
    // (chroma only; compression keeps luminance).
    const Image src = scene(96, 72, 5);
    Image ref = Image::allocate(80, 60, 3, 8);
    for (std::size_t p = 0; p < ref.pixelCount(); ++p) {
        // Two colour populations: a muted teal ramp and a saturated orange.
        const int x = static_cast<int>(p % 80), y = static_cast<int>(p / 80);
        const bool orange = (x / 10 + y / 10) % 3 == 0;
        ref.data[3 * p] = static_cast<std::uint8_t>(orange ? 230 : 40 + x);
        ref.data[3 * p + 1] = static_cast<std::uint8_t>(orange ? 120 : 110 + y);
        ref.data[3 * p + 2] = static_cast<std::uint8_t>(orange ? 30 : 120 + x / 2);
    }
    const auto run = [&](double residual, bool smooth = true) {
        RecolorSettings s = fastSettings();
        s.mapping.bounds.enabled = false;  // the unbounded map (the bounds are tested in tests/color)
        s.mapping.smooth = smooth;
        s.mapping.residualMatch = residual;
        RecolorPipeline pipeline(s);
        pipeline.setSource(src), pipeline.setReference(ref);
        return pipeline.run();
    };
    const auto channel = [](const Image& img, int c) {
        std::vector<double> v(img.pixelCount());
        for (std::size_t p = 0; p < v.size(); ++p) {
            double lab[3];
            labOf(img, p, lab);
            v[p] = lab[c];
        }
        std::sort(v.begin(), v.end());
        return v;
    };
    const auto quantile = [](const std::vector<double>& v, double u) { return v[static_cast<std::size_t>(u * (v.size() - 1))]; };
    struct Gap {
        double worst = 0, mean = 0;
    };
    const auto quantileGap = [&](const Image& img, int c) {
        const std::vector<double> a = channel(img, c), b = channel(ref, c);
        Gap g;
        int count = 0;
        for (double u = 0.05; u <= 0.951; u += 0.05, ++count) {
            const double d = std::abs(quantile(a, u) - quantile(b, u));
            g.worst = std::max(g.worst, d);
            g.mean += d;
        }
        g.mean /= count;
        return g;
    };
    const Image plain = run(0), matched = run(1);
    for (int c = 1; c <= 2; ++c) {
        const Gap before = quantileGap(plain, c), after = quantileGap(matched, c);
        std::printf("  channel %c: quantile gap to the reference, mean %.2f -> %.2f, worst %.2f -> %.2f Lab units\n",
                    c == 1 ? 'a' : 'b', before.mean, after.mean, before.worst, after.worst);
        UOT_QVERIFY_MSG(after.mean < 0.6, "channel " << c << ": mean quantile gap " << after.mean << " after the match");
        UOT_QVERIFY_MSG(after.mean < before.mean / 2, "channel " << c << ": the match did not halve the gap " << before.mean);
    }
    double worstL = 0;
    for (std::size_t p = 0; p < src.pixelCount(); ++p) worstL = std::max(worstL, std::abs(labL(plain, p) - labL(matched, p)));
    UOT_QVERIFY_MSG(worstL < 1.0, "lightness moved by " << worstL << " with the chroma-only match");
    // Without smoothing (the global map, as a LUT holds it) the match is left out.
    QVERIFY(run(1, false).data == run(0, false).data);
}

void TestPipeline::lightness_slope_floor_keeps_the_order_of_lightness_at_an_edge()
{
    // Source: light yellow | dark blue; reference: dark yellow-brown | light blue. The
    // plan follows colour, so the transfer turns the lightness edge around. Without a
    // floor the guided filter fits a falling lightness model in the windows across the
    // edge and the result's step across it has the opposite sign to the source's; with
    // a floor of 0.25 every window's slope is >= 0.25, so the step keeps the source's
    // sign (the global inversion happens through the smooth offset b instead).
    const int w = 64, h = 16;
    Image src = Image::allocate(w, h, 3, 8), ref = Image::allocate(w, h, 3, 8);
    for (int y = 0; y < h; ++y)
        for (int x = 0; x < w; ++x) {
            const std::size_t p = static_cast<std::size_t>(y) * w + x;
            const bool left = x < w / 2;
            const std::uint8_t s[3] = {std::uint8_t(left ? 240 : 30), std::uint8_t(left ? 230 : 40), std::uint8_t(left ? 90 : 150)};
            const std::uint8_t r[3] = {std::uint8_t(left ? 110 : 150), std::uint8_t(left ? 80 : 200), std::uint8_t(left ? 20 : 250)};
            for (int c = 0; c < 3; ++c) src.data[3 * p + c] = s[c], ref.data[3 * p + c] = r[c];
        }
    const auto edgeStep = [&](double floor) {
        RecolorSettings s = fastSettings();
        s.mapping.bounds.enabled = false;  // the unbounded map (the bounds are tested in tests/color)
        s.mapping.lutFaithful = false;     // the field itself (the fold into the lattice drops what depends on position)
        s.mapping.smoothGuide = SmoothingGuide::Lightness;
        s.mapping.smoothRadius = 0.1;  // 6 pixels
        s.mapping.smoothSubsample = 1;
        s.mapping.smoothMinSlope = floor;
        RecolorPipeline pipeline(s);
        pipeline.setSource(src), pipeline.setReference(ref);
        const Image out = pipeline.run();
        double step = 0;  // mean over rows of L(right of the edge) - L(left of it)
        for (int y = 0; y < h; ++y) {
            const std::size_t p = static_cast<std::size_t>(y) * w + w / 2;
            step += (labL(out, p) - labL(out, p - 1)) / h;
        }
        return step;
    };
    const double sourceStep = labL(src, w / 2) - labL(src, w / 2 - 1);
    const double free = edgeStep(-std::numeric_limits<double>::infinity()), floored = edgeStep(0.25);
    std::printf("  lightness step across the edge: source %.1f, no floor %.1f, floor 0.25 %.1f\n", sourceStep, free, floored);
    QVERIFY(sourceStep < -40);
    UOT_QVERIFY_MSG(free > 0, "without a floor the step should turn around (got " << free << ")");
    UOT_QVERIFY_MSG(floored < 0, "with the floor the step should keep the source's sign (got " << floored << ")");
}

void TestPipeline::stage_calls_keep_the_timings_of_the_stages_that_ran()
{
    // Calling the stages one at a time (as the app does) must report what ran
    // since resetTimings(): a later stage call finds the earlier stages cached
    // and must not zero their figures.
    RecolorSettings s = fastSettings();
    RecolorPipeline p(s);
    p.setSource(scene(96, 64, 8)), p.setReference(scene(70, 50, 9));
    p.resetTimings();
    p.preparePalettes();
    p.solve();
    (void)p.render();
    const PhaseTimings t = p.stats().timings;
    UOT_QVERIFY_MSG(t.palette > 0 && t.solve > 0 && t.map > 0, t.palette << " " << t.solve << " " << t.map);
    QVERIFY(p.stats().paletteFromCache);  // the last palette call (inside render) found them cached
    // New eps after a reset: the palettes are cached (0), the solve and map run.
    s.transport.eps = 0.006;
    p.setSettings(s);
    p.resetTimings();
    p.solve();
    (void)p.render();
    QVERIFY(p.stats().timings.palette == 0 && p.stats().timings.solve > 0 && p.stats().timings.map > 0);
}

void TestPipeline::alpha_gray_and_16_bit_sources()
{
    // RGBA: alpha copied untouched.
    Image rgba = Image::allocate(40, 30, 4, 8);
    const Image base = scene(40, 30, 6);
    for (std::size_t p = 0; p < rgba.pixelCount(); ++p) {
        for (int c = 0; c < 3; ++c) rgba.data[4 * p + c] = base.data[3 * p + c];
        rgba.data[4 * p + 3] = static_cast<std::uint8_t>(p * 7 % 256);
    }
    RecolorSettings s = fastSettings();
    s.transport.eps = 0.01;  // no fp32 underflow for the gray source against this reference
    RecolorPipeline pipeline(s);
    pipeline.setSource(rgba);
    pipeline.setReference(scene(50, 40, 7));
    const Image out = pipeline.run();
    QVERIFY(out.channels == 4);
    bool alphaKept = true;
    for (std::size_t p = 0; p < out.pixelCount(); ++p) alphaKept = alphaKept && out.data[4 * p + 3] == rgba.data[4 * p + 3];
    QVERIFY(alphaKept);

    // Gray source: becomes colour (RGB) with the reference's hues.
    Image gray = Image::allocate(64, 16, 1, 8);
    for (std::size_t p = 0; p < gray.pixelCount(); ++p) gray.data[p] = static_cast<std::uint8_t>(p % 64 * 4);
    pipeline.setSource(gray);
    const Image g = pipeline.run();
    QVERIFY(g.channels == 3 && g.depth == 8);

    // 16-bit: the result stays 16-bit and uses the extra precision (not only multiples of 257).
    const double a0[3] = {0.1, 0.2, 0.3}, a1[3] = {0.9, 0.8, 0.7};
    pipeline.setSource(gradient(600, 4, a0, a1, 16));
    const Image d = pipeline.run();
    QVERIFY(d.depth == 16 && d.channels == 3);
    std::size_t fine = 0;
    for (std::size_t k = 0; k < d.pixelCount() * 3; ++k) fine += d.samples16()[k] % 257 != 0;
    QVERIFY(fine > d.pixelCount());
}

void TestPipeline::cancellation_and_bad_input()
{
    RecolorPipeline pipeline(fastSettings());
    UOT_QVERIFY_THROWS_WITH(pipeline.run(), "no source");
    pipeline.setSource(scene(32, 32, 8));
    pipeline.setReference(scene(32, 32, 9));
    std::atomic<bool> cancel{true};
    PipelineControl control;
    control.cancel = &cancel;
    bool cancelled = false;
    try {
        pipeline.run(control);
    } catch (const Cancelled&) {
        cancelled = true;
    }
    QVERIFY(cancelled);
    cancel = false;
    QVERIFY(pipeline.run(control).width == 32);  // usable after a cancel

    // A render with other smoothing settings cancelled while the residual match
    // refits the field (after the first round), then a render with the first settings
    // again: the first settings' result, not one from the half-made field.
    {
        const Image src = scene(96, 72, 5), ref = scene(80, 60, 6);
        RecolorSettings full = fastSettings(), half = fastSettings();
        full.mapping.residualMatch = 1;
        half.mapping.residualMatch = 0.5;
        RecolorPipeline pipeline(full);
        pipeline.setSource(src), pipeline.setReference(ref);
        const Image expected = pipeline.run();
        pipeline.setSettings(half);
        std::atomic<bool> stop{false};
        PipelineControl midRounds;
        midRounds.cancel = &stop;
        int mapReports = 0;
        midRounds.onProgress = [&](const PipelineProgress& p) {
            if (p.stage == PipelineStage::Map && p.fraction > 0.3 && p.fraction < 0.6 && ++mapReports == 2) stop = true;
        };
        bool stopped = false;
        try {
            pipeline.run(midRounds);
        } catch (const Cancelled&) {
            stopped = true;
        }
        QVERIFY2(stopped && mapReports == 2, "the render was not cancelled between two refit rounds");
        pipeline.setSettings(full);
        QVERIFY(pipeline.run().data == expected.data);
    }
    Image broken = Image::allocate(4, 4, 3, 8);
    broken.data.resize(5);
    UOT_QVERIFY_THROWS_WITH(pipeline.setSource(broken), "bytes");
    RecolorSettings bad = fastSettings();
    bad.transport.eps = -1;
    UOT_QVERIFY_THROWS_WITH(pipeline.setSettings(bad), "eps");
}

// 70% dark source, 30% dark reference: 0.4 of the mass crosses a gap in which
// exp(-C/eps) passes below the smallest normal float at the default eps. The
// fp32 fused solve converged (its own rule) with the dearer crossings held as 0:
// plan mass 1.0126. The default pipeline must notice and finish in the log domain
// with the plan mass of the fp64 solve.
void TestPipeline::mass_on_flushed_kernel_entries_switches_to_the_log_domain()
{
    auto solveWith = [](Precision precision) {
        RecolorSettings s;
        s.threads = 2;
        s.transport.options.precision = precision;
        RecolorPipeline pipeline(s);
        pipeline.setSource(twoStrips(120, 30, 0.7));
        pipeline.setReference(twoStrips(120, 30, 0.3));
        pipeline.preparePalettes();
        pipeline.solve();
        return *pipeline.stats().solve;
    };
    const SolveResult fp64 = solveWith(Precision::Fp64);
    UOT_QVERIFY_MSG(fp64.status == NumericalStatus::Ok && fp64.converged, toString(fp64.status));
    UOT_QCOMPARE_CLOSE(fp64.mass, 1.0, 1e-5);
    const SolveResult fp32 = solveWith(Precision::Fp32);
    UOT_QVERIFY_MSG(fp32.status == NumericalStatus::SwitchedToLogDomain && fp32.converged,
                    toString(fp32.status) << " mass " << fp32.mass);
    UOT_QCOMPARE_CLOSE(fp32.mass, fp64.mass, 1e-4);
}

QTEST_GUILESS_MAIN(TestPipeline)
#include "test_pipeline.moc"
