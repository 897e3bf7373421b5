// The device's accelerated step (gpu/relaxed_kernels.h, launchRelaxedStep) on
// its own, against the float64 CPU step (core/transport/relaxed_step.h,
// RelaxedStep::afterPass) on the same pass output: the new iterate, the figures
// the device reduces (the TI shifts s and t, the dual objective, the normalised
// violations, the marginal errors and the stopping error) and the decisions
// (accept, the safeguard's rejection, the frozen iterate). Sizes that take one
// block and many (the partials reduced by the last block to finish), steps in a
// row (its counters start again), multiplicative and log-domain scalings, fp64
// and fp32; and the same step with its sweep inside gpu-fused's column half-step
// (launchColumnsAndRelaxedStep: the pass output's column sums in, G^pass finalized on
// the device). And gpu-fused's accelerated iteration in one cluster launch
// (gpu/cluster_iterations.h), and with the step inside the column kernel, against the
// same solve through the column finalize and the two step kernels: iterations,
// passes, rejected steps and the plan; and the cluster path on palette problems (512
// random colours a side, the cost built on the device) against the converged plan of
// the float64 CPU reference and against the CUDA-graph path's iteration counts.
// Qt Test; skipped where no GPU is usable.

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <random>
#include <vector>

#include <cuda_runtime.h>

#include "core/registry/solver_registry.h"
#include "core/transport/relaxed_step.h"
#include "core/transport/translation_invariant.h"
#include "gpu/cluster_iterations.h"
#include "gpu/gpu_backend.h"
#include "gpu/relaxed_kernels.h"
#include "tests/gpu/gpu_test_support.h"
#include "tests/gpu/plan_distance.h"
#include "tests/support/qt_checks.h"

using namespace uot;
using namespace uot::gpu::detail;

namespace {

template <typename T>
struct Device {
    T* p = nullptr;
    explicit Device(std::size_t n) { QVERIFY(cudaMalloc(&p, std::max<std::size_t>(n, 1) * sizeof(T)) == cudaSuccess); }
    ~Device() { cudaFree(p); }
    Device(const Device&) = delete;
    Device& operator=(const Device&) = delete;
    void put(const std::vector<T>& x) { QVERIFY(cudaMemcpy(p, x.data(), x.size() * sizeof(T), cudaMemcpyHostToDevice) == cudaSuccess); }
    std::vector<T> get(std::size_t n) const
    {
        std::vector<T> x(n);
        const cudaError_t status = cudaMemcpy(x.data(), p, n * sizeof(T), cudaMemcpyDeviceToHost);
        if (status != cudaSuccess) x.assign(n, T(NAN));
        return x;
    }
};

double relativeGap(double got, double want) { return std::abs(got - want) / std::max(1e-300, std::abs(want)); }

// One problem (weights only: the step never reads the cost) and the log-potentials
// of a saved iterate and of a pass's output (F~ = (1 - w) F_old + w F^, G^pass).
struct Case {
    std::size_t rows, cols;
    std::vector<double> a, b, logA, logB, cost;
    UotProblem problem;
    std::vector<double> fOld, gOld, fTilde, gPass;

