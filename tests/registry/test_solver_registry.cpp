// The backend-neutral registry: what the compiled-in backends registered, the
// device mapping, the traffic model against each solver's own figure, and the
// generic fallback path exercised through a fake backend registered here.

#include <QTest>

#include <cmath>
#include <stdexcept>
#include <vector>

#include "core/registry/batched_solver_registry.h"
#include "core/registry/device_registry.h"
#include "core/registry/multi_gpu.h"
#include "core/registry/solver_registry.h"
#include "core/transport/uot_error.h"

using namespace uot;

namespace {

// A fake multiplicative backend: stops at once with "underflow", keeping a
// warm-startable iterate, so the registry's fallback must finish the solve.
class UnderflowingSolver final : public UotSolver {
public:
    std::string name() const override { return "test-underflowing"; }
    std::uint64_t bytesPerIteration(std::size_t rows, std::size_t cols, Precision) const override
    {
        return rows * cols * 3;
    }
    SolveResult solve(const UotProblem& problem, const SolveOptions&, const SolveControl&) override
    {
        SolveResult r;
        r.solver = name();
        r.logU.assign(problem.rows(), 0.0);
        r.logV.assign(problem.cols(), 0.0);
        r.iterations = 1;
        r.status = NumericalStatus::Underflow;
        r.message = "test underflow";
        return r;
    }
};

const bool fakeRegistered = [] {
    SolverCapabilities caps;
    caps.device = DeviceKind::Cpu;
    caps.algorithm = "test-underflowing";
    caps.matrixSweepsPerIteration = 3;
    caps.storedEntryBytes = 1;
    caps.stabilizedFallback = "log";
    return registerSolver({"test-underflowing", "a fake variant that always underflows", caps,
                           [] { return std::unique_ptr<UotSolver>(std::make_unique<UnderflowingSolver>()); }, {}});
}();

std::vector<std::string> names()
{
    std::vector<std::string> out;
    for (const SolverInfo& info : listSolvers()) out.push_back(info.name);
    return out;
}

}  // namespace

class SolverRegistryTest : public QObject {
    Q_OBJECT

private slots:
    void everyCompiledVariantIsListedOnceCpuFirst()
    {
        QVERIFY(fakeRegistered);
        const std::vector<std::string> all = names();
        for (const char* expected : {"reference", "pot-style", "mapuot", "fused", "log", "gpu-pot-style", "gpu-mapuot",
                                     "gpu-fused", "gpu-fused-bf16", "gpu-log", "gpu-mapreduce"})
            QVERIFY2(std::count(all.begin(), all.end(), expected) == 1, expected);
        bool seenGpu = false;
        for (const SolverInfo& info : listSolvers()) {
            if (info.caps.device == DeviceKind::Gpu) seenGpu = true;
            else QVERIFY2(!seenGpu, ("CPU variant listed after a GPU one: " + info.name).c_str());
            QVERIFY(!info.description.empty());
            QCOMPARE(info.available, info.unavailableReason.empty());
        }
    }

    void deviceDefaultsAndMapping_data()
    {
        QTest::addColumn<QString>("name");
        QTest::addColumn<bool>("toGpu");
        QTest::addColumn<QString>("expected");  // empty: no such variant on that device
        QTest::newRow("auto on gpu") << "auto" << true << "gpu-fused";
        QTest::newRow("fused on gpu") << "fused" << true << "gpu-fused";
        QTest::newRow("log on gpu") << "log" << true << "gpu-log";
        QTest::newRow("pot-style on gpu") << "pot-style" << true << "gpu-pot-style";
        QTest::newRow("gpu-mapuot on cpu") << "gpu-mapuot" << false << "mapuot";
        QTest::newRow("gpu-fused on gpu") << "gpu-fused" << true << "gpu-fused";
        QTest::newRow("reference has no gpu form") << "reference" << true << "";
        QTest::newRow("bf16 has no cpu form") << "gpu-fused-bf16" << false << "";
        QTest::newRow("unknown") << "nonsense" << true << "";
    }
    void deviceDefaultsAndMapping()
    {
        QFETCH(QString, name);
        QFETCH(bool, toGpu);
        QFETCH(QString, expected);
        const auto mapped = solverOnDevice(name.toStdString(), toGpu ? DeviceKind::Gpu : DeviceKind::Cpu);
        QCOMPARE(QString::fromStdString(mapped.value_or("")), expected);
    }

