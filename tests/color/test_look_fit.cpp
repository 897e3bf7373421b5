// The LUT fitted to a rendered image (core/color/look_fit.h) and the Hald CLUT
// layout (core/color/hald_clut.h), against analytic expectations:
// - a target that is an analytic function of the colour: the least-squares fit
//   can only do better than sampling the function at the nodes, and far better
//   than the prior;
// - nodes no pixel reaches keep the prior's value;
// - cubePsnr against a PSNR computed here from the definition;
// - a Hald CLUT's pixel i holds node (i mod N, i / N mod N, i / N^2) (N = L^2).

#include <QtTest/QtTest>

#include <cmath>
#include <random>

#include "core/color/hald_clut.h"
#include "core/color/look_fit.h"
#include "tests/support/qt_checks.h"

using namespace uot;

namespace {

// A smooth, clearly non-identity map of [0, 1]^3 that mixes the channels.
void analyticLook(const double in[3], double out[3])
{
    out[0] = std::pow(in[0], 1.6) * 0.8 + 0.15 * in[2];
    out[1] = std::sqrt(in[1]) * 0.9 + 0.05;
    out[2] = 0.5 * (in[2] + in[0] * in[1]);
}

// An 8-bit RGB image of random colours (seeded) and its image under analyticLook.
void randomPair(int width, int height, Image& source, Image& target, unsigned seed, float maxChannel = 1.0f)
{
    source = Image::allocate(width, height, 3, 8);
    target = Image::allocate(width, height, 3, 8);
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> u(0.0f, maxChannel);
    for (std::size_t p = 0; p < source.pixelCount(); ++p) {
        double in[3], out[3];
        for (int k = 0; k < 3; ++k) {
            source.samples8()[p * 3 + k] = static_cast<std::uint8_t>(std::lround(u(rng) * 255.0f));
            in[k] = source.samples8()[p * 3 + k] / 255.0;
        }
        analyticLook(in, out);
        for (int k = 0; k < 3; ++k)
            target.samples8()[p * 3 + k] = static_cast<std::uint8_t>(std::lround(std::clamp(out[k], 0.0, 1.0) * 255.0));
    }
}

// analyticLook evaluated at every node of a size^3 lattice.
CubeLut sampledLook(int size)
{
    CubeLut lut = identityCube(size);
    for (std::size_t i = 0; i < lut.values.size() / 3; ++i) {
        double in[3], out[3];
        for (int k = 0; k < 3; ++k) in[k] = lut.values[i * 3 + k];
        analyticLook(in, out);
        for (int k = 0; k < 3; ++k) lut.values[i * 3 + k] = static_cast<float>(out[k]);
    }
    return lut;
}

// PSNR from its definition, on two 8-bit RGB images.
double definitionPsnr(const Image& a, const Image& b)
{
    double sum = 0;
    for (std::size_t i = 0; i < a.pixelCount() * 3; ++i) {
        const double d = (double(a.samples8()[i]) - double(b.samples8()[i])) / 255.0;
        sum += d * d;
    }
    return 10.0 * std::log10(1.0 / (sum / double(a.pixelCount() * 3)));
}

}  // namespace

class LookFitTest : public QObject {
    Q_OBJECT

private slots:
    void fitBeatsNodeSamplingOfAnAnalyticLook_data()
    {
        QTest::addColumn<int>("size");
        QTest::addColumn<int>("interpolation");
        QTest::newRow("17 tetrahedral") << 17 << int(CubeInterpolation::Tetrahedral);
        QTest::newRow("33 tetrahedral") << 33 << int(CubeInterpolation::Tetrahedral);
        QTest::newRow("17 trilinear") << 17 << int(CubeInterpolation::Trilinear);
    }
    void fitBeatsNodeSamplingOfAnAnalyticLook()
    {
        QFETCH(int, size);
        QFETCH(int, interpolation);
        const auto mode = static_cast<CubeInterpolation>(interpolation);
        Image source, target;
        randomPair(512, 512, source, target, 7);
        const CubeLut identity = identityCube(size);
        LookFitOptions options;
        options.interpolation = mode;
        const CubeLut fitted = fitCubeToImage(source, target, identity, options);
        const double fit = cubePsnr(fitted, source, target, mode);
        const double sampled = cubePsnr(sampledLook(size), source, target, mode);
        const double prior = cubePsnr(identity, source, target, mode);
        qInfo("%d^3: fitted %.2f dB, node sampling %.2f dB, identity %.2f dB", size, fit, sampled, prior);
        // Least squares over the pixels is at least as close as the function's
        // own node values (up to the small regularisation), and both are far from
        // the identity the fit started from.
        UOT_QVERIFY_MSG(fit >= sampled - 0.05, fit << " vs " << sampled);
        UOT_QVERIFY_MSG(fit >= 40.0, fit);
        UOT_QVERIFY_MSG(prior < 25.0, prior);
    }

