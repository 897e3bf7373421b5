// `uot-mpi batch`: rank 0 plans the whole batch (prepareBatch: the refusals,
// the skips and the output names, as `uot batch`) and sends every rank the
// inputs still to do, the images and then the clips, each largest first (pixel
// count; a clip weighs its frames x pixels, clip_work.h). The ranks take them
// one at a time as each becomes free, by tickets from two counters they share
// (images, clips: batch_shares.h, shared_counters.h), so that they end
// together whatever each file costs. Every rank runs the batch engine (runBatch)
// over the images, doing those it takes (BatchControl::claim), with its node's
// GPU when it has one (local_gpu.h), then the clips it takes, each whole through
// the clip path of `uot batch` (cli::runClipBatch); it tells rank 0 each input
// it takes and each finished item. Rank 0 prints the progress and, once every
// rank's share has ended, the report and exit code of `uot batch`
// (batch_options.h). A rank that sends nothing for --timeout seconds is reported
// as lost with the files it took and did not finish (failed: "rerun the batch"),
// the others having done the rest, and the job stops (MPI_Abort with the batch's
// exit code): finished outputs are complete files (written atomically), so a
// rerun skips them and does only what is missing.

#include <mpi.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <deque>
#include <exception>
#include <filesystem>
#include <functional>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "app/cli/arg_parser.h"
#include "app/cli/batch_options.h"
#include "app/cli/commands.h"
#include "app/cli/parameter_flags.h"
#include "app/cli/video_command.h"
#include "app/mpi/batch_messages.h"
#include "app/mpi/batch_shares.h"
#include "app/mpi/clip_work.h"
#include "app/mpi/collective_errors.h"
#include "app/mpi/distributed_batch_command.h"
#include "app/mpi/local_gpu.h"
#include "app/mpi/shared_counters.h"
#include "core/pipeline/batch_engine.h"
#include "core/pipeline/batch_plan.h"
#include "core/transport/uot_error.h"

