// The packed row totals of a solve distributed by rows (row_block_reduction.h):
// sums, maxima and log-sum-exps of blocks combined into the figures of all rows,
// against a direct long double evaluation over all terms (and analytic values):
// the log-sum-exp of terms down to -800 (whose exponentials underflow in float64
// unless shifted) split into blocks, one of them empty, in either order of
// combination; NaN and empty cases; and the default transport path
// (RowBlockReduction::finishCombine through sum and max calls) on P identical blocks.
// And the driver's deferred check over row blocks (scaling_loop.h): one block holding
// every row, through a transport that records its calls, gives the single-process
// iterates (to 1e-12, same iteration count) while a check's reduction is in flight
// during the next pass's column reduction.

#include <QTest>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "core/transport/fused_solver.h"
#include "core/transport/row_block_reduction.h"
#include "tests/support/qt_checks.h"

using namespace uot;

namespace {

long double directLogSumExp(const std::vector<double>& x)
{
    long double top = -std::numeric_limits<long double>::infinity();
    for (double v : x) top = std::max(top, static_cast<long double>(v));
    long double s = 0;
    for (double v : x) s += std::exp(static_cast<long double>(v) - top);
    return top + std::log(s);
}

// Packs one block's totals: its sum, its maximum and the parts of its log-sum-exp.
RowTotals blockTotals(std::span<const double> terms)
{
    RowTotals t(1, 1, 1);
    double sum = 0, largest = -std::numeric_limits<double>::infinity();
    for (double v : terms) {
        sum += v;
        largest = std::max(largest, v);
    }
    t.sum(0) = sum;
    t.max(0) = largest;
    t.setLogSum(0, LogSumParts::of(terms));
    return t;
}

// Every block's buffer combined into the first, in the given order.
RowTotals combineAll(std::vector<RowTotals> blocks, const std::vector<int>& order)
{
    RowTotals into = blocks[static_cast<std::size_t>(order[0])];
    for (std::size_t k = 1; k < order.size(); ++k)
        RowTotals::combinePacked(blocks[static_cast<std::size_t>(order[k])].packed().data(), into.packed().data());
    return into;
}

// The default transport on P processes that hold the same values: every sum is
// P times the value, every maximum the value.
class IdenticalBlocks final : public RowBlockReduction {
public:
    explicit IdenticalBlocks(int processes) : m_processes(processes) {}
    using RowBlockReduction::max;
    using RowBlockReduction::sum;
    void sum(std::span<double> values) override
    {
        for (double& v : values) v *= m_processes;
        ++m_calls;
    }
    void max(std::span<double> values) override { (void)values, ++m_calls; }
    int calls() const { return m_calls; }

private:
    int m_processes;
    int m_calls = 0;
};

// One process holding every row: every reduction leaves its values as they are,
// and each call is recorded (the order of the collectives is what is checked).
class RecordingBlocks final : public RowBlockReduction {
public:
    using RowBlockReduction::max;
    using RowBlockReduction::sum;
    void sum(std::span<double> values) override { record(values.size(), false); }
    void max(std::span<double> values) override { record(values.size(), true); }
    void startCombine(RowTotals& totals) override { m_open.push_back(totals.packed().data()); }
    void finishCombine(RowTotals& totals) override
    {
        std::erase(m_open, totals.packed().data());
    }
    // Sums of `length` values made while a packed combination was in flight.
    int sumsWhileOpen(std::size_t length) const { return m_sumsWhileOpen[length]; }

private:
    void record(std::size_t length, bool isMax)
    {
        if (!isMax && !m_open.empty()) {
            if (m_sumsWhileOpen.size() <= length) m_sumsWhileOpen.resize(length + 1, 0);
            ++m_sumsWhileOpen[length];
        }
    }
    std::vector<const double*> m_open;
    std::vector<int> m_sumsWhileOpen = std::vector<int>(1, 0);
};

}  // namespace