    void nodesNoPixelReachesKeepThePrior()
    {
        // Colours only in [0, 0.3]^3 (cells 0..4 of 16): nodes seven or more cells
        // away on every axis are reached by no pixel's stencil and only weakly by
        // the neighbour term, so they stay at the prior.
        Image source, target;
        randomPair(256, 256, source, target, 11, 0.3f);
        const int size = 17;
        const CubeLut prior = sampledLook(size);
        CubeLut shifted = prior;
        for (float& v : shifted.values) v = 1.0f - v;  // a prior far from the target
        const CubeLut fitted = fitCubeToImage(source, target, shifted);
        double farthest = 0, nearest = 0;
        for (int b = 0; b < size; ++b)
            for (int g = 0; g < size; ++g)
                for (int r = 0; r < size; ++r) {
                    const std::size_t i = fitted.nodeIndex(r, g, b);
                    double d = 0;
                    for (int k = 0; k < 3; ++k) d = std::max(d, double(std::abs(fitted.values[i * 3 + k] - shifted.values[i * 3 + k])));
                    if (r >= 12 && g >= 12 && b >= 12) farthest = std::max(farthest, d);
                    if (r == 2 && g == 2 && b == 2) nearest = d;
                }
        UOT_QVERIFY_MSG(farthest < 2e-3, farthest);  // untouched corner: the prior
        UOT_QVERIFY_MSG(nearest > 0.1, nearest);     // inside the data: moved to the target
        UOT_QVERIFY_MSG(cubePsnr(fitted, source, target) > 40.0, cubePsnr(fitted, source, target));
    }

    void psnrMatchesItsDefinition()
    {
        Image source, target;
        randomPair(64, 48, source, target, 3);
        const CubeLut lut = sampledLook(9);
        const Image rendered = applyCubeToImage(lut, source, CubeInterpolation::Tetrahedral);
        UOT_QCOMPARE_CLOSE(cubePsnr(lut, source, target), definitionPsnr(rendered, target), 1e-5);
        QVERIFY(std::isinf(cubePsnr(identityCube(5), source, source)));
    }

    void mismatchedImagesAreRefused()
    {
        Image source, target;
        randomPair(16, 16, source, target, 1);
        const Image other = Image::allocate(8, 16, 3, 8);
        UOT_QVERIFY_THROWS_WITH(fitCubeToImage(source, other, identityCube(5)), "same size");
    }

    void haldLayoutIsRedFastest()
    {
        for (int level : {4, 8}) {
            const int n = level * level;
            const Image hald = haldImageFromCube(identityCube(n));
            QCOMPARE(hald.width, level * level * level);
            QCOMPARE(hald.height, hald.width);
            QCOMPARE(hald.depth, 16);
            for (std::size_t i : {std::size_t(0), std::size_t(1), std::size_t(n - 1), std::size_t(n), std::size_t(n * n + 3),
                                  hald.pixelCount() / 2 + 5, hald.pixelCount() - 1}) {
                const std::size_t index[3] = {i % n, (i / n) % n, i / (std::size_t(n) * n)};
                for (int k = 0; k < 3; ++k) {
                    const long expected = std::lround(double(index[k]) / (n - 1) * 65535.0);
                    QCOMPARE(long(hald.samples16()[i * 3 + k]), expected);
                }
            }
            const CubeLut back = cubeFromHaldImage(hald);
            const CubeLut identity = identityCube(n);
            QCOMPARE(back.size, n);
            for (std::size_t i = 0; i < back.values.size(); ++i)
                QVERIFY(std::abs(back.values[i] - identity.values[i]) < 1e-4f);
        }
        UOT_QVERIFY_THROWS_WITH(haldImageFromCube(identityCube(33)), "square number");
        UOT_QVERIFY_THROWS_WITH(cubeFromHaldImage(Image::allocate(100, 100, 3, 8)), "not a Hald CLUT");
    }
};

QTEST_GUILESS_MAIN(LookFitTest)
#include "test_look_fit.moc"
