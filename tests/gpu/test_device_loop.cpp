// Host-only (no GPU needed, runs in CI): the GPU engines' shared check loop
// (gpu/device_loop.h) driving a host stand-in for an engine that runs plain
// log-domain iterations on a small dense problem. Checked against the float64
// reference solver (the plan), and hand-counted cadence: checks every
// checkEvery iterations and at the cap, the last good iterate kept when a check
// finds a bad value, cancellation, and the fp32 precision floor; and engines whose
// step kernel decides on the device (chunks, their figures, the cap; chunks of 512
// where a launch ends at the device's stop), and a group
// of problems that decide one by one (groupCheck: the loop follows the slowest).

#include <algorithm>
#include <atomic>
#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "core/transport/reference_solver.h"
#include "gpu/device_loop.h"
#include "tests/support/qt_checks.h"

using namespace uot;
using namespace uot::gpu::detail;

namespace {

constexpr std::size_t kRows = 12, kCols = 9;

struct Fixture {
    std::vector<double> cost, a, b;
    UotProblem problem;
    Fixture()
    {
        std::mt19937_64 rng(7);
        std::uniform_real_distribution<double> unit(0.0, 1.0);
        for (std::size_t k = 0; k < kRows * kCols; ++k) cost.push_back(unit(rng));
        for (std::size_t i = 0; i < kRows; ++i) a.push_back((0.5 + unit(rng)) / kRows);
        for (std::size_t j = 0; j < kCols; ++j) b.push_back((0.5 + unit(rng)) / kCols * 1.2);
        DenseCost dense;
        dense.f64 = cost.data();
        dense.rows = kRows;
        dense.cols = kCols;
        problem.cost = dense;
        problem.a = a;
        problem.b = b;
        problem.eps = 0.1;
        problem.tauA = problem.tauB = 1;
    }
};

double logSumExp(const std::vector<double>& t)
{
    const double m = *std::max_element(t.begin(), t.end());
    double s = 0;
    for (double x : t) s += std::exp(x - m);
    return m + std::log(s);
}

// An engine on the host: log-domain Sinkhorn iterations, with the copies and the
// check the loop asks for, and counters of its calls.
class HostPasses final : public DevicePasses {
public:
    explicit HostPasses(const Fixture& f) : m_f(f), m_u(kRows, 0.0), m_v(kCols, 0.0), m_uGood(m_u), m_vGood(m_v) {}

    void startChunk() override {}
    void launch(int count) override
    {
        launched += count;
        for (int k = 0; k < count; ++k) iterate();
    }
    void markSlice(int) override {}
    void waitSlice(int) override {}
    void snapshot() override
    {
        m_uPrev = m_u;
        m_vPrev = m_v;
    }
    DeviceCheck check(bool) override
    {
        ++checks;
        DeviceCheck c;
        for (double x : m_u) c.bad = c.bad || !std::isfinite(x);
        for (double y : m_v) c.bad = c.bad || !std::isfinite(y);
        c.marginalA = c.marginalB = std::numeric_limits<double>::quiet_NaN();
        c.chunkSeconds = 1e-6;
        return c;
    }
    void keepGood() override
    {
        m_uGood = m_u;
        m_vGood = m_v;
    }
    void restoreGood() override
    {
        m_u = m_uGood;
        m_v = m_vGood;
    }
    void readLogPotentials(std::vector<double>& f, std::vector<double>& fPrev, std::vector<double>& g,
                           std::vector<double>& gPrev) override
    {
        f = m_u;
        fPrev = m_uPrev;
        g = m_v;
        gPrev = m_vPrev;
    }
    double potentialResolution() const override { return resolution; }

    const std::vector<double>& logU() const { return m_u; }
    const std::vector<double>& logV() const { return m_v; }

