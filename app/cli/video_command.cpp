#include "app/cli/video_command.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <sstream>

#include "app/cli/commands.h"
#include "app/cli/json_text.h"
#include "app/cli/lut_export.h"
#include "app/cli/recolor_options.h"
#include "app/cli/video_options.h"
#include "core/color/cube_lut.h"
#include "core/imageio/image_io.h"
#include "core/pipeline/input_paths.h"
#include "core/registry/solver_registry.h"
#include "core/transport/uot_error.h"
#include "core/video/clip_paths.h"
#ifdef UOT_HAVE_VIDEO
#include "core/video/clip_recolor.h"
#endif

namespace uot::cli {

std::vector<std::string> splitClipInputs(const std::vector<std::string>& inputs, std::vector<std::string>& others)
{
    std::vector<std::string> clips;
    for (const std::string& input : inputs) {
        std::error_code ec;
        if (std::filesystem::is_directory(input, ec)) {
            std::vector<std::string> found;
            for (const auto& entry : std::filesystem::directory_iterator(input, ec)) {
                const std::string name = entry.path().filename().string();
                if (!name.empty() && name[0] != '.' && isVideoFile(name)) found.push_back(entry.path().string());
            }
            std::sort(found.begin(), found.end());
            clips.insert(clips.end(), found.begin(), found.end());
            others.push_back(input);  // its images
        } else if (isClipPath(input)) {
            clips.push_back(input);
        } else {
            others.push_back(input);
        }
    }
    return clips;
}

#ifndef UOT_HAVE_VIDEO

void requireClipSupport()
{
    throw Error(ErrorCode::Unavailable, "clips (video files, image sequences) are not built in: this build has no "
                                        "FFmpeg libraries (install libavformat-dev, libavcodec-dev, libswscale-dev)");
}

int runClipRecolor(const ArgParser&)
{
    requireClipSupport();
    return kExitUnavailable;
}
int runClipLut(const ArgParser& parser) { return runClipRecolor(parser); }

void runClipBatch(const std::vector<std::string>& clips, const BatchCliSettings&, const ArgParser&, BatchSummary&)
{
    if (!clips.empty()) requireClipSupport();
}

#else

void requireClipSupport() {}

namespace {

using Clock = std::chrono::steady_clock;

// The clip's look options from the command line.
ClipLookOptions lookOptions(const ClipCliSettings& clip)
{
    ClipLookOptions look;
    look.sampleFrames = clip.sampleFrames;
    look.lookFrame = clip.lookFrame;
    look.perShot = clip.perShot;
    look.crossFadeFrames = clip.crossFadeFrames;
    return look;
}

// The frames are mapped where the look is solved: on GPU N with a GPU solver (--device gpu[:N], or
// auto with a usable GPU), else on the CPU.
void mapWhereSolved(const RecolorSettings& recolor, ClipRecolorOptions& options)
{
    options.useGpu = runsOnGpu(recolor.transport.solver);
    options.device = recolor.transport.options.device;
}

// "GPU 0 (...), 812.4 frames/s mapping alone" for the closing line.
std::string mappingText(const ClipRecolorReport& report)
{
    char rate[64] = "";
    if (report.mappingSeconds > 0)
        std::snprintf(rate, sizeof rate, ", %.1f frames/s mapping alone", double(report.frames) / report.mappingSeconds);
    return report.mapDevice + rate;
}

// A pipeline with the command's settings and its reference(s), ready for computeClipLook.
void prepareReferences(RecolorPipeline& pipeline, const std::vector<std::string>& referencePaths,
                       const RegionCliSettings& regions, const ReadOptions& read)
{
    std::vector<Image> references;
    for (const std::string& path : referencePaths) references.push_back(readImage(path, read));
    setReferences(pipeline, std::move(references), regions);
}

// "frame 120/300  45.2 frames/s  6 s left" on one line of stderr, throttled.
class ClipProgressLine {
public:
    explicit ClipProgressLine(bool enabled) : m_enabled(enabled) {}
    void update(const ClipProgress& p)
    {
        if (!m_enabled) return;
        const auto now = Clock::now();
        if (now - m_start < std::chrono::seconds(1)) return;
        if (m_printed && now - m_last < std::chrono::milliseconds(250) && p.secondsLeft != 0) return;
        m_last = now;
        if (p.look) {
            std::fprintf(stderr, "\rlook    %3lld%%                                        ", p.frame);
        } else {
            char total[32] = "?";
            if (p.frames >= 0) std::snprintf(total, sizeof total, "%lld", p.frames);
            char left[32] = "";
            if (p.secondsLeft >= 0) std::snprintf(left, sizeof left, "  %.0f s left", p.secondsLeft);
            std::fprintf(stderr, "\rframe %lld/%s  %.1f frames/s%s        ", p.frame, total, p.framesPerSecond, left);
        }
        std::fflush(stderr);
        m_printed = true;
    }
    void finish()
    {
        if (m_printed) std::fprintf(stderr, "\n");
        m_printed = false;
    }

private:
    bool m_enabled;
    bool m_printed = false;
    Clock::time_point m_start = Clock::now(), m_last;
};

std::string colourJson(const ClipColourTags& c)
{
    std::ostringstream o;
    o << "{\"primaries\": " << jsonString(colourPrimariesName(c.primaries))
      << ", \"transfer\": " << jsonString(colourTransferName(c.transfer))
      << ", \"matrix\": " << jsonString(colourMatrixName(c.matrix)) << ", \"range\": " << jsonString(colourRangeName(c.range))
      << "}";
    return o.str();
}

std::string lookJson(const ClipLook& look, int lutSize)
{
    std::ostringstream o;
    o << "{\"lut_size\": " << lutSize << ", \"cross_fade\": " << look.crossFadeFrames << ", \"shots\": [";
    for (std::size_t s = 0; s < look.shots.size(); ++s) {
        const ClipShotLook& shot = look.shots[s];
        o << (s ? ", " : "") << "{\"first_frame\": " << shot.firstFrame << ", \"end_frame\": " << shot.endFrame
          << ", \"psnr_vs_rendered\": " << jsonNumber(shot.psnr) << ", \"sampled_frames\": [";
        for (std::size_t i = 0; i < shot.sampledFrames.size(); ++i) o << (i ? ", " : "") << shot.sampledFrames[i];
        o << "]}";
    }
    o << "]}";
    return o.str();
}

std::string notesJson(const std::vector<std::string>& notes)
{
    std::ostringstream o;
    o << "[";
    for (std::size_t i = 0; i < notes.size(); ++i) o << (i ? ", " : "") << jsonString(notes[i]);
    o << "]";
    return o.str();
}

void checkClipArguments(const ArgParser& parser, const char* what)
{
    for (const char* option : {"mask", "region", "mask-pattern"})
        if (parser.declares(option) && parser.has(option))
            throw UsageError(std::string("--") + option + " does not go with a clip " + what +
                             " (a clip gets one look everywhere in the frame)");
}

}  // namespace

int runClipRecolor(const ArgParser& parser)
{
    checkClipArguments(parser, "to recolor");
    if (parser.positionals().size() < 2)
        throw UsageError("expected CLIP and at least one REFERENCE (got " + std::to_string(parser.positionals().size()) +
                         " arguments)");
    if (!parser.has("output")) throw UsageError("missing -o OUT (a video file or an image sequence pattern)");
    const std::string input = parser.positionals()[0];
    const std::vector<std::string> referencePaths(parser.positionals().begin() + 1, parser.positionals().end());
    const std::string output = parser.value("output");
    if (!isClipPath(output))
        throw UsageError("OUT must be a clip too: a .mp4, .mov, .mkv or .webm file, or a pattern such as "
                         "frame_%05d.png (got '" + output + "')");
    if (output == input) throw UsageError("OUT is CLIP itself: the source is never overwritten");
    const RecolorCliSettings cli = readRecolorOptions(parser);
    const RegionCliSettings regions = readRegionOptions(parser, MaskOption::File, referencePaths.size());
    const ClipCliSettings clip = readClipOptions(parser);
    if (!isImageSequencePattern(input)) checkInputPath(input);
    for (const std::string& path : referencePaths) checkInputPath(path);
    const std::string lutPath = parser.has("export-lut") ? parser.value("export-lut") : std::string();
    if (!lutPath.empty() && (clip.perShot || isHaldOutput(lutPath)))
        throw UsageError("--export-lut with a clip takes a .cube file and no --per-shot (one look for the clip)");

    ClipRecolorOptions options;
    options.look = lookOptions(clip);
    options.look.lutSize = lutPath.empty() ? kDefaultCubeSize : readLutSize(parser, "export-lut-size");
    options.threads = cli.recolor.threads;
    mapWhereSolved(cli.recolor, options);
    options.write.overwrite = parser.flag("overwrite");
    options.write.protectedPaths = referencePaths;
    if (!isImageSequencePattern(input)) options.write.protectedPaths.push_back(input);
    options.write.preset = clip.preset;
    options.write.crf = clip.crf;
    checkClipOutput(output, options.write);
    if (!lutPath.empty()) {
        AtomicWriteOptions destination;
        destination.overwrite = parser.flag("overwrite");
        destination.protectedPaths = options.write.protectedPaths;
        checkWritableDestination(lutPath, destination);
    }
    ClipProgressLine progress(!cli.quiet);
    options.onProgress = [&progress](const ClipProgress& p) { progress.update(p); };

    RecolorPipeline pipeline(cli.recolor);
    prepareReferences(pipeline, referencePaths, regions, cli.read);
    const ClipRecolorReport report = recolorClip(input, pipeline, output, options);
    progress.finish();
    if (!lutPath.empty()) {
        AtomicWriteOptions destination;
        destination.overwrite = parser.flag("overwrite");
        destination.protectedPaths = options.write.protectedPaths;
        writeCubeFile(lutPath, report.look.shots.front().lut, destination);
    }
    if (cli.json) {
        std::ostringstream o;
        o << "{\n  \"output\": " << jsonString(output) << ",\n  \"input\": {\"file\": " << jsonString(input)
          << ", \"width\": " << report.input.width << ", \"height\": " << report.input.height
          << ", \"frames\": " << report.input.frameCount << ", \"frame_rate\": "
          << jsonNumber(double(report.input.frameRateNum) / report.input.frameRateDen) << ", \"codec\": "
          << jsonString(report.input.codec) << ", \"color\": " << colourJson(report.input.colour)
          << ", \"audio_streams\": " << report.input.copiedStreams << "},\n  \"frames\": " << report.frames
          << ",\n  \"look\": " << lookJson(report.look, options.look.lutSize)
          << ",\n  \"seconds_look\": " << jsonNumber(report.lookSeconds) << ", \"seconds_map\": "
          << jsonNumber(report.mapSeconds) << ", \"frames_per_second\": " << jsonNumber(report.framesPerSecond)
          << ",\n  \"seconds_decode\": " << jsonNumber(report.decodeSeconds) << ", \"seconds_mapping\": "
          << jsonNumber(report.mappingSeconds) << ", \"seconds_encode\": " << jsonNumber(report.encodeSeconds)
          << ",\n  " << deviceJson(cli, pipeline.stats()) << ", \"map_device\": " << jsonString(report.mapDevice)
          << ", \"map_note\": " << jsonString(report.mapNote)
          << ",\n  \"video_preset\": " << jsonString(clip.preset) << ", \"crf\": " << clip.crf
          << ",\n  \"notes\": " << notesJson(report.notes);
        if (!lutPath.empty()) o << ",\n  \"lut\": " << jsonString(lutPath);
        o << "\n}\n";
        std::printf("%s", o.str().c_str());
    } else if (!cli.quiet) {
        for (const std::string& note : report.notes) std::fprintf(stderr, "uot recolor: note: %s\n", note.c_str());
        if (const std::string note = deviceNote(cli, pipeline.stats()); !note.empty())
            std::fprintf(stderr, "uot recolor: note: %s\n", note.c_str());
        if (!report.mapNote.empty()) std::fprintf(stderr, "uot recolor: note: %s\n", report.mapNote.c_str());
        std::fprintf(stderr, "wrote %s (%s) in %.2f s: look %.2f s (%zu shot%s), frames %.2f s (%.1f frames/s; %s)\n",
                     output.c_str(), describeClip(report.input).c_str(), report.lookSeconds + report.mapSeconds,
                     report.lookSeconds, report.look.shots.size(), report.look.shots.size() == 1 ? "" : "s",
                     report.mapSeconds, report.framesPerSecond, mappingText(report).c_str());
        if (!lutPath.empty()) std::fprintf(stderr, "wrote %s (the clip's look)\n", lutPath.c_str());
    }
    return kExitOk;
}

int runClipLut(const ArgParser& parser)
{
    checkClipArguments(parser, "look");
    if (parser.positionals().size() < 2)
        throw UsageError("expected CLIP and at least one REFERENCE (got " + std::to_string(parser.positionals().size()) +
                         " arguments)");
    if (!parser.has("output")) throw UsageError("missing -o LOOK.cube (the LUT file)");
    const std::string input = parser.positionals()[0];
    const std::vector<std::string> referencePaths(parser.positionals().begin() + 1, parser.positionals().end());
    const std::string output = parser.value("output");
    if (isHaldOutput(output)) throw UsageError("a clip's look is exported as a .cube file");
    const int lutSize = readLutNodes(parser, output, "size", "hald-level");
    const RecolorCliSettings cli = readRecolorOptions(parser, RecolorOptionSet::Look);
    const RegionCliSettings regions = readRegionOptions(parser, MaskOption::None, referencePaths.size());
    const ClipCliSettings clip = readClipOptions(parser, ClipOptionSet::Look);
    if (clip.perShot) throw UsageError("--per-shot gives one look per shot: `uot lut` exports the clip's one look");
    if (parser.flag("global-map")) throw UsageError("--global-map does not go with a clip");
    if (!isImageSequencePattern(input)) checkInputPath(input);
    for (const std::string& path : referencePaths) checkInputPath(path);
    AtomicWriteOptions destination;
    destination.overwrite = parser.flag("overwrite");
    destination.protectedPaths = referencePaths;
    if (!isImageSequencePattern(input)) destination.protectedPaths.push_back(input);
    checkWritableDestination(output, destination);

    const auto start = Clock::now();
    RecolorPipeline pipeline(cli.recolor);
    prepareReferences(pipeline, referencePaths, regions, cli.read);
    ClipLookOptions look = lookOptions(clip);
    look.lutSize = lutSize;
    ClipProgressLine progress(!cli.quiet);
    PipelineControl control;
    control.onProgress = [&progress](const PipelineProgress& p) {
        ClipProgress c;
        c.look = true;
        c.frame = static_cast<long long>(100 * p.fraction);
        progress.update(c);
    };
    ClipInfo info;
    const ClipLook clipLook = computeClipLook(pipeline, input, look, control, &info);
    progress.finish();
    writeCubeFile(output, clipLook.shots.front().lut, destination);
    const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
    if (cli.json) {
        std::ostringstream o;
        o << "{\"output\": " << jsonString(output) << ", \"size\": " << look.lutSize << ", \"clip\": "
          << jsonString(input) << ", \"frames\": " << info.frameCount << ", \"look\": " << lookJson(clipLook, look.lutSize)
          << ", \"seconds\": " << jsonNumber(seconds) << ", \"notes\": " << notesJson(info.notes) << "}\n";
        std::printf("%s", o.str().c_str());
    } else if (!cli.quiet) {
        std::fprintf(stderr, "wrote %s (%d^3 LUT, the look of %s: %s) in %.2f s\n", output.c_str(), look.lutSize,
                     input.c_str(), describeClip(info).c_str(), seconds);
        for (const std::string& note : info.notes) std::fprintf(stderr, "uot lut: note: %s\n", note.c_str());
    }
    return kExitOk;
}

void runClipBatch(const std::vector<std::string>& clips, const BatchCliSettings& batch, const ArgParser& parser,
                  BatchSummary& summary)
{
    if (clips.empty()) return;
    const RecolorCliSettings& cli = batch.cli;
    const BatchSettings& settings = batch.settings;
    const ClipCliSettings clip = readClipOptions(parser);
    const auto start = Clock::now();
    RecolorPipeline pipeline(cli.recolor);
    std::vector<std::string> references{batch.reference};
    references.insert(references.end(), settings.extraReferences.begin(), settings.extraReferences.end());
    // The palette is computed once, for every clip (and every image: the image batch's when it ran).
    if (summary.referencePalette) {
        pipeline.setReferencePalette(summary.referencePalette);
    } else {
        RegionCliSettings pooling;
        pooling.referenceWeights = settings.referenceWeights;
        prepareReferences(pipeline, references, pooling, cli.read);
        summary.referencePalette = pipeline.referencePalette();
    }
    for (std::size_t i = 0; i < clips.size(); ++i) {
        BatchItemResult item;
        item.input = clips[i];
        const std::filesystem::path name = expandInputPattern(settings.pattern, clips[i]);
        item.output = (name.is_absolute() ? name : std::filesystem::path(settings.outDir) / name).string();
        ClipRecolorOptions options;
        options.look = lookOptions(clip);
        options.threads = cli.recolor.threads;
        mapWhereSolved(cli.recolor, options);
        options.write.overwrite = settings.overwrite;
        options.write.protectedPaths = references;
        if (!isImageSequencePattern(clips[i])) options.write.protectedPaths.push_back(clips[i]);
        options.write.preset = clip.preset;
        options.write.crf = clip.crf;
        ClipProgressLine progress(!cli.quiet);
        options.onProgress = [&progress](const ClipProgress& p) { progress.update(p); };
        std::error_code ec;
        if (!settings.overwrite && std::filesystem::exists(item.output, ec)) {
            item.status = BatchItemStatus::Skipped;
            item.message = "the output exists (pass --overwrite to replace it)";
            ++summary.skipped;
        } else {
            try {
                const ClipRecolorReport report = recolorClip(clips[i], pipeline, item.output, options);
                item.status = BatchItemStatus::Done;
                item.timings.solve = report.lookSeconds;
                item.timings.map = report.mapSeconds;
                std::vector<std::string> notes = report.notes;
                if (!report.mapNote.empty()) notes.push_back(report.mapNote);
                for (const std::string& note : notes) item.note += (item.note.empty() ? "" : "; ") + note;
                ++summary.done;
            } catch (const std::exception& e) {
                item.status = BatchItemStatus::Failed;
                item.message = e.what();
                ++summary.failed;
            }
        }
        progress.finish();
        if (!cli.quiet) {
            if (item.status == BatchItemStatus::Done)
                std::fprintf(stderr, "[clip %zu/%zu] %s -> %s (%.2f s)%s%s\n", i + 1, clips.size(), item.input.c_str(),
                             item.output.c_str(), item.timings.total(), item.note.empty() ? "" : "; note: ",
                             item.note.c_str());
            else
                std::fprintf(stderr, "[clip %zu/%zu] %s: %s: %s\n", i + 1, clips.size(), item.input.c_str(),
                             toString(item.status).c_str(), item.message.c_str());
        }
        summary.items.push_back(std::move(item));
    }
    summary.seconds += std::chrono::duration<double>(Clock::now() - start).count();
}

#endif

}  // namespace uot::cli