class TestRowBlockReduction : public QObject {
    Q_OBJECT

private slots:
    void logSumOverBlocksMatchesDirectSum()
    {
        std::mt19937_64 rng(24);
        std::uniform_real_distribution<double> term(-800.0, 50.0);
        std::vector<double> x(1000);
        for (double& v : x) v = term(rng);
        const long double expected = directLogSumExp(x);
        const std::span<const double> all(x);
        // Blocks [0, 400), [400, 400) (no rows) and [400, 1000).
        std::vector<RowTotals> blocks = {blockTotals(all.subspan(0, 400)), blockTotals(all.subspan(400, 0)),
                                         blockTotals(all.subspan(400))};
        long double sum = 0;
        for (double v : x) sum += v;
        for (const std::vector<int>& order :
             {std::vector<int>{0, 1, 2}, std::vector<int>{2, 1, 0}, std::vector<int>{1, 2, 0}}) {
            RowTotals combined = combineAll(blocks, order);
            const double value = combined.logSum(0).value();
            UOT_QCOMPARE_CLOSE(value, static_cast<double>(expected), 1e-13 * std::abs(static_cast<double>(expected)));
            UOT_QCOMPARE_CLOSE(combined.sum(0), static_cast<double>(sum), 1e-12 * std::abs(static_cast<double>(sum)));
            QCOMPARE(combined.max(0), *std::max_element(x.begin(), x.end()));
        }
    }

    void emptyAndNonFiniteTerms()
    {
        const std::vector<double> none;
        const double inf = std::numeric_limits<double>::infinity();
        QCOMPARE(LogSumParts::of(none).value(), -inf);
        RowTotals empty = blockTotals(none);
        RowTotals alsoEmpty = blockTotals(none);
        RowTotals::combinePacked(alsoEmpty.packed().data(), empty.packed().data());
        QCOMPARE(empty.logSum(0).value(), -inf);
        // A NaN in one block makes the whole log-sum NaN, whichever side it is on.
        const std::vector<double> fine = {1.0, 2.0}, bad = {0.5, std::nan("")};
        for (bool badFirst : {false, true}) {
            RowTotals a = blockTotals(badFirst ? bad : fine), b = blockTotals(badFirst ? fine : bad);
            RowTotals::combinePacked(b.packed().data(), a.packed().data());
            QVERIFY(std::isnan(a.logSum(0).value()));
        }
        // An infinite term gives +inf, as a direct evaluation would.
        const std::vector<double> huge = {1.0, inf};
        RowTotals h = blockTotals(huge), f = blockTotals(fine);
        RowTotals::combinePacked(f.packed().data(), h.packed().data());
        QCOMPARE(h.logSum(0).value(), inf);
    }

    void defaultTransportCombinesThroughSumAndMax()
    {
        // P processes with the same terms: sums P times, maxima the same, and the
        // log-sum-exp log P above one block's (analytic).
        const std::vector<double> x = {-700.0, -701.5, 3.0, 2.5, -1.0};
        for (int processes : {1, 3}) {
            IdenticalBlocks transport(processes);
            RowTotals t(2, 1, 2);
            t.sum(0) = 2.0;
            t.sum(1) = -1.5;
            t.max(0) = 7.0;
            t.setLogSum(0, LogSumParts::of(x));
            t.setLogSum(1, LogSumParts::of(std::vector<double>{}));
            startCombine(&transport, t);
            finishCombine(&transport, t);
            QCOMPARE(t.sum(0), 2.0 * processes);
            QCOMPARE(t.sum(1), -1.5 * processes);
            QCOMPARE(t.max(0), 7.0);
            UOT_QCOMPARE_CLOSE(t.logSum(0).value(),
                               static_cast<double>(directLogSumExp(x)) + std::log(static_cast<double>(processes)),
                               1e-14);
            QCOMPARE(t.logSum(1).value(), -std::numeric_limits<double>::infinity());
            QCOMPARE(transport.calls(), 4);  // the sums, the maxima, the largest terms, the scaled sums
        }
        // A single process (no transport) leaves the totals as they are.
        RowTotals alone(1, 0, 1);
        alone.sum(0) = 4.0;
        alone.setLogSum(0, LogSumParts::of(x));
        finishCombine(nullptr, alone);
        QCOMPARE(alone.sum(0), 4.0);
        UOT_QCOMPARE_CLOSE(alone.logSum(0).value(), static_cast<double>(directLogSumExp(x)), 1e-14);
    }