    int launched = 0, checks = 0;
    int poisonAt = -1;  // the iteration (1-based) that writes a NaN
    double resolution = 0;

private:
    void iterate()
    {
        const UotProblem& p = m_f.problem;
        const double fa = p.exponentA(), fb = p.exponentB();
        std::vector<double> t(kCols);
        for (std::size_t i = 0; i < kRows; ++i) {
            for (std::size_t j = 0; j < kCols; ++j) t[j] = -m_f.cost[i * kCols + j] / p.eps + m_v[j];
            m_u[i] = fa * (std::log(m_f.a[i]) - logSumExp(t));
        }
        std::vector<double> s(kRows);
        for (std::size_t j = 0; j < kCols; ++j) {
            for (std::size_t i = 0; i < kRows; ++i) s[i] = -m_f.cost[i * kCols + j] / p.eps + m_u[i];
            m_v[j] = fb * (std::log(m_f.b[j]) - logSumExp(s));
        }
        if (++m_done == poisonAt) m_v[3] = std::numeric_limits<double>::quiet_NaN();
    }

    const Fixture& m_f;
    std::vector<double> m_u, m_v, m_uPrev, m_vPrev, m_uGood, m_vGood;
    int m_done = 0;
};

// An engine whose step kernel decides on the device: it accepts every step,
// takes 3 passes for 2 iterations, and stops by itself at `stopAt` (converged,
// or a non-finite value); steps queued after that are undone.
class DecidingPasses final : public DevicePasses {
public:
    bool decidesOnDevice() const override { return true; }
    bool stopsWithinLaunch() const override { return endsAtStop; }
    void startChunk() override {}
    void launch(int count) override
    {
        launches.push_back(count);
        for (int k = 0; k < count && m_stop == DeviceStop::Running; ++k) {
            ++m_iterations;
            if (m_iterations == stopAt) m_stop = stopWith;
        }
    }
    DeviceCheck check(bool) override
    {
        DeviceCheck c;
        c.iterations = m_stop == DeviceStop::NotFinite ? m_iterations - 1 : m_iterations;
        c.passes = 3LL * c.iterations / 2;
        c.error = 1.0 / (1 + m_iterations);
        c.marginalA = c.marginalB = 0.5;
        c.stop = m_stop;
        return c;
    }
    void markSlice(int) override { QFAIL("no slices when the device decides"); }
    void waitSlice(int) override {}
    void snapshot() override { QFAIL("no snapshot when the device decides"); }
    void keepGood() override {}
    void restoreGood() override {}
    void readLogPotentials(std::vector<double>&, std::vector<double>&, std::vector<double>&,
                           std::vector<double>&) override
    {
        QFAIL("no host stopping test when the device decides");
    }

    int stopAt = 37;
    DeviceStop stopWith = DeviceStop::Converged;
    bool endsAtStop = false;  // a launch ends by itself at the stop (gpu-fused's cluster path)
    std::vector<int> launches;

private:
    int m_iterations = 0;
    DeviceStop m_stop = DeviceStop::Running;
};

// A group whose problems decide on the device one by one (the batched solver's
// side of the loop), its check from groupCheck. Problem k accepts one iteration in
// every `every[k]` passes (the others are undone by its safeguard) and stops by
// itself after `stopAt[k]` accepted ones (converged), or at the cap.
class GroupOfProblems final : public DeviceDecidedPasses {
public:
    GroupOfProblems(std::vector<int> every, std::vector<int> stopAt, int cap)
        : m_every(std::move(every)), m_stopAt(std::move(stopAt)), m_cap(cap), m_problems(m_every.size())
    {
    }
    void startChunk() override {}
    void launch(int count) override
    {
        launches.push_back(count);
        for (int k = 0; k < count; ++k)
            for (std::size_t p = 0; p < m_problems.size(); ++p) {
                ProblemCheck& pc = m_problems[p];
                if (pc.stop != DeviceStop::Running) continue;
                ++pc.passes;
                if (pc.passes % m_every[p] != 0) continue;  // undone
                ++pc.iterations;
                pc.error = 1.0 / pc.iterations;
                if (pc.iterations == m_stopAt[p]) pc.stop = DeviceStop::Converged;
                else if (pc.iterations >= m_cap) pc.stop = DeviceStop::IterationCap;
            }
    }
    DeviceCheck check(bool) override { return groupCheck(m_problems); }
    const ProblemCheck& problem(std::size_t p) const { return m_problems[p]; }
    std::vector<int> launches;

private:
    std::vector<int> m_every, m_stopAt;
    int m_cap;
    std::vector<ProblemCheck> m_problems;
};

DeviceLoopSetup setupFor(int sweeps = 2)
{
    DeviceLoopSetup s;
    s.bytesPerIteration = 1000;
    s.sweepsPerIteration = sweeps;
    s.markNotFinite = [](SolveResult& r, int) { r.status = NumericalStatus::NotFinite; };
    return s;
}

// Relative L1 distance of the plan of (logU, logV) to the plan of (refU, refV).
double planDistance(const Fixture& f, const std::vector<double>& logU, const std::vector<double>& logV,
                    const std::vector<double>& refU, const std::vector<double>& refV)
{
    double diff = 0, mass = 0;
    for (std::size_t i = 0; i < kRows; ++i)
        for (std::size_t j = 0; j < kCols; ++j) {
            const double k = -f.cost[i * kCols + j] / f.problem.eps;
            const double p = std::exp(logU[i] + logV[j] + k), q = std::exp(refU[i] + refV[j] + k);
            diff += std::abs(p - q);
            mass += q;
        }
    return diff / mass;
}

}  // namespace

