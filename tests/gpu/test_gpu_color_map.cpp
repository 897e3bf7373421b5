// The GPU per-pixel mapping (gpu/gpu_color_map.h) against the CPU mapping of
// core/color/color_map.h on synthetic images (gradients + noise, odd sizes),
// 8- and 16-bit, gray / RGB / RGBA, every working space, preserve luminance on
// and off, both gamut modes, with and without the guided-filter smoothing.
// Tolerances: 1 level in 8-bit; 4 levels of 65535 in 16-bit (float rounding of
// the conversions, which nvcc contracts into FMAs, near the sRGB curve's steep
// dark end). The fold of the field into the lattice on the device against the
// CPU's fitLatticeToField; the residual match's quantiles made on the device. Also the pipeline: gpu-fused solves and maps on the GPU; without a
// device it falls back to the CPU and says so (checked without a device too).
// Qt Test; the device tests are skipped (QSKIP) without a usable GPU.

#include <algorithm>
#include <cmath>
#include <limits>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "core/color/color_map.h"
#include "core/color/color_space.h"
#include "core/color/look_lattice.h"
#include "core/color/map_regularizer.h"
#include "core/pipeline/recolor_pipeline.h"
#include "gpu/gpu_backend.h"
#include "gpu/gpu_color_map.h"
#include "tests/gpu/gpu_test_support.h"

using namespace uot;