    Case(std::size_t m, std::size_t n, double omega, unsigned seed) : rows(m), cols(n)
    {
        std::mt19937_64 rng(seed);
        std::uniform_real_distribution<double> unit(0.0, 1.0);
        std::normal_distribution<double> noise(0.0, 0.3);
        for (std::size_t i = 0; i < m; ++i) a.push_back((0.5 + unit(rng)) / static_cast<double>(m));
        for (std::size_t j = 0; j < n; ++j) b.push_back((0.5 + unit(rng)) * 1.3 / static_cast<double>(n));
        for (double x : a) logA.push_back(std::log(x));
        for (double x : b) logB.push_back(std::log(x));
        cost.assign(m * n, 0.0);
        DenseCost dense;
        dense.f64 = cost.data();
        dense.rows = m;
        dense.cols = n;
        problem.cost = dense;
        problem.a = a;
        problem.b = b;
        problem.eps = 0.05;
        problem.tauA = 1.0;
        problem.tauB = 2.0;
        for (std::size_t i = 0; i < m; ++i) {
            fOld.push_back(unit(rng) - 0.5);
            fTilde.push_back((1.0 - omega) * fOld[i] + omega * (fOld[i] + noise(rng)));
        }
        for (std::size_t j = 0; j < n; ++j) {
            gOld.push_back(unit(rng) - 0.5);
            gPass.push_back(gOld[j] + noise(rng));
        }
    }
};

// The scalings of log-potentials as the step stores them (rounded to V).
template <typename V>
std::vector<V> scalings(const std::vector<double>& logs, bool logDomain)
{
    std::vector<V> x;
    for (double l : logs) x.push_back(static_cast<V>(logDomain ? l : std::exp(l)));
    return x;
}
template <typename V>
std::vector<double> widened(const std::vector<V>& x)
{
    return std::vector<double>(x.begin(), x.end());
}
double logOf(double x, bool logDomain) { return logDomain ? x : std::log(x); }

// The device's step from (uSaved, vSaved) with the pass output (u, v), state as given.
template <typename V>
struct DeviceStep {
    const Case& c;
    bool logDomain;
    RelaxedParams params;
    Device<V> u, v, uSaved, vSaved;
    Device<double> a, b, logA, logB, work;
    Device<RelaxedState> state;
    Device<V> colSums;  // the pass's column sums (one private partial row), for inColumns

    DeviceStep(const Case& cs, bool logDom, bool translate)
        : c(cs), logDomain(logDom), u(cs.rows), v(cs.cols), uSaved(cs.rows), vSaved(cs.cols), a(cs.rows),
          b(cs.cols), logA(cs.rows), logB(cs.cols), work(relaxedWorkDoubles(cs.cols)), state(1), colSums(cs.cols)
    {
        const TranslationCoefficients tc = translationCoefficients(cs.problem);
        params.ra = tc.ra;
        params.rb = tc.rb;
        params.cs = tc.cs;
        params.ct = tc.ct;
        params.fb = cs.problem.exponentB();
        params.translate = translate;
        params.logDomain = logDom;
        params.safeguard = true;
        params.eps = cs.problem.eps;
        params.tauA = cs.problem.tauA;
        params.tauB = cs.problem.tauB;
        params.slack = objectiveSlack(std::is_same_v<V, float>);
        params.tolerance = 1e-300;  // never met: the step runs on
        params.maxIterations = 1000;
        params.sweeps = 1;
        a.put(cs.a);
        b.put(cs.b);
        logA.put(cs.logA);
        logB.put(cs.logB);
    }
    // sums: empty for launchRelaxedStep (the pass output vP in v); else the column
    // sums of the pass, finalized into v by launchColumnsAndRelaxedStep (vP unused).
    void run(const std::vector<V>& uS, const std::vector<V>& vS, const std::vector<V>& uP, const std::vector<V>& vP,
             RelaxedState& st, const std::vector<V>& sums = {})
    {
        uSaved.put(uS);
        vSaved.put(vS);
        u.put(uP);
        v.put(vP);
        QVERIFY(cudaMemcpy(state.p, &st, sizeof(st), cudaMemcpyHostToDevice) == cudaSuccess);
        if (sums.empty()) {
            launchRelaxedStep<V>(u.p, v.p, uSaved.p, vSaved.p, c.rows, c.cols, a.p, b.p, logA.p, logB.p, params,
                                 state.p, work.p, nullptr);
        } else {
            colSums.put(sums);
            launchColumnsAndRelaxedStep<V>(colSums.p, -1, c.cols, params.fb, nullptr, u.p, v.p, uSaved.p, vSaved.p,
                                           c.rows, c.cols, a.p, b.p, logA.p, logB.p, params, state.p, work.p, false,
                                           nullptr);
        }
        QVERIFY(cudaDeviceSynchronize() == cudaSuccess);
        QVERIFY(cudaMemcpy(&st, state.p, sizeof(st), cudaMemcpyDeviceToHost) == cudaSuccess);
    }
};

RelaxedState startingState(double omega)
{
    RelaxedState st;
    st.rule.start(Acceleration::Relax, omega);
    st.omega = st.rule.omega;
    return st;
}

}  // namespace