    void defaultsPerDevice()
    {
        QCOMPARE(defaultSolver(DeviceKind::Cpu), std::string("fused"));
        QCOMPARE(defaultSolver(DeviceKind::Gpu), std::string("gpu-fused"));
        QVERIFY(runsOnGpu("gpu-log"));
        QVERIFY(!runsOnGpu("log"));
        QVERIFY(!runsOnGpu("nonsense"));
        QCOMPARE(solverCapabilities("auto")->algorithm, std::string("fused"));
        QCOMPARE(matrixFreeSolver(DeviceKind::Cpu).value_or(""), std::string("mapreduce"));
        QCOMPARE(matrixFreeSolver(DeviceKind::Gpu).value_or(""), std::string("gpu-mapreduce"));
    }

    // The registry's traffic model against each solver object's own figure, for
    // every registered variant that can be created here, at a small shape and at
    // rows too wide for gpu-fused's one-pass kernel (20000 fp32 entries: two reads).
    void trafficModelMatchesTheSolvers_data()
    {
        QTest::addColumn<QString>("name");
        for (const SolverInfo& info : listSolvers()) QTest::newRow(info.name.c_str()) << QString::fromStdString(info.name);
    }
    void trafficModelMatchesTheSolvers()
    {
        QFETCH(QString, name);
        std::unique_ptr<UotSolver> solver;
        try {
            solver = createSolver(name.toStdString());
        } catch (const Error& e) {
            QSKIP(e.what());
        }
        for (Precision p : {Precision::Fp32, Precision::Fp64})
            for (const auto& [rows, cols] : {std::pair<std::size_t, std::size_t>{37, 53}, {300, 20000}})
                QCOMPARE(bytesPerIteration(name.toStdString(), rows, cols, p), solver->bytesPerIteration(rows, cols, p));
    }

    void gpuTrafficModel()
    {
        QCOMPARE(bytesPerIteration("gpu-fused", 10, 20, Precision::Fp32), std::uint64_t(10 * 20 * 4));
        QCOMPARE(bytesPerIteration("gpu-fused-bf16", 10, 20, Precision::Fp32), std::uint64_t(10 * 20 * 2));
        // gpu-mapuot: two kernels, each a read and a write; gpu-log: rows, then columns.
        QCOMPARE(bytesPerIteration("gpu-mapuot", 10, 20, Precision::Fp64), std::uint64_t(4 * 10 * 20 * 8));
        QCOMPARE(bytesPerIteration("gpu-log", 10, 20, Precision::Fp32), std::uint64_t(2 * 10 * 20 * 4));
        QCOMPARE(bytesPerIteration("nonsense", 10, 20, Precision::Fp64), std::uint64_t(0));
        // gpu-mapreduce is matrix-free: no matrix traffic, point clouds and fp32 only.
        QCOMPARE(bytesPerIteration("gpu-mapreduce", 10, 20, Precision::Fp32), std::uint64_t(0));
        const auto caps = solverCapabilities("gpu-mapreduce");
        QVERIFY(caps.has_value());
        QVERIFY(!caps->storesMatrix && !caps->denseCost && caps->pointClouds && !caps->fp64 && caps->logDomain);
    }

    void unknownAndUnavailableVariantsThrowClearErrors()
    {
        try {
            createSolver("nonsense");
            QFAIL("no exception for an unknown name");
        } catch (const Error& e) {
            QVERIFY(e.code() == ErrorCode::InvalidArgument);
            QVERIFY(std::string(e.what()).find("fused") != std::string::npos);  // lists the choices
        }
        if (gpuUnavailableReason().empty()) QSKIP("a GPU is usable here: the unavailable path cannot be exercised");
        try {
            createSolver("gpu-fused");
            QFAIL("no exception for a GPU variant without a GPU");
        } catch (const Error& e) {
            QVERIFY(e.code() == ErrorCode::Unavailable);
            QCOMPARE(std::string(e.what()), gpuUnavailableReason());
        }
        const auto info = findSolver("gpu-fused");
        QVERIFY(info && !info->available && !info->unavailableReason.empty());
    }