class TestDeviceLoop : public QObject {
    Q_OBJECT
private slots:
    void convergesToTheReferencePlan();
    void checksEveryIntervalAndAtTheCap();
    void badValueKeepsTheLastGoodCheck();
    void cancelStopsAtTheNextCheck();
    void precisionFloorIsNotConverged();
    void deviceDecidedConvergence();
    void deviceDecidedNotFinite();
    void launchesThatEndAtTheStopRunLongChunks();
    void groupCheckFollowsTheSlowestRunningProblem();
    void groupRunsUntilEveryProblemStops();
};

void TestDeviceLoop::convergesToTheReferencePlan()
{
    const Fixture f;
    SolveOptions options;
    options.tolerance = 1e-12;
    options.checkEvery = 10;
    options.maxIterations = 20000;
    HostPasses passes(f);
    SolveResult result;
    runDeviceLoop(f.problem, options, {}, passes, setupFor(), 0, result);
    QVERIFY(result.converged);
    QCOMPARE(result.iterations % 10, 0);
    QCOMPARE(passes.launched, result.iterations);
    QCOMPARE(passes.checks, result.iterations / 10);
    QCOMPARE(result.passes, std::uint64_t(2) * std::uint64_t(result.iterations));
    ReferenceSolver reference;
    SolveOptions refOptions;
    refOptions.tolerance = 1e-13;
    refOptions.maxIterations = 100000;
    const SolveResult expected = reference.solve(f.problem, refOptions, {});
    QVERIFY(expected.converged);
    const double distance = planDistance(f, passes.logU(), passes.logV(), expected.logU, expected.logV);
    UOT_QVERIFY_MSG(distance < 1e-9, "plan distance " << distance);
}

void TestDeviceLoop::checksEveryIntervalAndAtTheCap()
{
    const Fixture f;
    SolveOptions options;
    options.tolerance = 0;  // never converges: runs to the cap
    options.checkEvery = 10;
    options.maxIterations = 35;
    HostPasses passes(f);
    std::vector<int> reported;
    SolveControl control;
    control.onProgress = [&](const SolveProgress& p) { reported.push_back(p.iteration); };
    SolveResult result;
    runDeviceLoop(f.problem, options, control, passes, setupFor(1), 0, result);
    QVERIFY(!result.converged);
    QCOMPARE(result.iterations, 35);
    QCOMPARE(passes.launched, 35);
    QCOMPARE(reported, (std::vector<int>{10, 20, 30, 35}));
    QCOMPARE(result.passes, std::uint64_t(35));
}

