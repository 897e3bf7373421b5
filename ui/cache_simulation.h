#pragma once
// Simulated CPU cache figures, for machines whose PMU is hidden (VMs,
// containers): valgrind's cachegrind wraps `uot bench --single-solve
// --in-process` (the same one-solve run bench/cachegrind.sh measures) on a
// scaled-down, square copy of the current problem, twice with different
// iteration counts so that set-up and start-up cancel out:
//   misses per iteration = (misses(n2) - misses(n1)) / (n2 - n1).
// The last-level cache simulated is the host's, shrunk by the factor the matrix
// was shrunk by, so that the copy is in the same regime (matrix in or out of
// the LL) as the real problem. Everything runs in child processes (QProcess):
// the GUI thread never waits, and cancel() ends the run at once.

#include <QObject>
#include <QProcess>
#include <QString>

#include <cstddef>
#include <memory>

#include "core/transport/uot_problem.h"

class QTemporaryDir;

namespace uot::ui {

// One simulated cache: total bytes, associativity, line bytes.
struct CacheGeometry {
    qint64 bytes = 0;
    int ways = 0;
    int lineBytes = 64;
    bool valid() const { return bytes > 0 && ways > 0 && lineBytes > 0; }
    QString valgrindArgument() const;  // "49152,12,64"
};

// The host's L1 data cache (level 1) or last-level cache (level 0), from
// /sys/devices/system/cpu/cpu0/cache; invalid when sysfs does not say.
CacheGeometry hostCache(int level);

struct CacheSimulationRequest {
    QString solver;  // a CPU variant of the registry
    Precision precision = Precision::Fp32;
    std::size_t rows = 0, cols = 0;  // the current problem
    int maxSize = 512;               // the copy is N x N with N = min(max(rows, cols), maxSize)
    CacheGeometry d1, ll;            // invalid: the host's L1D, and its LL scaled with the matrix
    int iterations1 = 2, iterations2 = 6;
};

// The figures per iteration of the copy.
struct CacheSimulationResult {
    QString solver;
    Precision precision = Precision::Fp32;
    int size = 0;  // N of the N x N copy
    CacheGeometry d1, ll;
    double dataReferences = 0;  // loads and stores
    double d1Misses = 0;        // L1D read + write misses
    double llMisses = 0;        // last-level data read + write misses
    double matrixLines = 0;     // 64-byte lines of the copy's matrix

    double d1MissRate() const { return dataReferences > 0 ? d1Misses / dataReferences : 0; }
    double llMissRate() const { return dataReferences > 0 ? llMisses / dataReferences : 0; }
    double llMissesPerMatrixLine() const { return matrixLines > 0 ? llMisses / matrixLines : 0; }
    QString label() const;    // "simulated (cachegrind, 512 x 512)"
    QString summary() const;  // three short lines: the label, L1D, LL
    QString details() const;  // several lines: caches simulated, how it was measured
};

// The request with its size and caches decided (what start() runs), or an
// error message in `error` when it cannot run (not a CPU variant, no problem).
CacheSimulationRequest plannedSimulation(const CacheSimulationRequest& request, QString* error);

// Where valgrind and the `uot` command line are; empty when not found. `uot`
// is looked for in $UOT_CLI, next to this executable, in ../cli (the build
// tree) and on PATH.
QString findValgrind();
QString findUotCli();

class CacheSimulation final : public QObject {
    Q_OBJECT
public:
    explicit CacheSimulation(QObject* parent = nullptr);
    ~CacheSimulation() override;
    Q_DISABLE_COPY_MOVE(CacheSimulation)

    // Starts in the background; finished() or failed() follows (failed() at
    // once, from the event loop, when valgrind or uot is missing).
    void start(const CacheSimulationRequest& request);
    void cancel();  // failed("cancelled") follows
    bool running() const { return m_running; }

signals:
    void progress(const QString& text);
    void finished(const uot::ui::CacheSimulationResult& result);
    void failed(const QString& message);

private:
    void runStep();
    void stepFinished(int exitCode, QProcess::ExitStatus status);
    void fail(const QString& message);
    void stopProcess();

    CacheSimulationRequest m_request;
    QString m_valgrind, m_uot;
    int m_step = 0;
    double m_counts[2][3] = {};  // per step: data references, D1 misses, LL misses
    QProcess* m_process = nullptr;
    bool m_running = false;
    int m_generation = 0;  // a message queued for an earlier start() is dropped
    std::unique_ptr<QTemporaryDir> m_dir;
};

}  // namespace uot::ui
