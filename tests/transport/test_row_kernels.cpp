// Every SIMD build of the row kernels that this CPU can run, against plain
// float64 loops, on lengths that exercise the unrolled and the short loops.

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "core/transport/cpu_buffers.h"
#include "core/transport/row_groups.h"
#include "core/transport/row_kernels.h"
#include "tests/support/qt_checks.h"

using namespace uot;
using namespace uot::kernels;

namespace {

std::vector<SimdPath> supportedPaths()
{
    std::vector<SimdPath> paths{SimdPath::Generic};
#if defined(__x86_64__)
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) paths.push_back(SimdPath::Avx2);
    if (__builtin_cpu_supports("avx512f")) paths.push_back(SimdPath::Avx512);
#endif
    return paths;
}

// One data row per SIMD path this CPU can run.
void pathRows()
{
    QTest::addColumn<int>("path");
    for (SimdPath path : supportedPaths()) QTest::newRow(toString(path).c_str()) << int(path);
}

template <typename T>
void checkKernels(const RowKernels<T>& k, const char* what, double tol)
{
    std::mt19937 rng(42);
    std::uniform_real_distribution<double> unit(0.0, 1.0);
    for (std::size_t n : {paddedLength<T>(1), paddedLength<T>(37), paddedLength<T>(200), paddedLength<T>(1000)}) {
        AlignedBuffer<T> x, y, s, beta;
        x.resize(n);
        y.resize(n);
        s.resize(n);
        beta.resize(n);
        for (std::size_t j = 0; j < n; ++j) {
            x.data()[j] = static_cast<T>(unit(rng));
            y.data()[j] = static_cast<T>(unit(rng));
            s.data()[j] = static_cast<T>(unit(rng));
            beta.data()[j] = static_cast<T>(unit(rng));
        }
        double dot = 0;
        for (std::size_t j = 0; j < n; ++j) dot += double(x.data()[j]) * double(y.data()[j]);
        UOT_QVERIFY_MSG(std::abs(double(k.dot(x.data(), y.data(), n)) - dot) <= tol * dot, what << " dot n=" << n);

        std::vector<double> expect(n);
        const T alpha = T(0.37);
        for (std::size_t j = 0; j < n; ++j) expect[j] = double(s.data()[j]) + double(alpha) * double(x.data()[j]);
        k.axpy(alpha, x.data(), s.data(), n);
        for (std::size_t j = 0; j < n; ++j)
            UOT_QVERIFY_MSG(std::abs(double(s.data()[j]) - expect[j]) <= tol * expect[j], what << " axpy j=" << j);

        std::vector<double> scaled(n);
        for (std::size_t j = 0; j < n; ++j) {
            scaled[j] = double(x.data()[j]) * double(beta.data()[j]) * double(alpha);
            expect[j] = double(s.data()[j]) + scaled[j];
        }
        k.scaleAccumulate(x.data(), beta.data(), alpha, s.data(), n);
        for (std::size_t j = 0; j < n; ++j) {
            UOT_QVERIFY_MSG(std::abs(double(x.data()[j]) - scaled[j]) <= tol * scaled[j], what << " scale j=" << j);
            UOT_QVERIFY_MSG(std::abs(double(s.data()[j]) - expect[j]) <= tol * expect[j], what << " accumulate j=" << j);
        }
    }
}

}  // namespace

class TestRowKernels : public QObject {
    Q_OBJECT
private slots:
    void everySupportedPathComputesTheSameKernels_data() { pathRows(); }
    void everySupportedPathComputesTheSameKernels();
    void powBatchMatchesStdPow_data() { pathRows(); }
    void powBatchMatchesStdPow();
    void expBatchMatchesStdExp_data() { pathRows(); }
    void expBatchMatchesStdExp();
    void logSumExpKernelsOfEveryPath_data() { pathRows(); }
    void logSumExpKernelsOfEveryPath();
    void rowOrdersVisitEveryRowOnce();
    void rowGroupKernelsDoNotDependOnTheGroupSize_data() { pathRows(); }
    void rowGroupKernelsDoNotDependOnTheGroupSize();
    void paddedKernelHasZeroPadding();
};