void TestDeviceLoop::badValueKeepsTheLastGoodCheck()
{
    const Fixture f;
    SolveOptions options;
    options.tolerance = 0;
    options.checkEvery = 10;
    options.maxIterations = 100;
    HostPasses passes(f);
    passes.poisonAt = 25;
    SolveResult result;
    runDeviceLoop(f.problem, options, {}, passes, setupFor(), 0, result);
    QVERIFY(result.status == NumericalStatus::NotFinite);
    QVERIFY(!result.converged);
    QCOMPARE(result.iterations, 20);
    // The iterate left is the one after 20 iterations.
    HostPasses clean(f);
    clean.launch(20);
    QCOMPARE(passes.logU(), clean.logU());
    QCOMPARE(passes.logV(), clean.logV());
}

void TestDeviceLoop::cancelStopsAtTheNextCheck()
{
    const Fixture f;
    SolveOptions options;
    options.tolerance = 0;
    options.checkEvery = 10;
    options.maxIterations = 1000;
    HostPasses passes(f);
    std::atomic<bool> cancel{false};
    SolveControl control;
    control.cancel = &cancel;
    control.onProgress = [&](const SolveProgress&) { cancel = true; };
    SolveResult result;
    runDeviceLoop(f.problem, options, control, passes, setupFor(), 0, result);
    QVERIFY(result.cancelled);
    QVERIFY(!result.converged);
    QCOMPARE(result.iterations, 10);
}

void TestDeviceLoop::precisionFloorIsNotConverged()
{
    // Potentials of size ~log(1/eps weights) held to 1e-3: the plan cannot be
    // within 1e-4, so a small change must not be called converged.
    const Fixture f;
    SolveOptions options;
    options.tolerance = 1e-6;
    options.checkEvery = 10;
    options.maxIterations = 20000;
    HostPasses passes(f);
    passes.resolution = 1e-3;
    SolveResult result;
    runDeviceLoop(f.problem, options, {}, passes, setupFor(), 0, result);
    QVERIFY(!result.converged);
    QVERIFY2(result.message.find("precision floor") != std::string::npos, result.message.c_str());
}

namespace {

// A solve of `passes` to tolerance 1e-9, checked every 10 iterations, up to
// maxIterations; the iterations the progress reports carried in `reported`.
SolveResult runDecided(DecidingPasses& passes, int maxIterations, std::vector<int>& reported)
{
    const Fixture f;
    SolveOptions options;
    options.tolerance = 1e-9;
    options.checkEvery = 10;
    options.maxIterations = maxIterations;
    SolveControl control;
    control.onProgress = [&](const SolveProgress& p) { reported.push_back(p.iteration); };
    SolveResult result;
    runDeviceLoop(f.problem, options, control, passes, setupFor(), 0, result);
    return result;
}

}  // namespace

void TestDeviceLoop::deviceDecidedConvergence()
{
    DecidingPasses passes;
    std::vector<int> reported;
    const SolveResult result = runDecided(passes, 1000, reported);
    QVERIFY(result.converged);
    QCOMPARE(result.iterations, 37);
    QCOMPARE(result.passes, std::uint64_t(55));  // the device's count, not iterations x sweeps
    QCOMPARE(passes.launches, (std::vector<int>{10, 10, 10, 10}));
    QCOMPARE(reported, (std::vector<int>{10, 20, 30, 37}));
    UOT_QCOMPARE_CLOSE(result.error, 1.0 / 38, 1e-15);
}

// Passes whose launch ends at the device's stop: chunks of 512 iterations whatever
// checkEvery is (a short solve is one launch and one check), cut at the cap; the
// same iterations and figures as checked every checkEvery.
void TestDeviceLoop::launchesThatEndAtTheStopRunLongChunks()
{
    DecidingPasses passes;
    passes.endsAtStop = true;
    std::vector<int> reported;
    const SolveResult result = runDecided(passes, 1000, reported);
    QVERIFY(result.converged);
    QCOMPARE(result.iterations, 37);
    QCOMPARE(result.passes, std::uint64_t(55));
    QCOMPARE(passes.launches, (std::vector<int>{512}));
    QCOMPARE(reported, (std::vector<int>{37}));

    DecidingPasses capped;
    capped.endsAtStop = true;
    capped.stopAt = 100000;
    std::vector<int> cappedReports;
    const SolveResult atCap = runDecided(capped, 700, cappedReports);
    QVERIFY(!atCap.converged);
    QCOMPARE(atCap.iterations, 700);
    QCOMPARE(capped.launches, (std::vector<int>{512, 188}));
    QCOMPARE(cappedReports, (std::vector<int>{512, 700}));
}

