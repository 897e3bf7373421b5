// The quality bench's metrics and baselines (bench/quality/quality_metrics.h)
// against hand-worked cases.
#include <QtTest/QtTest>

#include <array>

#include <cmath>
#include <random>
#include <vector>

#include "bench/quality/quality_metrics.h"

using namespace uot;
using namespace uot::quality;

namespace {

std::vector<float> randomColours(std::size_t n, unsigned seed)
{
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> u(0, 100);
    std::vector<float> x(3 * n);
    for (float& v : x) v = u(rng);
    return x;
}

// A 7x7 three-channel image whose first channel is a checkerboard of 0 and 10.
std::vector<float> checker(double gain, double offset)
{
    std::vector<float> x(3 * 49, 0.0f);
    for (int y = 0; y < 7; ++y)
        for (int k = 0; k < 7; ++k) x[3 * (y * 7 + k)] = static_cast<float>(gain * ((y + k) % 2 == 0 ? 10 : 0) + offset);
    return x;
}

}  // namespace

class TestQualityMetrics : public QObject {
    Q_OBJECT
private slots:
    void slicedWassersteinOfAPermutationIsZero()
    {
        const std::size_t n = 500;
        const std::vector<float> a = randomColours(n, 1);
        std::vector<float> b(a.size());
        for (std::size_t k = 0; k < n; ++k)  // reversed order, same set
            for (int c = 0; c < 3; ++c) b[3 * k + c] = a[3 * (n - 1 - k) + c];
        QVERIFY(slicedWasserstein(a, n, b, n) < 1e-9);
    }

    void slicedWassersteinOfTranslations_data()
    {
        QTest::addColumn<double>("d");
        QTest::newRow("d=1") << 1.0;
        QTest::newRow("d=7.5") << 7.5;
    }
    void slicedWassersteinOfTranslations()
    {
        // A translation by t moves every projection by v.t, so SW^2 = mean_v (v.t)^2.
        // Summed over three orthogonal t of length d: mean_v |v|^2 d^2 = d^2, whatever
        // the directions.
        QFETCH(double, d);
        const std::size_t n = 300;
        const std::vector<float> a = randomColours(n, 2);
        double total = 0;
        for (int axis = 0; axis < 3; ++axis) {
            std::vector<float> b = a;
            for (std::size_t k = 0; k < n; ++k) b[3 * k + axis] += static_cast<float>(d);
            const double sw = slicedWasserstein(a, n, b, n);
            QVERIFY(sw <= d + 1e-4);
            total += sw * sw;
        }
        QVERIFY2(std::abs(total - d * d) < 1e-3 * d * d, qPrintable(QString("sum of squares %1").arg(total)));
    }

    void axisWassersteinHandWorked()
    {
        // b: a's first coordinate doubled about 0 and its second moved by 4, third untouched.
        // Along the first axis the sorted values pair up, so W2 = sqrt(mean x^2) of a's first
        // coordinate; along the second, 4; along the third, 0.
        const std::size_t n = 400;
        const std::vector<float> a = randomColours(n, 3);
        std::vector<float> b = a;
        double sq = 0;
        for (std::size_t k = 0; k < n; ++k) {
            b[3 * k] = 2 * a[3 * k];
            b[3 * k + 1] += 4.0f;
            sq += static_cast<double>(a[3 * k]) * a[3 * k];
        }
        const std::array<double, 3> w = axisWasserstein(a, n, b, n);
        const double first = std::sqrt(sq / static_cast<double>(n));
        QVERIFY2(std::abs(w[0] - first) < 1e-3 * first && std::abs(w[1] - 4) < 1e-4 && w[2] < 1e-6,
                 qPrintable(QString("got %1 %2 %3, expected %4 4 0").arg(w[0]).arg(w[1]).arg(w[2]).arg(first)));
    }

    void channelStdHandWorked()
    {
        // Two colours, (0, 10, 5) and (4, 4, 5), equally often: per coordinate the standard
        // deviation (1/n) is half the difference, 2, 3 and 0.
        const std::vector<float> x = {0, 10, 5, 4, 4, 5, 0, 10, 5, 4, 4, 5};
        const std::array<double, 3> s = channelStd(x, 4);
        QVERIFY2(std::abs(s[0] - 2) < 1e-9 && std::abs(s[1] - 3) < 1e-9 && s[2] < 1e-9,
                 qPrintable(QString("got %1 %2 %3, expected 2 3 0").arg(s[0]).arg(s[1]).arg(s[2])));
    }