void TestRowKernels::everySupportedPathComputesTheSameKernels()
{
    QFETCH(int, path);
    {
        const std::string name = toString(SimdPath(path));
        checkKernels(rowKernelsFloat(SimdPath(path)), (name + " fp32").c_str(), 1e-5);
        if (QTest::currentTestFailed()) return;
        checkKernels(rowKernelsDouble(SimdPath(path)), (name + " fp64").c_str(), 1e-13);
        if (QTest::currentTestFailed()) return;
    }
    QVERIFY(!toString(activeSimdPath()).empty());
}

// The batched power (libmvec where available) against std::pow, on lengths
// that are not multiples of the vector width, in place, and at the edges
// that the solvers rely on (inf and NaN come out non-finite).
void TestRowKernels::powBatchMatchesStdPow()
{
    QFETCH(int, path);
    const SimdPath simd = SimdPath(path);
    std::mt19937 rng(7);
    std::uniform_real_distribution<double> logUnit(-30.0, 30.0);
    {
        const auto& k = rowKernelsDouble(simd);
        QVERIFY(k.powBatch == rowKernelsFloat(simd).powBatch);
        for (std::size_t n : {1u, 3u, 8u, 9u, 33u}) {
            std::vector<double> x(n), out(n);
            for (double& e : x) e = std::exp(logUnit(rng));
            for (double y : {0.95, 0.5, -0.05, 1.0}) {
                k.powBatch(x.data(), y, out.data(), n);
                for (std::size_t j = 0; j < n; ++j) {
                    const double expect = std::pow(x[j], y);
                    UOT_QVERIFY_MSG(std::abs(out[j] - expect) <= 1e-14 * expect,
                                  toString(simd) << " " << x[j] << "^" << y << " = " << out[j] << " vs " << expect);
                }
            }
            std::vector<double> inPlace = x;
            k.powBatch(inPlace.data(), 0.9, inPlace.data(), n);
            for (std::size_t j = 0; j < n; ++j) UOT_QCOMPARE_CLOSE(inPlace[j], std::pow(x[j], 0.9), 1e-14 * inPlace[j]);
        }
        std::vector<double> edge{INFINITY, std::nan(""), 0.0}, out(3);
        k.powBatch(edge.data(), 0.9, out.data(), 3);
        QVERIFY(std::isinf(out[0]) && std::isnan(out[1]) && out[2] == 0.0);
    }
}

// The batched exp (libmvec where available) against std::exp: lengths that are
// not multiples of the vector width, in place, arguments down into the
// subnormal range and beyond (the absorbed kernel and the plan evaluation
// take exps of values below -745, which must come out 0, not garbage).
void TestRowKernels::expBatchMatchesStdExp()
{
    QFETCH(int, path);
    const SimdPath simd = SimdPath(path);
    std::mt19937 rng(9);
    std::uniform_real_distribution<double> arg(-760.0, 700.0);
    const auto& k = rowKernelsDouble(simd);
    QVERIFY(k.expBatch == rowKernelsFloat(simd).expBatch);
    for (std::size_t n : {1u, 3u, 8u, 9u, 33u, 200u}) {
        std::vector<double> x(n), out(n);
        for (double& e : x) e = arg(rng);
        k.expBatch(x.data(), out.data(), n);
        for (std::size_t j = 0; j < n; ++j) {
            const double expect = std::exp(x[j]);
            // Relative 1e-14 for normal results; subnormal ones within their last bits.
            const double tol = std::max(1e-14 * expect, 4 * std::numeric_limits<double>::denorm_min());
            UOT_QVERIFY_MSG(std::abs(out[j] - expect) <= tol,
                            toString(simd) << " exp(" << x[j] << ") = " << out[j] << " vs " << expect);
        }
        std::vector<double> inPlace = x;
        k.expBatch(inPlace.data(), inPlace.data(), n);
        QVERIFY(inPlace == out);
    }
    std::vector<double> edge{-INFINITY, INFINITY, std::nan(""), -1e300, 0.0}, out(5);
    k.expBatch(edge.data(), out.data(), 5);
    QVERIFY(out[0] == 0.0 && std::isinf(out[1]) && std::isnan(out[2]) && out[3] == 0.0 && out[4] == 1.0);
}

