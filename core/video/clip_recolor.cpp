#include "core/video/clip_recolor.h"

#include <chrono>
#include <deque>
#include <exception>
#include <memory>
#include <mutex>
#include <thread>

#include "core/color/cube_lut.h"
#include "core/color/lut_apply.h"
#include "core/transport/uot_error.h"
#include "core/video/bounded_queue.h"

namespace uot {

namespace {

using Clock = std::chrono::steady_clock;
double secondsSince(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

// The first error of the pipeline's threads, rethrown on the calling thread.
class FirstError {
public:
    void set(std::exception_ptr e)
    {
        std::lock_guard lock(m_mutex);
        if (!m_error) m_error = std::move(e);
    }
    void rethrow()
    {
        std::lock_guard lock(m_mutex);
        if (m_error) std::rethrow_exception(m_error);
    }

private:
    std::mutex m_mutex;
    std::exception_ptr m_error;
};

}  // namespace

ClipRecolorReport applyClipLook(const std::string& input, const ClipLook& look, const std::string& output,
                                const ClipRecolorOptions& options)
{
    if (look.shots.empty()) throw Error(ErrorCode::InvalidArgument, "no look to apply");
    checkClipOutput(output, options.write);
    ClipReadOptions readOptions;
    readOptions.copyAudio = true;
    const auto reader = ClipReader::open(input, readOptions);
    auto writer = ClipWriter::open(output, *reader, options.write);
    ClipRecolorReport report;
    report.input = reader->info();
    for (const std::string& note : report.input.notes) report.notes.push_back(note);
    const auto start = Clock::now();

    BoundedQueue<ClipItem> decoded(std::size_t(options.queueFrames)), mapped(std::size_t(options.queueFrames));
    FirstError error;
    std::thread decoder([&] {
        try {
            ClipItem item;
            while (true) {
                const auto t = Clock::now();
                const bool more = reader->next(item);
                report.decodeSeconds += secondsSince(t);
                if (!more) break;
                if (!decoded.push(std::move(item))) return;
            }
        } catch (...) {
            error.set(std::current_exception());
        }
        decoded.close();
    });
    std::thread encoder([&] {
        try {
            ClipItem item;
            while (mapped.pop(item)) {
                const auto t = Clock::now();
                writer->write(item);
                report.encodeSeconds += secondsSince(t);
            }
        } catch (...) {
            error.set(std::current_exception());
            mapped.abort();   // the mapping stops pushing
            decoded.abort();  // and the decoder stops reading
        }
    });
    const auto stopAll = [&] {
        decoded.abort();
        mapped.abort();
        decoder.join();
        encoder.join();
    };

    try {
        CubeLut blend;
        // Items in file order whose frames may still be on the device: a frame handed to the GPU
        // (its submission number) is written once `inFlight` later frames were submitted.
        // Declared before the runner, so that the runner's flush comes first on an error.
        std::deque<std::pair<ClipItem, long long>> pending;
        long long submitted = 0;
        // A shot's LUT maps its frames through the frame kernels (lut_apply.h; RGB
        // frames, in place; on the GPU when asked for); a cross-fade's blended LUT,
        // new at every frame, and gray or RGBA sequence frames take applyCubeToImage
        // on the CPU (the same values).
        std::unique_ptr<FrameLutRunner> runner;
        const CubeLut* runnerLut = nullptr;
        FrameLutRunner::Options runnerOptions;
        runnerOptions.threads = options.threads;
        runnerOptions.useGpu = options.useGpu;
        runnerOptions.device = options.device;
        const auto noteRunner = [&] {
            if (!runner) return;
            report.mapDevice = runner->describe();
            if (!runner->fallbackMessage().empty()) report.mapNote = runner->fallbackMessage();
        };
        // Hands the mapped items on in order (all of them: the device flushed); false once the encoder stopped.
        const auto handOn = [&](bool all) {
            const int inFlight = runner ? runner->inFlight() : 0;
            while (!pending.empty()) {
                const long long seq = pending.front().second;
                if (!all && seq >= 0 && inFlight > 0 && submitted - seq <= inFlight) break;
                if (!mapped.push(std::move(pending.front().first))) return false;
                pending.pop_front();
            }
            return true;
        };
        const auto flushRunner = [&] {
            if (!runner) return;
            const auto t = Clock::now();
            runner->flush();
            report.mappingSeconds += secondsSince(t);
            noteRunner();
        };
        ClipItem item;
        auto lastReport = Clock::now();
        const long long total = report.input.frameCount;
        bool encoderStopped = false;
        while (!encoderStopped && decoded.pop(item)) {
            if (options.cancel && options.cancel->load(std::memory_order_relaxed)) throw Cancelled();
            long long seq = -1;
            if (item.frame) {
                const auto t = Clock::now();
                const CubeLut& lut = look.lutFor(item.frame->index, blend);
                Image& image = item.frame->image;
                if (&lut != &blend && image.channels == 3) {
                    if (runnerLut != &lut) {
                        flushRunner();
                        if (!handOn(true)) {
                            encoderStopped = true;
                            break;
                        }
                        runner = std::make_unique<FrameLutRunner>(lut, runnerOptions);
                        runnerLut = &lut;
                        submitted = 0;
                    }
                    const FrameView frame = frameViewOf(image);
                    runner->submit(frame, frame);
                    if (runner->onDevice()) seq = submitted++;
                } else {
                    image = applyCubeToImage(lut, image, CubeInterpolation::Tetrahedral, options.threads);
                }
                report.mappingSeconds += secondsSince(t);
                ++report.frames;
                if (options.onProgress && secondsSince(lastReport) > 0.25) {
                    lastReport = Clock::now();
                    ClipProgress p;
                    p.frame = report.frames;
                    p.frames = total;
                    const double elapsed = secondsSince(start);
                    p.framesPerSecond = elapsed > 0 ? double(report.frames) / elapsed : 0;
                    if (total > 0 && p.framesPerSecond > 0) p.secondsLeft = double(total - report.frames) / p.framesPerSecond;
                    options.onProgress(p);
                }
            }
            pending.emplace_back(std::move(item), seq);
            encoderStopped = !handOn(false);
        }
        if (!encoderStopped) {
            flushRunner();
            handOn(true);
        }
        noteRunner();
        mapped.close();
        decoder.join();
        encoder.join();
    } catch (...) {
        stopAll();
        throw;  // the writer, destroyed unfinished, leaves no output
    }
    error.rethrow();
    if (options.cancel && options.cancel->load(std::memory_order_relaxed)) throw Cancelled();
    writer->finish();
    for (const std::string& note : writer->notes()) report.notes.push_back(note);
    report.mapSeconds = secondsSince(start);
    report.framesPerSecond = report.mapSeconds > 0 ? double(report.frames) / report.mapSeconds : 0;
    if (options.onProgress) {
        ClipProgress p;
        p.frame = p.frames = report.frames;
        p.framesPerSecond = report.framesPerSecond;
        p.secondsLeft = 0;
        options.onProgress(p);
    }
    return report;
}

ClipRecolorReport recolorClip(const std::string& input, RecolorPipeline& pipeline, const std::string& output,
                              const ClipRecolorOptions& options)
{
    checkClipOutput(output, options.write);  // before the work
    const auto start = Clock::now();
    PipelineControl control;
    control.cancel = options.cancel;
    if (options.onProgress)
        control.onProgress = [&](const PipelineProgress& p) {
            ClipProgress c;
            c.look = true;
            c.frame = static_cast<long long>(p.fraction * 100);
            c.frames = 100;
            options.onProgress(c);
        };
    ClipInfo info;
    ClipLook look = computeClipLook(pipeline, input, options.look, control, &info);
    const double lookSeconds = secondsSince(start);
    ClipRecolorReport report = applyClipLook(input, look, output, options);
    report.look = std::move(look);
    report.lookSeconds = lookSeconds;
    return report;
}

}  // namespace uot
