// The guided filter of core/color (He, Sun, Tang 2013), exact variant (subsample 1),
// against a direct float64 implementation: every window's moments summed pixel by
// pixel (windows clipped at the borders, as the filter's box means are), then the
// per-window coefficients a = cov(I, p) / (var(I) + eps), b = mean(p) - a mean(I),
// averaged over the windows that contain each pixel. The colour-guided variant
// against the same direct summation with a three-channel guide, each window's
// 3x3 system solved by Cramer's rule (independent of the filter's LDLT).
#include <QtTest/QtTest>

#include <algorithm>
#include <array>
#include <cmath>
#include <random>
#include <vector>

#include "core/color/guided_filter.h"

namespace {

struct Window {
    int x0, x1, y0, y1;
};

Window windowAt(int x, int y, int w, int h, int r)
{
    return {std::max(0, x - r), std::min(w - 1, x + r), std::max(0, y - r), std::min(h - 1, y + r)};
}

// minSlope (ch values or empty): each window's a is raised to at least it, b kept
// through the window's means (grayGuidedCoefficients' slope floor).
std::vector<double> referenceGuidedFilter(const std::vector<double>& I, const std::vector<double>& p, int w, int h, int ch,
                                          int r, double eps, const std::vector<double>& minSlope = {})
{
    const std::size_t n = static_cast<std::size_t>(w) * h;
    std::vector<double> a(n * ch), b(n * ch), q(n * ch);
    for (int y = 0; y < h; ++y)
        for (int x = 0; x < w; ++x) {
            const Window win = windowAt(x, y, w, h, r);
            for (int c = 0; c < ch; ++c) {
                double sI = 0, sII = 0, sP = 0, sIP = 0, cnt = 0;
                for (int v = win.y0; v <= win.y1; ++v)
                    for (int u = win.x0; u <= win.x1; ++u) {
                        const std::size_t k = static_cast<std::size_t>(v) * w + u;
                        sI += I[k], sII += I[k] * I[k], sP += p[k * ch + c], sIP += I[k] * p[k * ch + c], cnt += 1;
                    }
                const double mI = sI / cnt, mP = sP / cnt;
                const double var = sII / cnt - mI * mI, cov = sIP / cnt - mI * mP;
                const std::size_t k = static_cast<std::size_t>(y) * w + x;
                a[k * ch + c] = cov / (var + eps);
                if (!minSlope.empty()) a[k * ch + c] = std::max(a[k * ch + c], minSlope[static_cast<std::size_t>(c)]);
                b[k * ch + c] = mP - a[k * ch + c] * mI;
            }
        }
    for (int y = 0; y < h; ++y)
        for (int x = 0; x < w; ++x) {
            const Window win = windowAt(x, y, w, h, r);
            const std::size_t k = static_cast<std::size_t>(y) * w + x;
            for (int c = 0; c < ch; ++c) {
                double sa = 0, sb = 0, cnt = 0;
                for (int v = win.y0; v <= win.y1; ++v)
                    for (int u = win.x0; u <= win.x1; ++u) {
                        const std::size_t j = static_cast<std::size_t>(v) * w + u;
                        sa += a[j * ch + c], sb += b[j * ch + c], cnt += 1;
                    }
                q[k * ch + c] = sa / cnt * I[k] + sb / cnt;
            }
        }
    return q;
}

double det3(const double m[3][3])
{
    return m[0][0] * (m[1][1] * m[2][2] - m[1][2] * m[2][1]) - m[0][1] * (m[1][0] * m[2][2] - m[1][2] * m[2][0]) +
           m[0][2] * (m[1][0] * m[2][1] - m[1][1] * m[2][0]);
}

// x with m x = v, by Cramer's rule.
void cramer(const double m[3][3], const double v[3], double x[3])
{
    const double d = det3(m);
    for (int col = 0; col < 3; ++col) {
        double mc[3][3];
        for (int i = 0; i < 3; ++i)
            for (int j = 0; j < 3; ++j) mc[i][j] = j == col ? v[i] : m[i][j];
        x[col] = det3(mc) / d;
    }
}

// Colour guide I (n x 3): per window, a_c = (Sigma + eps U)^-1 cov(I, p_c), b_c = mean(p_c) - a_c . mean(I).
// channelEps (3 values, or empty): diag(channelEps) in place of eps U.
std::vector<double> referenceColorGuidedFilter(const std::vector<double>& I, const std::vector<double>& p, int w, int h,
                                               int ch, int r, double eps, const std::vector<double>& channelEps = {})
{
    const std::size_t n = static_cast<std::size_t>(w) * h;
    std::vector<double> a(n * ch * 3), b(n * ch), q(n * ch);
    for (int y = 0; y < h; ++y)
        for (int x = 0; x < w; ++x) {
            const Window win = windowAt(x, y, w, h, r);
            double cnt = 0, mI[3] = {0, 0, 0}, sII[3][3] = {};
            for (int v = win.y0; v <= win.y1; ++v)
                for (int u = win.x0; u <= win.x1; ++u) {
                    const std::size_t k = static_cast<std::size_t>(v) * w + u;
                    for (int i = 0; i < 3; ++i) {
                        mI[i] += I[3 * k + i];
                        for (int j = 0; j < 3; ++j) sII[i][j] += I[3 * k + i] * I[3 * k + j];
                    }
                    cnt += 1;
                }
            for (double& m : mI) m /= cnt;
            double sigma[3][3];
            for (int i = 0; i < 3; ++i)
                for (int j = 0; j < 3; ++j)
                    sigma[i][j] = sII[i][j] / cnt - mI[i] * mI[j] + (i == j ? (channelEps.empty() ? eps : channelEps[i]) : 0.0);
            const std::size_t k = static_cast<std::size_t>(y) * w + x;
            for (int c = 0; c < ch; ++c) {
                double mP = 0, sIP[3] = {0, 0, 0};
                for (int v = win.y0; v <= win.y1; ++v)
                    for (int u = win.x0; u <= win.x1; ++u) {
                        const std::size_t j = static_cast<std::size_t>(v) * w + u;
                        mP += p[j * ch + c];
                        for (int i = 0; i < 3; ++i) sIP[i] += I[3 * j + i] * p[j * ch + c];
                    }
                mP /= cnt;
                double cov[3], coef[3];
                for (int i = 0; i < 3; ++i) cov[i] = sIP[i] / cnt - mI[i] * mP;
                cramer(sigma, cov, coef);
                double bc = mP;
                for (int i = 0; i < 3; ++i) {
                    a[(k * ch + c) * 3 + i] = coef[i];
                    bc -= coef[i] * mI[i];
                }
                b[k * ch + c] = bc;
            }
        }
    for (int y = 0; y < h; ++y)
        for (int x = 0; x < w; ++x) {
            const Window win = windowAt(x, y, w, h, r);
            const std::size_t k = static_cast<std::size_t>(y) * w + x;
            for (int c = 0; c < ch; ++c) {
                double sa[3] = {0, 0, 0}, sb = 0, cnt = 0;
                for (int v = win.y0; v <= win.y1; ++v)
                    for (int u = win.x0; u <= win.x1; ++u) {
                        const std::size_t j = static_cast<std::size_t>(v) * w + u;
                        for (int i = 0; i < 3; ++i) sa[i] += a[(j * ch + c) * 3 + i];
                        sb += b[j * ch + c], cnt += 1;
                    }
                double out = sb / cnt;
                for (int i = 0; i < 3; ++i) out += sa[i] / cnt * I[3 * k + i];
                q[k * ch + c] = out;
            }
        }
    return q;
}

// The rows of both data-driven tests: image size, field channels, radius, eps.
void addCases()
{
    QTest::addColumn<int>("width");
    QTest::addColumn<int>("height");
    QTest::addColumn<int>("channels");
    QTest::addColumn<int>("radius");
    QTest::addColumn<double>("eps");
    QTest::newRow("7x5 one channel r1") << 7 << 5 << 1 << 1 << 0.01;
    QTest::newRow("16x12 rgb r2") << 16 << 12 << 3 << 2 << 0.01;
    QTest::newRow("13x9 rgb r3 eps0.1") << 13 << 9 << 3 << 3 << 0.1;
    QTest::newRow("13x9 rgb r3 eps1e-4") << 13 << 9 << 3 << 3 << 1e-4;
    QTest::newRow("20x3 rgb r4 (window wider than the image)") << 20 << 3 << 3 << 4 << 0.001;
}

struct Case {
    int width, height, channels, radius;
    double eps;
};

Case fetchCase()
{
    QFETCH(int, width);
    QFETCH(int, height);
    QFETCH(int, channels);
    QFETCH(int, radius);
    QFETCH(double, eps);
    return {width, height, channels, radius, eps};
}

}  // namespace