// The log-sum-exp kernels against plain float64 loops (values spanning
// hundreds of units in the exponent, so that a missing max shift overflows).
template <typename T>
void checkLogKernels(const RowKernels<T>& k, const std::string& what)
{
    std::mt19937 rng(11);
    std::uniform_real_distribution<double> spread(-800.0, 0.0);
    const std::size_t n = paddedLength<T>(45);
    AlignedBuffer<T> logk;
    AlignedBuffer<double> logv, cm, cs;
    logk.resize(n);
    logv.resize(n);
    cm.resize(n);
    cs.resize(n);
    for (std::size_t j = 0; j < n; ++j) {
        logk.data()[j] = static_cast<T>(spread(rng));
        logv.data()[j] = 0.5 * spread(rng) + 300.0;
        cm.data()[j] = -INFINITY;
        cs.data()[j] = 0.0;
    }
    double mx = -INFINITY;
    for (std::size_t j = 0; j < n; ++j) mx = std::max(mx, double(logk.data()[j]) + logv.data()[j]);
    double sum = 0;
    for (std::size_t j = 0; j < n; ++j) sum += std::exp(double(logk.data()[j]) + logv.data()[j] - mx);
    UOT_QVERIFY_MSG(std::abs(k.rowLogSumExp(logk.data(), logv.data(), n) - (mx + std::log(sum))) < 1e-12 * std::abs(mx),
                  what);
    // Three rows with different offsets into the column accumulators.
    std::vector<double> expectMax(n, -INFINITY), values[3];
    const double lus[3] = {-5.0, 400.0, -300.0};
    for (int r = 0; r < 3; ++r) {
        k.columnLogSumExp(logk.data(), lus[r], cm.data(), cs.data(), n);
        values[r].resize(n);
        for (std::size_t j = 0; j < n; ++j) values[r][j] = double(logk.data()[j]) + lus[r];
    }
    for (std::size_t j = 0; j < n; ++j) {
        double m = -INFINITY, s = 0;
        for (int r = 0; r < 3; ++r) m = std::max(m, values[r][j]);
        for (int r = 0; r < 3; ++r) s += std::exp(values[r][j] - m);
        const double got = cm.data()[j] + std::log(cs.data()[j]);
        UOT_QVERIFY_MSG(std::abs(got - (m + std::log(s))) < 1e-12 * std::abs(m) + 1e-12, what << " column " << j);
    }
}

void TestRowKernels::logSumExpKernelsOfEveryPath()
{
    QFETCH(int, path);
    checkLogKernels(rowKernelsFloat(SimdPath(path)), toString(SimdPath(path)) + " fp32");
    if (QTest::currentTestFailed()) return;
    checkLogKernels(rowKernelsDouble(SimdPath(path)), toString(SimdPath(path)) + " fp64");
}

