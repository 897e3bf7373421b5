#include "ui/solve_worker.h"

#include <QMetaType>
#include <QMutexLocker>
#include <QtConcurrent/QtConcurrentRun>

#include <exception>

#ifdef __linux__
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif

#include "core/transport/uot_error.h"

namespace uot::ui {

JobContext::JobContext(SolveWorker& worker, quint64 generation) : m_worker(worker), m_generation(generation) {}

bool JobContext::cancelled() const
{
    return m_worker.m_cancel.load() || !m_worker.isCurrent(m_generation);
}

const std::atomic<bool>* JobContext::cancelFlag() const { return &m_worker.m_cancel; }

SolveControl JobContext::solveControl(int channel)
{
    SolveControl control;
    control.cancel = &m_worker.m_cancel;
    control.onProgress = [this, channel](const SolveProgress& p) { report(channel, p); };
    return control;
}

void JobContext::report(int channel, const SolveProgress& progress, const CounterSnapshot& counters)
{
    QMutexLocker lock(&m_mutex);
    m_pending.push_back({channel, progress, counters});
    const auto now = Clock::now();
    // The first sample goes out at once; later ones at most every interval.
    if (!m_emittedAny || now - m_lastEmit >= m_worker.m_interval) flushLocked();
}

void JobContext::flush()
{
    QMutexLocker lock(&m_mutex);
    flushLocked();
}

void JobContext::flushLocked()
{
    if (m_pending.isEmpty()) return;
    m_emittedAny = true;
    m_lastEmit = Clock::now();
    if (m_worker.isCurrent(m_generation)) emit m_worker.progress(m_generation, m_pending);
    m_pending.clear();
}

void JobContext::beginRun(const RunInfo& info)
{
    if (m_worker.isCurrent(m_generation)) emit m_worker.runStarted(m_generation, info);
}

void JobContext::phase(const QString& text)
{
    if (m_worker.isCurrent(m_generation)) emit m_worker.phaseChanged(m_generation, text);
}

void JobContext::step(int done, int total, const QString& text)
{
    if (m_worker.isCurrent(m_generation)) emit m_worker.stepChanged(m_generation, done, total, text);
}

SolveWorker::SolveWorker(QObject* parent) : QObject(parent)
{
    m_pool.setMaxThreadCount(1);
    m_pool.setExpiryTimeout(-1);  // the thread lives until shutdown
    qRegisterMetaType<uot::ui::ProgressSample>("uot::ui::ProgressSample");
    qRegisterMetaType<uot::ui::RunInfo>("uot::ui::RunInfo");
    qRegisterMetaType<QVector<uot::ui::ProgressSample>>("QVector<uot::ui::ProgressSample>");
    qRegisterMetaType<std::shared_ptr<const uot::ui::JobOutput>>("std::shared_ptr<const uot::ui::JobOutput>");
}

SolveWorker::~SolveWorker() { shutdown(); }

quint64 SolveWorker::submit(const QString& label, JobFunction job)
{
    QMutexLocker lock(&m_mutex);
    const quint64 replaced = m_hasPending ? m_pendingGeneration : 0;
    const quint64 generation = m_latest.load() + 1;
    m_latest.store(generation);
    m_pendingJob = std::move(job);
    m_pendingLabel = label;
    m_pendingGeneration = generation;
    m_hasPending = true;
    if (m_running) m_cancel.store(true);  // the running job is superseded
    if (!m_started && !m_quit) {
        m_started = true;
        m_thread = QtConcurrent::run(&m_pool, [this] { run(); });
    }
    m_wake.notify_one();
    lock.unlock();
    if (replaced != 0) emit jobCancelled(replaced, nullptr);
    return generation;
}

void SolveWorker::cancel()
{
    QMutexLocker lock(&m_mutex);
    m_cancel.store(true);
    if (m_hasPending) {
        m_hasPending = false;
        m_pendingJob = {};
        const quint64 dropped = m_pendingGeneration;
        lock.unlock();
        emit jobCancelled(dropped, nullptr);
        if (!isBusy()) emit idle();
    }
}

bool SolveWorker::isBusy() const
{
    QMutexLocker lock(&m_mutex);
    return m_running || m_hasPending;
}

void SolveWorker::shutdown()
{
    QFuture<void> thread;
    {
        QMutexLocker lock(&m_mutex);
        m_quit = true;
        m_hasPending = false;
        m_pendingJob = {};
        m_cancel.store(true);
        m_wake.notify_one();
        thread = m_thread;
    }
    thread.waitForFinished();
    m_pool.waitForDone();
    // The thread's last accesses to this object were made under m_mutex (run()
    // returns from inside it). QFuture and QThreadPool synchronise inside
    // libQt6Core, unseen by ThreadSanitizer; taking the mutex once more orders
    // them before this object's destruction for it as well.
    QMutexLocker lock(&m_mutex);
}

bool SolveWorker::isRunning() const
{
    QMutexLocker lock(&m_mutex);
    return m_started && !m_thread.isFinished();
}

void SolveWorker::run()
{
#ifdef __linux__
    // A slightly lower priority (nice +5) for this thread and the OpenMP team it
    // creates (threads inherit it): when the cores are busy with a solve, the GUI
    // thread still gets the CPU as soon as it has an event to handle. On Linux,
    // QThread::setPriority() has no effect under the default scheduler.
    setpriority(PRIO_PROCESS, static_cast<id_t>(syscall(SYS_gettid)), 5);
#endif
    for (;;) {
        JobFunction job;
        QString label;
        quint64 generation = 0;
        {
            QMutexLocker lock(&m_mutex);
            m_wake.wait(m_mutex, [this] { return m_hasPending || m_quit; });
            if (m_quit) return;
            job = std::move(m_pendingJob);
            m_pendingJob = {};
            label = m_pendingLabel;
            generation = m_pendingGeneration;
            m_hasPending = false;
            m_running = true;
            m_cancel.store(false);
        }
        emit jobStarted(generation, label);
        JobContext context(*this, generation);
        std::shared_ptr<JobOutput> output;
        QString error;
        try {
            output = job(context);
        } catch (const uot::Error& e) {
            error = QString::fromStdString(e.what());
        } catch (const std::bad_alloc&) {
            error = tr("Out of memory. Choose a smaller palette size or smaller images.");
        } catch (const std::exception& e) {
            error = QString::fromStdString(e.what());
        }
        context.flush();
        job = {};  // release captured state on this thread
        const bool cancelled = context.cancelled() || (output && output->cancelled);
        {
            QMutexLocker lock(&m_mutex);
            m_running = false;
        }
        if (!isCurrent(generation) || (cancelled && error.isEmpty())) {
            emit jobCancelled(generation, std::const_pointer_cast<const JobOutput>(output));
        } else if (!error.isEmpty()) {
            emit jobFailed(generation, error);
        } else {
            emit jobFinished(generation, std::const_pointer_cast<const JobOutput>(output));
        }
        if (!isBusy()) emit idle();
    }
}

}  // namespace uot::ui
