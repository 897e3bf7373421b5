// Every GPU variant against the float64 CPU reference solver, on shapes that
// are multiples of no tile, balanced and unbalanced, small eps (automatic
// switch to gpu-log), warm start, cancellation, device memory accounting and
// leaks. Qt Test; every test is skipped where no GPU is usable, e.g. in CI.

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

#include "core/registry/solver_registry.h"
#include "core/transport/kernel_matrix.h"
#include "core/transport/uot_error.h"
#include "gpu/gpu_backend.h"
#include "tests/gpu/gpu_test_support.h"
#include "tests/support/qt_checks.h"

using namespace uot;
using namespace uot::test;

namespace {

const std::vector<std::string> kVariants = {"gpu-pot-style", "gpu-mapuot", "gpu-fused", "gpu-log"};

void expectMatchesReference(const std::string& variant, const TestProblem& tp, const SolveOptions& o,
                            double tolerance, const char* label, const SolveResult& ref)
{
    const SolveResult got = createSolver(variant)->solve(tp.problem, o);
    const double dist = planRelativeL1(tp.problem, got, ref);
    std::printf("  %-14s %-28s %5zux%-5zu iters %4d (ref %4d) rel L1 %.2e\n", variant.c_str(), label,
                tp.problem.rows(), tp.problem.cols(), got.iterations, ref.iterations, dist);
    UOT_QVERIFY_MSG(allFinite(got), variant << " " << label);
    UOT_QVERIFY_MSG(got.iterations == ref.iterations, variant << " " << label << ": " << got.iterations << " vs "
                                                            << ref.iterations);
    UOT_QVERIFY_MSG(dist <= tolerance, variant << " " << label << ": rel L1 " << dist);
    UOT_QVERIFY_MSG(got.status == NumericalStatus::Ok, variant << " " << label << ": " << got.message);
}

}  // namespace

class TestGpuSolvers : public QObject {
    Q_OBJECT
private slots:
    void initTestCase() { UOT_QSKIP_WITHOUT_GPU(); }
    void devicesAreListedAndMeasured();
    void everyVariantMatchesReferenceOnOddShapes_data();
    void everyVariantMatchesReferenceOnOddShapes();
    void fusedClusterAndFinalizeOptionsMatchReference_data();
    void fusedClusterAndFinalizeOptionsMatchReference();
    void fusedClustersOnALargeShapeAndInFp64();
    void progressReportsMarginalErrorsLikeTheReference();
    void fusedWideRowsTakeTheTwoPassPathAndSaySo();
    void float64VariantsMatchReferenceTightly_data();
    void float64VariantsMatchReferenceTightly();
    void largeShapeMatchesReference();
    void pointCloudCostMatchesReference_data();
    void pointCloudCostMatchesReference();
    void smallEpsSwitchesToLogDomain();
    void warmStartContinuesTheIteration_data();
    void warmStartContinuesTheIteration();
    void cancellationStopsAtTheNextCheck_data();
    void cancellationStopsAtTheNextCheck();
    void peakDeviceMemoryIsOneMatrixPlusVectors_data();
    void peakDeviceMemoryIsOneMatrixPlusVectors();
    void repeatedSolvesLeaveDeviceMemoryUnchanged();
    void badDeviceOrdinalIsAClearError();
    void outOfMemoryIsAClearErrorAndTheSolverRecovers();
};

void TestGpuSolvers::devicesAreListedAndMeasured()
{
    const auto devices = gpu::listDevices();
    QVERIFY(!devices.empty());
    for (const auto& d : devices) {
        std::printf("  device %d: %s, %zu MiB, %d SMs, cc %d.%d\n", d.ordinal, d.name.c_str(),
                    d.totalMemoryBytes >> 20, d.multiprocessors, d.computeCapabilityMajor, d.computeCapabilityMinor);
        QVERIFY(d.totalMemoryBytes > 0 && d.multiprocessors > 0 && !d.name.empty());
    }
    const gpu::BandwidthMeasurement bw = gpu::measureBandwidth(0, std::size_t(256) << 20);
    std::printf("  read %.0f GB/s, copy %.0f GB/s\n", bw.readGBps, bw.copyGBps);
    QVERIFY(std::isfinite(bw.readGBps) && bw.readGBps > 0);
    QVERIFY(std::isfinite(bw.copyGBps) && bw.copyGBps > 0);
    UOT_QVERIFY_THROWS_WITH(gpu::createSolver("gpu-nonsense"), "unknown GPU solver");
}