    void duplicateRegistrationIsRejected()
    {
        SolverRegistration again{"fused", "again", {}, [] { return createSolver("log"); }, {}};
        QVERIFY_THROWS_EXCEPTION(std::logic_error, registerSolver(again));
    }

    // A backend registered from outside core gets the registry's generic
    // fallback: its underflow is finished by the declared stabilised variant.
    void registeredBackendFallsBackToItsStabilizedVariant()
    {
        const std::vector<double> a{0.5, 0.5}, b{0.25, 0.75};
        const std::vector<double> cost{0.0, 1.0, 1.0, 0.0};
        UotProblem problem;
        problem.cost = DenseCost{nullptr, cost.data(), 2, 2};
        problem.a = a;
        problem.b = b;
        problem.eps = 0.1;
        SolveOptions options;
        options.precision = Precision::Fp64;
        options.maxIterations = 5000;
        options.tolerance = 1e-12;
        options.allowStabilizedFallback = true;
        const SolveResult viaFallback = createSolver("test-underflowing")->solve(problem, options);
        QVERIFY(viaFallback.status == NumericalStatus::SwitchedToLogDomain);
        QVERIFY(viaFallback.message.find("test-underflowing") != std::string::npos);
        const SolveResult direct = createSolver("log")->solve(problem, options);
        for (std::size_t i = 0; i < 2; ++i) QVERIFY(std::abs(viaFallback.logU[i] - direct.logU[i]) < 1e-9);

        options.allowStabilizedFallback = false;  // a forced variant stops on underflow
        QVERIFY(createSolver("test-underflowing")->solve(problem, options).status == NumericalStatus::Underflow);
    }
    // matrixFreeInstead against the H100 and VM measurements of docs/BENCHMARKS.md
    // (map-reduce): gpu-mapreduce was faster than gpu-fused at 8192^2 and 16384^2,
    // slower at 4096^2; the CPU mapreduce was never faster than fused. Memory in
    // bytes; 0 = unknown.
    void matrixFreeInsteadFollowsMemoryAndTheMeasuredCrossover_data()
    {
        QTest::addColumn<QString>("solver");
        QTest::addColumn<qulonglong>("side");
        QTest::addColumn<qulonglong>("memory");
        QTest::addColumn<QString>("expected");  // empty: keep the solver
        const qulonglong plenty = 1ull << 40, mib = 1ull << 20;
        QTest::newRow("gpu default past the crossover") << "gpu-fused" << 16384ull << plenty << "gpu-mapreduce";
        QTest::newRow("gpu default at the crossover") << "gpu-fused" << 8192ull << plenty << "gpu-mapreduce";
        QTest::newRow("gpu default below the crossover") << "gpu-fused" << 4096ull << plenty << "";
        QTest::newRow("gpu default, unknown memory") << "gpu-fused" << 4096ull << 0ull << "";
        QTest::newRow("gpu: 64 MiB of K, 48 MiB free") << "gpu-fused" << 4096ull << 48 * mib << "gpu-mapreduce";
        QTest::newRow("gpu bf16: 32 MiB of K fit 48 MiB") << "gpu-fused-bf16" << 4096ull << 48 * mib << "";
        QTest::newRow("gpu non-default: speed never decides") << "gpu-log" << 16384ull << plenty << "";
        QTest::newRow("gpu non-default that does not fit") << "gpu-log" << 16384ull << 512 * mib << "gpu-mapreduce";
        QTest::newRow("matrix-free stays") << "gpu-mapreduce" << 65536ull << mib << "";
        QTest::newRow("cpu default: no cpu crossover") << "fused" << 65536ull << plenty << "";
        QTest::newRow("cpu: 16 GiB of K, 1 GiB free") << "fused" << 65536ull << 1024 * mib << "mapreduce";
        QTest::newRow("cpu auto: 16 GiB of K, 1 GiB free") << "auto" << 65536ull << 1024 * mib << "mapreduce";
    }