class TestGuidedFilter : public QObject {
    Q_OBJECT
private slots:
    void matchesFloat64Reference_data() { addCases(); }
    void matchesFloat64Reference()
    {
        const auto [width, height, channels, radius, eps] = fetchCase();
        const std::size_t n = static_cast<std::size_t>(width) * height;
        std::mt19937 rng(7 + width * 31 + radius);
        std::uniform_real_distribution<double> unit(0, 1), field(-20, 20);
        std::vector<double> I(n), p(n * channels);
        // A guide with an edge down the middle plus noise; a field that follows it.
        for (int y = 0; y < height; ++y)
            for (int x = 0; x < width; ++x) {
                const std::size_t k = static_cast<std::size_t>(y) * width + x;
                I[k] = (x < width / 2 ? 0.2 : 0.8) + 0.1 * unit(rng);
                for (int c = 0; c < channels; ++c) p[k * channels + c] = 10 * (c + 1) * I[k] + field(rng);
            }
        const std::vector<double> expected = referenceGuidedFilter(I, p, width, height, channels, radius, eps);
        std::vector<float> guide(I.begin(), I.end()), got(p.begin(), p.end());
        uot::guidedFilter(guide.data(), got.data(), width, height, channels, radius, eps, 1, 1);
        double worst = 0;
        for (std::size_t k = 0; k < got.size(); ++k) worst = std::max(worst, std::abs(got[k] - expected[k]));
        // float storage of the moments: about 1e-6 relative on values of size 20.
        QVERIFY2(worst < 2e-3, qPrintable(QString("max abs difference %1").arg(worst)));
    }

