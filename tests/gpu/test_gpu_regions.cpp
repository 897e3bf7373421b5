// Regions on the GPU (core/pipeline/region_recolor.h): the palette problems of
// regions whose solve options agree go to gpu-batched in one call, and each
// region is then rendered with its plan. Checked against independent float64
// solves of the same problems (the log-domain CPU solver converged to 1e-12):
// every batched plan within a relative L1 distance of 1e-3 of the float64 plan
// (the pipeline stops at a relative change of 1e-5; the rest is the batched
// solver's fp32 log-sum-exp), and the composited image within a mean |diff| of
// 0.5 and a max of 8 (of 255) of the image rendered from the float64 plans and
// composited by hand, as the batch engine's check against the per-image loop.
// Regions with other solve options are solved alone. Qt Test; skipped where no
// GPU is usable (the CPU fallback is the pre-existing one-by-one path).

#include <cstdio>

#include "core/color/mask.h"
#include "core/pipeline/region_recolor.h"
#include "tests/gpu/batched_cases.h"
#include "tests/gpu/gpu_test_support.h"
#include "tests/support/region_composite.h"
#include "tests/support/qt_checks.h"

using namespace uot;
using namespace uot::test;

namespace {

// An ellipse over the left of the image with a soft rim, and its complement.
std::vector<Mask> twoMasks(int w, int h)
{
    Mask left{w, h, std::vector<float>(static_cast<std::size_t>(w) * h, 0.0f)};
    for (int y = 0; y < h; ++y)
        for (int x = 0; x < w; ++x) {
            const double u = (x - 0.35 * w) / (0.3 * w), v = (y - 0.5 * h) / (0.4 * h);
            const double r = std::sqrt(u * u + v * v);
            left.values[static_cast<std::size_t>(y) * w + x] = static_cast<float>(std::clamp((1.1 - r) / 0.2, 0.0, 1.0));
        }
    Mask rest = left;
    for (float& m : rest.values) m = 1.0f - m;
    return {left, rest};
}

RecolorRegion regionOf(const Mask& mask, const Image& reference, double eps, const RecolorSettings& base)
{
    RecolorSettings s = base;
    s.transport.eps = eps;
    return {mask, computePalette(reference, s), s};
}

struct Difference {
    double mean = 0;
    int max = 0;
};

Difference differenceOf(const Image& a, const Image& b)
{
    Difference d;
    if (a.data.size() != b.data.size()) return {1e9, 1 << 30};
    for (std::size_t i = 0; i < a.data.size(); ++i) {
        const int v = std::abs(int(a.data[i]) - int(b.data[i]));
        d.mean += v;
        d.max = std::max(d.max, v);
    }
    d.mean /= double(a.data.size());
    return d;
}

}  // namespace

class TestGpuRegions : public QObject {
    Q_OBJECT
private slots:
    void initTestCase() { UOT_QSKIP_WITHOUT_GPU(); }

    // Two regions with their own references and eps: one batched call, plans and
    // image against the float64 oracle.
    void batchedRegionsMatchFloat64()
    {
        const Image source = syntheticImage(320, 240, 7);
        const std::vector<Mask> masks = twoMasks(source.width, source.height);
        const RecolorSettings base = gpuBatchSettings();
        const std::vector<RecolorRegion> regions = {regionOf(masks[0], syntheticImage(300, 200, 99), 0.01, base),
                                                    regionOf(masks[1], syntheticImage(280, 210, 55), 0.02, base)};
        std::vector<PipelineStats> stats;
        const Image got = recolorRegions(source, regions, {}, &stats);
        QCOMPARE(stats.size(), std::size_t(2));

        // The oracle: each region's problem solved in float64 on the CPU, rendered
        // on the CPU with that plan, composited over the source by hand.
        std::vector<Image> parts;
        std::vector<const Mask*> regionMasks;
        for (std::size_t k = 0; k < regions.size(); ++k) {
            QVERIFY(stats[k].solve.has_value());
            QCOMPARE(QString::fromStdString(stats[k].solve->solver), QStringLiteral("gpu-batched"));
            RecolorSettings cpu = regions[k].settings;
            cpu.transport.solver = "log";
            RecolorPipeline pipeline(cpu);
            pipeline.setSource(source);
            pipeline.setReferencePalette(regions[k].reference);
            pipeline.setSourcePalette(std::make_shared<const Palette>(
                buildWeightedImagePalette(source, regions[k].mask.values.data(), cpu.space, cpu.palette, cpu.threads)));
            pipeline.preparePalettes();
            const UotProblem problem = *pipeline.transportProblem();
            const SolveResult oracle = convergedReference(problem);
            QVERIFY(oracle.converged);
            const double distance = planRelativeL1(problem, *stats[k].solve, oracle);
            std::printf("  region %zu (%zux%zu, eps %g): batched plan vs float64, relative L1 %.3g (tolerance 1e-3), "
                        "%d iterations\n",
                        k + 1, problem.rows(), problem.cols(), problem.eps, distance, stats[k].solve->iterations);
            QVERIFY2(distance <= 1e-3, qPrintable(QString::number(distance)));
            pipeline.adoptPlan(oracle);
            parts.push_back(pipeline.render());
            regionMasks.push_back(&regions[k].mask);
        }
        std::vector<const Image*> results;
        for (const Image& part : parts) results.push_back(&part);
        const Image expected = test::compositeByHand(source, regionMasks, results);
        const Difference d = differenceOf(got, expected);
        std::printf("  image vs the float64 composite: mean |diff| %.4f, max %d (of 255)\n", d.mean, d.max);
        QVERIFY2(d.mean <= 0.5 && d.max <= 8, qPrintable(QString("mean %1 max %2").arg(d.mean).arg(d.max)));
    }

    // Three regions, the third with another tolerance: the first two share a
    // batched call, the third is solved by its own pipeline on the GPU.
    void unequalOptionsSolvedAlone()
    {
        const Image source = syntheticImage(200, 150, 3);
        const std::vector<Mask> masks = twoMasks(source.width, source.height);
        const RecolorSettings base = gpuBatchSettings();
        RecolorRegion third = regionOf(masks[1], syntheticImage(160, 120, 31), 0.01, base);
        third.settings.transport.options.tolerance = 1e-4;
        const std::vector<RecolorRegion> regions = {regionOf(masks[0], syntheticImage(300, 200, 99), 0.01, base),
                                                    regionOf(masks[1], syntheticImage(280, 210, 55), 0.01, base), third};
        std::vector<PipelineStats> stats;
        recolorRegions(source, regions, {}, &stats);
        QCOMPARE(stats.size(), std::size_t(3));
        for (const PipelineStats& s : stats) QVERIFY(s.solve.has_value());
        QCOMPARE(QString::fromStdString(stats[0].solve->solver), QStringLiteral("gpu-batched"));
        QCOMPARE(QString::fromStdString(stats[1].solve->solver), QStringLiteral("gpu-batched"));
        QVERIFY(stats[2].solve->solver != "gpu-batched");
        QVERIFY(stats[2].solvedOnGpu);
    }
};

QTEST_GUILESS_MAIN(TestGpuRegions)
#include "test_gpu_regions.moc"