namespace uot::mpi {

namespace {

using cli::UsageError;

constexpr int kItemTag = 0x7b01;       // a finished item (packItem)
constexpr int kHeartbeatTag = 0x7b02;  // nothing: "still working" (during a long image)
constexpr int kEndTag = 0x7b03;        // the rank's share has ended (packShareEnd)
constexpr int kClaimTag = 0x7b04;      // an input the rank has taken (packClaim)
constexpr int kImageCounter = 0, kClipCounter = 1;  // the tickets' counters (SharedCounters)

// Every MPI call a rank makes once the inputs are shared goes through this lock:
// the rank takes its tickets on worker threads (the batched GPU path) while its
// calling thread reports, and MPI_THREAD_SERIALIZED allows one call at a time.
// Recursive: taking an input also reports it.
using MpiLock = std::lock_guard<std::recursive_mutex>;
constexpr double kHeartbeatSeconds = 1.0;

void nap()
{
    const timespec pause{0, 1000000L};  // 1 ms
    nanosleep(&pause, nullptr);
}

// Waits for a non-blocking call without busy polling (the ranks wait for rank 0
// while it still works on its own share).
void waitSleeping(MPI_Request& request)
{
    for (int done = 0;;) {
        MPI_Test(&request, &done, MPI_STATUS_IGNORE);
        if (done) return;
        nap();
    }
}

Bytes broadcastBytes(MPI_Comm comm, Bytes bytes)
{
    std::uint64_t size = bytes.size();
    MPI_Bcast(&size, 1, MPI_UINT64_T, 0, comm);
    bytes.resize(size);
    MPI_Bcast(bytes.data(), static_cast<int>(size), MPI_CHAR, 0, comm);
    return bytes;
}

// The exception a share ended with, as it travels.
ShareEnd shareEndOf(const std::exception_ptr& error)
{
    ShareEnd end;
    if (!error) return end;
    try {
        std::rethrow_exception(error);
    } catch (const UsageError& e) {
        end = {1, 0, e.what()};
    } catch (const Error& e) {
        end = {2, static_cast<int>(e.code()), e.what()};
    } catch (const std::exception& e) {
        end = {3, 0, e.what()};
    }
    return end;
}

// Throws what a share ended with (nothing when it ended fine).
void rethrowEnd(const ShareEnd& end)
{
    if (end.kind == 1) throw UsageError(end.message);
    if (end.kind == 2) throw Error(static_cast<ErrorCode>(end.code), end.message);
    if (end.kind == 3) throw std::runtime_error(end.message);
}

// Test hook (CTest mpi_batch): "R:image" ("R:clip") makes rank R (not 0) take
// the first image (clip) it can as soon as the ranks start, tell rank 0, and
// leave the job as if it crashed, so that the lost rank holds a file whatever
// the timing. Returns the counter to take from (-1: no hook for this rank).
int testExitCounter(int rank)
{
    const char* text = std::getenv("UOT_MPI_BATCH_TEST_EXIT");
    int hookRank = -1;
    char kind[8] = {};
    if (!text || std::sscanf(text, "%d:%6s", &hookRank, kind) != 2 || hookRank != rank || rank == 0) return -1;
    const std::string what(kind);
    return what == "image" ? kImageCounter : what == "clip" ? kClipCounter : -1;
}

// The messages a rank sends to rank 0, kept until MPI is done with them.
class Outbox {
public:
    Outbox(MPI_Comm comm, std::recursive_mutex& mpi) : m_comm(comm), m_mpi(mpi) {}
    void send(Bytes bytes, int tag)
    {
        const MpiLock lock(m_mpi);
        m_pending.push_back({std::move(bytes), MPI_REQUEST_NULL});
        Pending& p = m_pending.back();
        MPI_Isend(p.bytes.data(), static_cast<int>(p.bytes.size()), MPI_CHAR, 0, tag, m_comm, &p.request);
        prune();
    }
    void heartbeat()
    {
        const MpiLock lock(m_mpi);
        const double now = MPI_Wtime();
        if (now - m_lastBeat < kHeartbeatSeconds) return;
        m_lastBeat = now;
        send({}, kHeartbeatTag);
    }
    void flush()
    {
        const MpiLock lock(m_mpi);
        for (Pending& p : m_pending) waitSleeping(p.request);
        m_pending.clear();
    }

private:
    struct Pending {
        Bytes bytes;
        MPI_Request request;
    };
    void prune()
    {
        while (!m_pending.empty()) {
            int done = 0;
            MPI_Test(&m_pending.front().request, &done, MPI_STATUS_IGNORE);
            if (!done) return;
            m_pending.pop_front();
        }
    }
    MPI_Comm m_comm;
    std::recursive_mutex& m_mpi;
    std::deque<Pending> m_pending;
    double m_lastBeat = 0;
};

// Rank 0's side: what every rank has reported.
class Collector {
public:
    Collector(MPI_Comm comm, std::recursive_mutex& mpi, int ranks, std::size_t total,
              cli::BatchProgressPrinter& printer)
        : m_comm(comm), m_mpi(mpi), m_results(total), m_takenBy(total, -1), m_ends(static_cast<std::size_t>(ranks)),
          m_lastHeard(static_cast<std::size_t>(ranks), MPI_Wtime()), m_printer(printer)
    {
    }
    // Rank `rank` has taken item `index`.
    void taken(std::size_t index, int rank)
    {
        const MpiLock lock(m_mpi);
        if (index < m_takenBy.size()) m_takenBy[index] = rank;
    }
    // The rank that took item `index` (-1: none).
    int takenBy(std::size_t index) const { return m_takenBy[index]; }
    void finished(std::size_t index, const BatchItemResult& item)
    {
        m_results[index] = item;
        m_printer.finished(index, m_results.size(), item);
    }
    void ended(int rank, ShareEnd end) { m_ends[static_cast<std::size_t>(rank)] = std::move(end); }
    // Receives what has arrived.
    void drain()
    {
        const MpiLock lock(m_mpi);
        for (;;) {
            int arrived = 0;
            MPI_Status status;
            MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, m_comm, &arrived, &status);
            if (!arrived) return;
            int count = 0;
            MPI_Get_count(&status, MPI_CHAR, &count);
            Bytes bytes(static_cast<std::size_t>(count));
            MPI_Recv(bytes.data(), count, MPI_CHAR, status.MPI_SOURCE, status.MPI_TAG, m_comm, MPI_STATUS_IGNORE);
            m_lastHeard[static_cast<std::size_t>(status.MPI_SOURCE)] = MPI_Wtime();
            if (status.MPI_TAG == kItemTag) {
                std::uint64_t index = 0;
                BatchItemResult item = unpackItem(bytes, index);
                if (index < m_results.size()) finished(static_cast<std::size_t>(index), item);
            } else if (status.MPI_TAG == kClaimTag) {
                taken(static_cast<std::size_t>(unpackClaim(bytes)), status.MPI_SOURCE);
            } else if (status.MPI_TAG == kEndTag) {
                ended(status.MPI_SOURCE, unpackShareEnd(bytes));
            }
        }
    }
    // Waits until every rank's share has ended or the rank has been silent for
    // `timeout` seconds (0: no limit); returns the silent ranks.
    std::vector<int> waitForAll(double timeout)
    {
        const double start = MPI_Wtime();
        for (double& t : m_lastHeard) t = std::max(t, start);
        for (;;) {
            drain();
            std::vector<int> silent;
            bool waiting = false;
            const double now = MPI_Wtime();
            for (std::size_t r = 0; r < m_ends.size(); ++r) {
                if (m_ends[r]) continue;
                waiting = true;
                if (timeout > 0 && now - m_lastHeard[r] > timeout) silent.push_back(static_cast<int>(r));
            }
            if (!waiting) return {};
            bool allSilent = true;  // every rank still awaited is silent: stop waiting
            for (std::size_t r = 0; r < m_ends.size(); ++r)
                if (!m_ends[r] && !(timeout > 0 && now - m_lastHeard[r] > timeout)) allSilent = false;
            if (allSilent) return silent;
            nap();
        }
    }
    std::vector<std::optional<BatchItemResult>>& results() { return m_results; }

private:
    MPI_Comm m_comm;
    std::recursive_mutex& m_mpi;
    std::vector<std::optional<BatchItemResult>> m_results;
    std::vector<int> m_takenBy;
    std::vector<std::optional<ShareEnd>> m_ends;
    std::vector<double> m_lastHeard;
    cli::BatchProgressPrinter& m_printer;
};

// Runs `work` on this thread (a clip: as in `uot batch`, whose results depend on
// the thread the clip path runs on) while a helper thread calls `poll()` every
// few ms, one MPI caller at a time: where MPI allows threads to take turns
// (MPI_THREAD_SERIALIZED, mpi_main.cpp); else `work` alone.
void pollWhile(const std::function<void()>& poll, const std::function<void()>& work)
{
    int level = MPI_THREAD_SINGLE;
    MPI_Query_thread(&level);
    if (level < MPI_THREAD_SERIALIZED) return work();
    std::atomic<bool> running{true};
    std::thread poller([&] {
        while (running.load()) {
            poll();
            nap();
        }
    });
    try {
        work();
    } catch (...) {
        running = false;
        poller.join();
        throw;
    }
    running = false;
    poller.join();
}

// Runs this rank's share: the images it takes (take(position among the images,
// the input)) through the batch engine, then the clips it takes (take(position
// among the clips, the input)) one at a time through `uot batch`'s clip path
// (pollWhile: rank 0 keeps receiving, the others keep sending heartbeats).
// `onFinished(global index, item)` and `onStage()` are called on this thread,
// `take` on this thread or a worker of the engine. Returns the engine's summary
// and how the share ended.
BatchSummary runShare(const cli::BatchCliSettings& batch, const cli::ArgParser& parser,
                      const std::vector<SharedInput>& everyInput,
                      const std::function<bool(std::size_t, const SharedInput&)>& take,
                      const std::function<void(std::size_t, const BatchItemResult&)>& onFinished,
                      const std::function<void(std::size_t, std::size_t, const PipelineProgress&)>& onStage,
                      const std::function<void()>& poll, ShareEnd& end)
{
    BatchSummary summary;
    std::vector<SharedInput> images, clips;
    for (const SharedInput& s : everyInput) (s.clip ? clips : images).push_back(s);
    BatchInputs inputs;
    for (const SharedInput& s : images) inputs.files.push_back(s.input);
    BatchControl control;
    control.claim = [&](std::size_t position) { return take(position, images[position]); };
    control.onProgress = [&](const BatchProgress& p) {
        if (p.index >= images.size()) return;
        const std::size_t global = static_cast<std::size_t>(images[p.index].index);
        if (p.finished)
            onFinished(global, *p.finished);
        else if (p.stage)
            onStage(global, p.index, *p.stage);
    };
    cli::BatchCliSettings quiet = batch;
    quiet.cli.quiet = true;  // rank 0 prints each clip's line, as an image's
    try {
        if (!images.empty()) summary = runBatch(batch.reference, inputs, batch.settings, control);
        std::error_code ec;
        if (!clips.empty()) std::filesystem::create_directories(batch.settings.outDir, ec);
        for (std::size_t position = 0; position < clips.size(); ++position) {
            if (!take(position, clips[position])) continue;
            const SharedInput& clip = clips[position];
            BatchSummary one;
            pollWhile(poll, [&] { cli::runClipBatch({clip.input.path}, quiet, parser, one); });
            for (const BatchItemResult& item : one.items) onFinished(static_cast<std::size_t>(clip.index), item);
        }
    } catch (...) {
        end = shareEndOf(std::current_exception());
    }
    return summary;
}

}  // namespace