    void structureTermHandWorked_data()
    {
        QTest::addColumn<double>("gain");
        QTest::addColumn<double>("offset");
        QTest::addColumn<double>("expected");
        // Checkerboard of 25 tens and 24 zeros: var = 2500/49 - (250/49)^2 = 60000/2401.
        const double var = 60000.0 / 2401.0, c3 = 4.5;
        QTest::newRow("same") << 1.0 << 0.0 << 1.0;
        QTest::newRow("brighter, more contrast") << 2.0 << 5.0 << 1.0;
        QTest::newRow("inverted") << -1.0 << 10.0 << (c3 - var) / (var + c3);
    }
    void structureTermHandWorked()
    {
        QFETCH(double, gain);
        QFETCH(double, offset);
        QFETCH(double, expected);
        const double got = structureTerm(checker(1, 0), checker(gain, offset), 7, 7, 3, 4.5);
        QVERIFY2(std::abs(got - expected) < 1e-9, qPrintable(QString("got %1, expected %2").arg(got).arg(expected)));
    }

    void mklMatrixDiagonalCases_data()
    {
        QTest::addColumn<QVector<double>>("s");
        QTest::addColumn<QVector<double>>("r");
        QTest::addColumn<QVector<double>>("t");
        QTest::newRow("identity to diag(4,9,1)") << QVector<double>{1, 1, 1} << QVector<double>{4, 9, 1} << QVector<double>{2, 3, 1};
        QTest::newRow("diag(4,1,0.25) to identity") << QVector<double>{4, 1, 0.25} << QVector<double>{1, 1, 1}
                                                    << QVector<double>{0.5, 1, 2};
    }
    void mklMatrixDiagonalCases()
    {
        QFETCH(QVector<double>, s);
        QFETCH(QVector<double>, r);
        QFETCH(QVector<double>, t);
        const Eigen::Matrix3d T = mklMatrix(Eigen::Vector3d(s[0], s[1], s[2]).asDiagonal(), Eigen::Vector3d(r[0], r[1], r[2]).asDiagonal());
        const Eigen::Matrix3d expected = Eigen::Vector3d(t[0], t[1], t[2]).asDiagonal();
        QVERIFY((T - expected).cwiseAbs().maxCoeff() < 1e-12);
    }

    void mklMatrixMapsCovarianceOntoCovariance()
    {
        // T S T = R with T symmetric positive definite (the Monge map between Gaussians).
        const Eigen::Matrix3d A = (Eigen::Matrix3d() << 2, 1, 0, 0.5, 1, 0.3, 0, -0.4, 1.5).finished();
        const Eigen::Matrix3d B = (Eigen::Matrix3d() << 1, 0, 0.2, 0.7, 2, 0, 0.1, 0.3, 0.8).finished();
        const Eigen::Matrix3d S = A * A.transpose(), R = B * B.transpose();
        const Eigen::Matrix3d T = mklMatrix(S, R);
        QVERIFY((T * S * T - R).cwiseAbs().maxCoeff() < 1e-10);
        QVERIFY((T - T.transpose()).cwiseAbs().maxCoeff() < 1e-12);
        QVERIFY(Eigen::SelfAdjointEigenSolver<Eigen::Matrix3d>(T).eigenvalues().minCoeff() > 0);
    }

    void colourMomentsOfBlackAndWhite()
    {
        Image img = Image::allocate(2, 1, 3, 8);
        for (int c = 0; c < 3; ++c) img.data[c] = 0, img.data[3 + c] = 255;
        Eigen::Vector3d mean;
        Eigen::Matrix3d cov;
        colourMoments(img, mean, cov);
        QVERIFY((mean - Eigen::Vector3d::Constant(0.5)).cwiseAbs().maxCoeff() < 1e-12);
        QVERIFY((cov - Eigen::Matrix3d::Constant(0.25)).cwiseAbs().maxCoeff() < 1e-12);
    }

    void histogramMatchingMapsQuantiles()
    {
        // Source: half 0, half 100 per channel; reference: half 50, half 200.
        Image src = Image::allocate(4, 1, 3, 8), ref = Image::allocate(4, 1, 3, 8);
        const std::uint8_t s[4] = {0, 100, 0, 100}, r[4] = {200, 50, 50, 200};
        for (int p = 0; p < 4; ++p)
            for (int c = 0; c < 3; ++c) src.data[3 * p + c] = s[p], ref.data[3 * p + c] = r[p];
        const Image out = histogramMatching(src, ref);
        for (int p = 0; p < 4; ++p)
            for (int c = 0; c < 3; ++c) QCOMPARE(int(out.data[3 * p + c]), s[p] == 0 ? 50 : 200);
    }
};

QTEST_APPLESS_MAIN(TestQualityMetrics)
#include "test_quality_metrics.moc"