void TestGpuSolvers::everyVariantMatchesReferenceOnOddShapes_data()
{
    addShapeRows({{1, 1}, {1, 1000}, {1000, 1}, {333, 777}});
}

void TestGpuSolvers::everyVariantMatchesReferenceOnOddShapes()
{
    QFETCH(int, rows);
    QFETCH(int, cols);
    {
        const std::size_t m = std::size_t(rows), n = std::size_t(cols);
        const TestProblem unbalanced(m, n, 0.05, 1.0, 1.0, 3);
        const TestProblem mixed(m, n, 0.05, 0.5, 2.0, 4);
        const TestProblem balanced(m, n, 0.1, kInfinity, kInfinity, 5);
        const TestProblem product(m, n, 0.05, 1.0, 1.0, 6, ReferenceMeasure::Product);
        const SolveOptions o = options(Precision::Fp32, 2000, 1e-5);
        auto reference = [&](const TestProblem& tp) { return createSolver("reference")->solve(tp.problem, o); };
        const SolveResult rU = reference(unbalanced), rM = reference(mixed), rB = reference(balanced),
                          rP = reference(product);
        for (const std::string& v : kVariants) {
            expectMatchesReference(v, unbalanced, o, 1e-4, "unbalanced tau=1", rU);
            expectMatchesReference(v, mixed, o, 1e-4, "unbalanced tauA=0.5 tauB=2", rM);
            expectMatchesReference(v, balanced, o, 1e-4, "balanced", rB);
            expectMatchesReference(v, product, o, 1e-4, "reference measure a b^T", rP);
        }
    }
}

void TestGpuSolvers::fusedClusterAndFinalizeOptionsMatchReference_data()
{
    addShapeRows({{1, 1}, {1, 1000}, {1000, 1}, {333, 777}, {2500, 257}});
}

void TestGpuSolvers::fusedClusterAndFinalizeOptionsMatchReference()
{
    QFETCH(int, rows);
    QFETCH(int, cols);
    // Every launch shape of gpu-fused's column reduction: no clusters, clusters of
    // 2 and 4 blocks (partials summed through distributed shared memory), private
    // rows or shared rows with atomics, 8 or 32 finalize lanes, even or uneven row
    // groups per block; odd shapes.
    struct Option {
        int cluster, lanes, partials;
        bool even;
        const char* label;
    };
    const Option optionsList[] = {{1, 8, 0, true, "c1/f8"},          {1, 32, 0, false, "c1/f32/uneven"},
                                  {2, 0, 0, true, "c2"},             {2, 0, 0, false, "c2/uneven"},
                                  {4, 0, 0, true, "c4"},             {2, 0, 1, true, "c2/atomic"},
                                  {4, 16, 3, false, "c4/f16/3 rows"}};
    {
        const std::size_t s[2] = {std::size_t(rows), std::size_t(cols)};
        const TestProblem tp(s[0], s[1], 0.05, 0.5, 2.0, 21);
        const SolveOptions o = options(Precision::Fp32, 2000, 1e-5);
        const SolveResult ref = createSolver("reference")->solve(tp.problem, o);
        for (const Option& opt : optionsList) {
            gpu::Tuning t = gpu::defaultTuning();
            t.fusedCluster = opt.cluster;
            t.finalizeLanes = opt.lanes;
            t.fusedPartials = opt.partials;
            t.fusedEvenGroups = opt.even;
            const SolveResult got = gpu::createSolver("gpu-fused", t)->solve(tp.problem, o);
            const double dist = planRelativeL1(tp.problem, got, ref);
            std::printf("  gpu-fused[%-13s] %5zux%-5zu iters %4d (ref %4d) rel L1 %.2e\n", opt.label, s[0], s[1],
                        got.iterations, ref.iterations, dist);
            UOT_QVERIFY_MSG(got.iterations == ref.iterations && dist <= 1e-4 && allFinite(got), opt.label);
        }
    }
}