void TestDeviceLoop::deviceDecidedNotFinite()
{
    const Fixture f;
    SolveOptions options;
    options.tolerance = 1e-9;
    options.checkEvery = 10;
    options.maxIterations = 25;  // the last chunk is cut to the cap
    DecidingPasses passes;
    passes.stopAt = 100;
    SolveResult capped;
    runDeviceLoop(f.problem, options, {}, passes, setupFor(), 0, capped);
    QVERIFY(!capped.converged);
    QCOMPARE(capped.iterations, 25);
    QCOMPARE(passes.launches, (std::vector<int>{10, 10, 5}));

    DecidingPasses bad;
    bad.stopAt = 14;
    bad.stopWith = DeviceStop::NotFinite;
    options.maxIterations = 1000;
    int markedAt = 0;
    DeviceLoopSetup setup = setupFor();
    setup.markNotFinite = [&](SolveResult& r, int iteration) {
        r.status = NumericalStatus::NotFinite;
        markedAt = iteration;
    };
    SolveResult result;
    runDeviceLoop(f.problem, options, {}, bad, setup, 0, result);
    QVERIFY(!result.converged);
    QVERIFY(result.status == NumericalStatus::NotFinite);
    QCOMPARE(result.iterations, 13);  // the last accepted one
    QCOMPARE(markedAt, 14);
}

void TestDeviceLoop::groupCheckFollowsTheSlowestRunningProblem()
{
    std::vector<ProblemCheck> group(3);
    group[0] = {40, 80, 0.5, DeviceStop::IterationCap};
    group[1] = {12, 30, 0.25, DeviceStop::Running};
    group[2] = {17, 20, 0.125, DeviceStop::Running};
    DeviceCheck c = groupCheck(group);
    QVERIFY(c.stop == DeviceStop::Running);
    QCOMPARE(c.iterations, 12);        // the fewest accepted iterations of a running problem
    QCOMPARE(c.passes, 80LL);          // the most passes
    QCOMPARE(c.error, 0.25);           // the largest error of a running problem
    QVERIFY(std::isnan(c.marginalA) && std::isnan(c.marginalB));
    group[1].stop = DeviceStop::Converged;
    group[2].stop = DeviceStop::NotFinite;
    c = groupCheck(group);
    QVERIFY(c.stop == DeviceStop::IterationCap);  // one stopped at the cap
    QCOMPARE(c.iterations, 40);
    group[0].stop = DeviceStop::Converged;
    c = groupCheck(group);
    QVERIFY(c.stop == DeviceStop::Converged);  // a non-finite problem stops alone
}

void TestDeviceLoop::groupRunsUntilEveryProblemStops()
{
    // Problem 0 accepts every pass and runs into the cap (40) at pass 40; problem 1
    // has every other pass undone and converges after 25 accepted iterations (pass
    // 50): the group must run on past the first problem's cap until it has.
    const Fixture f;
    SolveOptions options;
    options.tolerance = 1e-9;
    options.checkEvery = 10;
    options.maxIterations = 40;
    GroupOfProblems group({1, 2}, {1000, 25}, options.maxIterations);
    SolveResult result;
    runDeviceLoop(f.problem, options, {}, group, setupFor(), 0, result);
    QVERIFY(group.problem(0).stop == DeviceStop::IterationCap);
    QCOMPARE(group.problem(0).iterations, 40);
    QVERIFY(group.problem(1).stop == DeviceStop::Converged);
    QCOMPARE(group.problem(1).iterations, 25);
    QCOMPARE(group.problem(1).passes, 50LL);
    QVERIFY(result.converged == false);  // the group: one problem stopped at the cap
    QCOMPARE(result.passes, std::uint64_t(50));
}

QTEST_GUILESS_MAIN(TestDeviceLoop)
#include "test_device_loop.moc"