    // A block that moves (uot-mpi --balance) keeps the kernel rows of the overlap of its
    // old and new rows and builds the rest: the kept span must lie inside the new rows,
    // also when the block jumps past its old rows, which 3 ranks with unsteady timings
    // do (a jump from rows 20..30 to 0..10 once built 20 rows into a block of 10).
    void aMovedBlockKeepsOnlyTheOverlapOfItsRows_data()
    {
        QTest::addColumn<int>("oldFirst");
        QTest::addColumn<int>("oldEnd");
        QTest::addColumn<int>("first");
        QTest::addColumn<int>("end");
        QTest::addColumn<int>("keptFirst");
        QTest::addColumn<int>("keptEnd");
        QTest::newRow("grows at both ends") << 10 << 20 << 5 << 25 << 10 << 20;
        QTest::newRow("shrinks") << 10 << 20 << 12 << 18 << 12 << 18;
        QTest::newRow("slides down") << 10 << 20 << 6 << 16 << 10 << 16;
        QTest::newRow("slides up") << 10 << 20 << 14 << 24 << 14 << 20;
        QTest::newRow("jumps below its old rows") << 20 << 30 << 0 << 10 << 10 << 10;
        QTest::newRow("jumps above its old rows") << 0 << 10 << 20 << 30 << 20 << 20;
        QTest::newRow("touches below") << 10 << 20 << 0 << 10 << 10 << 10;
        QTest::newRow("from no rows") << 7 << 7 << 3 << 9 << 7 << 7;
        QTest::newRow("to no rows") << 3 << 9 << 12 << 12 << 12 << 12;
    }

    void aMovedBlockKeepsOnlyTheOverlapOfItsRows()
    {
        QFETCH(int, oldFirst);
        QFETCH(int, oldEnd);
        QFETCH(int, first);
        QFETCH(int, end);
        QFETCH(int, keptFirst);
        QFETCH(int, keptEnd);
        const auto z = [](int k) { return static_cast<std::size_t>(k); };
        const uot::RowSpan kept = uot::keptRowsOfMove(z(oldFirst), z(oldEnd), z(first), z(end));
        QCOMPARE(kept.first, z(keptFirst));
        QCOMPARE(kept.end, z(keptEnd));
        // What the move builds, [first, kept.first) and [kept.end, end), and what it
        // keeps fill the new rows exactly once.
        QVERIFY(z(first) <= kept.first && kept.first <= kept.end && kept.end <= z(end));
    }

    void deferredCheckKeepsTheIteratesAndOverlapsThePass()
    {
        constexpr std::size_t m = 23, n = 17;
        std::mt19937_64 rng(7);
        std::uniform_real_distribution<double> unit(0.0, 1.0);
        std::vector<double> cost(m * n), a(m), b(n);
        for (double& c : cost) c = unit(rng);
        for (double& w : a) w = (0.5 + unit(rng)) / m;
        for (double& w : b) w = (0.5 + unit(rng)) * 1.3 / n;
        DenseCost dense;
        dense.f64 = cost.data();
        dense.rows = m;
        dense.cols = n;
        UotProblem problem;
        problem.cost = dense;
        problem.a = a;
        problem.b = b;
        problem.eps = 0.05;
        SolveOptions options;
        options.precision = Precision::Fp64;
        options.mode = IterationMode::TranslationInvariant;
        options.acceleration = Acceleration::Auto;
        options.tolerance = 1e-10;
        options.threads = 1;
        options.maxIterations = 5000;
        const SolveResult single = FusedSolver().solve(problem, options, SolveControl{});
        QVERIFY(single.converged);
        RecordingBlocks blocks;
        RowBlock where;
        where.allA = a;
        const SolveResult blocked = FusedRowBlockSolve(problem, where, options).run(blocks, blocks);
        QVERIFY(blocked.converged);
        QCOMPARE(blocked.iterations, single.iterations);
        for (std::size_t i = 0; i < m; ++i) UOT_QCOMPARE_CLOSE(blocked.logU[i], single.logU[i], 1e-12);
        for (std::size_t j = 0; j < n; ++j) UOT_QCOMPARE_CLOSE(blocked.logV[j], single.logV[j], 1e-12);
        // The column sums of a pass (n + 2 values) ran while the previous step's
        // check was in flight: once per iteration after the first.
        QCOMPARE(blocks.sumsWhileOpen(n + 2), blocked.iterations);
    }
};

QTEST_APPLESS_MAIN(TestRowBlockReduction)
#include "test_row_block_reduction.moc"