void TestGpuSolvers::fusedClustersOnALargeShapeAndInFp64()
{
    // Large and fp64, clusters of 2 and 4.
    const TestProblem big(4097, 4095, 0.05, 1.0, 1.0, 22);
    const SolveOptions o20 = options(Precision::Fp32, 20, 0.0, 5);
    const SolveResult refBig = createSolver("reference")->solve(big.problem, o20);
    const TestProblem f64(257, 131, 0.05, 1.0, 2.0, 23);
    const SolveOptions o64 = options(Precision::Fp64, 3000, 1e-9);
    const SolveResult ref64 = createSolver("reference")->solve(f64.problem, o64);
    for (int cluster : {2, 4}) {
        gpu::Tuning t = gpu::defaultTuning();
        t.fusedCluster = cluster;
        const SolveResult got = gpu::createSolver("gpu-fused", t)->solve(big.problem, o20);
        const double dist = planRelativeL1(big.problem, got, refBig);
        const SolveResult got64 = gpu::createSolver("gpu-fused", t)->solve(f64.problem, o64);
        const double dist64 = planRelativeL1(f64.problem, got64, ref64);
        std::printf("  gpu-fused[c%d] 4097x4095 rel L1 %.2e; fp64 257x131 rel L1 %.2e\n", cluster, dist, dist64);
        QVERIFY(dist <= 1e-4 && got.iterations == refBig.iterations);
        QVERIFY(dist64 <= 1e-9 && got64.iterations == ref64.iterations);
    }
}

void TestGpuSolvers::progressReportsMarginalErrorsLikeTheReference()
{
    // The marginal errors of every progress report: finite, and the reference's
    // |P 1 - a|_1 and |P^T 1 - b|_1 at the same iteration (float32 vs float64).
    struct Report {
        int iteration;
        double errA, errB;
    };
    auto record = [](UotSolver& solver, const UotProblem& p, const SolveOptions& o) {
        std::vector<Report> reports;
        SolveControl control;
        control.onProgress = [&](const SolveProgress& pr) {
            reports.push_back({pr.iteration, pr.marginalErrorA, pr.marginalErrorB});
        };
        solver.solve(p, o, control);
        return reports;
    };
    const TestProblem unbalanced(333, 777, 0.05, 1.0, 1.0, 24), mixed(500, 201, 0.05, 0.5, 2.0, 25);
    for (const TestProblem* tp : {&unbalanced, &mixed}) {
        const SolveOptions o = options(Precision::Fp32, 35, 0.0, 10);
        const std::vector<Report> ref = record(*createSolver("reference"), tp->problem, o);
        QVERIFY(ref.size() == 4);  // iterations 10, 20, 30, 35
        for (const std::string& v : kVariants) {
            const std::vector<Report> got = record(*createSolver(v), tp->problem, o);
            UOT_QVERIFY_MSG(got.size() == ref.size(), v << ": " << got.size() << " reports vs " << ref.size());
            for (std::size_t k = 0; k < std::min(got.size(), ref.size()); ++k) {
                const Report &g = got[k], &r = ref[k];
                std::printf("  %-14s %4zux%-4zu it %2d |P1-a| %.6e (ref %.6e) |PT1-b| %.6e (ref %.6e)\n", v.c_str(),
                            tp->problem.rows(), tp->problem.cols(), g.iteration, g.errA, r.errA, g.errB, r.errB);
                UOT_QVERIFY_MSG(g.iteration == r.iteration, v);
                UOT_QVERIFY_MSG(std::isfinite(g.errA) && std::isfinite(g.errB), v << " it " << g.iteration);
                UOT_QVERIFY_MSG(std::abs(g.errA - r.errA) <= 1e-3 * r.errA + 1e-6, v << " it " << g.iteration);
                UOT_QVERIFY_MSG(std::abs(g.errB - r.errB) <= 1e-3 * r.errB + 1e-6, v << " it " << g.iteration);
            }
        }
    }
}

