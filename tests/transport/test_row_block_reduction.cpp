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
// during the next pass's column reduction. And rows that move between blocks at the
// checks (uot-mpi --balance): three blocks on three threads, moved by a script that
// makes a block jump below and above its old rows and leaves one with no rows, give
// the single-process iterates and iteration count.

#include <QTest>

#include <algorithm>
#include <atomic>
#include <barrier>
#include <cmath>
#include <exception>
#include <limits>
#include <random>
#include <set>
#include <span>
#include <stdexcept>
#include <string>
#include <thread>
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

// One process holding every row, counting the reductions made while the loop's wait
// timing is paused (pauseWaitTiming) and those made while it runs.
class PauseCountingBlocks final : public RowBlockReduction {
public:
    using RowBlockReduction::max;
    using RowBlockReduction::sum;
    void sum(std::span<double> values) override { count(values.size()); }
    void max(std::span<double> values) override { count(values.size()); }
    void pauseWaitTiming() override { ++m_depth; }
    void resumeWaitTiming() override { --m_depth; }
    int depth() const { return m_depth; }
    int pausedCalls() const { return m_paused; }
    int timedCalls() const { return m_timed; }
    // The reductions of `length` values made while paused.
    int pausedOfLength(std::size_t length) const { return m_pausedLengths.count(length); }

private:
    void count(std::size_t length)
    {
        if (m_depth > 0) {
            ++m_paused;
            m_pausedLengths.insert(length);
        } else {
            ++m_timed;
        }
    }
    int m_depth = 0, m_paused = 0, m_timed = 0;
    std::multiset<std::size_t> m_pausedLengths;
};

// The two iterations the row-block tests run: plain, and TI with auto relaxation.
void addIterationModeRows()
{
    QTest::addColumn<int>("mode");
    QTest::newRow("plain") << static_cast<int>(IterationMode::Plain);
    QTest::newRow("translation-invariant, auto relaxation") << static_cast<int>(IterationMode::TranslationInvariant);
}

// fp64, one thread, `mode` (relaxed automatically unless plain), to `tolerance`.
SolveOptions rowBlockOptions(IterationMode mode, double tolerance, int maxIterations)
{
    SolveOptions options;
    options.precision = Precision::Fp64;
    options.mode = mode;
    options.acceleration = mode == IterationMode::Plain ? Acceleration::None : Acceleration::Auto;
    options.tolerance = tolerance;
    options.threads = 1;
    options.maxIterations = maxIterations;
    return options;
}

// An m x n float64 problem with costs in [0, 1), a near 1 in all and b near 1.3.
struct RandomDenseProblem {
    RandomDenseProblem(std::size_t m, std::size_t n, unsigned seed, double eps) : cost(m * n), a(m), b(n)
    {
        std::mt19937_64 rng(seed);
        std::uniform_real_distribution<double> unit(0.0, 1.0);
        for (double& c : cost) c = unit(rng);
        for (double& w : a) w = (0.5 + unit(rng)) / static_cast<double>(m);
        for (double& w : b) w = (0.5 + unit(rng)) * 1.3 / static_cast<double>(n);
        problem.cost = DenseCost{.f64 = cost.data(), .rows = m, .cols = n};
        problem.a = a;
        problem.b = b;
        problem.eps = eps;
    }
    RandomDenseProblem(const RandomDenseProblem&) = delete;  // the problem points into the vectors
    RandomDenseProblem& operator=(const RandomDenseProblem&) = delete;
    std::vector<double> cost, a, b;
    UotProblem problem;
};

// Blocks of one problem solved on threads of this process: every reduction is the
// element-wise sum / maximum of all threads' values, taken in block order, so every
// thread gets the same result (a stand-in for uot-mpi's transport).
// A thread that fails leaves the rendezvous (leave()); the others then fail at their
// next reduction instead of waiting for it.
struct ThreadRendezvous {
    explicit ThreadRendezvous(int blocks) : sync(blocks), parts(static_cast<std::size_t>(blocks)) {}
    void leave()
    {
        failed = true;
        sync.arrive_and_drop();
    }
    std::barrier<> sync;
    std::vector<std::vector<double>> parts;
    std::atomic<bool> failed = false;
};

class ThreadBlocks final : public RowBlockReduction {
public:
    ThreadBlocks(ThreadRendezvous& rendezvous, int block) : m_all(rendezvous), m_block(block) {}
    using RowBlockReduction::max;
    using RowBlockReduction::sum;
    void sum(std::span<double> values) override { combine(values, false); }
    void max(std::span<double> values) override { combine(values, true); }

private:
    void combine(std::span<double> values, bool isMax)
    {
        m_all.parts[static_cast<std::size_t>(m_block)].assign(values.begin(), values.end());
        m_all.sync.arrive_and_wait();
        if (m_all.failed) throw std::runtime_error("another block failed");
        for (std::size_t k = 0; k < values.size(); ++k) {
            double v = m_all.parts[0][k];
            for (std::size_t p = 1; p < m_all.parts.size(); ++p)
                v = isMax ? std::max(v, m_all.parts[p][k]) : v + m_all.parts[p][k];
            values[k] = v;
        }
        m_all.sync.arrive_and_wait();  // nobody writes its slot before everyone has read
    }
    ThreadRendezvous& m_all;
    int m_block;
};

// Rows of a dense problem [first, first + count), the rest of it as it is.
UotProblem rowsOfDense(const UotProblem& whole, std::size_t first, std::size_t count)
{
    const DenseCost& dense = std::get<DenseCost>(whole.cost);
    DenseCost rows = dense;
    rows.f64 = dense.f64 + first * dense.cols;
    rows.rows = count;
    UotProblem block = whole;
    block.cost = rows;
    block.a = whole.a.subspan(first, count);
    return block;
}