    void slopeFloorMatchesFloat64Reference_data() { addCases(); }
    void slopeFloorMatchesFloat64Reference()
    {
        // A field that falls steeply with the guide (slope -30) in channel 0 and rises
        // in the others: a floor of -10 on channel 0 changes it, a floor of -100 on
        // channel 1 leaves it as it was; the coefficients against the float64 windows.
        const auto [width, height, channels, radius, eps] = fetchCase();
        const std::size_t n = static_cast<std::size_t>(width) * height;
        std::mt19937 rng(19 + width * 13 + radius);
        std::uniform_real_distribution<double> unit(0, 1), noise(-1, 1);
        std::vector<double> I(n), p(n * channels);
        for (std::size_t k = 0; k < n; ++k) {
            I[k] = unit(rng);
            for (int c = 0; c < channels; ++c) p[k * channels + c] = (c == 0 ? -30 : 5 * c) * I[k] + noise(rng);
        }
        std::vector<double> floor(static_cast<std::size_t>(channels), -100.0);
        floor[0] = -10;
        const std::vector<double> expected = referenceGuidedFilter(I, p, width, height, channels, radius, eps, floor);
        const std::vector<double> unclamped = referenceGuidedFilter(I, p, width, height, channels, radius, eps);
        const std::vector<float> guide(I.begin(), I.end()), field(p.begin(), p.end());
        const std::vector<float> coef =
            uot::grayGuidedCoefficients(guide.data(), field.data(), width, height, channels, radius, eps, 1, floor.data());
        double worst = 0, moved = 0;
        for (std::size_t k = 0; k < n; ++k)
            for (int c = 0; c < channels; ++c) {
                const std::size_t j = k * channels + c;
                const double q = coef[k * 2 * channels + c] * I[k] + coef[k * 2 * channels + channels + c];
                worst = std::max(worst, std::abs(q - expected[j]));
                if (c == 0) moved = std::max(moved, std::abs(expected[j] - unclamped[j]));
            }
        QVERIFY2(worst < 2e-3, qPrintable(QString("max abs difference %1").arg(worst)));
        QVERIFY2(moved > 1, qPrintable(QString("the floor changed channel 0 by only %1").arg(moved)));
    }