namespace {

// Deterministic gradients + noise; alpha a ramp.
Image syntheticImage(int w, int h, int channels, int depth, unsigned seed)
{
    Image img = Image::allocate(w, h, channels, depth);
    const double maxv = depth == 16 ? 65535.0 : 255.0;
    std::uint32_t state = seed * 2654435761u + 12345u;
    auto noise = [&state] {
        state = state * 1664525u + 1013904223u;
        return static_cast<double>(state >> 8) / static_cast<double>(1u << 24) - 0.5;
    };
    for (int y = 0; y < h; ++y)
        for (int x = 0; x < w; ++x) {
            const double u = static_cast<double>(x) / (w - 1), v = static_cast<double>(y) / (h - 1);
            double c[4] = {0.1 + 0.8 * u, 0.2 + 0.6 * v * (seed % 2 ? 1 - u : u), 0.9 - 0.7 * u * v, 0.25 + 0.75 * v};
            c[1] += 0.3 * std::sin(6.0 * u + 4.0 * v + seed);
            for (int k = 0; k < channels; ++k) {
                const double val = std::clamp(c[k] + (k < 3 ? 0.04 * noise() : 0.0), 0.0, 1.0);
                const std::size_t i = (static_cast<std::size_t>(y) * w + x) * channels + k;
                if (depth == 16)
                    img.samples16()[i] = static_cast<std::uint16_t>(std::lround(val * maxv));
                else
                    img.samples8()[i] = static_cast<std::uint8_t>(std::lround(val * maxv));
            }
        }
    return img;
}

// A smooth displacement of color space (an affine part plus a sine) on the
// bounding box of the colors, scaled to the space's nominal range.
DisplacementLut syntheticLut(const std::vector<float>& colors, WorkingSpace space, int size)
{
    DisplacementLut lut;
    lut.size = size;
    double hi[3] = {-1e30, -1e30, -1e30};
    for (int a = 0; a < 3; ++a) lut.lo[a] = 1e30;
    for (std::size_t p = 0; p < colors.size() / 3; ++p)
        for (int a = 0; a < 3; ++a) {
            lut.lo[a] = std::min<double>(lut.lo[a], colors[3 * p + a]);
            hi[a] = std::max<double>(hi[a], colors[3 * p + a]);
        }
    const double d = nominalRange(space);
    // A box of at least 0.2 D per axis: the displacement varies by about 0.1 D across
    // it, as a plan's map does over a wide box (on the near-degenerate a/b box of a
    // gray image, rounding-level differences would otherwise be magnified).
    for (int a = 0; a < 3; ++a) {
        const double span = std::max(hi[a] - lut.lo[a], 0.2 * d);
        lut.lo[a] = 0.5 * (lut.lo[a] + hi[a]) - 0.5 * span;
        lut.step[a] = span / (size - 1);
    }
    lut.values.resize(static_cast<std::size_t>(size) * size * size * 3);
    for (int i = 0; i < size; ++i)
        for (int j = 0; j < size; ++j)
            for (int k = 0; k < size; ++k) {
                const double u[3] = {double(i) / (size - 1), double(j) / (size - 1), double(k) / (size - 1)};
                float* v = &lut.values[((static_cast<std::size_t>(i) * size + j) * size + k) * 3];
                v[0] = static_cast<float>(d * (0.08 * std::sin(3.0 * u[1]) - 0.05 * u[0] + 0.02));
                v[1] = static_cast<float>(d * (0.12 * u[2] - 0.1 * u[1] + 0.03 * std::cos(4.0 * u[0])));
                v[2] = static_cast<float>(d * (-0.15 * u[1] + 0.05 + 0.04 * std::sin(5.0 * u[2])));
            }
    return lut;
}

struct Diff {
    int maxAbs = 0;
    double meanAbs = 0;
};

Diff compare(const Image& a, const Image& b)
{
    Diff d;
    if (a.width != b.width || a.height != b.height || a.channels != b.channels || a.depth != b.depth) {
        d.maxAbs = 1 << 30;
        return d;
    }
    const std::size_t n = a.pixelCount() * a.channels;
    double sum = 0;
    for (std::size_t i = 0; i < n; ++i) {
        const int x = a.depth == 16 ? a.samples16()[i] : a.samples8()[i];
        const int y = b.depth == 16 ? b.samples16()[i] : b.samples8()[i];
        d.maxAbs = std::max(d.maxAbs, std::abs(x - y));
        sum += std::abs(x - y);
    }
    d.meanAbs = sum / static_cast<double>(n);
    return d;
}

struct Case {
    WorkingSpace space;
    int channels;
    int depth;
    bool keepL;
    GamutMode gamut;
    bool smooth;
    double strength;
    SmoothingGuide guide = SmoothingGuide::Lightness;
    bool slopeFloor = false;
    bool residual = false;  // the residual match (chroma), sampled on the device
};

void runCase(const Case& c, gpu::ColorMapper& mapper)
{
    const int w = 1001, h = 777;
    const Image src = syntheticImage(w, h, c.channels, c.depth, 3);
    std::vector<float> colors(src.pixelCount() * 3);
    imageToSpace(src, c.space, colors.data());
    MappingSettings ms;
    ms.smoothGuide = c.guide;
    ms.smoothMinSlope = c.slopeFloor ? 0.25 : -std::numeric_limits<double>::infinity();
    ms.residualMatch = c.residual ? 1 : 0;
    ms.bounds.enabled = false;  // the device fits unbounded lightness-guided fields (bounded ones: on the host, as the floor)
    ms.strength = c.strength;
    ms.preserveLuminance = c.keepL;
    ms.gamut = c.gamut;
    ms.smooth = c.smooth;
    const DisplacementLut lut = syntheticLut(colors, c.space, 25);
    const int radius = smoothingRadiusPixels(ms, w, h);
    const int sub = radius >= 1 ? smoothingSubsample(ms, radius) : 0;
    DisplacementField field;
    LowResolution low;
    if (sub > 0) {
        low = downsampleColors(colors.data(), w, h, c.space, sub);
        field = computeDisplacementField(lut, low, w, h, ms);
    }
    const int outChannels = c.channels == 4 ? 4 : 3;
    // The residual match: the CPU's map from its own sample, towards a reference
    // distribution (another synthetic image's colours).
    MarginalMap residual;
    const int step = 7;
    std::vector<float> cpuSample;
    if (c.residual) {
        const Image other = syntheticImage(401, 301, 3, 8, 4);
        std::vector<float> otherColors(other.pixelCount() * 3);
        imageToSpace(other, c.space, otherColors.data());
        cpuSample = sampleMappedColors(colors.data(), lut, field, c.space, w, h, step);
        residual = MarginalMap(channelQuantiles(cpuSample.data(), cpuSample.size() / 3),
                               channelQuantiles(otherColors.data(), other.pixelCount()));
    }
    // What the composition reads: with the residual match, the field refitted to the
    // matched block displacements on the host, as the pipeline does.
    const auto matched = [&](const DisplacementField& f) {
        if (!c.residual || !f.smoothed) return f;
        std::vector<float> shifted = blockDisplacements(lut, low);
        addResidualShift(shifted, low, f, residual, ms);
        return fitDisplacementField(low, shifted.data(), w, h, ms);
    };
    const DisplacementField composed = matched(field);
    Image cpu = Image::allocate(w, h, outChannels, c.depth);
    composeMapped(colors.data(), lut, composed, c.space, ms, src, cpu, 0);

    const LowResolution gpuLow = mapper.setSource(src, c.space, sub);
    // The block means agree with the CPU's (same pixels, float conversions).
    QVERIFY(gpuLow.width == low.width && gpuLow.height == low.height && gpuLow.colors.size() == low.colors.size());
    double lowErr = 0;
    for (std::size_t i = 0; i < std::min(gpuLow.colors.size(), low.colors.size()); ++i)
        lowErr = std::max(lowErr, static_cast<double>(std::fabs(gpuLow.colors[i] - low.colors[i])));
    UOT_QVERIFY_MSG(lowErr <= 1e-4 * nominalRange(c.space), "block means differ by " + std::to_string(lowErr));

    if (c.residual) {
        // The device's sample of the transferred colours is the CPU's (same grid, same formulas).
        const std::vector<float> gpuSample = mapper.sampleMapped(lut, field, step);
        QCOMPARE(gpuSample.size(), cpuSample.size());
        double err = 0;
        for (std::size_t i = 0; i < gpuSample.size(); ++i)
            err = std::max(err, static_cast<double>(std::fabs(gpuSample[i] - cpuSample[i])));
        UOT_QVERIFY_MSG(err <= 1e-4 * nominalRange(c.space), "device sample differs by " + std::to_string(err));
        // Its distributions made on the device: exactly channelQuantiles of that sample (integer
        // counts), and within a bin or so of the CPU sample's quantiles.
        const ChannelQuantiles expected = channelQuantiles(gpuSample.data(), gpuSample.size() / 3);
        const ChannelQuantiles cpuQuantiles = channelQuantiles(cpuSample.data(), cpuSample.size() / 3);
        const ChannelQuantiles deviceQuantiles = mapper.sampledQuantiles(lut, field, step, kQuantileLevels, kQuantileBins);
        double cpuErr = 0, span = 0;
        for (int k = 0; k < 3; ++k) {
            QCOMPARE(deviceQuantiles.q[k].size(), expected.q[k].size());
            for (std::size_t i = 0; i < expected.q[k].size(); ++i) {
                UOT_QVERIFY_MSG(deviceQuantiles.q[k][i] == expected.q[k][i],
                                "device quantile " + std::to_string(i) + " of channel " + std::to_string(k) + ": " +
                                    std::to_string(deviceQuantiles.q[k][i]) + " against " + std::to_string(expected.q[k][i]));
                cpuErr = std::max(cpuErr, static_cast<double>(std::fabs(deviceQuantiles.q[k][i] - cpuQuantiles.q[k][i])));
            }
            span = std::max(span, static_cast<double>(expected.q[k].back() - expected.q[k].front()));
        }
        UOT_QVERIFY_MSG(cpuErr <= 4 * span / kQuantileBins + 1e-4 * nominalRange(c.space),
                        "device quantiles differ from the CPU sample's by " + std::to_string(cpuErr));
    }
    // Composition from the same field: the per-pixel steps alone.
    Image gpuOut = Image::allocate(w, h, outChannels, c.depth);
    mapper.compose(lut, composed, ms, gpuOut);
    const Diff d = compare(cpu, gpuOut);
    if (sub > 0) QCOMPARE(field.colorGuided, c.guide != SmoothingGuide::Lightness);
    // The whole GPU chain (block means and guided filter on the device). The
    // device fits lightness-guided fields only; the colour and split guides are
    // fitted on the host (the pipeline does so) and must say so, not guess.
    Image chain = Image::allocate(w, h, outChannels, c.depth);
    if (sub > 0 && c.guide != SmoothingGuide::Lightness)
        UOT_QVERIFY_THROWS_WITH(mapper.computeField(lut, ms), "color guide");
    else if (sub > 0 && c.slopeFloor)
        UOT_QVERIFY_THROWS_WITH(mapper.computeField(lut, ms), "slope floor");
    const bool deviceField = sub > 0 && c.guide == SmoothingGuide::Lightness && !c.slopeFloor;
    const DisplacementField gpuField = deviceField ? mapper.computeField(lut, ms) : field;
    if (deviceField) {
        QVERIFY(gpuField.smoothed && gpuField.lowWidth == field.lowWidth && gpuField.lowHeight == field.lowHeight &&
                  gpuField.coefficients.size() == field.coefficients.size());
        // Coefficients: a (per guide unit) and b (working-space units); relative to the field's scale.
        double scale = 1e-12, err = 0;
        for (std::size_t i = 0; i < std::min(gpuField.coefficients.size(), field.coefficients.size()); ++i) {
            scale = std::max(scale, static_cast<double>(std::fabs(field.coefficients[i])));
            err = std::max(err, static_cast<double>(std::fabs(gpuField.coefficients[i] - field.coefficients[i])));
        }
        std::printf("  guided-filter coefficients: max |gpu-cpu| %.3g of max |coef| %.3g\n", err, scale);
        UOT_QVERIFY_MSG(err <= 1e-3 * scale, "guided-filter coefficients differ by " + std::to_string(err));
    }
    mapper.compose(lut, matched(gpuField), ms, chain);
    const Diff dc = compare(cpu, chain);
    const int tol = c.depth == 16 ? 4 : 1;
    std::printf("  %-10s ch %d depth %2d keepL %d gamut %-8s smooth %d (%s) strength %.1f: max |gpu-cpu| %d (chain %d), "
                "mean %.4f, block means %.2g\n",
                toString(c.space).c_str(), c.channels, c.depth, c.keepL ? 1 : 0, toString(c.gamut).c_str(), c.smooth ? 1 : 0,
                toString(c.guide).c_str(), c.strength, d.maxAbs, dc.maxAbs, d.meanAbs, lowErr);
    UOT_QVERIFY_MSG(d.maxAbs <= tol, "max difference " + std::to_string(d.maxAbs));
    UOT_QVERIFY_MSG(dc.maxAbs <= tol, "chain max difference " + std::to_string(dc.maxAbs));
    // The mapping must do something (a test that cannot fail is no test): the result differs from the source.
    if (c.strength > 0 && c.channels != 1) {
        const Diff moved = compare(src, gpuOut);
        UOT_QVERIFY_MSG(moved.meanAbs > (c.depth == 16 ? 256.0 : 1.0), "the mapping left the image unchanged");
    }
    if (c.strength == 0 && c.channels != 1) {
        const Diff same = compare(src, gpuOut);
        UOT_QVERIFY_MSG(same.maxAbs <= tol, "strength 0 changed the source by " + std::to_string(same.maxAbs));
    }
}

}  // namespace

