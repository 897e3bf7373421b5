#include "core/video/clip_recolor.h"

#include <chrono>
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
            while (reader->next(item))
                if (!decoded.push(std::move(item))) return;
        } catch (...) {
            error.set(std::current_exception());
        }
        decoded.close();
    });
    std::thread encoder([&] {
        try {
            ClipItem item;
            while (mapped.pop(item)) writer->write(item);
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
        // A shot's LUT maps its frames through the frame kernels (lut_apply.h; RGB
        // frames, in place); a cross-fade's blended LUT, new at every frame, and
        // gray or RGBA sequence frames take applyCubeToImage (the same values).
        std::unique_ptr<FrameLutRunner> runner;
        const CubeLut* runnerLut = nullptr;
        FrameLutRunner::Options runnerOptions;
        runnerOptions.threads = options.threads;
        ClipItem item;
        auto lastReport = Clock::now();
        const long long total = report.input.frameCount;
        while (decoded.pop(item)) {
            if (options.cancel && options.cancel->load(std::memory_order_relaxed)) throw Cancelled();
            if (item.frame) {
                const CubeLut& lut = look.lutFor(item.frame->index, blend);
                Image& image = item.frame->image;
                if (&lut != &blend && image.channels == 3) {
                    if (runnerLut != &lut) {
                        runner = std::make_unique<FrameLutRunner>(lut, runnerOptions);
                        runnerLut = &lut;
                    }
                    const FrameView frame = frameViewOf(image);
                    runner->submit(frame, frame);
                } else {
                    image = applyCubeToImage(lut, image, CubeInterpolation::Tetrahedral, options.threads);
                }
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
            if (!mapped.push(std::move(item))) break;  // the encoder stopped (its error is rethrown below)
        }
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