class TestGpuRelaxedStep : public QObject {
    Q_OBJECT
private slots:
    void initTestCase() { UOT_QSKIP_WITHOUT_GPU(); }
    void figuresLikeTheFloat64Step_data();
    void figuresLikeTheFloat64Step();
    void rejectedAndFrozenStepsPutTheIterateBack();
    void fusedPathsLikeTheStepKernels_data();
    void fusedPathsLikeTheStepKernels();
    void clusterPathOnPalettesReachesTheFloat64Plan_data();
    void clusterPathOnPalettesReachesTheFloat64Plan();
};

void TestGpuRelaxedStep::figuresLikeTheFloat64Step_data()
{
    QTest::addColumn<int>("rows");
    QTest::addColumn<int>("cols");
    QTest::addColumn<bool>("logDomain");
    QTest::addColumn<bool>("fp32");
    QTest::addColumn<bool>("translate");
    QTest::addColumn<bool>("inColumns");
    for (const auto& [m, n] : {std::pair{7, 5}, std::pair{1000, 3000}, std::pair{5000, 300}})
        for (bool ld : {false, true})
            for (bool fp32 : {false, true})
                for (bool ti : {true, false})
                    for (bool inColumns : {false, true}) {
                        if (ld && fp32) continue;       // gpu-log keeps its potentials in double
                        if (ld && inColumns) continue;  // the column kernel is gpu-fused's (scalings)
                        QTest::addRow("%dx%d %s %s %s%s", m, n, ld ? "log" : "scaling", fp32 ? "fp32" : "fp64",
                                      ti ? "ti" : "plain", inColumns ? " in-columns" : "")
                            << m << n << ld << fp32 << ti << inColumns;
                    }
}

// Column sums of a pass whose column update gives about vP: b_j / vP_j^(1 / fb).
template <typename V>
static std::vector<V> columnSumsFor(const Case& c, const std::vector<V>& vP)
{
    const double fb = c.problem.exponentB();
    std::vector<V> sums;
    for (std::size_t j = 0; j < c.cols; ++j)
        sums.push_back(static_cast<V>(c.b[j] / std::pow(static_cast<double>(vP[j]), 1.0 / fb)));
    return sums;
}

// The column update of those sums, as the float64 CPU computes it: (b_j / sum_j)^fb.
template <typename V>
static std::vector<V> columnUpdate(const Case& c, const std::vector<V>& sums)
{
    const double fb = c.problem.exponentB();
    std::vector<V> v;
    for (std::size_t j = 0; j < c.cols; ++j) v.push_back(static_cast<V>(std::pow(c.b[j] / static_cast<double>(sums[j]), fb)));
    return v;
}