class TestGpuColorMap : public QObject {
    Q_OBJECT
private slots:
    void pipeline_falls_back_or_runs_on_gpu_data();
    void pipeline_falls_back_or_runs_on_gpu();
    void gpu_mapping_matches_cpu_data();
    void gpu_mapping_matches_cpu();
    void gpu_mapping_rejects_bad_calls();
    void gpu_fold_matches_cpu_data();
    void gpu_fold_matches_cpu();
    void gpu_entropic_lattice_matches_cpu_data();
    void gpu_entropic_lattice_matches_cpu();
    void gpu_lipschitz_sweeps_match_cpu_data();
    void gpu_lipschitz_sweeps_match_cpu();
};

void TestGpuColorMap::pipeline_falls_back_or_runs_on_gpu_data()
{
    QTest::addColumn<int>("guide");  // SmoothingGuide
    QTest::addColumn<bool>("slopeFloor");
    QTest::addColumn<bool>("residual");
    const MappingSettings defaults;
    QTest::newRow("default guide and floor") << int(defaults.smoothGuide) << true << false;
    QTest::newRow("lightness, no floor (fitted on the device)") << int(SmoothingGuide::Lightness) << false << false;
    QTest::newRow("lightness with floor") << int(SmoothingGuide::Lightness) << true << false;
    QTest::newRow("color") << int(SmoothingGuide::Color) << false << false;
    QTest::newRow("default guide, residual match") << int(defaults.smoothGuide) << true << true;
}

