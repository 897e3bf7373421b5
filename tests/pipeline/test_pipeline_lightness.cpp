// The lightness transfer through the whole recolor (smoothing, fold, bounds), against
// the 1-D monotone rearrangement worked out here in closed form:
// - a narrow-ranged source (a lightness ramp over L* 40..60) onto a wide-ranged
//   reference (L* 10..90): the rearrangement is y = 10 + 4 (L - 40), steeper than the
//   lightness slope bound 3, so the nearest bounded curve is y = 50 + 3 (L - 50): the
//   result's L* quantiles must be those of that curve (range 20..80), where the
//   transport's own curve stays far narrower;
// - the ramp stays monotone along every row (no band, no inversion).
#include <QtTest/QtTest>

#include <algorithm>
#include <cmath>
#include <vector>

#include "core/color/color_space.h"
#include "core/pipeline/recolor_pipeline.h"
#include "tests/support/lab_pixels.h"
#include "tests/support/qt_checks.h"

using namespace uot;
using uot::test::labToSrgb8;

namespace {

// A horizontal lightness ramp from L0 to L1 (CIELAB, chroma a, b), w x h.
Image ramp(int w, int h, double L0, double L1, double a, double b)
{
    Image img = Image::allocate(w, h, 3, 8);
    for (int y = 0; y < h; ++y)
        for (int x = 0; x < w; ++x) {
            const double lab[3] = {L0 + (L1 - L0) * x / (w - 1), a, b};
            labToSrgb8(lab, img.samples8() + 3 * (static_cast<std::size_t>(y) * w + x));
        }
    return img;
}

std::vector<double> lightness(const Image& img)
{
    std::vector<float> lab(3 * img.pixelCount());
    imageToSpace(img, WorkingSpace::Lab, lab.data(), 1);
    std::vector<double> L(img.pixelCount());
    for (std::size_t i = 0; i < L.size(); ++i) L[i] = lab[3 * i];
    return L;
}

double quantile(std::vector<double> v, double u)
{
    std::sort(v.begin(), v.end());
    const double p = u * static_cast<double>(v.size() - 1);
    const std::size_t k = std::min(static_cast<std::size_t>(p), v.size() - 2);
    return v[k] + (p - static_cast<double>(k)) * (v[k + 1] - v[k]);
}

}  // namespace

class TestPipelineLightness : public QObject {
    Q_OBJECT
private slots:
    void narrowSourceTakesTheWideReferencesLightness()
    {
        const int w = 256, h = 64;
        const Image source = ramp(w, h, 40, 60, 8, -12);
        const Image reference = ramp(w, h, 10, 90, -6, 10);
        RecolorSettings settings;  // the defaults: the transfer on, kept where the palette comes nearer
        RecolorPipeline pipeline(settings);
        pipeline.setSource(source);
        pipeline.setReference(reference);
        const Image result = pipeline.render();
        const std::vector<double> src = lightness(source), out = lightness(result);
        // The bounded curve applied to the source's own quantiles (8-bit source, so its
        // L* is not exactly the ramp's): within 1.5 L* (the lattice's linear pieces, 8-bit
        // rounding of the result).
        for (double u : {0.02, 0.1, 0.25, 0.5, 0.75, 0.9, 0.98}) {
            const double expected = 50 + 3 * (quantile(src, u) - 50);
            UOT_QVERIFY_MSG(std::abs(quantile(out, u) - expected) <= 1.5,
                            "quantile " << u << ": result " << quantile(out, u) << ", expected " << expected);
        }
        // Monotone along every row (8-bit rounding: a step down of at most 0.5 L*).
        for (int y = 0; y < h; ++y)
            for (int x = 1; x < w; ++x) {
                const std::size_t i = static_cast<std::size_t>(y) * w + x;
                UOT_QVERIFY_MSG(out[i] >= out[i - 1] - 0.5, "row " << y << " x " << x << ": " << out[i - 1] << " -> " << out[i]);
            }
    }
};

QTEST_APPLESS_MAIN(TestPipelineLightness)
#include "test_pipeline_lightness.moc"
