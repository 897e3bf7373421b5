// uot::perf: bandwidth probe, hardware cache counters (both the available and
// the unavailable path, whichever this machine has), peak memory, roofline
// accounting, isolated runs. No timed assertions: only finiteness, signs,
// monotonicity in the amount of work, and exact accounting.

#include <omp.h>

#include <cerrno>
#include <climits>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <csignal>
#include <cstring>
#include <vector>

#include "core/perf/bandwidth_probe.h"
#include "core/perf/cache_counters.h"
#include "core/perf/isolated_run.h"
#include "core/perf/peak_memory.h"
#include "core/perf/roofline.h"
#include "core/transport/uot_error.h"
#include "tests/support/qt_checks.h"

using namespace uot;
using namespace uot::perf;

namespace {

volatile double g_sink = 0;

// Work whose instruction count grows linearly with n, spread over an OpenMP team.
void doWork(std::size_t n, int threads)
{
    double total = 0;
#pragma omp parallel for num_threads(threads) reduction(+ : total) schedule(static)
    for (long i = 0; i < long(n); ++i) total += std::sqrt(double(i) + 0.5);
    g_sink = g_sink + total;
}

}  // namespace

class TestPerf : public QObject {
    Q_OBJECT
private slots:
    void bandwidthProbeReturnsFinitePositiveRates();
    void bandwidthProbeRejectsBadOptions();
    void failureDescriptionsNameTheCauseAndParanoidLevel();
    void cacheCountersReportTheTruthOnThisMachine();
    void cacheCountersCallingThreadScopeBehavesTheSame();
    void peakRssGrowsWithTouchedMemoryInAChild();
    void resetPeakRssForgetsAFreedBlock();
    void isolatedRunReportsFailures();
    void rooflineAccountingFollowsTheDocumentedTable();
};

void TestPerf::bandwidthProbeReturnsFinitePositiveRates()
{
    BandwidthOptions options;
    options.bytes = std::size_t(8) << 20;  // small buffer: this checks plumbing, not the machine
    options.threads = 2;
    options.warmups = 1;
    options.repetitions = 3;
    const BandwidthResult r = measureHostBandwidth(options);
    UOT_QVERIFY_MSG(std::isfinite(r.readGBps) && r.readGBps > 0, r.readGBps);
    UOT_QVERIFY_MSG(std::isfinite(r.readWriteGBps) && r.readWriteGBps > 0, r.readWriteGBps);
    UOT_QVERIFY_MSG(r.readWorstGBps <= r.readGBps && r.readGBps <= r.readBestGBps,
                    r.readWorstGBps << " " << r.readGBps << " " << r.readBestGBps);
    UOT_QVERIFY_MSG(r.readWriteGBps <= r.readWriteBestGBps, r.readWriteGBps << " " << r.readWriteBestGBps);
    QCOMPARE(r.bytes, options.bytes);
    QVERIFY(r.threads == 2);
}

void TestPerf::bandwidthProbeRejectsBadOptions()
{
    BandwidthOptions tiny;
    tiny.bytes = 100;
    UOT_QVERIFY_THROWS_WITH(measureHostBandwidth(tiny), "at least 4 KiB");
    BandwidthOptions noReps;
    noReps.bytes = 1 << 20;
    noReps.repetitions = 0;
    UOT_QVERIFY_THROWS_WITH(measureHostBandwidth(noReps), "repetitions");
}