void TestGpuColorMap::pipeline_falls_back_or_runs_on_gpu()
{
    // Runs with and without a device: gpu-fused either solves and maps on the GPU
    // (every guide: the colour and split fields and the slope floor are fitted on
    // the host and composed on the device; the residual match is sampled on the
    // device and folded into the field on the host), or falls back to the CPU with a note and gives
    // exactly the CPU result.
    QFETCH(int, guide);
    QFETCH(bool, slopeFloor);
    QFETCH(bool, residual);
    const Image src = syntheticImage(301, 203, 3, 8, 1);
    const Image ref = syntheticImage(257, 191, 3, 8, 2);
    RecolorSettings settings;
    settings.palette.size = 512;
    settings.mapping.smoothGuide = SmoothingGuide(guide);
    if (!slopeFloor) settings.mapping.smoothMinSlope = -std::numeric_limits<double>::infinity();
    settings.mapping.residualMatch = residual ? 1 : 0;
    settings.transport.solver = "fused";
    RecolorPipeline cpuPipeline(settings);
    cpuPipeline.setSource(src);
    cpuPipeline.setReference(ref);
    const Image cpu = cpuPipeline.run();
    QVERIFY(!cpuPipeline.stats().mappedOnGpu && cpuPipeline.stats().gpuNote.empty());

    settings.transport.solver = "gpu-fused";
    RecolorPipeline gpuPipeline(settings);
    gpuPipeline.setSource(src);
    gpuPipeline.setReference(ref);
    const Image out = gpuPipeline.run();
    const PipelineStats& st = gpuPipeline.stats();
    const Diff d = compare(cpu, out);
    std::printf("  pipeline gpu-fused: solved on GPU %d, mapped on GPU %d, vs CPU max %d mean %.4f, note '%s'\n",
                st.solvedOnGpu ? 1 : 0, st.mappedOnGpu ? 1 : 0, d.maxAbs, d.meanAbs, st.gpuNote.c_str());
    if (gpu::unavailableReason().empty()) {
        QVERIFY(st.solvedOnGpu);
        QVERIFY(st.mappedOnGpu);
        QVERIFY(st.gpuNote.empty());
        // Different solvers (fp32 on the GPU) give slightly different plans.
        UOT_QVERIFY_MSG(d.meanAbs < 1.0, "GPU pipeline differs from the CPU pipeline by " + std::to_string(d.meanAbs));
    } else {
        QVERIFY(!st.solvedOnGpu && !st.mappedOnGpu);
        QVERIFY(st.gpuNote.find("GPU unavailable") != std::string::npos);
        QVERIFY(d.maxAbs == 0);
        UOT_QVERIFY_THROWS_WITH(gpu::ColorMapper(0), "GPU");
    }
}