// Row-group kernels: the same bits whatever the group size (so results do not
// depend on how rows fall into groups or threads), and close to float64 loops.
template <typename T>
void checkRowGroups(const RowKernels<T>& k, const std::string& what, double tol)
{
    std::mt19937 rng(5);
    std::uniform_real_distribution<double> unit(0.0, 1.0);
    const std::size_t rows = 15, n = paddedLength<T>(70), ld = n + paddedLength<T>(1);  // 15 rows = 8 + 4 + 2 + 1
    AlignedBuffer<T> a, x, s1, s2, alpha, a2;
    a.resize(rows * ld);
    a2.resize(rows * ld);
    x.resize(n);
    s1.resize(n);
    s2.resize(n);
    alpha.resize(rows);
    for (std::size_t e = 0; e < rows * ld; ++e) a.data()[e] = a2.data()[e] = static_cast<T>(unit(rng));
    for (std::size_t j = 0; j < n; ++j) {
        x.data()[j] = static_cast<T>(unit(rng));
        s1.data()[j] = s2.data()[j] = static_cast<T>(unit(rng));
    }
    for (std::size_t r = 0; r < rows; ++r) alpha.data()[r] = static_cast<T>(unit(rng));
    T grouped[rows], single[rows];
    k.dotRows(a.data(), ld, rows, x.data(), n, grouped);
    for (std::size_t r = 0; r < rows; ++r) {
        k.dotRows(a.data() + r * ld, ld, 1, x.data(), n, single + r);
        double expect = 0;
        for (std::size_t j = 0; j < n; ++j) expect += double(a.data()[r * ld + j]) * double(x.data()[j]);
        UOT_QVERIFY_MSG(grouped[r] == single[r], what << " dotRows row " << r);
        UOT_QVERIFY_MSG(std::abs(double(grouped[r]) - expect) <= tol * expect, what << " dotRows value " << r);
    }
    k.axpyRows(a.data(), ld, rows, alpha.data(), s1.data(), n);
    for (std::size_t r = 0; r < rows; ++r) k.axpyRows(a.data() + r * ld, ld, 1, alpha.data() + r, s2.data(), n);
    for (std::size_t j = 0; j < n; ++j) UOT_QVERIFY_MSG(s1.data()[j] == s2.data()[j], what << " axpyRows " << j);
    k.scaleAccumulateRows(a.data(), ld, rows, x.data(), alpha.data(), s1.data(), n, a2.data());
    for (std::size_t r = 0; r < rows; ++r)
        k.scaleAccumulateRows(a2.data() + r * ld, ld, 1, x.data(), alpha.data() + r, s2.data(), n, nullptr);
    for (std::size_t j = 0; j < n; ++j) UOT_QVERIFY_MSG(s1.data()[j] == s2.data()[j], what << " scaleAccumulateRows " << j);
    for (std::size_t e = 0; e < rows * ld; ++e) UOT_QVERIFY_MSG(a.data()[e] == a2.data()[e], what << " rescaled " << e);

    // The fused pipeline step = dotRows of the next group + axpyRows of the current one, bit for bit.
    for (std::size_t nextRows = 1; nextRows <= 4; ++nextRows) {
        for (std::size_t curRows = 1; curRows <= 3; ++curRows) {
            for (std::size_t j = 0; j < n; ++j) s1.data()[j] = s2.data()[j] = static_cast<T>(unit(rng));
            T fusedOut[4], plainOut[4];
            const T* cur = a.data();
            const T* next = a.data() + 3 * ld;
            k.fusedRows(next, nextRows, cur, curRows, ld, x.data(), alpha.data(), s1.data(), n, fusedOut);
            k.dotRows(next, ld, nextRows, x.data(), n, plainOut);
            k.axpyRows(cur, ld, curRows, alpha.data(), s2.data(), n);
            for (std::size_t r = 0; r < nextRows; ++r)
                UOT_QVERIFY_MSG(fusedOut[r] == plainOut[r], what << " fusedRows dot " << nextRows << "/" << curRows);
            for (std::size_t j = 0; j < n; ++j)
                UOT_QVERIFY_MSG(s1.data()[j] == s2.data()[j], what << " fusedRows axpy " << nextRows << "/" << curRows);

            // The MAP-UOT step = dotRows against beta of the next group + scaleAccumulateRows of the current one.
            for (std::size_t e = 0; e < rows * ld; ++e) a2.data()[e] = a.data()[e];
            k.mapRows(a.data() + 3 * ld, nextRows, a.data(), curRows, ld, x.data(), alpha.data(), s1.data(), n,
                      fusedOut);
            k.dotRows(a2.data() + 3 * ld, ld, nextRows, x.data(), n, plainOut);
            k.scaleAccumulateRows(a2.data(), ld, curRows, x.data(), alpha.data(), s2.data(), n, a2.data());
            for (std::size_t r = 0; r < nextRows; ++r)
                UOT_QVERIFY_MSG(fusedOut[r] == plainOut[r], what << " mapRows dot " << nextRows << "/" << curRows);
            for (std::size_t j = 0; j < n; ++j)
                UOT_QVERIFY_MSG(s1.data()[j] == s2.data()[j], what << " mapRows sums " << nextRows << "/" << curRows);
            for (std::size_t e = 0; e < rows * ld; ++e)
                UOT_QVERIFY_MSG(a.data()[e] == a2.data()[e], what << " mapRows rescaled " << nextRows << "/" << curRows);
        }
    }
}

