// The final plan evaluation on the device (gpu/gpu_plan_evaluation.h) against
// the float64 host pass (evaluatePlan), and the GPU solvers' results using it.
// Qt Test; every test is skipped without a usable GPU.
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "core/registry/solver_registry.h"
#include "core/transport/plan_evaluation.h"
#include "core/transport/uot_error.h"
#include "gpu/gpu_backend.h"
#include "gpu/gpu_plan_evaluation.h"
#include "tests/gpu/gpu_test_support.h"
#include "tests/support/qt_checks.h"

using namespace uot;
using namespace uot::test;

namespace {

struct CloudProblem {
    std::vector<double> x, y, a, b, logU, logV;
    UotProblem problem;
};

// Random 3-D point clouds in [0, 1]^3, random weights and log scalings near
// the solution's scale (so that P has entries across many magnitudes).
CloudProblem makeCloud(std::size_t rows, std::size_t cols, ReferenceMeasure reference, double eps, unsigned seed)
{
    CloudProblem c;
    std::mt19937 rng(seed);
    std::uniform_real_distribution<double> unit(0, 1), noise(-2, 2);
    c.x.resize(rows * 3), c.y.resize(cols * 3), c.a.resize(rows), c.b.resize(cols);
    for (double& v : c.x) v = unit(rng);
    for (double& v : c.y) v = unit(rng);
    for (double& v : c.a) v = (0.2 + unit(rng)) / rows;
    for (double& v : c.b) v = 1.3 * (0.2 + unit(rng)) / cols;
    c.logU.resize(rows), c.logV.resize(cols);
    for (double& v : c.logU) v = noise(rng) - 0.5 * std::log(static_cast<double>(cols));
    for (double& v : c.logV) v = noise(rng) - 0.5 * std::log(static_cast<double>(rows));
    PointCloudCost cost;
    cost.x = c.x.data(), cost.y = c.y.data(), cost.rows = rows, cost.cols = cols, cost.dim = 3, cost.scale = 0.7;
    c.problem.cost = cost;
    c.problem.a = c.a, c.problem.b = c.b;
    c.problem.eps = eps;
    c.problem.tauA = kInfinity;
    c.problem.tauB = 0.8;
    c.problem.reference = reference;
    return c;
}

double relative(double got, double expected) { return std::abs(got - expected) / std::max(1e-300, std::abs(expected)); }

}  // namespace

class TestGpuPlanEvaluation : public QObject {
    Q_OBJECT
private slots:
    void initTestCase() { UOT_QSKIP_WITHOUT_GPU(); }
    void device_evaluation_matches_the_host_pass_data();
    void device_evaluation_matches_the_host_pass();
    void device_evaluation_refuses_a_dense_cost();
    void gpu_solve_of_a_point_cloud_reports_the_host_evaluation_data();
    void gpu_solve_of_a_point_cloud_reports_the_host_evaluation();
};

void TestGpuPlanEvaluation::device_evaluation_matches_the_host_pass_data()
{
    QTest::addColumn<int>("rows");
    QTest::addColumn<int>("cols");
    QTest::addColumn<bool>("product");  // reference measure a b^T (else ones)
    QTest::addColumn<double>("eps");
    QTest::addColumn<unsigned>("seed");
    QTest::newRow("1x1 ones") << 1 << 1 << false << 0.05 << 1u;
    QTest::newRow("1x1000 product") << 1 << 1000 << true << 0.05 << 2u;
    QTest::newRow("1000x1 ones") << 1000 << 1 << false << 0.01 << 3u;
    QTest::newRow("333x777 ones") << 333 << 777 << false << 0.02 << 4u;
    QTest::newRow("333x777 product") << 333 << 777 << true << 0.2 << 5u;
    QTest::newRow("4097x131 ones") << 4097 << 131 << false << 0.005 << 6u;
}