template <typename V>
static void compareSteps(int rows, int cols, bool logDomain, bool translate, bool inColumns)
{
    constexpr bool fp32 = std::is_same_v<V, float>;
    const double omega = 1.6;
    const Case c(static_cast<std::size_t>(rows), static_cast<std::size_t>(cols), omega, 11);
    DeviceStep<V> dev(c, logDomain, translate);
    RelaxedStep cpu(c.problem, logDomain, translate, fp32);
    RelaxedState st = startingState(omega);
    RelaxedStepFigures previous;
    std::vector<V> uS = scalings<V>(c.fOld, logDomain), vS = scalings<V>(c.gOld, logDomain);
    std::vector<V> uP = scalings<V>(c.fTilde, logDomain), vP = scalings<V>(c.gPass, logDomain);
    // Three steps in a row: the second and third from the accepted iterate, with
    // the pass output moved by a little noise (the decisions then follow the safeguard).
    std::mt19937_64 rng(5);
    std::normal_distribution<double> noise(0.0, 0.05);
    for (int step = 0; step < 3; ++step) {
        const double w = st.omega;  // the device's omega for this pass (smaller after a rejection)
        std::vector<V> sums;
        if (inColumns) {  // the step starts from the pass's column sums: G^pass from them, here and there
            sums = columnSumsFor(c, vP);
            vP = columnUpdate(c, sums);
        }
        std::vector<double> uCpu = widened(uP), vCpu = widened(vP);
        cpu.beforePass(widened(uS), widened(vS));
        RelaxedStepFigures fig;
        UOT_QVERIFY_MSG(cpu.afterPass(w, uCpu, vCpu, fig), "CPU step not finite");
        const bool accept = step == 0 || cpu.acceptable(previous, fig);
        const int iterationsBefore = st.iterations;
        dev.run(uS, vS, uP, vP, st, sums);
        const std::vector<double> uGot = widened(dev.u.get(c.rows)), vGot = widened(dev.v.get(c.cols));
        UOT_QVERIFY_MSG(st.passes == step + 1, "step " << step << ": passes " << st.passes);
        UOT_QVERIFY_MSG(st.stop == kRunning, "step " << step << ": stop " << st.stop);
        UOT_QVERIFY_MSG(st.iterations == iterationsBefore + (accept ? 1 : 0),
                        "step " << step << ": device " << st.iterations - iterationsBefore << ", CPU accepts " << accept);
        if (!accept) {
            UOT_QVERIFY_MSG(uGot == widened(uS) && vGot == widened(vS), "step " << step << ": rejected, not put back");
            continue;
        }
        // The TI shifts, read off the CPU's new iterate: F = F~ + w s, G = (1 - w) G_old + w (G^pass - f_b w s + t).
        const double fb = c.problem.exponentB();
        const double sRef = (logOf(uCpu[0], logDomain) - logOf(static_cast<double>(uP[0]), logDomain)) / w;
        const double tRef =
            (logOf(vCpu[0], logDomain) - (1.0 - w) * logOf(static_cast<double>(vS[0]), logDomain)) / w -
            logOf(static_cast<double>(vP[0]), logDomain) + fb * w * sRef;
        const double shiftTol = 1e-9;  // the inputs are the same numbers on both sides
        UOT_QVERIFY_MSG(std::abs(st.shiftS - sRef) <= shiftTol * std::max(1.0, std::abs(sRef)),
                        "step " << step << ": s " << st.shiftS << " vs " << sRef);
        UOT_QVERIFY_MSG(std::abs(st.shiftT - tRef) <= shiftTol * std::max(1.0, std::abs(tRef)),
                        "step " << step << ": t " << st.shiftT << " vs " << tRef);
        if (!translate) UOT_QVERIFY_MSG(st.shiftS == 0.0 && st.shiftT == 0.0, "shifts in plain mode");
        double worst = 0;
        for (std::size_t i = 0; i < c.rows; ++i)
            worst = std::max(worst, std::abs(logOf(uGot[i], logDomain) - logOf(uCpu[i], logDomain)));
        for (std::size_t j = 0; j < c.cols; ++j)
            worst = std::max(worst, std::abs(logOf(vGot[j], logDomain) - logOf(vCpu[j], logDomain)));
        UOT_QVERIFY_MSG(worst <= (fp32 ? 1e-6 : 1e-11), "step " << step << ": log-potentials off by " << worst);
        const std::pair<double, double> figures[] = {
            {st.lastObjective, fig.objective},   {st.violationA, fig.violationA},
            {st.violationB, fig.violationB},     {st.marginalA, fig.marginalErrorA},
            {st.marginalB, fig.marginalErrorB},  {st.error, fig.error()},
        };
        const char* names[] = {"objective", "violationA", "violationB", "marginalA", "marginalB", "error"};
        for (int k = 0; k < 6; ++k)
            UOT_QVERIFY_MSG(relativeGap(figures[k].first, figures[k].second) <= 1e-9,
                            "step " << step << ": " << names[k] << ' ' << figures[k].first << " vs "
                                    << figures[k].second);
        previous = fig;
        uS.assign(uGot.begin(), uGot.end());  // the accepted iterate as the device stored it
        vS.assign(vGot.begin(), vGot.end());
        std::vector<double> fNext, gNext;
        for (std::size_t i = 0; i < c.rows; ++i) fNext.push_back(logOf(uGot[i], logDomain) + noise(rng));
        for (std::size_t j = 0; j < c.cols; ++j) gNext.push_back(logOf(vGot[j], logDomain) + noise(rng));
        uP = scalings<V>(fNext, logDomain);
        vP = scalings<V>(gNext, logDomain);
    }
}