void TestGpuColorMap::gpu_mapping_matches_cpu_data()
{
    QTest::addColumn<int>("space");  // WorkingSpace
    QTest::addColumn<int>("channels");
    QTest::addColumn<int>("depth");
    QTest::addColumn<bool>("keepL");
    QTest::addColumn<int>("gamut");  // GamutMode
    QTest::addColumn<bool>("smooth");
    QTest::addColumn<double>("strength");
    QTest::addColumn<int>("guide");  // SmoothingGuide
    QTest::addColumn<bool>("slopeFloor");
    QTest::addColumn<bool>("residual");
    const Case cases[] = {
        {WorkingSpace::Lab, 3, 8, false, GamutMode::Compress, true, 1.0},
        {WorkingSpace::Lab, 3, 8, true, GamutMode::Compress, true, 1.0},
        {WorkingSpace::Lab, 4, 8, false, GamutMode::Clip, false, 1.0},
        {WorkingSpace::Lab, 4, 16, false, GamutMode::Compress, true, 0.7},
        {WorkingSpace::Lab, 3, 16, true, GamutMode::Clip, true, 1.0},
        {WorkingSpace::Lab, 1, 8, false, GamutMode::Compress, true, 1.0},
        {WorkingSpace::Oklab, 4, 8, true, GamutMode::Compress, true, 1.0},
        {WorkingSpace::Oklab, 3, 16, false, GamutMode::Compress, false, 1.0},
        {WorkingSpace::LinearRgb, 3, 8, true, GamutMode::Compress, true, 1.0},
        {WorkingSpace::LinearRgb, 4, 16, true, GamutMode::Clip, true, 1.0},
        {WorkingSpace::Lab, 4, 8, false, GamutMode::Compress, true, 0.0},
        {WorkingSpace::Lab, 3, 16, false, GamutMode::Compress, true, 0.0},
        // The colour and split guides (the default): fitted on the host, composed on the device.
        {WorkingSpace::Lab, 3, 8, false, GamutMode::Compress, true, 1.0, SmoothingGuide::Split},
        {WorkingSpace::Lab, 4, 16, true, GamutMode::Clip, true, 0.7, SmoothingGuide::Split},
        {WorkingSpace::Oklab, 3, 8, false, GamutMode::Compress, true, 1.0, SmoothingGuide::Split},
        {WorkingSpace::Lab, 3, 8, false, GamutMode::Compress, true, 1.0, SmoothingGuide::Color},
        {WorkingSpace::LinearRgb, 4, 8, true, GamutMode::Compress, true, 1.0, SmoothingGuide::Color},
        {WorkingSpace::Lab, 1, 16, false, GamutMode::Compress, true, 1.0, SmoothingGuide::Split},
        // The default lightness slope floor (fitted on the host too).
        {WorkingSpace::Lab, 3, 8, false, GamutMode::Compress, true, 1.0, SmoothingGuide::Split, true},
        {WorkingSpace::Lab, 4, 16, true, GamutMode::Compress, true, 1.0, SmoothingGuide::Lightness, true},
        {WorkingSpace::Oklab, 3, 8, false, GamutMode::Clip, true, 1.0, SmoothingGuide::Lightness, true},
        // The residual match: sampled on the device, folded into the field on the host.
        {WorkingSpace::Lab, 3, 8, false, GamutMode::Compress, true, 1.0, SmoothingGuide::Split, true, true},
        {WorkingSpace::Lab, 4, 16, true, GamutMode::Clip, true, 0.7, SmoothingGuide::Split, true, true},
        {WorkingSpace::LinearRgb, 3, 8, false, GamutMode::Compress, true, 1.0, SmoothingGuide::Lightness, false, true},
    };
    for (const Case& c : cases)
        QTest::addRow("%s ch%d %dbit keepL%d %s smooth%d strength%.1f %s%s%s", toString(c.space).c_str(), c.channels,
                      c.depth, c.keepL ? 1 : 0, toString(c.gamut).c_str(), c.smooth ? 1 : 0, c.strength,
                      toString(c.guide).c_str(), c.slopeFloor ? " floor" : "", c.residual ? " residual" : "")
            << int(c.space) << c.channels << c.depth << c.keepL << int(c.gamut) << c.smooth << c.strength << int(c.guide)
            << c.slopeFloor << c.residual;
}

void TestGpuColorMap::gpu_mapping_matches_cpu()
{
    UOT_QSKIP_WITHOUT_GPU();
    QFETCH(int, space);
    QFETCH(int, channels);
    QFETCH(int, depth);
    QFETCH(bool, keepL);
    QFETCH(int, gamut);
    QFETCH(bool, smooth);
    QFETCH(double, strength);
    QFETCH(int, guide);
    QFETCH(bool, slopeFloor);
    QFETCH(bool, residual);
    gpu::ColorMapper mapper(0);
    runCase({WorkingSpace(space), channels, depth, keepL, GamutMode(gamut), smooth, strength, SmoothingGuide(guide),
             slopeFloor, residual},
            mapper);
}