    void matrixFreeInsteadFollowsMemoryAndTheMeasuredCrossover()
    {
        QFETCH(QString, solver);
        QFETCH(qulonglong, side);
        QFETCH(qulonglong, memory);
        QFETCH(QString, expected);
        const std::optional<std::string> got =
            matrixFreeInstead(solver.toStdString(), side, side, Precision::Fp32, memory);
        QCOMPARE(QString::fromStdString(got.value_or("")), expected);
    }

    void gpuCrossoverIsDeclaredByTheMatrixFreeVariant()
    {
        const std::optional<SolverCapabilities> caps = solverCapabilities("gpu-mapreduce");
        QVERIFY(caps);
        // Between the measured sizes: slower at 4096^2, faster at 8192^2.
        QVERIFY(caps->fasterFromEntries > 4096ull * 4096ull);
        QVERIFY(caps->fasterFromEntries <= 8192ull * 8192ull);
        QCOMPARE(solverCapabilities("mapreduce")->fasterFromEntries, std::uint64_t(0));
    }

    // The batched GPU solver is registered by gpu/ with what it takes; without a
    // GPU it is listed as unavailable with the reason, never created.
    void batchedSolverIsRegisteredWithItsCapabilities()
    {
        const auto caps = batchedSolverCapabilities("gpu-batched");
        QVERIFY(caps.has_value());
        QVERIFY(caps->device == DeviceKind::Gpu && caps->pointClouds && !caps->denseCost && caps->maxDim == 3);
        // TI and over-relaxed iterations; fp32 only (its log-sum-exp).
        QVERIFY(caps->translationInvariant && caps->overRelaxation && !caps->fp64);
        const std::vector<double> x{0, 0, 0}, y{1, 1, 1, 2, 2, 2}, a{1}, b{0.5, 0.5}, cost{1, 2};
        UotProblem cloud;
        cloud.cost = PointCloudCost{x.data(), y.data(), 1, 2, 3, 1.0};
        cloud.a = a;
        cloud.b = b;
        QVERIFY(batchedSolverAccepts("gpu-batched", cloud));
        UotProblem wide = cloud;
        wide.cost = PointCloudCost{x.data(), y.data(), 1, 1, 4, 1.0};  // dimension 4
        QVERIFY(!batchedSolverAccepts("gpu-batched", wide));
        UotProblem dense = cloud;
        dense.cost = DenseCost{nullptr, cost.data(), 1, 2};
        QVERIFY(!batchedSolverAccepts("gpu-batched", dense));
        QVERIFY(!batchedSolverAccepts("nonsense", cloud));
        QVERIFY(!batchedSolverFor(DeviceKind::Cpu).has_value());
        if (!gpuUnavailableReason().empty()) {
            std::string why;
            QVERIFY(!batchedSolverFor(DeviceKind::Gpu, &why).has_value());
            QVERIFY(why.find("gpu-batched") != std::string::npos);
            QVERIFY_THROWS_EXCEPTION(Error, createBatchedSolver("gpu-batched"));
        }
        QVERIFY_THROWS_EXCEPTION(Error, createBatchedSolver("nonsense"));
    }

    // --devices: ordinals without repeats, or all (= every visible GPU).
    void deviceListsParseOrSayWhatIsWrong()
    {
        QVERIFY(parseDeviceList("0,1,3") == (std::vector<int>{0, 1, 3}));
        QVERIFY(parseDeviceList("all").empty());
        for (const char* bad : {"", "0,0", "x", "1,", "-1", "0;1"}) {
            try {
                parseDeviceList(bad);
                QFAIL(qPrintable(QString("accepted '%1'").arg(bad)));
            } catch (const Error& e) {
                QVERIFY(e.code() == ErrorCode::InvalidArgument);
            }
        }
        QCOMPARE(multiGpuVariant(), std::string("gpu-nccl"));
        const auto caps = solverCapabilities("gpu-nccl");
        QVERIFY(caps && caps->device == DeviceKind::Gpu && !caps->fp64);
    }
};

QTEST_GUILESS_MAIN(SolverRegistryTest)
#include "test_solver_registry.moc"