void TestGpuPlanEvaluation::device_evaluation_matches_the_host_pass()
{
    QFETCH(int, rows);
    QFETCH(int, cols);
    QFETCH(bool, product);
    QFETCH(double, eps);
    QFETCH(unsigned, seed);
    {
        const struct {
            std::size_t rows, cols;
        } k{std::size_t(rows), std::size_t(cols)};
        CloudProblem c = makeCloud(k.rows, k.cols, product ? ReferenceMeasure::Product : ReferenceMeasure::Ones, eps, seed);
        const PlanEvaluation host = evaluatePlan(c.problem, c.logU, c.logV, 2);
        const PlanEvaluation dev = gpu::detail::evaluatePlanOnDevice(c.problem, c.logU, c.logV, 0);
        UOT_QVERIFY_MSG(relative(dev.mass, host.mass) < 1e-12, k.rows << "x" << k.cols << ": mass " << dev.mass << " vs " << host.mass);
        UOT_QVERIFY_MSG(relative(dev.marginalErrorA, host.marginalErrorA) < 1e-10,
                      k.rows << "x" << k.cols << ": |P1 - a| " << dev.marginalErrorA << " vs " << host.marginalErrorA);
        UOT_QVERIFY_MSG(relative(dev.marginalErrorB, host.marginalErrorB) < 1e-10,
                      k.rows << "x" << k.cols << ": |P'1 - b| " << dev.marginalErrorB << " vs " << host.marginalErrorB);
        // tau_a = inf with a violated marginal: both say +inf.
        QVERIFY(std::isinf(host.objective) && std::isinf(dev.objective));
        c.problem.tauA = 0.5;
        const PlanEvaluation hostFinite = evaluatePlan(c.problem, c.logU, c.logV, 2);
        const PlanEvaluation devFinite = gpu::detail::evaluatePlanOnDevice(c.problem, c.logU, c.logV, 0);
        UOT_QVERIFY_MSG(std::abs(devFinite.objective - hostFinite.objective) <= 1e-10 * (1 + std::abs(hostFinite.objective)),
                      k.rows << "x" << k.cols << ": objective " << devFinite.objective << " vs " << hostFinite.objective);
    }
}

void TestGpuPlanEvaluation::device_evaluation_refuses_a_dense_cost()
{
    // A dense cost is not kept on the device: refused with a message.
    std::vector<float> dense(4, 1.0f);
    std::vector<double> w(2, 0.5);
    UotProblem p;
    p.cost = DenseCost{dense.data(), nullptr, 2, 2};
    p.a = w, p.b = w;
    UOT_QVERIFY_THROWS_WITH(gpu::detail::evaluatePlanOnDevice(p, w, w, 0), "not a point cloud");
}

void TestGpuPlanEvaluation::gpu_solve_of_a_point_cloud_reports_the_host_evaluation_data()
{
    addVariantRows({"gpu-fused", "gpu-pot-style", "gpu-mapuot", "gpu-log"});
}

void TestGpuPlanEvaluation::gpu_solve_of_a_point_cloud_reports_the_host_evaluation()
{
    QFETCH(QString, variant);
    // A GPU solve of a point-cloud problem evaluates its plan on the device: the
    // reported mass, marginal errors and objective must be the host pass's over
    // the same scalings.
    CloudProblem c = makeCloud(1500, 1200, ReferenceMeasure::Ones, 0.02, 77);
    c.problem.tauA = 1.0;
    {
        const std::string nameText = variant.toStdString();
        const char* name = nameText.c_str();
        auto solver = createSolver(name);
        SolveOptions options;
        options.maxIterations = 200;
        options.tolerance = 1e-6;
        const SolveResult r = solver->solve(c.problem, options, {});
        const PlanEvaluation host = evaluatePlan(c.problem, r.logU, r.logV, 2);
        UOT_QVERIFY_MSG(relative(r.mass, host.mass) < 1e-12, name << ": mass " << r.mass << " vs " << host.mass);
        UOT_QVERIFY_MSG(relative(r.marginalErrorA, host.marginalErrorA) < 1e-9, name << ": " << r.marginalErrorA << " vs " << host.marginalErrorA);
        UOT_QVERIFY_MSG(relative(r.marginalErrorB, host.marginalErrorB) < 1e-9, name << ": " << r.marginalErrorB << " vs " << host.marginalErrorB);
        UOT_QVERIFY_MSG(relative(r.objective, host.objective) < 1e-10, name << ": objective " << r.objective << " vs " << host.objective);
        QVERIFY(r.timings.evaluateSeconds > 0);
    }
}

QTEST_GUILESS_MAIN(TestGpuPlanEvaluation)
#include "test_gpu_plan_evaluation.moc"