// Moves block `block` to the bounds of the script's next entry at each check
// (bounds[k] = first row of block k, a last entry = all rows), then stays.
class ScriptedMover final : public RowBlockMover {
public:
    ScriptedMover(const UotProblem& whole, std::vector<std::vector<std::size_t>> script, int block)
        : m_whole(whole), m_script(std::move(script)), m_block(static_cast<std::size_t>(block))
    {
    }
    Move plan(int iteration) override
    {
        (void)iteration;
        Move move;
        if (m_next >= m_script.size()) return move;
        const std::vector<std::size_t>& bounds = m_script[m_next++];
        move.moved = true;
        move.firstRow = bounds[m_block];
        move.rowCount = bounds[m_block + 1] - bounds[m_block];
        return move;
    }
    UotProblem rows(std::size_t firstRow, std::size_t rowCount) override
    {
        return rowsOfDense(m_whole, firstRow, rowCount);
    }
    std::size_t movesMade() const { return m_next; }

private:
    const UotProblem& m_whole;
    std::vector<std::vector<std::size_t>> m_script;
    std::size_t m_block;
    std::size_t m_next = 0;
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
        const RandomDenseProblem random(m, n, 7, 0.05);
        const UotProblem& problem = random.problem;
        const std::vector<double>& a = random.a;
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

    void theReportsExtraRowPassIsOutsideTheTimedWaits_data()
    {
        addIterationModeRows();
    }

    // A converged solve ends with one row pass for the report's row marginal, outside
    // iterateSeconds: its one reduction (the error's sum over the blocks) is made with
    // the wait timing paused, every reduction of the iterations with it running.
    void theReportsExtraRowPassIsOutsideTheTimedWaits()
    {
        QFETCH(int, mode);
        constexpr std::size_t m = 23, n = 17;
        const RandomDenseProblem random(m, n, 7, 0.05);
        const SolveOptions options = rowBlockOptions(static_cast<IterationMode>(mode), 1e-10, 5000);
        PauseCountingBlocks blocks;
        RowBlock where;
        where.allA = random.a;
        const SolveResult blocked = FusedRowBlockSolve(random.problem, where, options).run(blocks, blocks);
        QVERIFY(blocked.converged);
        QCOMPARE(blocks.depth(), 0);
        QCOMPARE(blocks.pausedCalls(), 1);
        QCOMPARE(blocks.pausedOfLength(1), 1);
        QVERIFY(blocks.timedCalls() >= blocked.iterations);
    }

    void rowsMovedAtTheChecksKeepTheIterates_data()
    {
        addIterationModeRows();
    }

    void rowsMovedAtTheChecksKeepTheIterates()
    {
        QFETCH(int, mode);
        constexpr std::size_t m = 30, n = 17;
        constexpr int blocks = 3;
        const RandomDenseProblem random(m, n, 11, 0.02);
        const UotProblem& problem = random.problem;
        const std::vector<double>& a = random.a;
        SolveOptions options = rowBlockOptions(static_cast<IterationMode>(mode), 1e-11, 20000);
        options.checkEvery = 2;
        const SolveResult single = FusedSolver().solve(problem, options, SolveControl{});
        QVERIFY(single.converged);
        QVERIFY2(single.iterations > 8, "the solve must reach the script's last check");

        // Block 1 jumps below its old rows ([10, 20) to [2, 5): the move that once built
        // 8 rows into a block of 3), then above them ([2, 5) to [25, 28)), then has no rows.
        const std::vector<std::size_t> start = {0, 10, 20, m};
        const std::vector<std::vector<std::size_t>> script = {
            {0, 2, 5, m}, {0, 25, 28, m}, {0, 29, 29, m}, {0, 12, 21, m}};
        ThreadRendezvous rendezvous(blocks);
        std::vector<SolveResult> results(blocks);
        std::vector<std::size_t> moves(blocks, 0);
        std::vector<std::exception_ptr> errors(blocks);
        std::vector<std::thread> threads;
        for (int k = 0; k < blocks; ++k)
            threads.emplace_back([&, k] {
                try {
                    const std::size_t kk = static_cast<std::size_t>(k);
                    RowBlock where;
                    where.firstRow = start[kk];
                    where.allA = a;
                    ThreadBlocks transport(rendezvous, k);
                    ScriptedMover mover(problem, script, k);
                    results[kk] = FusedRowBlockSolve(rowsOfDense(problem, start[kk], start[kk + 1] - start[kk]), where,
                                                     options)
                                      .run(transport, transport, &mover);
                    moves[kk] = mover.movesMade();
                } catch (...) {
                    errors[static_cast<std::size_t>(k)] = std::current_exception();
                    rendezvous.leave();
                }
            });
        for (std::thread& t : threads) t.join();
        for (const std::exception_ptr& e : errors)
            if (e) std::rethrow_exception(e);
        for (int k = 0; k < blocks; ++k) {
            const SolveResult& r = results[static_cast<std::size_t>(k)];
            QCOMPARE(moves[static_cast<std::size_t>(k)], script.size());
            QVERIFY(r.converged);
            QCOMPARE(r.iterations, single.iterations);
            QCOMPARE(r.logU.size(), m);
            for (std::size_t i = 0; i < m; ++i) UOT_QCOMPARE_CLOSE(r.logU[i], single.logU[i], 1e-12);
            for (std::size_t j = 0; j < n; ++j) UOT_QCOMPARE_CLOSE(r.logV[j], single.logV[j], 1e-12);
            UOT_QCOMPARE_CLOSE(r.mass, single.mass, 1e-12);
        }
    }
};

QTEST_APPLESS_MAIN(TestRowBlockReduction)
#include "test_row_block_reduction.moc"