void TestGpuSolvers::fusedWideRowsTakeTheTwoPassPathAndSaySo()
{
    // 20000 float32 columns do not fit the one-pass kernel's row (16384 at most):
    // gpu-fused runs cuBLAS K v then K^T u and reports two reads per iteration.
    const TestProblem tp(40, 20000, 0.05, 1.0, 1.0, 26);
    const SolveOptions o = options(Precision::Fp32, 20, 0.0, 5);
    const SolveResult ref = createSolver("reference")->solve(tp.problem, o);
    auto solver = createSolver("gpu-fused");
    const std::uint64_t matrix = std::uint64_t(40) * 20000 * 4;
    QVERIFY(solver->bytesPerIteration(40, 20000, Precision::Fp32) == 2 * matrix);
    QVERIFY(solver->bytesPerIteration(40, 16384, Precision::Fp32) == std::uint64_t(40) * 16384 * 4);
    const SolveResult got = solver->solve(tp.problem, o);
    const double dist = planRelativeL1(tp.problem, got, ref);
    std::printf("  gpu-fused 40x20000: bytes/iteration %llu (matrix %llu), rel L1 %.2e\n",
                static_cast<unsigned long long>(got.bytesPerIteration), static_cast<unsigned long long>(matrix), dist);
    QVERIFY(got.bytesPerIteration == 2 * matrix);
    QVERIFY(dist <= 1e-4 && got.iterations == ref.iterations);
    const SolveResult narrow = solver->solve(TestProblem(40, 1000, 0.05, 1.0, 1.0, 27).problem, o);
    QVERIFY(narrow.bytesPerIteration == std::uint64_t(40) * 1000 * 4);
}

void TestGpuSolvers::float64VariantsMatchReferenceTightly_data() { addVariantRows(kVariants); }

void TestGpuSolvers::float64VariantsMatchReferenceTightly()
{
    QFETCH(QString, variant);
    const TestProblem tp(257, 131, 0.05, 1.0, 2.0, 7);
    const SolveOptions o = options(Precision::Fp64, 3000, 1e-9);
    const SolveResult ref = createSolver("reference")->solve(tp.problem, o);
    expectMatchesReference(variant.toStdString(), tp, o, 1e-9, "fp64", ref);
}

void TestGpuSolvers::largeShapeMatchesReference()
{
    // The reference is single-threaded float64: a fixed, small iteration count.
    const TestProblem tp(4097, 4095, 0.05, 1.0, 1.0, 8);
    const SolveOptions o = options(Precision::Fp32, 20, 0.0, 5);
    const SolveResult ref = createSolver("reference")->solve(tp.problem, o);
    for (const std::string v : {"gpu-fused", "gpu-mapuot", "gpu-pot-style"})
        expectMatchesReference(v, tp, o, 1e-4, "20 iterations", ref);
}

void TestGpuSolvers::pointCloudCostMatchesReference_data() { addVariantRows(kVariants); }

void TestGpuSolvers::pointCloudCostMatchesReference()
{
    QFETCH(QString, variant);
    const CloudTestProblem cloud;
    const UotProblem& p = cloud.problem;
    const SolveOptions o = options(Precision::Fp32, 1000, 1e-5);
    const SolveResult ref = createSolver("reference")->solve(p, o);
    {
        const std::string v = variant.toStdString();
        const SolveResult got = createSolver(v)->solve(p, o);
        const double dist = planRelativeL1(p, got, ref);
        std::printf("  %-14s point cloud rel L1 %.2e iters %d (ref %d)\n", v.c_str(), dist, got.iterations,
                    ref.iterations);
        UOT_QVERIFY_MSG(dist <= 1e-4 && got.iterations == ref.iterations, v);
    }
}