void TestGpuColorMap::gpu_mapping_rejects_bad_calls()
{
    UOT_QSKIP_WITHOUT_GPU();
    gpu::ColorMapper mapper(0);
    Image out = Image::allocate(10, 10, 3, 8);
    UOT_QVERIFY_THROWS_WITH(mapper.compose(DisplacementLut{}, DisplacementField{}, MappingSettings{}, out), "no source");
    const Image src = syntheticImage(11, 9, 3, 8, 1);
    mapper.setSource(src, WorkingSpace::Lab, 0);
    UOT_QVERIFY_THROWS_WITH(mapper.compose(DisplacementLut{}, DisplacementField{}, MappingSettings{}, out), "size");
    DisplacementField bad;  // a colour-guided field with a lightness field's coefficient count
    bad.smoothed = bad.colorGuided = true;
    bad.width = 11, bad.height = 9, bad.subsample = 4, bad.lowWidth = 3, bad.lowHeight = 3;
    bad.coefficients.assign(6 * 9, 0.0f);
    Image sameSize = Image::allocate(11, 9, 3, 8);
    UOT_QVERIFY_THROWS_WITH(mapper.compose(DisplacementLut{}, bad, MappingSettings{}, sameSize), "coefficients");
    UOT_QVERIFY_THROWS_WITH(gpu::ColorMapper(999), "does not exist");
}


void TestGpuColorMap::gpu_fold_matches_cpu_data()
{
    QTest::addColumn<int>("space");  // WorkingSpace
    QTest::addColumn<int>("guide");  // SmoothingGuide
    QTest::addColumn<int>("lutSize");
    QTest::addColumn<int>("step");
    QTest::newRow("lab split 25 step 1") << int(WorkingSpace::Lab) << int(SmoothingGuide::Split) << 25 << 1;
    QTest::newRow("lab lightness 17 step 2") << int(WorkingSpace::Lab) << int(SmoothingGuide::Lightness) << 17 << 2;
    QTest::newRow("oklab color 25 step 3") << int(WorkingSpace::Oklab) << int(SmoothingGuide::Color) << 25 << 3;
    QTest::newRow("linear rgb split 33 step 1") << int(WorkingSpace::LinearRgb) << int(SmoothingGuide::Split) << 33 << 1;
}

void TestGpuColorMap::gpu_fold_matches_cpu()
{
    // The fold of a smoothed field into the lattice (what the pipeline composes with
    // MappingSettings::lutFaithful): the device's (normal equations and conjugate gradients
    // there) against fitLatticeToField on the host from the same colours and field. Tolerance:
    // 1e-3 of the space's nominal range at every node (0.1 Lab unit): the displacements
    // agree to float rounding and the sums' order differs, so the conjugate gradients
    // (stopped at a relative residual of 1e-5) end a little apart. The fold must move
    // the lattice away from its prior by far more, so that a wrong kernel cannot pass.
    UOT_QSKIP_WITHOUT_GPU();
    QFETCH(int, space);
    QFETCH(int, guide);
    QFETCH(int, lutSize);
    QFETCH(int, step);
    const WorkingSpace ws = WorkingSpace(space);
    const int w = 1001, h = 777;
    const Image src = syntheticImage(w, h, 3, 8, 5);
    std::vector<float> colors(src.pixelCount() * 3);
    imageToSpace(src, ws, colors.data());
    MappingSettings ms;
    ms.smoothGuide = SmoothingGuide(guide);
    const DisplacementLut prior = syntheticLut(colors, ws, lutSize);
    const int sub = smoothingSubsample(ms, smoothingRadiusPixels(ms, w, h));
    const LowResolution low = downsampleColors(colors.data(), w, h, ws, sub);
    // A field unlike the prior (the prior's displacement halved at the block means), so
    // that the fold has something to do.
    std::vector<float> target = blockDisplacements(prior, low);
    for (float& v : target) v *= 0.5f;
    const DisplacementField field = fitDisplacementField(low, target.data(), w, h, ms);
    QVERIFY(field.smoothed);
    const DisplacementLut cpu = fitLatticeToField(prior, colors.data(), field, ws, w, h, step, ms.fold);

    gpu::ColorMapper mapper(0);
    mapper.setSource(src, ws, 0);
    const DisplacementLut gpu = mapper.foldLattice(prior, field, step, ms.fold);
    QCOMPARE(gpu.values.size(), cpu.values.size());
    double err = 0, moved = 0;
    for (std::size_t i = 0; i < cpu.values.size(); ++i) {
        err = std::max(err, static_cast<double>(std::fabs(gpu.values[i] - cpu.values[i])));
        moved = std::max(moved, static_cast<double>(std::fabs(cpu.values[i] - prior.values[i])));
    }
    const double range = nominalRange(ws);
    std::printf("  fold %s %s lattice %d step %d: max |gpu-cpu| %.3g, max |cpu-prior| %.3g (nominal range %g)\n",
                toString(ws).c_str(), toString(SmoothingGuide(guide)).c_str(), lutSize, step, err, moved, range);
    UOT_QVERIFY_MSG(moved > 0.02 * range, "the fold left the lattice at its prior: the test cannot tell");
    UOT_QVERIFY_MSG(err <= 1e-3 * range, "device fold differs from the CPU's by " + std::to_string(err));
    // The conjugate gradients stop where they converge: at most two chunks of 8 iterations
    // are queued past the iteration that met the tolerance, not all kFoldIterations.
    const gpu::ColorMapper::FoldIterations its = mapper.lastFoldIterations();
    std::printf("  fold conjugate gradients: converged after %d, %d queued (at most %d)\n", its.converged,
                its.launched, kFoldIterations);
    UOT_QVERIFY_MSG(its.converged > 0 && its.launched >= its.converged && its.launched <= kFoldIterations,
                    "queued " + std::to_string(its.launched) + " iterations for " + std::to_string(its.converged));
    if (its.converged < kFoldIterations)
        UOT_QVERIFY_MSG(its.launched <= its.converged + 16,
                        "queued " + std::to_string(its.launched) + " iterations for " + std::to_string(its.converged));
    // Its own error texts, not those of the CPU functions it stands for.
    UOT_QVERIFY_THROWS_WITH(mapper.foldLattice(prior, DisplacementField{}, step, ms.fold),
                            "ColorMapper::foldLattice: needs a smoothed field");
    UOT_QVERIFY_THROWS_WITH(mapper.foldLattice(prior, field, 0, ms.fold), "ColorMapper::foldLattice: the sample step");
    UOT_QVERIFY_THROWS_WITH(mapper.sampledQuantiles(prior, field, step, 1, kQuantileBins),
                            "ColorMapper::sampledQuantiles: levels");
}
void TestGpuColorMap::gpu_entropic_lattice_matches_cpu_data()
{
    QTest::addColumn<int>("lutSize");
    QTest::addColumn<int>("cols");
    QTest::addColumn<bool>("allNodes");
    QTest::addColumn<bool>("product");  // ReferenceMeasure::Product (log b in the weights)
    QTest::newRow("25 all nodes, 512 colours") << 25 << 512 << true << false;
    QTest::newRow("25 next to colours, 512 colours, product") << 25 << 512 << false << true;
    QTest::newRow("33 all nodes, 37 colours") << 33 << 37 << true << false;
}