void TestGpuRelaxedStep::figuresLikeTheFloat64Step()
{
    QFETCH(int, rows);
    QFETCH(int, cols);
    QFETCH(bool, logDomain);
    QFETCH(bool, fp32);
    QFETCH(bool, translate);
    QFETCH(bool, inColumns);
    if (fp32) compareSteps<float>(rows, cols, logDomain, translate, inColumns);
    else compareSteps<double>(rows, cols, logDomain, translate, inColumns);
}

// A step whose objective falls below the last accepted one is undone (omega halves
// its distance to 1); a frozen state (the device stopped) undoes every pass and
// counts none. Through the two step kernels and through the column kernel.
void TestGpuRelaxedStep::rejectedAndFrozenStepsPutTheIterateBack()
{
    const double omega = 1.6;
    const Case c(2000, 1500, omega, 3);
    DeviceStep<double> dev(c, false, true);
    const std::vector<double> uS = scalings<double>(c.fOld, false), vS = scalings<double>(c.gOld, false);
    const std::vector<double> uP = scalings<double>(c.fTilde, false), vP = scalings<double>(c.gPass, false);
    for (bool inColumns : {false, true}) {
        const std::vector<double> sums = inColumns ? columnSumsFor(c, vP) : std::vector<double>{};
        RelaxedState st = startingState(omega);
        st.haveLast = 1;
        st.lastObjective = 1e30;  // no candidate reaches it
        st.lastScale = 1;
        dev.run(uS, vS, uP, vP, st, sums);
        UOT_QVERIFY_MSG(dev.u.get(c.rows) == uS && dev.v.get(c.cols) == vS, inColumns << ": rejected step not put back");
        UOT_QVERIFY_MSG(st.iterations == 0 && st.passes == 1 && st.stop == kRunning, st.iterations << ' ' << st.passes);
        UOT_QVERIFY_MSG(std::abs(st.omega - (1.0 + 0.5 * (omega - 1.0))) < 1e-15, "omega " << st.omega);

        RelaxedState frozen = startingState(omega);
        frozen.stop = kConverged;
        dev.run(uS, vS, uP, vP, frozen, sums);
        UOT_QVERIFY_MSG(dev.u.get(c.rows) == uS && dev.v.get(c.cols) == vS, inColumns << ": frozen step not put back");
        UOT_QVERIFY_MSG(frozen.iterations == 0 && frozen.passes == 0 && frozen.stop == kConverged, frozen.passes);

        // And the next running step is decided again (the counters were left at zero).
        RelaxedState again = startingState(omega);
        dev.run(uS, vS, uP, vP, again, sums);
        UOT_QVERIFY_MSG(again.iterations == 1 && again.passes == 1, again.iterations << ' ' << again.passes);
        UOT_QVERIFY_MSG(again.tickets[0] == 0 && again.tickets[1] == 0, again.tickets[0] << ' ' << again.tickets[1]);
    }
}

// cluster: one cluster launch per chunk (Tuning::clusterIterations); columns: the
// step inside the column kernel (Tuning::stepInColumns, the default); both against
// the column finalize and the two step kernels.
void TestGpuRelaxedStep::fusedPathsLikeTheStepKernels_data()
{
    QTest::addColumn<int>("rows");
    QTest::addColumn<int>("cols");
    QTest::addColumn<bool>("fp32");
    QTest::addColumn<bool>("translate");
    QTest::addColumn<bool>("cluster");
    for (bool cluster : {true, false})
        for (const auto& [m, n] : {std::pair{300, 211}, std::pair{512, 512}, std::pair{37, 700}, std::pair{2500, 1800}})
            for (bool fp32 : {false, true})
                for (bool ti : {true, false}) {
                    if (cluster && m * n > 512 * 512) continue;  // does not fit one cluster
                    QTest::addRow("%s %dx%d %s %s", cluster ? "cluster" : "columns", m, n, fp32 ? "fp32" : "fp64",
                                  ti ? "ti+auto" : "plain+relax")
                        << m << n << fp32 << ti << cluster;
                }
}

