// The translation-invariant iteration mode (--mode ti) of the GPU variants
// against the float64 CPU reference in the same mode (step for step, a fixed
// number of iterations) and against the plain reference run to convergence
// (the same UOT plan). gpu-mapuot's fp64 iterates: tests/gpu/test_gpu_acceleration.cpp.
// Qt Test; every test is skipped where no GPU is usable.

#include <cstdio>
#include <string>
#include <vector>

#include "core/registry/solver_registry.h"
#include "tests/gpu/gpu_test_support.h"
#include "tests/support/qt_checks.h"

using namespace uot;
using namespace uot::test;

namespace {

const std::vector<std::string> kTiVariants = {"gpu-pot-style", "gpu-mapuot", "gpu-fused", "gpu-fused-bf16", "gpu-log"};

SolveOptions tiOptions(Precision precision, int maxIterations, double tolerance)
{
    SolveOptions o = options(precision, maxIterations, tolerance, 5);
    o.mode = IterationMode::TranslationInvariant;
    return o;
}

double toleranceFor(const std::string& variant) { return variant == "gpu-fused-bf16" ? 3e-3 : 1e-4; }

}  // namespace

class TestGpuTranslationInvariant : public QObject {
    Q_OBJECT
private slots:
    void initTestCase() { UOT_QSKIP_WITHOUT_GPU(); }
    void stepForStepLikeTheReferenceInTiMode_data();
    void stepForStepLikeTheReferenceInTiMode();
    void convergesToThePlainFixedPointInFewerIterations();
};

void TestGpuTranslationInvariant::stepForStepLikeTheReferenceInTiMode_data()
{
    addShapeRows({{1, 1}, {1, 700}, {700, 1}, {333, 777}, {1024, 2048}});
}

void TestGpuTranslationInvariant::stepForStepLikeTheReferenceInTiMode()
{
    QFETCH(int, rows);
    QFETCH(int, cols);
    {
        const std::size_t s[2] = {std::size_t(rows), std::size_t(cols)};
        const TestProblem unbalanced(s[0], s[1], 0.05, 1.0, 1.0, 11);
        const TestProblem mixed(s[0], s[1], 0.05, 0.5, 2.0, 12, ReferenceMeasure::Product);
        const TestProblem semi(s[0], s[1], 0.05, kInfinity, 0.7, 13);
        for (const TestProblem* tp : {&unbalanced, &mixed, &semi}) {
            const SolveOptions o = tiOptions(Precision::Fp32, 60, 0);
            SolveOptions ref64 = o;
            ref64.precision = Precision::Fp64;
            const SolveResult ref = createSolver("reference")->solve(tp->problem, ref64);
            for (const std::string& v : kTiVariants) {
                const SolveResult got = createSolver(v)->solve(tp->problem, o);
                const double dist = planRelativeL1(tp->problem, got, ref);
                std::printf("  %-15s %5zux%-5zu tauA %-4g tauB %-4g 60 TI iterations: rel L1 %.2e, passes %llu\n",
                            v.c_str(), s[0], s[1], tp->problem.tauA, tp->problem.tauB, dist,
                            static_cast<unsigned long long>(got.passes));
                UOT_QVERIFY_MSG(allFinite(got), v);
                UOT_QVERIFY_MSG(got.mode == "translation-invariant", v << ": mode " << got.mode);
                UOT_QVERIFY_MSG(got.iterations == 60, v << ": " << got.iterations << " iterations");
                UOT_QVERIFY_MSG(got.passes >= 60, v << ": passes " << got.passes);
                UOT_QVERIFY_MSG(dist <= toleranceFor(v), v << " " << s[0] << "x" << s[1] << ": rel L1 " << dist);
            }
        }
    }
}

void TestGpuTranslationInvariant::convergesToThePlainFixedPointInFewerIterations()
{
    const TestProblem tp(600, 500, 0.02, 5.0, 5.0, 21);
    SolveOptions plain64 = options(Precision::Fp64, 200000, 1e-12, 5);
    const SolveResult converged = createSolver("reference")->solve(tp.problem, plain64);
    QVERIFY(converged.converged);
    for (const std::string& v :
         {std::string("gpu-pot-style"), std::string("gpu-mapuot"), std::string("gpu-fused"), std::string("gpu-log")}) {
        SolveOptions plain = options(Precision::Fp64, 200000, 1e-11, 5);
        SolveOptions ti = plain;
        ti.mode = IterationMode::TranslationInvariant;
        const SolveResult rp = createSolver(v)->solve(tp.problem, plain);
        const SolveResult rt = createSolver(v)->solve(tp.problem, ti);
        const double dp = planRelativeL1(tp.problem, rp, converged), dt = planRelativeL1(tp.problem, rt, converged);
        std::printf("  %-14s fp64 to 1e-11: plain %d iterations (rel L1 %.1e), ti %d (rel L1 %.1e)\n", v.c_str(),
                    rp.iterations, dp, rt.iterations, dt);
        UOT_QVERIFY_MSG(rt.converged && rp.converged, v);
        UOT_QVERIFY_MSG(dt <= 1e-8, v << ": TI plan rel L1 " << dt << " from the converged plan");
        UOT_QVERIFY_MSG(2 * rt.iterations < rp.iterations,
                      v << ": TI " << rt.iterations << " iterations, plain " << rp.iterations);
    }
}

QTEST_GUILESS_MAIN(TestGpuTranslationInvariant)
#include "test_gpu_translation_invariant.moc"