void TestPerf::failureDescriptionsNameTheCauseAndParanoidLevel()
{
    const std::string pmu = describePerfEventFailure(ENOENT, "hardware cache counters", 2);
    QVERIFY(pmu.find("hardware cache counters unavailable") == 0);
    QVERIFY(pmu.find("does not expose") != std::string::npos);
    QVERIFY(pmu.find(std::strerror(ENOENT)) != std::string::npos);
    const std::string denied = describePerfEventFailure(EACCES, "cycles", 3);
    QVERIFY(denied.find("perf_event_paranoid is 3") != std::string::npos);
    QVERIFY(denied.find("not permitted") != std::string::npos);
    const std::string unreadable = describePerfEventFailure(EPERM, "cycles", INT_MIN);
    QVERIFY(unreadable.find("could not be read") != std::string::npos);
    QVERIFY(describePerfEventFailure(EOPNOTSUPP, "x", 2).find("does not expose") != std::string::npos);
    // The one-line summaries: the cause in a few words, short enough for one line of a panel.
    QCOMPARE(summarizePerfEventFailure(ENOENT, 2), std::string("no PMU in this VM or container"));
    QCOMPARE(summarizePerfEventFailure(EACCES, 3), std::string("not permitted (perf_event_paranoid 3)"));
    QCOMPARE(summarizePerfEventFailure(EPERM, INT_MIN), std::string("not permitted"));
    for (int e : {ENOENT, EOPNOTSUPP, ENODEV, EACCES, EPERM, ENOSYS, EMFILE, EINVAL, EIO})
        QVERIFY(summarizePerfEventFailure(e, 4).size() <= 40);
}

void TestPerf::cacheCountersReportTheTruthOnThisMachine()
{
    CacheCounters counters;
    counters.start();
    doWork(1 << 20, 2);
    const CacheCounterSample small = counters.stop();
    if (!counters.available()) {
        // The unavailable path (the development VM): a reason, invalid values, no crash.
        std::printf("counters unavailable here: %s\n", counters.unavailableReason().c_str());
        QVERIFY(!counters.unavailableReason().empty());
        QVERIFY(counters.unavailableReason().find("unavailable") != std::string::npos);
        QVERIFY(!counters.unavailableSummary().empty() && counters.unavailableSummary().size() <= 40);
        QVERIFY(!small.instructions.valid && !small.cycles.valid);
        QVERIFY(std::isnan(small.instructionsPerCycle()));
        QVERIFY(!counters.running());
        return;
    }
    // The available path: counts are positive and grow with the work, including
    // work done only by the OpenMP worker threads.
    std::printf("counters available%s%s\n", counters.unavailableReason().empty() ? "" : "; partly: ",
                counters.unavailableReason().c_str());
    QVERIFY(small.instructions.valid && small.instructions.value > 0);
    QVERIFY(small.cycles.valid && small.cycles.value > 0);
    counters.start();
    doWork(std::size_t(16) << 20, 2);
    const CacheCounterSample mid = counters.read();  // readable while counting
    doWork(std::size_t(16) << 20, 2);
    const CacheCounterSample large = counters.stop();
    UOT_QVERIFY_MSG(large.instructions.value > 8 * small.instructions.value,
                    large.instructions.value << " vs " << small.instructions.value);
    UOT_QVERIFY_MSG(mid.instructions.value < large.instructions.value,
                    mid.instructions.value << " vs " << large.instructions.value);
    const CacheCounterSample interval = large - mid;
    QVERIFY(interval.instructions.valid && interval.instructions.value > 0);
    // Only a worker thread works: still counted (the team is covered).
    counters.start();
#pragma omp parallel num_threads(2)
    {
        if (omp_get_thread_num() == 1) doWork(std::size_t(16) << 20, 1);
    }
    const CacheCounterSample worker = counters.stop();
    if (omp_get_max_threads() >= 2) UOT_QVERIFY_MSG(worker.instructions.value > 4 * small.instructions.value,
                        worker.instructions.value << " vs " << small.instructions.value);
    if (large.l1dReadMisses.valid) QVERIFY(large.l1dReadMisses.value > 0);
}

void TestPerf::cacheCountersCallingThreadScopeBehavesTheSame()
{
    CacheCounters counters(CounterScope::CallingThread);
    QVERIFY(counters.available() == CacheCounters().available());
    counters.start();
    doWork(1 << 20, 1);
    const CacheCounterSample s = counters.stop();
    QVERIFY(s.instructions.valid == counters.available());
}

void TestPerf::peakRssGrowsWithTouchedMemoryInAChild()
{
    // In a child, so the parent's own peak is not disturbed.
    const IsolatedOutcome out = runIsolated([] {
        const std::uint64_t before = peakRssBytes();
        std::vector<char> block(std::size_t(64) << 20);
        for (std::size_t i = 0; i < block.size(); i += 4096) block[i] = char(i);
        const std::uint64_t after = peakRssBytes();
        return std::to_string(before) + " " + std::to_string(after) + " " + std::to_string(currentRssBytes());
    });
    UOT_QVERIFY_MSG(out.ok, out.failure);
    unsigned long long before = 0, after = 0, current = 0;
    QVERIFY(std::sscanf(out.output.c_str(), "%llu %llu %llu", &before, &after, &current) == 3);
    UOT_QVERIFY_MSG(after >= before + (std::uint64_t(60) << 20), before << " -> " << after);
    UOT_QVERIFY_MSG(current > 0 && current <= after, current << " vs " << after);
}