void TestGpuRelaxedStep::fusedPathsLikeTheStepKernels()
{
    QFETCH(int, rows);
    QFETCH(int, cols);
    QFETCH(bool, fp32);
    QFETCH(bool, translate);
    QFETCH(bool, cluster);
    const std::size_t m = static_cast<std::size_t>(rows), n = static_cast<std::size_t>(cols);
    // With Tuning::clusterIterations the solver takes the cluster path when the plan says the matrix fits.
    const ClusterPlan plan = fp32 ? planClusterIterations<float>(m, n, 0) : planClusterIterations<double>(m, n, 0);
    UOT_QVERIFY_MSG(!cluster || plan.usable(), rows << "x" << cols << " does not fit one cluster");
    const uot::test::TestProblem tp(m, n, 0.05, 1.0, 2.0, 9);
    SolveOptions o = uot::test::options(fp32 ? Precision::Fp32 : Precision::Fp64, 3000, fp32 ? 1e-5 : 1e-9, 10);
    o.mode = translate ? IterationMode::TranslationInvariant : IterationMode::Plain;
    o.acceleration = translate ? Acceleration::Auto : Acceleration::Relax;
    o.omega = 1.5;
    gpu::Tuning path = gpu::defaultTuning(), kernels = path;
    path.clusterIterations = cluster;
    path.stepInColumns = !cluster;
    kernels.clusterIterations = false;
    kernels.stepInColumns = false;
    const SolveResult got = gpu::createSolver("gpu-fused", path)->solve(tp.problem, o);
    const SolveResult want = gpu::createSolver("gpu-fused", kernels)->solve(tp.problem, o);
    UOT_QVERIFY_MSG(want.converged && got.converged, "converged: kernels " << want.converged << ", path "
                                                                           << got.converged << ' ' << got.message);
    UOT_QVERIFY_MSG(uot::test::allFinite(got), "not finite");
    const double dist = uot::test::planRelativeL1(tp.problem, got, want);
    // fp64: the same steps (sums in another order: the stop may come one step apart); fp32: the pass's float sums differ, so
    // the steps may end an iteration or two apart, at the same plan to the tolerance.
    if (!fp32) {
        UOT_QVERIFY_MSG(std::abs(got.iterations - want.iterations) <= 1 &&
                            std::abs(static_cast<long long>(got.passes) - static_cast<long long>(want.passes)) <= 1 &&
                            got.rejectedSteps == want.rejectedSteps,
                        (cluster ? "cluster " : "columns ") << got.iterations << '/' << got.passes << '/' << got.rejectedSteps
                                      << ", kernels " << want.iterations << '/' << want.passes << '/'
                                      << want.rejectedSteps);
        UOT_QVERIFY_MSG(dist <= 1e-8, "rel L1 " << dist);
    } else {
        UOT_QVERIFY_MSG(std::abs(got.iterations - want.iterations) <= 2,
                        "iterations " << got.iterations << " vs " << want.iterations);
        UOT_QVERIFY_MSG(dist <= 1e-4, "rel L1 " << dist);
    }
}