void TestGpuSolvers::smallEpsSwitchesToLogDomain()
{
    // Rows 0..9 cost at least 0.7: exp(-0.7/0.004) = exp(-175) is 0 in float32.
    TestProblem tp(120, 90, 0.004, 1.0, 1.0, 9);
    for (std::size_t i = 0; i < 10; ++i)
        for (std::size_t j = 0; j < 90; ++j) tp.cost[i * 90 + j] = 0.7 + 0.3 * tp.cost[i * 90 + j];
    const SolveOptions o = options(Precision::Fp32, 3000, 1e-5);
    const SolveResult ref = createSolver("reference")->solve(tp.problem, o);
    QVERIFY(ref.status == NumericalStatus::Ok);
    for (const std::string v : {"gpu-fused", "gpu-mapuot", "gpu-pot-style"}) {
        const SolveResult got = createSolver(v)->solve(tp.problem, o);
        const double dist = planRelativeL1(tp.problem, got, ref);
        std::printf("  %-14s small eps: status %s, solver %s, rel L1 %.2e, iters %d (ref %d)\n", v.c_str(),
                    toString(got.status).c_str(), got.solver.c_str(), dist, got.iterations, ref.iterations);
        UOT_QVERIFY_MSG(got.status == NumericalStatus::SwitchedToLogDomain, v);
        QVERIFY(allFinite(got));
        UOT_QVERIFY_MSG(dist <= 1e-4, v << " " << dist);
        QVERIFY(got.iterations == ref.iterations);

        SolveOptions forced = o;
        forced.allowStabilizedFallback = false;
        const SolveResult stopped = createSolver(v)->solve(tp.problem, forced);
        UOT_QVERIFY_MSG(stopped.status == NumericalStatus::Underflow, v);
        QVERIFY(!stopped.message.empty());
        QVERIFY(allFinite(stopped));
    }
    // gpu-log directly at an eps where float32 exp underflows everywhere but the diagonal band.
    const TestProblem tiny(200, 150, 0.002, 1.0, 1.0, 10);
    const SolveOptions ot = options(Precision::Fp32, 500, 0.0, 50);
    const SolveResult refTiny = createSolver("reference")->solve(tiny.problem, ot);
    const SolveResult logTiny = createSolver("gpu-log")->solve(tiny.problem, ot);
    const double dist = planRelativeL1(tiny.problem, logTiny, refTiny);
    std::printf("  gpu-log eps=0.002 rel L1 %.2e\n", dist);
    QVERIFY(dist <= 1e-4);
}

void TestGpuSolvers::warmStartContinuesTheIteration_data() { addVariantRows(kVariants); }

void TestGpuSolvers::warmStartContinuesTheIteration()
{
    QFETCH(QString, variant);
    const TestProblem tp(300, 500, 0.05, 1.0, 1.0, 11);
    {
        const std::string v = variant.toStdString();
        auto solver = createSolver(v);
        const SolveResult whole = solver->solve(tp.problem, options(Precision::Fp32, 60, 0.0));
        const SolveResult first = solver->solve(tp.problem, options(Precision::Fp32, 25, 0.0));
        SolveOptions rest = options(Precision::Fp32, 35, 0.0);
        const std::vector<double> u = first.u(), vv = first.v();
        rest.warmU = u;
        rest.warmV = vv;
        const SolveResult second = solver->solve(tp.problem, rest);
        const double dist = planRelativeL1(tp.problem, second, whole);
        std::printf("  %-14s 25 + 35 warm-started vs 60: rel L1 %.2e\n", v.c_str(), dist);
        UOT_QVERIFY_MSG(dist <= 1e-5, v);
    }
}

void TestGpuSolvers::cancellationStopsAtTheNextCheck_data() { addVariantRows(kVariants); }