void TestPerf::resetPeakRssForgetsAFreedBlock()
{
    const IsolatedOutcome out = runIsolated([] {
        {
            std::vector<char> block(std::size_t(64) << 20);
            for (std::size_t i = 0; i < block.size(); i += 4096) block[i] = char(i);
        }  // freed (mmapped by malloc: returned to the kernel)
        const bool reset = resetPeakRss();
        return std::string(reset ? "1 " : "0 ") + std::to_string(peakRssBytes()) + " " +
               std::to_string(currentRssBytes());
    });
    UOT_QVERIFY_MSG(out.ok, out.failure);
    int reset = 0;
    unsigned long long peak = 0, current = 0;
    QVERIFY(std::sscanf(out.output.c_str(), "%d %llu %llu", &reset, &peak, &current) == 3);
    if (reset) UOT_QVERIFY_MSG(peak < current + (std::uint64_t(16) << 20), peak << " vs " << current);
    else std::printf("clear_refs not permitted here: peak RSS counts from process start\n");
}

void TestPerf::isolatedRunReportsFailures()
{
    const IsolatedOutcome thrown = runIsolated([]() -> std::string { throw Error(ErrorCode::Numerical, "boom 42"); });
    QVERIFY(!thrown.ok);
    QVERIFY(thrown.failure.find("boom 42") != std::string::npos);
    const IsolatedOutcome killed = runIsolated([]() -> std::string {
        std::signal(SIGABRT, SIG_DFL);  // the child must die, not run Qt Test's crash handler (stack dump)
        std::raise(SIGABRT);
        return "unreachable";
    });
    QVERIFY(!killed.ok);
    QVERIFY(killed.failure.find("signal") != std::string::npos);
    const IsolatedOutcome fine = runIsolated([] { return std::string(100000, 'x'); });  // larger than a pipe buffer
    UOT_QVERIFY_MSG(fine.ok && fine.output.size() == 100000, fine.failure << " size " << fine.output.size());
}

void TestPerf::rooflineAccountingFollowsTheDocumentedTable()
{
    const IterationCost fused = iterationCost("fused", 4096, 4096, Precision::Fp32);
    QCOMPARE(fused.bytes, std::uint64_t(4096) * 4096 * 4);
    QVERIFY(fused.readOnly);
    UOT_QCOMPARE_CLOSE(fused.flops, 4.0 * 4096 * 4096, 0.0);
    UOT_QCOMPARE_CLOSE(operationalIntensity(fused), 1.0, 1e-12);  // 4 flops per 4-byte element
    const IterationCost map64 = iterationCost("mapuot", 100, 30, Precision::Fp64);
    QVERIFY(map64.bytes == 2u * 100 * 30 * 8);
    QVERIFY(!map64.readOnly);
    QVERIFY(iterationCost("gpu-pot-style", 10, 20, Precision::Fp32).bytes == 2u * 10 * 20 * 4);
    QVERIFY(iterationCost("gpu-fused", 10, 20, Precision::Fp64).bytes == 10u * 20 * 8);
    const RooflineFigures f = rooflineFigures(fused, 1e-3, 134.217728);
    UOT_QCOMPARE_CLOSE(f.gbps, 67.108864, 1e-9);
    UOT_QCOMPARE_CLOSE(f.pctOfPeak, 50.0, 1e-9);
    UOT_QCOMPARE_CLOSE(f.iterationsPerSecond, 1000.0, 1e-9);
    UOT_QCOMPARE_CLOSE(f.gflops, 67.108864, 1e-9);
    QVERIFY(rooflineFigures(fused, 0.0, 1.0).gbps == 0.0);
}

QTEST_APPLESS_MAIN(TestPerf)
#include "test_perf.moc"
