// The per-channel quantiles and the monotone per-channel map of
// core/color/marginal_match.h (the residual match of the recolor pipeline),
// against direct float64 computations: quantiles of the sorted values, and the
// 1-D optimal transport map between uniform distributions, which is affine and
// known in closed form.
#include <QtTest/QtTest>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "core/color/marginal_match.h"
#include "core/transport/uot_error.h"

using namespace uot;

namespace {

// Quantile of the sorted values v at level u by linear interpolation of the
// empirical CDF (the definition channelQuantiles approximates within a bin).
double sortedQuantile(const std::vector<double>& v, double u)
{
    const double p = u * static_cast<double>(v.size() - 1);
    const std::size_t k = std::min(static_cast<std::size_t>(p), v.size() - 2);
    return v[k] + (p - static_cast<double>(k)) * (v[k + 1] - v[k]);
}

// n colours whose channel c is drawn from `draw(c)`.
template <typename Draw>
std::vector<float> colours(std::size_t n, Draw draw)
{
    std::vector<float> x(3 * n);
    for (std::size_t k = 0; k < n; ++k)
        for (int c = 0; c < 3; ++c) x[3 * k + c] = static_cast<float>(draw(c));
    return x;
}

}  // namespace

class TestMarginalMatch : public QObject {
    Q_OBJECT
private slots:
    void quantilesMatchSortedValues_data()
    {
        QTest::addColumn<int>("stride");
        QTest::newRow("every colour") << 1;
        QTest::newRow("every third colour") << 3;
    }
    void quantilesMatchSortedValues()
    {
        QFETCH(int, stride);
        // Three different shapes: uniform, normal, and a mixture with a point mass.
        std::mt19937 rng(5);
        std::uniform_real_distribution<double> uni(-20, 80);
        std::normal_distribution<double> normal(10, 7);
        std::bernoulli_distribution coin(0.4);
        const std::size_t n = 30000;
        const std::vector<float> x = colours(n, [&](int c) {
            if (c == 0) return uni(rng);
            if (c == 1) return normal(rng);
            return coin(rng) ? 0.0 : 50 + uni(rng) / 10;
        });
        const int levels = 65, bins = 4096;
        const ChannelQuantiles q = channelQuantiles(x.data(), n, static_cast<std::size_t>(stride), levels, bins);
        for (int c = 0; c < 3; ++c) {
            std::vector<double> v;
            for (std::size_t k = 0; k < n; k += static_cast<std::size_t>(stride)) v.push_back(x[3 * k + c]);
            std::sort(v.begin(), v.end());
            const double width = (v.back() - v.front()) / bins;
            QCOMPARE(static_cast<int>(q.q[c].size()), levels);
            QCOMPARE(static_cast<double>(q.q[c].front()), v.front());
            QCOMPARE(static_cast<double>(q.q[c].back()), v.back());
            for (int k = 0; k < levels; ++k) {
                const double u = static_cast<double>(k) / (levels - 1);
                const double expected = sortedQuantile(v, u);
                // Within a bin, plus the gap between the neighbouring order statistics
                // (the histogram spreads a bin's mass uniformly; the sample is not).
                const std::size_t at = static_cast<std::size_t>(u * static_cast<double>(v.size() - 1));
                const double gap = v[std::min(at + 1, v.size() - 1)] - v[at > 0 ? at - 1 : 0];
                QVERIFY2(std::abs(q.q[c][static_cast<std::size_t>(k)] - expected) <= 1.5 * width + gap + 1e-4,
                         qPrintable(QString("channel %1 level %2: %3 vs %4 (bin %5)")
                                        .arg(c)
                                        .arg(k)
                                        .arg(q.q[c][static_cast<std::size_t>(k)])
                                        .arg(expected)
                                        .arg(width)));
            }
        }
    }