int runDistributedBatch(const std::vector<std::string>& args)
{
    MPI_Comm comm = MPI_COMM_WORLD;
    int rank = 0, size = 1;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    const LocalRank local = localRank(comm);
    const std::string gpuChoice = pinLocalGpu(local);  // before anything starts CUDA

    cli::ArgParser parser("mpirun -np P uot-mpi batch REFERENCE INPUT... --out-dir DIR [options]",
                          cli::batchHelpSummary() +
                              " The ranks take the inputs one at a time as each becomes free, the largest first (by "
                              "pixel count; a clip counts its frames x pixels and is done whole by one rank); each rank "
                              "uses its node's GPU "
                              "(local rank modulo the visible devices) and rank 0 writes the report of `uot batch`.");
    cli::addBatchOptions(parser, cli::BatchInputKinds::ImagesAndClips);
    cli::ParameterFlagStyle timeoutStyle;
    timeoutStyle.helpSuffix = "; the lost rank is reported with the files it did not finish, and the job exits with "
                              "the batch's exit code";
    cli::addParameterOption(parser, params::parameter("timeout"), timeoutStyle);
    cli::BatchCliSettings batch;
    double timeout = params::parameter("timeout").defaultValue;
    runCollectively(comm, [&] {
        parser.parse(args);
        if (parser.helpRequested()) return;
        batch = cli::readBatchOptions(parser);
        // --threads 0 (all cores) on a node shared by several ranks: each rank takes its share.
        const int threads = threadsPerLocalRank(batch.cli.recolor.threads,
                                                static_cast<int>(std::thread::hardware_concurrency()), local.size);
        batch.cli.recolor.threads = batch.cli.recolor.transport.options.threads = threads;
        batch.settings.recolor.threads = batch.settings.recolor.transport.options.threads = threads;
        timeout = cli::parameterNumber(parser, params::parameter("timeout"));
    });
    if (parser.helpRequested()) {
        std::printf("%s", parser.helpText().c_str());
        return cli::kExitOk;
    }

    // Rank 0 plans the whole batch and sends every rank the inputs still to do.
    BatchPlan plan;
    Bytes shares;
    runCollectively(comm, [&] {
        if (rank != 0) return;
        const cli::BatchWork work = cli::scanBatchWork(batch);
        const BatchInputs& inputs = work.images;
        if (!inputs.files.empty() || !inputs.skipped.empty()) plan = prepareBatch(batch.reference, inputs, batch.settings);
        std::vector<SharedInput> images, clips;
        std::vector<std::uint64_t> imageWork, clipWork;
        for (std::size_t i = 0, f = inputs.skipped.size(); i < plan.items.size(); ++i) {
            if (i < inputs.skipped.size() || !plan.pending[i]) continue;
            const BatchInput& input = inputs.files[i - f];
            images.push_back({i, input, false});
            imageWork.push_back(headerPixelCount(input.path));
        }
        // The clips after the images, as `uot batch` reports them.
        for (std::size_t k = 0; k < work.clips.size(); ++k) {
            clips.push_back({plan.items.size() + k, {work.clips[k], false}, true});
            clipWork.push_back(headerClipWork(work.clips[k]));
        }
        std::vector<SharedInput> everyInput;
        for (const std::size_t k : largestFirst(imageWork)) everyInput.push_back(images[k]);
        for (const std::size_t k : largestFirst(clipWork)) everyInput.push_back(clips[k]);
        shares = packShares(plan.items.size() + work.clips.size(), everyInput);
    });
    std::uint64_t total = 0;
    const std::vector<SharedInput> everyInput = unpackShares(broadcastBytes(comm, std::move(shares)), total);

    // The inputs each rank takes: a ticket of the images' or the clips' counter at a time.
    std::recursive_mutex mpi;
    SharedCounters counters(comm, 2);
    TicketCursor imageTickets([&] { return counters.fetchAndIncrement(kImageCounter); });
    TicketCursor clipTickets([&] { return counters.fetchAndIncrement(kClipCounter); });
    // Whether this rank does `input`, at `position` of the images or of the clips;
    // `taken(its global index)` is called, under the lock, for each it does.
    const auto takeWith = [&](const std::function<void(std::uint64_t)>& taken) {
        return [&, taken](std::size_t position, const SharedInput& input) {
            const MpiLock lock(mpi);
            if (!(input.clip ? clipTickets : imageTickets).mine(position)) return false;
            taken(input.index);
            return true;
        };
    };

    if (rank != 0) {
        Outbox outbox(comm, mpi);
        if (const int counter = testExitCounter(rank); counter >= 0) {
            const bool clip = counter == kClipCounter;
            const std::uint64_t ticket = counters.fetchAndIncrement(counter);  // a position among the images (clips)
            std::uint64_t position = 0;
            for (const SharedInput& s : everyInput)
                if (s.clip == clip && position++ == ticket) outbox.send(packClaim(s.index), kClaimTag);
            outbox.flush();
            std::_Exit(9);
        }
        ShareEnd end;
        runShare(
            batch, parser, everyInput,
            takeWith([&](std::uint64_t index) { outbox.send(packClaim(index), kClaimTag); }),
            [&](std::size_t index, const BatchItemResult& item) { outbox.send(packItem(index, item), kItemTag); },
            [&](std::size_t, std::size_t, const PipelineProgress&) { outbox.heartbeat(); },
            [&] { outbox.heartbeat(); }, end);
        outbox.send(packShareEnd(end), kEndTag);
        outbox.flush();
        MPI_Request barrier = MPI_REQUEST_NULL;
        MPI_Ibarrier(comm, &barrier);
        waitSleeping(barrier);
        runCollectively(comm, [&] { rethrowEnd(end); });  // every rank stops with the lowest failing rank's error
        int code = 0;
        MPI_Bcast(&code, 1, MPI_INT, 0, comm);
        return code;
    }

    // Rank 0: what it takes, and what the others report.
    if (!batch.cli.quiet) {
        if (!batch.cli.deviceNote.empty()) std::fprintf(stderr, "note: %s\n", batch.cli.deviceNote.c_str());
        std::fprintf(stderr, "uot-mpi batch: %zu inputs over %d rank%s%s%s\n", everyInput.size(), size,
                     size == 1 ? "" : "s", gpuChoice.empty() ? "" : "; rank 0: ", gpuChoice.c_str());
    }
    const double start = MPI_Wtime();
    cli::BatchProgressPrinter printer(batch.cli);
    Collector collector(comm, mpi, size, static_cast<std::size_t>(total), printer);
    for (std::size_t i = 0; i < plan.items.size(); ++i)
        if (!plan.pending[i]) collector.finished(i, plan.items[i]);
    ShareEnd ownEnd;
    const BatchSummary own = runShare(
        batch, parser, everyInput,
        takeWith([&](std::uint64_t index) { collector.taken(static_cast<std::size_t>(index), 0); }),
        [&](std::size_t index, const BatchItemResult& item) {
            collector.finished(index, item);
            collector.drain();
        },
        [&](std::size_t index, std::size_t, const PipelineProgress& stage) {
            printer.stage(index, static_cast<std::size_t>(total), stage);
            collector.drain();
        },
        [&] { collector.drain(); }, ownEnd);
    printer.finish();
    collector.ended(0, ownEnd);
    const std::vector<int> lost = collector.waitForAll(timeout);

    BatchSummary summary;
    summary.referenceTimings = own.referenceTimings;
    // The files a lost rank took and did not finish: failed, to be done by a rerun.
    std::vector<std::size_t> unfinished;
    char seconds[32];
    std::snprintf(seconds, sizeof seconds, "%g s", timeout);
    for (const SharedInput& s : everyInput) {
        const std::size_t index = static_cast<std::size_t>(s.index);
        std::optional<BatchItemResult>& result = collector.results()[index];
        if (result) continue;
        BatchItemResult item;
        item.input = s.input.path;
        item.status = BatchItemStatus::Failed;
        const int by = collector.takenBy(index);
        item.message = by >= 0 ? "not done: rank " + std::to_string(by) + " stopped answering for " +
                                     seconds + " (it died or hung); rerun the batch to do the missing files"
                               : std::string("not done: no rank took it before the job stopped; rerun the batch to do "
                                             "the missing files");
        result = item;
        unfinished.push_back(index);
    }
    if (!lost.empty()) {
        std::string names;
        for (const int r : lost) names += (names.empty() ? "" : ", ") + std::to_string(r);
        std::fprintf(stderr, "uot-mpi batch: rank%s %s lost (no message for %g s, --timeout); the files not done:\n",
                     lost.size() == 1 ? "" : "s", names.c_str(), timeout);
        for (const std::size_t index : unfinished) {
            const int by = collector.takenBy(index);
            const std::string& path = collector.results()[index]->input;
            if (by >= 0)
                std::fprintf(stderr, "  rank %d: %s\n", by, path.c_str());
            else
                std::fprintf(stderr, "  no rank: %s\n", path.c_str());
        }
    } else {
        // Every rank has ended: an error that stopped a share (no GPU, an unreadable reference) stops the
        // command on every rank, the lowest failing rank's, as it stops `uot batch`.
        MPI_Request barrier = MPI_REQUEST_NULL;  // the other ranks wait in the same (non-blocking) barrier
        MPI_Ibarrier(comm, &barrier);
        waitSleeping(barrier);
        runCollectively(comm, [&] { rethrowEnd(ownEnd); });
    }
    for (std::optional<BatchItemResult>& result : collector.results()) addItem(summary, std::move(*result));
    summary.seconds = MPI_Wtime() - start;
    const int code = cli::reportBatch(summary, batch.cli);
    if (!lost.empty()) {  // the lost ranks cannot take part in MPI_Finalize
        std::fflush(stdout);
        std::fflush(stderr);
        MPI_Abort(comm, code == cli::kExitOk ? cli::kExitPartial : code);
    }
    int agreed = code;
    MPI_Bcast(&agreed, 1, MPI_INT, 0, comm);
    return code;
}

}  // namespace uot::mpi
