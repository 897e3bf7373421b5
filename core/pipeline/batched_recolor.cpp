#include "core/pipeline/batched_recolor.h"

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <thread>

#include "core/registry/batched_solver_registry.h"
#include "core/transport/uot_error.h"

namespace uot {

namespace {

using Clock = std::chrono::steady_clock;
double secondsSince(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

void appendNote(std::string& notes, const std::string& note)
{
    if (note.empty()) return;
    if (!notes.empty()) notes += "; ";
    notes += note;
}

// Runs `work` for one image; a cancellation or an error ends up in its outcome.
// Returns true when `work` completed.
template <typename Work>
bool recordOutcome(BatchedItemOutcome& out, Work&& work)
{
    try {
        work();
        return true;
    } catch (const Cancelled&) {
        out.status = BatchedItemStatus::Cancelled;
        out.message = "cancelled";
    } catch (const std::exception& e) {
        out.status = BatchedItemStatus::Failed;
        out.message = e.what();
    }
    return false;
}

// The shared state of one batch: the queues between the stages and the items.
class BatchedRun {
public:
    BatchedRun(std::shared_ptr<const Palette> reference, const RecolorSettings& settings, const BatchedRecolorJob& job,
               const BatchedRecolorOptions& options, const BatchedRecolorControl& control, BatchedRecolorReport& report)
        : m_reference(std::move(reference)), m_job(job), m_control(control), m_report(report),
          m_solver(createBatchedSolver(options.batchedSolver)), m_pipelines(job.count), m_solveCancelled(job.count, false)
    {
        // The batch's CPU threads in all: settings.threads when given (--threads N, or an
        // MPI rank's share of its node), else every hardware thread.
        const int hardware = std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
        const int budget = settings.threads > 0 ? settings.threads : hardware;
        // One thread of the budget is left to the calling thread, which drives the device.
        m_workers = options.workers > 0 ? options.workers : std::max(1, budget - 1);
        m_group = std::max<std::size_t>(1, options.groupSize);
        m_maxInFlight = options.maxInFlight > 0 ? options.maxInFlight : 2 * m_group + static_cast<std::size_t>(m_workers);
        m_settings = settings;
        // Images run side by side: each one's palette and mapping get a share of the budget.
        m_settings.threads = std::max(1, budget / m_workers);
        m_report.items.assign(job.count, {});
    }

    void run()
    {
        std::vector<std::thread> threads;
        for (int w = 0; w < m_workers; ++w) threads.emplace_back([this] { workerLoop(); });
        try {
            coordinate();
        } catch (...) {
            stopWorkers(threads);
            throw;
        }
        stopWorkers(threads);
    }

private:
    bool cancelRequested() const { return m_control.cancel && m_control.cancel->load(std::memory_order_relaxed); }

    void stopWorkers(std::vector<std::thread>& threads)
    {
        {
            std::lock_guard lock(m_mutex);
            m_stop = true;
        }
        m_wake.notify_all();
        for (std::thread& t : threads) t.join();
    }

    // The calling thread: reports finished images and solves the queued problems in groups.
    void coordinate()
    {
        const std::size_t total = m_job.count;
        std::size_t reported = 0;
        std::unique_lock lock(m_mutex);
        while (reported + m_unclaimed < total) {
            m_wake.wait(lock, [&] { return !m_finished.empty() || solvable() || reported + m_unclaimed >= total; });
            while (!m_finished.empty()) {
                const std::size_t k = m_finished.front();
                m_finished.pop_front();
                ++reported;
                if (m_control.onFinished) {
                    lock.unlock();
                    m_control.onFinished(k, m_report.items[k]);
                    lock.lock();
                }
            }
            if (!solvable()) continue;
            std::vector<std::size_t> group;
            while (!m_readyToSolve.empty() && group.size() < m_group) {
                group.push_back(m_readyToSolve.front());
                m_readyToSolve.pop_front();
            }
            lock.unlock();
            solveGroup(group);
            lock.lock();
            for (std::size_t k : group) m_readyToMap.push_back(k);
            m_wake.notify_all();
        }
    }

    // A group can go to the solver: a full one, or what there is when no more
    // images can arrive before some are mapped (all loaded, or the in-flight cap).
    bool solvable() const
    {
        if (m_readyToSolve.empty()) return false;
        if (m_readyToSolve.size() >= m_group) return true;
        return m_preparing == 0 && (m_nextLoad >= m_job.count || m_inFlight >= m_maxInFlight);
    }

    void solveGroup(const std::vector<std::size_t>& group)
    {
        std::vector<UotProblem> problems;
        for (std::size_t k : group) problems.push_back(*m_pipelines[k]->transportProblem());
        SolveControl sc;
        sc.cancel = m_control.cancel;
        std::vector<SolveResult> results;
        const auto start = Clock::now();
        try {
            results = m_solver->solveBatch(problems, m_settings.transport.options, sc);
        } catch (const Error& e) {
            // Each image of the group is then solved alone by its pipeline when it is mapped.
            for (std::size_t k : group)
                appendNote(m_report.items[k].message,
                           std::string("the batched solve failed (") + e.what() + "): solved alone");
            return;
        }
        const double seconds = secondsSince(start);
        ++m_report.groups;
        m_report.solveSeconds += seconds;
        for (std::size_t g = 0; g < group.size(); ++g) {
            const std::size_t k = group[g];
            SolveResult& r = results[g];
            if (r.cancelled) {
                m_solveCancelled[k] = true;
            } else if (r.status == NumericalStatus::NotFinite) {
                appendNote(m_report.items[k].message, "the batched solve did not stay finite: solved alone");
            } else {
                m_pipelines[k]->adoptPlan(std::move(r), seconds / double(group.size()));
            }
        }
    }

    void workerLoop()
    {
        std::unique_lock lock(m_mutex);
        for (;;) {
            m_wake.wait(lock, [&] {
                return m_stop || !m_readyToMap.empty() || (m_nextLoad < m_job.count && m_inFlight < m_maxInFlight);
            });
            if (!m_readyToMap.empty()) {
                const std::size_t k = m_readyToMap.front();
                m_readyToMap.pop_front();
                lock.unlock();
                finishItem(k);
                lock.lock();
                --m_inFlight;
                m_finished.push_back(k);
                m_wake.notify_all();
            } else if (m_nextLoad < m_job.count && m_inFlight < m_maxInFlight) {
                const std::size_t k = m_nextLoad++;
                if (m_control.claim && !m_control.claim(k)) {  // another process's image
                    ++m_unclaimed;
                    m_wake.notify_all();
                    continue;
                }
                ++m_inFlight;
                ++m_preparing;
                lock.unlock();
                const bool ready = prepareItem(k);
                lock.lock();
                --m_preparing;
                if (ready) {
                    m_readyToSolve.push_back(k);
                } else {
                    --m_inFlight;
                    m_finished.push_back(k);
                }
                m_wake.notify_all();
            } else if (m_stop) {
                return;
            }
        }
    }

    // Pipelines are reused image after image: each keeps its GPU mapper, whose
    // device and pinned buffers would otherwise be allocated and freed per image
    // (a free waits for the whole device, the batched solve included).
    std::unique_ptr<RecolorPipeline> acquirePipeline()
    {
        {
            std::lock_guard lock(m_poolMutex);
            if (!m_pool.empty()) {
                std::unique_ptr<RecolorPipeline> p = std::move(m_pool.back());
                m_pool.pop_back();
                return p;
            }
        }
        return std::make_unique<RecolorPipeline>(m_settings);
    }

    void releasePipeline(std::unique_ptr<RecolorPipeline> pipeline)
    {
        if (!pipeline) return;
        std::lock_guard lock(m_poolMutex);
        m_pool.push_back(std::move(pipeline));
    }

    // Load and palette of image k; false when it failed or was cancelled.
    bool prepareItem(std::size_t k)
    {
        BatchedItemOutcome& out = m_report.items[k];
        if (cancelRequested()) {
            out.status = BatchedItemStatus::Cancelled;
            out.message = "cancelled before it started";
            return false;
        }
        if (m_job.skip) {
            out.message = m_job.skip(k);
            if (!out.message.empty()) {
                out.status = BatchedItemStatus::Skipped;
                return false;
            }
        }
        std::unique_ptr<RecolorPipeline> pipeline;
        const bool ready = recordOutcome(out, [&] {
            const auto start = Clock::now();
            Image image = m_job.load(k);
            out.timings.decode = secondsSince(start);
            pipeline = acquirePipeline();
            pipeline->resetTimings();
            pipeline->setSource(std::move(image));
            pipeline->setReferencePalette(m_reference);
            PipelineControl pc;
            pc.cancel = m_control.cancel;
            pipeline->preparePalettes(pc);
        });
        if (ready) {
            m_pipelines[k] = std::move(pipeline);
            return true;
        }
        releasePipeline(std::move(pipeline));
        return false;
    }

    // Mapping and store of image k (solved alone first when its group's solve failed).
    void finishItem(std::size_t k)
    {
        BatchedItemOutcome& out = m_report.items[k];
        std::unique_ptr<RecolorPipeline> pipeline = std::move(m_pipelines[k]);
        if (m_solveCancelled[k] || cancelRequested()) {
            out.status = BatchedItemStatus::Cancelled;
            out.message = "cancelled";
            releasePipeline(std::move(pipeline));
            return;
        }
        recordOutcome(out, [&] {
            PipelineControl pc;
            pc.cancel = m_control.cancel;
            const Image result = pipeline->render(pc);
            const PipelineStats& stats = pipeline->stats();
            out.timings.palette = stats.timings.palette;
            out.timings.cost = stats.timings.cost;
            out.timings.solve = stats.timings.solve;
            out.timings.map = stats.timings.map;
            appendNote(out.message, stats.gpuNote);
            const auto start = Clock::now();
            m_job.store(k, result);
            out.timings.encode = secondsSince(start);
            out.status = BatchedItemStatus::Done;
        });
        releasePipeline(std::move(pipeline));
    }

    std::shared_ptr<const Palette> m_reference;
    const BatchedRecolorJob& m_job;
    const BatchedRecolorControl& m_control;
    BatchedRecolorReport& m_report;
    std::unique_ptr<BatchedUotSolver> m_solver;
    RecolorSettings m_settings;
    int m_workers = 1;
    std::size_t m_group = 1;
    std::size_t m_maxInFlight = 1;

    std::vector<std::unique_ptr<RecolorPipeline>> m_pipelines;  // each touched by one thread at a time
    std::mutex m_poolMutex;
    std::vector<std::unique_ptr<RecolorPipeline>> m_pool;       // idle pipelines, reused
    std::vector<bool> m_solveCancelled;                         // written by the solving thread before hand-off

    std::mutex m_mutex;
    std::condition_variable m_wake;
    std::size_t m_nextLoad = 0;
    std::size_t m_inFlight = 0;
    std::size_t m_preparing = 0;
    std::size_t m_unclaimed = 0;  // images another process does (control.claim)
    std::deque<std::size_t> m_readyToSolve, m_readyToMap, m_finished;
    bool m_stop = false;
};

}  // namespace

BatchedRecolorReport runBatchedRecolor(std::shared_ptr<const Palette> referencePalette, const RecolorSettings& settings,
                                       const BatchedRecolorJob& job, const BatchedRecolorOptions& options,
                                       const BatchedRecolorControl& control)
{
    validateSettings(settings);
    if (!referencePalette || referencePalette->size() == 0)
        throw Error(ErrorCode::InvalidArgument, "batched recolor: the reference palette is empty");
    if (!job.load || !job.store) throw Error(ErrorCode::InvalidArgument, "batched recolor: load and store are required");
    const auto start = Clock::now();
    BatchedRecolorReport report;
    BatchedRun run(std::move(referencePalette), settings, job, options, control, report);
    if (job.count > 0) run.run();
    report.seconds = secondsSince(start);
    return report;
}

}  // namespace uot