void TestGpuColorMap::gpu_entropic_lattice_matches_cpu()
{
    // The entropic map at the lattice's nodes on the device (a warp per node) inside
    // buildDisplacementLut, against the same call on the host: every value within 1e-5 of
    // the nominal range (float sums in another order), the nodes left out (0) the same, and
    // the map far from the identity, so that a wrong kernel cannot pass.
    UOT_QSKIP_WITHOUT_GPU();
    QFETCH(int, lutSize);
    QFETCH(int, cols);
    QFETCH(bool, allNodes);
    QFETCH(bool, product);
    const Image src = syntheticImage(401, 301, 3, 8, 13);
    std::vector<float> colors(src.pixelCount() * 3);
    imageToSpace(src, WorkingSpace::Lab, colors.data());
    std::mt19937 rng(17);
    std::uniform_real_distribution<double> uL(5, 95), uab(-70, 70), uw(0.1, 1), ulog(-2, 2);
    Palette ref;
    std::vector<double> logV;
    for (int j = 0; j < cols; ++j) {
        ref.points.insert(ref.points.end(), {uL(rng), uab(rng), uab(rng)});
        ref.weights.push_back(uw(rng));
        logV.push_back(ulog(rng));
    }
    const std::vector<double> srcPoints = {50, 0, 0}, srcWeights = {1.0};
    UotProblem problem;
    problem.cost = PointCloudCost{srcPoints.data(), ref.points.data(), 1, static_cast<std::size_t>(cols), 3, 1e-4};
    problem.a = srcWeights;
    problem.b = ref.weights;
    problem.eps = 0.003;
    if (product) problem.reference = ReferenceMeasure::Product;
    const LatticeNodes nodes = allNodes ? LatticeNodes::All : LatticeNodes::NextToColors;
    const std::size_t n = colors.size() / 3;
    const DisplacementLut host = buildDisplacementLut(problem, logV, ref, colors.data(), n, lutSize, 1, nodes);
    gpu::ColorMapper mapper(0);
    int ran = 0;
    const EntropicLattice entropic = [&](DisplacementLut& lut, const std::vector<std::size_t>& at, const float* yx,
                                         const float* yy, const float* yz, const float* logW, std::size_t count,
                                         float factor) {
        ran += mapper.entropicLattice(lut, at, yx, yy, yz, logW, count, factor);
        return true;
    };
    const DisplacementLut device = buildDisplacementLut(problem, logV, ref, colors.data(), n, lutSize, 1, nodes, &entropic);
    QCOMPARE(ran, 1);
    QCOMPARE(device.values.size(), host.values.size());
    double err = 0, size = 0;
    std::size_t zeros = 0;
    for (std::size_t i = 0; i < host.values.size(); ++i) {
        err = std::max(err, static_cast<double>(std::fabs(device.values[i] - host.values[i])));
        size = std::max(size, static_cast<double>(std::fabs(host.values[i])));
        zeros += (host.values[i] == 0.0f) != (device.values[i] == 0.0f);
    }
    std::printf("  entropic lattice %d^3, %d colours: max |gpu-cpu| %.3g, max |displacement| %.3g\n", lutSize, cols, err,
                size);
    UOT_QVERIFY_MSG(size > 10, "the map is too close to the identity for the test to tell");
    UOT_QVERIFY_MSG(err <= 1e-5 * nominalRange(WorkingSpace::Lab), "device lattice differs by " + std::to_string(err));
    QCOMPARE(zeros, std::size_t(0));
}