    void mapBetweenUniformsIsAffine()
    {
        // Uniform on [0, 10] to uniform on [20, 40]: the monotone map is x -> 20 + 2x;
        // uniform on [-1, 1] to uniform on [5, 6]: x -> 5.5 + x / 2; hand-worked.
        // Quantiles written directly (exact uniforms), one channel constant.
        ChannelQuantiles from, to;
        const int levels = 11;
        for (int k = 0; k < levels; ++k) {
            const float u = static_cast<float>(k) / (levels - 1);
            from.q[0].push_back(10 * u), to.q[0].push_back(20 + 20 * u);
            from.q[1].push_back(-1 + 2 * u), to.q[1].push_back(5 + u);
            from.q[2].push_back(3.0f), to.q[2].push_back(k < 5 ? 0.0f : 8.0f);  // median of `to`: 8 at level 0.5
        }
        const MarginalMap f(from, to);
        for (double x : {0.0, 0.3, 2.5, 7.77, 10.0}) QVERIFY(std::abs(f(0, static_cast<float>(x)) - (20 + 2 * x)) < 1e-3);
        for (double x : {-1.0, -0.2, 0.0, 0.9}) QVERIFY(std::abs(f(1, static_cast<float>(x)) - (5.5 + x / 2)) < 1e-3);
        // Outside `from`'s range: `to`'s ends.
        QCOMPARE(f(0, -5.0f), 20.0f);
        QCOMPARE(f(0, 99.0f), 40.0f);
        // A channel with no spread maps to `to`'s median.
        QCOMPARE(f(2, 3.0f), 8.0f);
        QCOMPARE(f(2, -100.0f), 8.0f);
    }

    void mappedSampleHasTheTargetDistribution()
    {
        // Exponential-like source, normal target: the mapped sample's sorted values
        // must follow the target's (1-D optimal transport), and the map is monotone.
        std::mt19937 rng(9);
        std::exponential_distribution<double> expo(0.2);
        std::normal_distribution<double> normal(50, 12), other(-10, 3);
        const std::size_t n = 40000;
        const std::vector<float> a = colours(n, [&](int c) { return c == 0 ? expo(rng) : other(rng); });
        const std::vector<float> b = colours(n, [&](int) { return normal(rng); });
        const MarginalMap f(channelQuantiles(a.data(), n), channelQuantiles(b.data(), n));
        for (int c = 0; c < 3; ++c) {
            std::vector<double> mapped(n), target(n);
            for (std::size_t k = 0; k < n; ++k) mapped[k] = f(c, a[3 * k + c]), target[k] = b[3 * k + c];
            std::sort(mapped.begin(), mapped.end());
            std::sort(target.begin(), target.end());
            double worst = 0;
            for (double u = 0.01; u < 0.995; u += 0.01)
                worst = std::max(worst, std::abs(sortedQuantile(mapped, u) - sortedQuantile(target, u)));
            // The 257 quantile levels: between levels the map is linear, so inner quantiles
            // agree within a fraction of the target's spread (12).
            QVERIFY2(worst < 0.5, qPrintable(QString("channel %1: worst quantile difference %2").arg(c).arg(worst)));
            float previous = f(c, -1e9f);
            for (int i = 0; i <= 1000; ++i) {
                const float v = f(c, static_cast<float>(-20 + i * 0.1));
                QVERIFY(v >= previous);
                previous = v;
            }
        }
    }

    void rejectsBadArguments()
    {
        const std::vector<float> x = {1, 2, 3};
        QVERIFY_THROWS_EXCEPTION(Error, channelQuantiles(x.data(), 1, 1, 1));
        QVERIFY_THROWS_EXCEPTION(Error, channelQuantiles(x.data(), 1, 0));
        QVERIFY(channelQuantiles(x.data(), 0).empty());
        QVERIFY_THROWS_EXCEPTION(Error, MarginalMap(ChannelQuantiles{}, channelQuantiles(x.data(), 1)));
    }
};

QTEST_APPLESS_MAIN(TestMarginalMatch)
#include "test_marginal_match.moc"