    void colorGuideMatchesFloat64Reference_data() { addCases(); }
    void colorGuideMatchesFloat64Reference()
    {
        const auto [width, height, channels, radius, eps] = fetchCase();
        const std::size_t n = static_cast<std::size_t>(width) * height;
        std::mt19937 rng(11 + width * 17 + radius);
        std::uniform_real_distribution<double> unit(0, 1), noise(-2, 2);
        std::vector<double> I(3 * n), p(n * channels);
        // A colour edge that lightness does not see (red | green of similar
        // lightness) plus noise; the field depends on all three guide channels.
        for (int y = 0; y < height; ++y)
            for (int x = 0; x < width; ++x) {
                const std::size_t k = static_cast<std::size_t>(y) * width + x;
                const bool left = x < width / 2;
                I[3 * k] = 0.5 + 0.05 * unit(rng);
                I[3 * k + 1] = (left ? 0.4 : -0.4) + 0.1 * unit(rng);
                I[3 * k + 2] = 0.1 * unit(rng);
                for (int c = 0; c < channels; ++c)
                    p[k * channels + c] = 10 * (c + 1) * I[3 * k + 1] - 5 * I[3 * k + 2] * c + 3 * I[3 * k] + noise(rng);
            }
        const std::vector<double> expected = referenceColorGuidedFilter(I, p, width, height, channels, radius, eps);
        std::vector<float> guide(I.begin(), I.end()), got(p.begin(), p.end());
        uot::colorGuidedFilter(guide.data(), got.data(), width, height, channels, radius, eps, 1, 1);
        double worst = 0, scale = 0;
        for (std::size_t k = 0; k < got.size(); ++k) {
            worst = std::max(worst, std::abs(got[k] - expected[k]));
            scale = std::max(scale, std::abs(expected[k]));
        }
        // float storage of the moments; the 3x3 systems at eps 1e-4 amplify it.
        QVERIFY2(worst < 2e-3 * std::max(1.0, scale / 10), qPrintable(QString("max abs difference %1 (scale %2)").arg(worst).arg(scale)));
    }

    void colorGuideWithChannelEpsMatchesFloat64Reference()
    {
        // One regulariser per guide channel (the pipeline's chroma eps): the models
        // from colorGuidedCoefficients, applied per pixel, against the float64
        // filter with diag(channelEps); and they must differ from one shared eps.
        const int w = 17, h = 11, ch = 3, r = 3;
        const std::size_t n = static_cast<std::size_t>(w) * h;
        std::mt19937 rng(5);
        std::uniform_real_distribution<double> unit(0, 1), noise(-1, 1);
        std::vector<double> I(3 * n), p(n * ch);
        for (std::size_t k = 0; k < n; ++k) {
            // Lightness-like channel 0 spread wide; channels 1, 2 vary a little (blocks, noise).
            I[3 * k] = 0.3 + 0.4 * unit(rng);
            I[3 * k + 1] = 0.02 * unit(rng);
            I[3 * k + 2] = -0.1 + 0.02 * unit(rng);
            for (int c = 0; c < ch; ++c)
                p[k * ch + c] = 5 * I[3 * k] + 40 * (c + 1) * I[3 * k + 1] - 30 * I[3 * k + 2] + 0.1 * noise(rng);
        }
        const double eps = 1e-4;
        const std::vector<double> channelEps = {eps, 1e-3, 1e-3};
        const std::vector<double> expected = referenceColorGuidedFilter(I, p, w, h, ch, r, eps, channelEps);
        const std::vector<double> shared = referenceColorGuidedFilter(I, p, w, h, ch, r, eps);
        const std::vector<float> guide(I.begin(), I.end()), field(p.begin(), p.end());
        const std::array<double, 3> regulariser = {channelEps[0], channelEps[1], channelEps[2]};
        const std::vector<float> coef = uot::colorGuidedCoefficients(guide.data(), field.data(), w, h, ch, r, eps, 1, &regulariser);
        QCOMPARE(coef.size(), n * 4 * ch);
        double worst = 0, apart = 0;
        for (std::size_t k = 0; k < n; ++k)
            for (int c = 0; c < ch; ++c) {
                const float* m = &coef[k * 4 * ch];
                double q = m[3 * ch + c];
                for (int j = 0; j < 3; ++j) q += m[3 * c + j] * I[3 * k + j];
                worst = std::max(worst, std::abs(q - expected[k * ch + c]));
                apart = std::max(apart, std::abs(expected[k * ch + c] - shared[k * ch + c]));
            }
        QVERIFY2(worst < 2e-3, qPrintable(QString("max abs difference %1").arg(worst)));
        QVERIFY2(apart > 0.1, qPrintable(QString("the channel regularisers changed the result by only %1").arg(apart)));

        // The guide's statistics kept for a second field on the same guide (the
        // pipeline's refits): that field's models against its own float64 filter.
        const uot::ColorGuideWindows windows(guide.data(), w, h, r, eps, 1, &regulariser);
        std::vector<double> p2(p.size());
        for (std::size_t k = 0; k < n; ++k)
            for (int c = 0; c < ch; ++c) p2[k * ch + c] = -20 * I[3 * k + 2] * (c + 1) + 7 * I[3 * k] + 0.2 * noise(rng);
        const std::vector<double> expected2 = referenceColorGuidedFilter(I, p2, w, h, ch, r, eps, channelEps);
        const std::vector<float> field2(p2.begin(), p2.end());
        windows.coefficients(field.data(), ch, 1);  // a first use must leave nothing behind
        const std::vector<float> coef2 = windows.coefficients(field2.data(), ch, 1);
        double worst2 = 0;
        for (std::size_t k = 0; k < n; ++k)
            for (int c = 0; c < ch; ++c) {
                const float* m = &coef2[k * 4 * ch];
                double q = m[3 * ch + c];
                for (int j = 0; j < 3; ++j) q += m[3 * c + j] * I[3 * k + j];
                worst2 = std::max(worst2, std::abs(q - expected2[k * ch + c]));
            }
        QVERIFY2(worst2 < 2e-3, qPrintable(QString("second field: max abs difference %1").arg(worst2)));
    }

