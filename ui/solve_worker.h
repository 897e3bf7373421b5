#pragma once
// The one background thread of the studio's jobs. Every solve, re-map,
// comparison, LUT and batch runs here, never on the GUI thread
// (docs/ARCHITECTURE.md, "Rules the code keeps"). The thread is the one thread
// of the worker's own QThreadPool, started through QtConcurrent like every
// other background task of the studio:
//  - submit() replaces a pending request and cancels the running one (the
//    newest request wins); parameters travel inside the job, copied under the lock;
//  - cancellation is a std::atomic<bool> the solver polls every iteration
//    through uot::SolveControl (a queued slot could not reach a blocked thread);
//  - every job carries a generation number; results of an older generation are
//    dropped, both here and by receivers that compare with latestGeneration();
//  - progress reaches the GUI thread through one queued signal, at most about
//    25 times a second, each carrying every sample since the previous one; the
//    first and the last sample of a run are always delivered;
//  - the destructor cancels, wakes and joins the thread (deterministic shutdown).

#include <QFuture>
#include <QMutex>
#include <QObject>
#include <QString>
#include <QThreadPool>
#include <QVector>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>

#include "core/transport/solve_options.h"

namespace uot::ui {

// Hardware counters and memory at a check (totals since the run started).
struct CounterSnapshot {
    bool valid = false;         // false when the counters are unavailable here
    double l1dMisses = 0;       // L1 data cache read misses
    double llcMisses = 0;       // last-level cache misses
    double instructions = 0;    // instructions retired
    std::uint64_t peakRssBytes = 0;  // peak resident memory of the process (0 = unknown)
};

// One convergence check of one run. `channel` tells apart the runs of one job
// (the two sides of a comparison, the files of a batch).
struct ProgressSample {
    int channel = 0;
    SolveProgress progress;
    CounterSnapshot counters;
};

// Announced when a run starts, before its first sample: what is being solved.
struct RunInfo {
    int channel = 0;
    QString label;    // "CPU fused"
    QString variant;  // registry name
    std::size_t rows = 0;
    std::size_t cols = 0;
    Precision precision = Precision::Fp32;
    double eps = 0;  // the target eps (0 = not known)
};

// What a job hands back to the GUI thread. Each kind of job derives its own
// output with typed fields (SyntheticSolveOutput, ComparisonOutput in
// ui/studio_jobs.h; RecolorOutput, BatchOutput in ui/pipeline_jobs.h; LutOutput
// in ui/lut_job.h); a receiver takes its own with outputOf<T>(). The worker
// only reads `cancelled`.
struct JobOutput {
    virtual ~JobOutput() = default;
    bool cancelled = false;  // the job stopped early; what it holds is partial
};

// `output` as the job type T made it, or null when another kind of job made it.
template <class T>
std::shared_ptr<const T> outputOf(const std::shared_ptr<const JobOutput>& output)
{
    return std::dynamic_pointer_cast<const T>(output);
}

class SolveWorker;

// Given to a running job: cancellation state, throttled progress, phases.
class JobContext final {
public:
    JobContext(SolveWorker& worker, quint64 generation);
    Q_DISABLE_COPY_MOVE(JobContext)

    quint64 generation() const { return m_generation; }
    // True once the job was cancelled or superseded by a newer request.
    bool cancelled() const;
    const std::atomic<bool>* cancelFlag() const;
    // A SolveControl whose progress goes to `channel` (throttled) and whose
    // cancel flag is this job's.
    SolveControl solveControl(int channel = 0);
    // Records one progress sample; delivers it now or batches it (throttle).
    // Thread-safe.
    void report(int channel, const SolveProgress& progress, const CounterSnapshot& counters = {});
    // Announces a run (delivered at once, never throttled).
    void beginRun(const RunInfo& info);
    // Delivers any batched samples now (end of a run: the last is never lost).
    void flush();
    // A line of status text for the status bar ("Building palettes...").
    void phase(const QString& text);
    // Free-form progress for non-solver work (batch files): done of total.
    void step(int done, int total, const QString& text);

private:
    using Clock = std::chrono::steady_clock;
    void flushLocked();
    SolveWorker& m_worker;
    quint64 m_generation;
    QMutex m_mutex;  // report() may be called from two solver threads (comparisons)
    QVector<ProgressSample> m_pending;
    Clock::time_point m_lastEmit;
    bool m_emittedAny = false;
};

using JobFunction = std::function<std::shared_ptr<JobOutput>(JobContext&)>;

class SolveWorker final : public QObject {
    Q_OBJECT
public:
    explicit SolveWorker(QObject* parent = nullptr);
    ~SolveWorker() override;
    Q_DISABLE_COPY_MOVE(SolveWorker)

    // Queues a job; returns its generation. A pending job that has not started
    // is replaced; a running job is asked to cancel. Starts the thread on first use.
    quint64 submit(const QString& label, JobFunction job);
    // Cancels the running job and drops a pending one.
    void cancel();
    // Generation of the newest submitted job (results of older ones are stale).
    quint64 latestGeneration() const { return m_latest.load(); }
    // True while a job runs or waits.
    bool isBusy() const;
    // Cancels everything and joins the thread; called by the destructor.
    void shutdown();
    // True while the worker's thread exists (from the first submit to shutdown).
    bool isRunning() const;

    // Minimum interval between two progress deliveries (default 40 ms = 25/s).
    void setProgressInterval(std::chrono::milliseconds interval) { m_interval = interval; }
    std::chrono::milliseconds progressInterval() const { return m_interval; }

signals:
    void jobStarted(quint64 generation, const QString& label);
    void runStarted(quint64 generation, const uot::ui::RunInfo& info);
    void progress(quint64 generation, const QVector<uot::ui::ProgressSample>& samples);
    void phaseChanged(quint64 generation, const QString& text);
    void stepChanged(quint64 generation, int done, int total, const QString& text);
    // The job returned (possibly with output->cancelled set).
    void jobFinished(quint64 generation, std::shared_ptr<const uot::ui::JobOutput> output);
    void jobFailed(quint64 generation, const QString& message);
    // The job was cancelled or superseded. `output` is what it had finished
    // (a cancelled batch lists the files it wrote); null when nothing.
    void jobCancelled(quint64 generation, std::shared_ptr<const uot::ui::JobOutput> output);
    // No job running and none pending.
    void idle();

private:
    // The thread's loop: takes the pending job, runs it, reports, until shutdown.
    void run();

    friend class JobContext;
    bool isCurrent(quint64 generation) const { return generation == m_latest.load(); }

    mutable QMutex m_mutex;
    // std::condition_variable_any, not QWaitCondition: QWaitCondition releases and
    // retakes m_mutex inside libQt6Core, where ThreadSanitizer (with a Qt not built
    // for it) cannot see it; this one does it through QMutex's inline lock/unlock.
    std::condition_variable_any m_wake;
    JobFunction m_pendingJob;
    QString m_pendingLabel;
    quint64 m_pendingGeneration = 0;
    bool m_hasPending = false;
    bool m_running = false;
    bool m_quit = false;
    std::atomic<bool> m_cancel{false};
    std::atomic<quint64> m_latest{0};
    std::chrono::milliseconds m_interval{40};
    QThreadPool m_pool;  // one thread: the worker's
    bool m_started = false;  // run() was started on m_pool (guarded by m_mutex)
    QFuture<void> m_thread;  // run() on it, once started (guarded by m_mutex)
};

}  // namespace uot::ui
