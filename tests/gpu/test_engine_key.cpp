// Host-only (no GPU needed, runs in CI): the key under which the backend parks a GPU
// solver's engine (gpu/engine_cache.h). A solver only takes back an engine built
// for exactly what it runs: a key that ignored a tuning field would hand, say,
// gpu-fused[cluster] the engine of plain gpu-fused (or the reverse) and a benchmark
// of one would measure the other. Each field of Tuning is changed alone and must
// change the key; the same settings must give the same key.

#include <functional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "gpu/gpu_solver.h"
#include "tests/support/qt_checks.h"

using namespace uot;
using namespace uot::gpu;
using namespace uot::gpu::detail;

namespace {

std::string keyOf(const Tuning& tuning)
{
    return engineKey("gpu-fused", Variant::Fused, Storage::Native, Precision::Fp32, 0, tuning);
}

// Every field of Tuning (and of its MapReduceConfig), each with a change away from the default.
std::vector<std::pair<const char*, std::function<void(Tuning&)>>> fieldChanges()
{
    return {
        {"mapTx", [](Tuning& t) { t.mapTx += 32; }},
        {"mapTy", [](Tuning& t) { t.mapTy += 1; }},
        {"mapNy", [](Tuning& t) { t.mapNy += 1; }},
        {"rowTx", [](Tuning& t) { t.rowTx += 32; }},
        {"rowNy", [](Tuning& t) { t.rowNy += 1; }},
        {"fusedPartials", [](Tuning& t) { t.fusedPartials += 1; }},
        {"programmaticLaunch", [](Tuning& t) { t.programmaticLaunch = !t.programmaticLaunch; }},
        {"fusedCluster", [](Tuning& t) { t.fusedCluster += 2; }},
        {"finalizeLanes", [](Tuning& t) { t.finalizeLanes += 16; }},
        {"fusedEvenGroups", [](Tuning& t) { t.fusedEvenGroups = !t.fusedEvenGroups; }},
        {"overlappedUpload", [](Tuning& t) { t.overlappedUpload = !t.overlappedUpload; }},
        {"clusterIterations", [](Tuning& t) { t.clusterIterations = !t.clusterIterations; }},
        {"stepInColumns", [](Tuning& t) { t.stepInColumns = !t.stepInColumns; }},
        {"mapReduce.polyEvery", [](Tuning& t) { t.mapReduce.polyEvery += 8; }},
        {"mapReduce.prefetch", [](Tuning& t) { t.mapReduce.prefetch = !t.mapReduce.prefetch; }},
        {"mapReduce.schedule",
         [](Tuning& t) {
             t.mapReduce.schedule =
                 t.mapReduce.schedule == MapReduceWork::Split ? MapReduceWork::Balanced : MapReduceWork::Split;
         }},
        {"mapReduce.blocks", [](Tuning& t) { t.mapReduce.blocks += 4; }},
    };
}

}  // namespace

class TestEngineKey : public QObject {
    Q_OBJECT
private slots:
    void sameSettingsShareAKey()
    {
        QCOMPARE(keyOf(Tuning{}), keyOf(Tuning{}));
    }

    void everyTuningFieldChangesTheKey()
    {
        const std::string base = keyOf(Tuning{});
        std::set<std::string> seen{base};
        for (const auto& [field, change] : fieldChanges()) {
            Tuning t;
            change(t);
            const std::string key = keyOf(t);
            UOT_QVERIFY_MSG(key != base, "changing Tuning::" << field << " leaves the engine key as it is: " << key);
            seen.insert(key);
        }
        QCOMPARE(seen.size(), fieldChanges().size() + 1);  // no two changes collide either
    }

    // The iteration paths of an accelerated gpu-fused solve: each its own engine.
    void iterationPathsNeverShareAnEngine()
    {
        Tuning kernels, cluster, stepKernels;
        kernels.clusterIterations = false;
        cluster.clusterIterations = true;
        stepKernels.clusterIterations = false;
        stepKernels.stepInColumns = false;
        QVERIFY(keyOf(kernels) != keyOf(cluster));
        QVERIFY(keyOf(kernels) != keyOf(stepKernels));
        QVERIFY(keyOf(cluster) != keyOf(stepKernels));
    }

    void solverIdentityChangesTheKey()
    {
        const Tuning t;
        const std::string base = engineKey("gpu-fused", Variant::Fused, Storage::Native, Precision::Fp32, 0, t);
        QVERIFY(base != engineKey("gpu-log", Variant::Log, Storage::Native, Precision::Fp32, 0, t));
        QVERIFY(base != engineKey("gpu-fused-bf16", Variant::Fused, Storage::Bf16, Precision::Fp32, 0, t));
        QVERIFY(base != engineKey("gpu-fused", Variant::Fused, Storage::Native, Precision::Fp64, 0, t));
        QVERIFY(base != engineKey("gpu-fused", Variant::Fused, Storage::Native, Precision::Fp32, 1, t));
    }
};

QTEST_GUILESS_MAIN(TestEngineKey)
#include "test_engine_key.moc"