    void colorGuideKeepsAnAffineFieldExactly()
    {
        // p = M I + c exactly (no noise): every window's model is M, c up to the eps
        // shrinkage, so with eps tiny the output equals p. Hand-checked model.
        const int w = 9, h = 7;
        std::mt19937 rng(3);
        std::uniform_real_distribution<double> unit(0, 1);
        std::vector<float> guide(3 * w * h), p(3 * w * h), expected;
        const double M[3][3] = {{2, -1, 0.5}, {0, 3, 1}, {-1, 0, 4}}, c[3] = {10, -5, 2};
        for (int k = 0; k < w * h; ++k) {
            for (int i = 0; i < 3; ++i) guide[3 * k + i] = static_cast<float>(unit(rng));
            for (int i = 0; i < 3; ++i)
                p[3 * k + i] = static_cast<float>(M[i][0] * guide[3 * k] + M[i][1] * guide[3 * k + 1] + M[i][2] * guide[3 * k + 2] + c[i]);
        }
        expected = p;
        uot::colorGuidedFilter(guide.data(), p.data(), w, h, 3, 2, 1e-9, 1, 1);
        double worst = 0;
        for (std::size_t k = 0; k < p.size(); ++k) worst = std::max(worst, static_cast<double>(std::abs(p[k] - expected[k])));
        QVERIFY2(worst < 1e-3, qPrintable(QString("max abs difference %1").arg(worst)));
    }

    void flatGuideGivesWindowMeans()
    {
        // With a constant guide, var = 0 and a = 0: q is the mean over the windows of
        // the window means of p. For p = 1 at one pixel of a 5x1 row, r = 1: window means
        // are 1/2 (x=0), 1/3 (x=1), 0 ... for the pixel at x = 0; hand-worked below.
        std::vector<float> guide(5, 0.5f), p = {1, 0, 0, 0, 0};
        uot::guidedFilter(guide.data(), p.data(), 5, 1, 1, 1, 0.01, 1, 1);
        // window means m = {1/2, 1/3, 0, 0, 0}; q_x = mean of m over x's window.
        const double m0 = 0.5, m1 = 1.0 / 3;
        QVERIFY(std::abs(p[0] - (m0 + m1) / 2) < 1e-6);
        QVERIFY(std::abs(p[1] - (m0 + m1) / 3) < 1e-6);
        QVERIFY(std::abs(p[2] - m1 / 3) < 1e-6);
        QVERIFY(std::abs(p[3]) < 1e-6);
    }
};

QTEST_APPLESS_MAIN(TestGuidedFilter)
#include "test_guided_filter.moc"