void TestGpuColorMap::gpu_lipschitz_sweeps_match_cpu_data()
{
    QTest::addColumn<int>("space");  // WorkingSpace
    QTest::addColumn<int>("lutSize");
    QTest::addColumn<bool>("allNodes");
    QTest::addColumn<double>("slope");  // the chroma slopes of the bounds (0: the defaults)
    QTest::newRow("lab 25 all nodes") << int(WorkingSpace::Lab) << 25 << true << 0.0;
    QTest::newRow("lab 25 next to colours") << int(WorkingSpace::Lab) << 25 << false << 0.0;
    QTest::newRow("lab 25 all nodes, slopes 1e-6 (all 200 sweeps)") << int(WorkingSpace::Lab) << 25 << true << 1e-6;
    QTest::newRow("linear rgb 17 all nodes (three channels)") << int(WorkingSpace::LinearRgb) << 17 << true << 0.0;
    QTest::newRow("oklab 33 all nodes") << int(WorkingSpace::Oklab) << 33 << true << 0.0;
}

void TestGpuColorMap::gpu_lipschitz_sweeps_match_cpu()
{
    // The bounds' Lipschitz sweeps on the device (by levels of edges that share no node,
    // gpu/lipschitz_sweeps.h) inside regularizeDisplacementLut, against the same call with
    // the sweeps in order on the host: the same lattice bit for bit, every value compared
    // by its bits, twice (the second time with the schedule the device kept). The bounds
    // must move the noisy lattice, so that a device that did nothing could not pass.
    UOT_QSKIP_WITHOUT_GPU();
    QFETCH(int, space);
    QFETCH(int, lutSize);
    QFETCH(bool, allNodes);
    QFETCH(double, slope);
    const WorkingSpace ws = WorkingSpace(space);
    const Image src = syntheticImage(301, 203, 3, 8, 9);
    std::vector<float> colors(src.pixelCount() * 3);
    imageToSpace(src, ws, colors.data());
    DisplacementLut lut = syntheticLut(colors, ws, lutSize);
    std::mt19937 rng(5);
    std::uniform_real_distribution<double> u(-1, 1);
    for (float& v : lut.values) v = static_cast<float>(v + 0.1 * nominalRange(ws) * u(rng));
    MapBounds bounds;
    bounds.enabled = true;
    if (slope > 0) bounds.chromaSlope = bounds.chromaLightnessSlope = slope;
    const LatticeNodes nodes = allNodes ? LatticeNodes::All : LatticeNodes::NextToColors;
    const std::size_t n = colors.size() / 3;
    DisplacementLut host = lut;
    regularizeDisplacementLut(host, ws, bounds, colors.data(), n, nodes, 1);
    gpu::ColorMapper mapper(0);
    int calls = 0, ran = 0;
    const LipschitzSweeper sweeper = [&](float* v, std::size_t count, int first, const double bound[3],
                                         const std::vector<LatticeEdge>& edges) {
        ++calls;
        const bool done = mapper.lipschitzSweeps(v, count, first, bound, edges);
        ran += done;
        return done;
    };
    for (int round = 0; round < 2; ++round) {
        DisplacementLut device = lut;
        regularizeDisplacementLut(device, ws, bounds, colors.data(), n, nodes, 1, nullptr, &sweeper);
        std::size_t moved = 0, differ = 0;
        for (std::size_t i = 0; i < lut.values.size(); ++i) {
            moved += host.values[i] != lut.values[i];
            differ += std::memcmp(&host.values[i], &device.values[i], sizeof(float)) != 0;
        }
        std::printf("  sweeps %s %d^3 round %d: %zu of %zu values moved by the bounds, %zu differ on the device\n",
                    toString(ws).c_str(), lutSize, round, moved, lut.values.size(), differ);
        UOT_QVERIFY_MSG(moved > lut.values.size() / 20, "the bounds moved too little for the test to tell");
        QCOMPARE(differ, std::size_t(0));
    }
    QCOMPARE(calls, 2);
    QCOMPARE(ran, 2);
    // A lattice whose channel does not fit one block's shared memory is left to the host.
    if (lutSize == 25 && allNodes && slope == 0) {
        const std::size_t big = 96 * 96 * 96;
        std::vector<float> values(3 * big, 1.0f);
        const double bound[3] = {1, 1, 1};
        QVERIFY(!mapper.lipschitzSweeps(values.data(), big, 1, bound, {{0, 1, 2}}));
        QVERIFY(values[1] == 1.0f);
    }
}

QTEST_GUILESS_MAIN(TestGpuColorMap)
#include "test_gpu_color_map.moc"
