// The guided filter of core/color (He, Sun, Tang 2013), exact variant (subsample 1),
// against a direct float64 implementation: every window's moments summed pixel by
// pixel (windows clipped at the borders, as the filter's box means are), then the
// per-window coefficients a = cov(I, p) / (var(I) + eps), b = mean(p) - a mean(I),
// averaged over the windows that contain each pixel.
#include <QtTest/QtTest>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "core/color/color_map.h"

namespace {

struct Window {
    int x0, x1, y0, y1;
};

Window windowAt(int x, int y, int w, int h, int r)
{
    return {std::max(0, x - r), std::min(w - 1, x + r), std::max(0, y - r), std::min(h - 1, y + r)};
}

std::vector<double> referenceGuidedFilter(const std::vector<double>& I, const std::vector<double>& p, int w, int h, int ch,
                                          int r, double eps)
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

}  // namespace

class TestGuidedFilter : public QObject {
    Q_OBJECT
private slots:
    void matchesFloat64Reference_data()
    {
        QTest::addColumn<int>("width");
        QTest::addColumn<int>("height");
        QTest::addColumn<int>("channels");
        QTest::addColumn<int>("radius");
        QTest::addColumn<double>("eps");
        QTest::newRow("7x5 gray r1") << 7 << 5 << 1 << 1 << 0.01;
        QTest::newRow("16x12 rgb r2") << 16 << 12 << 3 << 2 << 0.01;
        QTest::newRow("13x9 rgb r3 eps0.1") << 13 << 9 << 3 << 3 << 0.1;
        QTest::newRow("20x3 rgb r4 (window wider than the image)") << 20 << 3 << 3 << 4 << 0.001;
    }
    void matchesFloat64Reference()
    {
        QFETCH(int, width);
        QFETCH(int, height);
        QFETCH(int, channels);
        QFETCH(int, radius);
        QFETCH(double, eps);
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