// The fused / MAP-UOT row orders (row_groups.h): every row of the range exactly
// once, the rows of a group `stride` apart and at most maxCount() of them; in
// the stretches order each stretch is visited front to back.
void checkRowOrder(const RowGroups& groups, std::size_t r0, std::size_t rows, const std::string& what)
{
    std::vector<int> seen(rows, 0);
    std::vector<std::size_t> last(groups.maxCount(), 0);
    for (std::size_t g = 0; g < groups.size(); ++g) {
        const RowGroup group = groups[g];
        UOT_QVERIFY_MSG(group.count >= 1 && group.count <= groups.maxCount(), what << " group " << g);
        for (std::size_t q = 0; q < group.count; ++q) {
            const std::size_t i = group.first + q * groups.stride();
            UOT_QVERIFY_MSG(i >= r0 && i < r0 + rows, what << " row " << i);
            if (i >= r0 && i < r0 + rows) ++seen[i - r0];
            if (groups.stride() > 1) {
                UOT_QVERIFY_MSG(g == 0 || i == last[q] + 1, what << ": stretch " << q << " not in order");
                last[q] = i;
            }
        }
    }
    for (std::size_t i = 0; i < rows; ++i) UOT_QVERIFY_MSG(seen[i] == 1, what << " row " << r0 + i << " seen " << seen[i]);
}

void TestRowKernels::rowOrdersVisitEveryRowOnce()
{
    for (std::size_t r0 : {0u, 5u}) {
        for (std::size_t rows = 0; rows <= 41; ++rows) {
            const std::string what = "rows " + std::to_string(r0) + "+" + std::to_string(rows);
            checkRowOrder(RowGroups::adjacent(r0, r0 + rows, 8), r0, rows, what + " adjacent 8");
            if (QTest::currentTestFailed()) return;
            checkRowOrder(RowGroups::adjacent(r0, r0 + rows, 4), r0, rows, what + " adjacent 4");
            if (QTest::currentTestFailed()) return;
            checkRowOrder(RowGroups::stretches(r0, r0 + rows, 4), r0, rows, what + " stretches 4");
            if (QTest::currentTestFailed()) return;
        }
    }
    // forRowLength: 16 KiB rows (4096 floats) go in 8 adjacent rows, 32 KiB rows (4096 doubles) in 4 stretches.
    QVERIFY(RowGroups::forRowLength(0, 100, 16 << 10).stride() == 1);
    QVERIFY(RowGroups::forRowLength(0, 100, 32 << 10).stride() == 25);
}

void TestRowKernels::rowGroupKernelsDoNotDependOnTheGroupSize()
{
    QFETCH(int, path);
    checkRowGroups(rowKernelsFloat(SimdPath(path)), toString(SimdPath(path)) + " fp32", 1e-5);
    if (QTest::currentTestFailed()) return;
    checkRowGroups(rowKernelsDouble(SimdPath(path)), toString(SimdPath(path)) + " fp64", 1e-13);
}

void TestRowKernels::paddedKernelHasZeroPadding()
{
    const std::size_t m = 3, n = 5;
    std::vector<double> cost(m * n, 0.1), a(m, 1.0), b(n, 1.0);
    UotProblem p;
    p.cost = DenseCost{nullptr, cost.data(), m, n};
    p.a = a;
    p.b = b;
    AlignedBuffer<float> k;
    const std::size_t ld = paddedLength<float>(n);
    QCOMPARE(ld, std::size_t(16));
    buildPaddedKernel<float>(p, k, ld, 2);
    for (std::size_t i = 0; i < m; ++i)
        for (std::size_t j = 0; j < ld; ++j)
            UOT_QCOMPARE_CLOSE(k.data()[i * ld + j], j < n ? std::exp(-0.1 / 0.05) : 0.0, 1e-7);
}

QTEST_APPLESS_MAIN(TestRowKernels)
#include "test_row_kernels.moc"