// 512 random points in the unit cube a side, costs |x - y|^2 / 3 in [0, 1]: the
// studio's palette problem (balanced; eps 0.01, where the single-thread float64 oracle
// converges in seconds) and unbalanced ones (tau 1, eps down to 0.003), TI +
// automatic omega, solved by gpu-fused's default path (one cluster launch a chunk
// where the matrix fits) and by the CUDA graph of one check interval
// (Tuning::clusterIterations = false).
void TestGpuRelaxedStep::clusterPathOnPalettesReachesTheFloat64Plan_data()
{
    QTest::addColumn<double>("eps");
    QTest::addColumn<double>("tau");
    QTest::addColumn<bool>("fp32");
    QTest::newRow("balanced eps 0.01 fp64") << 0.01 << kInfinity << false;
    QTest::newRow("tau 1 eps 0.01 fp64") << 0.01 << 1.0 << false;
    QTest::newRow("tau 1 eps 0.003 fp64") << 0.003 << 1.0 << false;
    QTest::newRow("tau 1 eps 0.01 fp32") << 0.01 << 1.0 << true;
    QTest::newRow("balanced eps 0.02 fp32") << 0.02 << kInfinity << true;
}

void TestGpuRelaxedStep::clusterPathOnPalettesReachesTheFloat64Plan()
{
    QFETCH(double, eps);
    QFETCH(double, tau);
    QFETCH(bool, fp32);
    constexpr std::size_t n = 512, d = 3;
    std::mt19937 rng(23);
    std::uniform_real_distribution<double> unit(0.0, 1.0);
    std::vector<double> x(n * d), y(n * d), a(n, 1.0 / n), b(n, 1.0 / n);
    for (double& v : x) v = unit(rng);
    for (double& v : y) v = unit(rng);
    UotProblem problem;
    problem.cost = PointCloudCost{x.data(), y.data(), n, n, d, 1.0 / 3.0};
    problem.a = a;
    problem.b = b;
    problem.eps = eps;
    problem.tauA = problem.tauB = tau;
    const ClusterPlan plan = fp32 ? planClusterIterations<float>(n, n, 0) : planClusterIterations<double>(n, n, 0);
    UOT_QVERIFY_MSG(plan.usable(), "512 x 512 does not fit one cluster");

    SolveOptions exact = uot::test::options(Precision::Fp64, 400000, 1e-13, 10);
    exact.mode = IterationMode::TranslationInvariant;
    exact.allowStabilizedFallback = false;
    const SolveResult oracle = createSolver("reference")->solve(problem, exact);
    QVERIFY(oracle.converged);

    SolveOptions o = uot::test::options(fp32 ? Precision::Fp32 : Precision::Fp64, 5000, fp32 ? 1e-5 : 1e-10, 10);
    o.mode = IterationMode::TranslationInvariant;
    o.acceleration = Acceleration::Auto;
    o.allowStabilizedFallback = false;
    gpu::Tuning graph = gpu::defaultTuning();
    graph.clusterIterations = false;
    const SolveResult got = gpu::createSolver("gpu-fused", gpu::defaultTuning())->solve(problem, o);
    const SolveResult want = gpu::createSolver("gpu-fused", graph)->solve(problem, o);
    const double dist = uot::test::planRelativeL1(problem, got, oracle);
    const double graphDist = uot::test::planRelativeL1(problem, want, oracle);
    std::printf("  cluster %d its %llu passes %d rejected, rel L1 %.2e; graph %d its %llu passes %d rejected, "
                "rel L1 %.2e\n",
                got.iterations, static_cast<unsigned long long>(got.passes), got.rejectedSteps, dist, want.iterations,
                static_cast<unsigned long long>(want.passes), want.rejectedSteps, graphDist);
    UOT_QVERIFY_MSG(got.converged && uot::test::allFinite(got), got.message);
    UOT_QVERIFY_MSG(dist <= (fp32 ? 1e-4 : 1e-6), "rel L1 " << dist << " from the float64 plan");
    // The same decisions on the same figures; the sums come in another order, so the stop
    // may come a step apart (fp32: the float column sums differ, two).
    const int slack = fp32 ? 2 : 1;
    UOT_QVERIFY_MSG(std::abs(got.iterations - want.iterations) <= slack &&
                        std::abs(static_cast<long long>(got.passes) - static_cast<long long>(want.passes)) <= slack,
                    "cluster " << got.iterations << '/' << got.passes << ", graph " << want.iterations << '/'
                               << want.passes);
}

QTEST_GUILESS_MAIN(TestGpuRelaxedStep)
#include "test_gpu_relaxed_step.moc"