void TestGpuSolvers::cancellationStopsAtTheNextCheck()
{
    QFETCH(QString, variant);
    const TestProblem tp(2048, 2048, 0.05, 1.0, 1.0, 12);
    {
        const std::string v = variant.toStdString();
        // Deterministic: cancel from the first progress report.
        std::atomic<bool> cancel{false};
        SolveControl control;
        control.cancel = &cancel;
        control.onProgress = [&](const SolveProgress&) { cancel = true; };
        const SolveResult r = createSolver(v)->solve(tp.problem, options(Precision::Fp32, 100000, 0.0, 7), control);
        UOT_QVERIFY_MSG(r.cancelled && r.iterations == 7, v << " stopped after " << r.iterations);
        QVERIFY(allFinite(r));

        // From another thread while a very long check interval runs: the loop
        // polls between short slices, so it returns long before the check.
        std::atomic<bool> cancel2{false};
        SolveControl control2;
        control2.cancel = &cancel2;
        std::chrono::steady_clock::time_point cancelledAt;
        std::thread canceller([&] {
            std::this_thread::sleep_for(std::chrono::milliseconds(300));
            cancelledAt = std::chrono::steady_clock::now();
            cancel2 = true;
        });
        const SolveResult r2 =
            createSolver(v)->solve(tp.problem, options(Precision::Fp32, 1000000, 0.0, 1000000), control2);
        const auto returned = std::chrono::steady_clock::now();
        canceller.join();
        std::printf("  %-14s cancelled after %d iterations, returned %.1f ms after the request (setup included "
                    "before)\n",
                    v.c_str(), r2.iterations,
                    std::chrono::duration<double, std::milli>(returned - cancelledAt).count());
        QVERIFY(r2.cancelled);
        QVERIFY(r2.iterations > 0 && r2.iterations < 1000000);
        QVERIFY(allFinite(r2));
    }
}

void TestGpuSolvers::peakDeviceMemoryIsOneMatrixPlusVectors_data() { addVariantRows(kVariants); }

void TestGpuSolvers::peakDeviceMemoryIsOneMatrixPlusVectors()
{
    QFETCH(QString, variant);
    const std::size_t m = 3000, n = 2001;
    const TestProblem tp(m, n, 0.05, 1.0, 1.0, 13);
    {
        const std::string v = variant.toStdString();
        const SolveResult r = createSolver(v)->solve(tp.problem, options(Precision::Fp32, 10, 0.0));
        const double matrix = double(m) * ((n + 3) / 4 * 4) * 4;
        const double vectors = 96.0 * (m + n) + (v == "gpu-pot-style" ? double(4 << 20) : 0.0);
        std::printf("  %-14s peak %.2f MiB = %.3f x matrix (%.2f MiB)\n", v.c_str(), r.peakDeviceBytes / 1048576.0,
                    r.peakDeviceBytes / matrix, matrix / 1048576.0);
        UOT_QVERIFY_MSG(r.peakDeviceBytes >= matrix, v);
        UOT_QVERIFY_MSG(r.peakDeviceBytes <= 1.05 * matrix + vectors, v << " peak " << r.peakDeviceBytes);
    }
}

