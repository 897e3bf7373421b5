// Peak host memory of a solve on a point-cloud cost (the matrix is never
// given, only K is stored): at most 1.1 x the matrix + 64 MiB above what the
// process used before, for every CPU variant. A second matrix-sized buffer
// (a copy of the cost, or of K) would break the bound.

#include <sys/resource.h>

#include <cstdio>
#include <random>
#include <vector>

#include "core/registry/solver_registry.h"
#include "tests/support/qt_checks.h"

using namespace uot;

namespace {
double peakRssMiB()
{
    rusage usage{};
    getrusage(RUSAGE_SELF, &usage);
    return static_cast<double>(usage.ru_maxrss) / 1024.0;  // ru_maxrss is in KiB on Linux
}
}  // namespace

class TestSolverMemory : public QObject {
    Q_OBJECT
private slots:
    void peakMemoryIsOneMatrixPlusSmallChange();
};

void TestSolverMemory::peakMemoryIsOneMatrixPlusSmallChange()
{
    const std::size_t m = 3000, n = 3000, dim = 3;
    std::vector<double> x(m * dim), y(n * dim), a(m, 1.0 / m), b(n, 1.0 / n);
    std::mt19937 rng(3);
    std::uniform_real_distribution<double> unit(0, 1);
    for (double& e : x) e = unit(rng);
    for (double& e : y) e = unit(rng);
    UotProblem p;
    p.cost = PointCloudCost{x.data(), y.data(), m, n, dim, 1.0 / dim};
    p.a = a;
    p.b = b;
    const double baseline = peakRssMiB();
    // Variants in order of growing footprint; the process peak is monotone,
    // so checking after each one bounds each one's own peak.
    for (Precision precision : {Precision::Fp32, Precision::Fp64}) {
        const double matrixMiB = double(m) * n * (precision == Precision::Fp32 ? 4 : 8) / (1024.0 * 1024.0);
        for (const char* name : {"fused", "pot-style", "mapuot", "log"}) {
            SolveOptions o;
            o.precision = precision;
            o.maxIterations = 3;
            o.tolerance = 0;
            o.threads = 2;
            const SolveResult r = createSolver(name)->solve(p, o);
            QVERIFY2(r.iterations == 3, qPrintable(QString("%1: %2 iterations, expected 3").arg(name).arg(r.iterations)));
            const double used = peakRssMiB() - baseline;
            std::printf("%-10s %s: peak %.1f MiB above baseline, matrix %.1f MiB\n", name,
                        toString(precision).c_str(), used, matrixMiB);
            QVERIFY2(used <= 1.1 * matrixMiB + 64.0, qPrintable(QString("%1 %2: peak %3 MiB for a %4 MiB matrix")
                                                                   .arg(name, QString::fromStdString(toString(precision)))
                                                                   .arg(used)
                                                                   .arg(matrixMiB)));
        }
    }
}

QTEST_APPLESS_MAIN(TestSolverMemory)
#include "test_solver_memory.moc"