void TestGpuSolvers::repeatedSolvesLeaveDeviceMemoryUnchanged()
{
    const TestProblem small(200, 300, 0.05, 1.0, 1.0, 14), other(301, 199, 0.05, 0.5, kInfinity, 15);
    TestProblem bad(50, 40, 0.05, 1.0, 1.0, 16);
    bad.cost[41] = std::nan("");
    auto round = [&](int& solves) {
        for (const std::string& v : kVariants) {
            auto solver = createSolver(v);
            for (int k = 0; k < 3; ++k, ++solves)
                solver->solve((k % 2 ? other : small).problem,
                              options(k == 2 ? Precision::Fp64 : Precision::Fp32, 30, 1e-6));
        }
        // Error paths release everything too.
        for (const std::string& v : kVariants)
            UOT_QVERIFY_THROWS_WITH(createSolver(v)->solve(bad.problem, options(Precision::Fp32, 10, 0.0)), "(1, 1)");
    };
    // Warm up with one full round: the first use of each kernel loads its module
    // and library handles, which stay loaded for the life of the process.
    int warmup = 0;
    round(warmup);
    const std::size_t before = gpu::deviceMemory(0).freeBytes;
    int solves = 0;
    for (int r = 0; r < 9; ++r) round(solves);
    const std::size_t after = gpu::deviceMemory(0).freeBytes;
    std::printf("  %d solves: free device memory %zu -> %zu bytes\n", solves, before, after);
    QVERIFY(solves >= 100);
    // Nothing lost: at least as much free as before (the runtime may have let go of
    // more meanwhile: +2 MiB on an H200 on 2026-11-26).
    QVERIFY(after >= before);
}

void TestGpuSolvers::badDeviceOrdinalIsAClearError()
{
    const TestProblem tp(10, 10, 0.05, 1.0, 1.0, 17);
    SolveOptions o = options(Precision::Fp32, 10, 0.0);
    o.device = 999;
    UOT_QVERIFY_THROWS_WITH(createSolver("gpu-fused")->solve(tp.problem, o), "GPU 999 does not exist");
}

void TestGpuSolvers::outOfMemoryIsAClearErrorAndTheSolverRecovers()
{
    // A point-cloud cost needs no host matrix, but K would need 360 GB on the device.
    const std::size_t n = 300000;
    std::vector<double> x(n), y(n), a(n, 1.0 / n), b(n, 1.0 / n);
    for (std::size_t k = 0; k < n; ++k) x[k] = y[k] = double(k) / n;
    UotProblem huge;
    huge.cost = PointCloudCost{x.data(), y.data(), n, n, 1, 1.0};
    huge.a = a;
    huge.b = b;
    const TestProblem small(100, 80, 0.05, 1.0, 1.0, 18);
    for (const std::string& v : kVariants) createSolver(v)->solve(small.problem, options(Precision::Fp32, 10, 0.0));
    // Device contexts parked for the next solver hold memory on purpose (gpu::deviceContextStats): freed here.
    gpu::releaseDeviceContexts();
    const std::size_t before = gpu::deviceMemory(0).freeBytes;
    for (const std::string& v : kVariants) {
        auto solver = createSolver(v);
        bool threw = false;
        try {
            solver->solve(huge, options(Precision::Fp32, 5, 0.0));
        } catch (const Error& e) {
            threw = true;
            std::printf("  %-14s %s\n", v.c_str(), e.what());
            UOT_QVERIFY_MSG(e.code() == ErrorCode::OutOfMemory, v);
            UOT_QVERIFY_MSG(std::string(e.what()).find("out of memory") != std::string::npos, v);
        }
        UOT_QVERIFY_MSG(threw, v);
        // The same solver object still solves afterwards.
        const SolveResult r = solver->solve(small.problem, options(Precision::Fp32, 10, 0.0));
        UOT_QVERIFY_MSG(r.iterations == 10 && allFinite(r), v);
    }
    gpu::releaseDeviceContexts();
    const std::size_t after = gpu::deviceMemory(0).freeBytes;
    const gpu::DeviceContextStats stats = gpu::deviceContextStats();
    std::printf("  free before %zu, after %zu (%+.1f MiB); contexts parked %zu, created %llu, reused %llu, discarded %llu\n",
                before, after, (double(after) - double(before)) / (1 << 20), stats.parked,
                static_cast<unsigned long long>(stats.created), static_cast<unsigned long long>(stats.reused),
                static_cast<unsigned long long>(stats.discarded));
    // Nothing lost: at least as much free as before (the runtime may have let go of
    // more meanwhile: +2 MiB on an H200 on 2026-11-26).
    QVERIFY(after >= before);
}

QTEST_GUILESS_MAIN(TestGpuSolvers)
#include "test_gpu_solvers.moc"
