#include "core/video/clip_look.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <memory>
#include <set>

#include "core/color/palette.h"
#include "core/pipeline/look_export.h"
#include "core/transport/uot_error.h"

namespace uot {

namespace {

void checkCancel(const PipelineControl& control)
{
    if (control.cancel && control.cancel->load(std::memory_order_relaxed)) throw Cancelled();
}

void report(const PipelineControl& control, double fraction)
{
    if (!control.onProgress) return;
    PipelineProgress p;
    p.stage = PipelineStage::Decode;
    p.fraction = std::clamp(fraction, 0.0, 1.0);
    control.onProgress(p);
}

// N indices spread evenly over count frames (the middles of N equal parts).
std::vector<long long> spread(long long first, long long end, int n)
{
    std::vector<long long> out;
    const long long count = end - first;
    if (count <= 0) return out;
    if (count <= n) {
        for (long long i = first; i < end; ++i) out.push_back(i);
        return out;
    }
    for (int i = 0; i < n; ++i) {
        const long long index = first + (2 * i + 1) * count / (2LL * n);
        if (out.empty() || out.back() != index) out.push_back(index);
    }
    return out;
}

// The frames of `wanted` (sorted), read at analysis size; stops after the last. With `seek`, the
// reader seeks ahead to each where the clip allows (ClipReader::seekForwardTo), else it decodes
// every frame on the way.
std::map<long long, Image> readFrames(const std::string& clip, const std::set<long long>& wanted, int analysisWidth,
                                      bool seek, const PipelineControl& control)
{
    std::map<long long, Image> frames;
    if (wanted.empty()) return frames;
    ClipReadOptions options;
    options.maxWidth = analysisWidth;
    options.countFrames = false;
    const auto reader = ClipReader::open(clip, options);
    const long long last = *wanted.rbegin();
    long long position = 0;  // the frame the reader gives next
    ClipItem item;
    for (const long long index : wanted) {
        if (seek && index > position && reader->seekForwardTo(index)) position = index;
        bool ended = false;
        for (; position <= index && !ended; ++position) {
            checkCancel(control);
            report(control, double(position) / double(last + 1));
            if (position < index) {
                ended = !reader->skipFrame();
                continue;
            }
            if (!reader->next(item)) break;
            while (item.packet)
                if (!reader->next(item)) break;
            if (!item.frame) break;
            frames[index] = std::move(item.frame->image);
        }
        if (!frames.count(index)) break;
    }
    if (frames.size() != wanted.size())
        throw Error(ErrorCode::Io, clip + ": ended before frame " + std::to_string(last) + " (it has fewer frames than it says)");
    return frames;
}

// The clip's frames when its length is unknown: every frame kept at a stride that doubles as
// they add up (at most 2 n held), then n of them spread evenly.
std::vector<std::pair<long long, Image>> readSpreadUnknownLength(const std::string& clip, int n, int analysisWidth,
                                                                  long long* frameCount, const PipelineControl& control)
{
    ClipReadOptions options;
    options.maxWidth = analysisWidth;
    options.countFrames = false;
    const auto reader = ClipReader::open(clip, options);
    std::vector<std::pair<long long, Image>> kept;
    long long stride = 1, index = 0;
    ClipItem item;
    while (true) {
        checkCancel(control);
        if (index % stride != 0) {
            if (!reader->skipFrame()) break;
            ++index;
            continue;
        }
        if (!reader->next(item)) break;
        if (!item.frame) continue;
        kept.emplace_back(index++, std::move(item.frame->image));
        if (kept.size() > std::size_t(2 * n)) {
            std::vector<std::pair<long long, Image>> half;
            for (std::size_t i = 0; i < kept.size(); i += 2) half.push_back(std::move(kept[i]));
            kept = std::move(half);
            stride *= 2;
        }
    }
    *frameCount = index;
    std::vector<std::pair<long long, Image>> out;
    for (long long i : spread(0, static_cast<long long>(kept.size()), n)) out.push_back(std::move(kept[std::size_t(i)]));
    return out;
}

// The frames one below the other, in one image (all of one width, channels and depth).
Image stack(const std::vector<Image>& frames)
{
    const Image& first = frames.front();
    int height = 0;
    for (const Image& f : frames) {
        if (f.width != first.width || f.channels != first.channels || f.depth != first.depth)
            throw Error(ErrorCode::InvalidArgument, "the clip's frames differ in size or format");
        height += f.height;
    }
    Image sheet = Image::allocate(first.width, height, first.channels, first.depth);
    std::size_t at = 0;
    for (const Image& f : frames) {
        std::copy(f.data.begin(), f.data.end(), sheet.data.begin() + std::ptrdiff_t(at));
        at += f.data.size();
    }
    return sheet;
}

// 8 x 8 x 8 bins of the RGB (or gray) samples, as fractions.
std::array<float, 512> histogram(const Image& image)
{
    std::array<float, 512> bins{};
    const std::size_t n = image.pixelCount();
    const int c = image.channels;
    for (std::size_t p = 0; p < n; ++p) {
        int v[3];
        for (int k = 0; k < 3; ++k) {
            const std::size_t s = p * std::size_t(c) + std::size_t(c >= 3 ? k : 0);
            v[k] = image.depth == 16 ? image.samples16()[s] >> 13 : image.samples8()[s] >> 5;
        }
        bins[std::size_t((v[2] * 8 + v[1]) * 8 + v[0])] += 1.0f;
    }
    for (float& b : bins) b /= float(std::max<std::size_t>(n, 1));
    return bins;
}

}  // namespace

const CubeLut& ClipLook::lutFor(long long index, CubeLut& blend) const
{
    std::size_t shot = 0;
    while (shot + 1 < shots.size() && index >= shots[shot + 1].firstFrame) ++shot;
    if (crossFadeFrames <= 0 || shots.size() < 2) return shots[shot].lut;
    // The cut nearest to the frame: the one that starts this shot or the next.
    const long long half = crossFadeFrames / 2;
    std::size_t before = shot, after = shot;
    long long cut = -1;
    if (shot + 1 < shots.size() && index >= shots[shot + 1].firstFrame - half) {
        before = shot;
        after = shot + 1;
        cut = shots[shot + 1].firstFrame;
    } else if (shot > 0 && index < shots[shot].firstFrame + (crossFadeFrames - half)) {
        before = shot - 1;
        after = shot;
        cut = shots[shot].firstFrame;
    }
    if (cut < 0) return shots[shot].lut;
    // The blend runs over the frames cut - half .. cut - half + crossFadeFrames - 1.
    const double t = (double(index - (cut - half)) + 0.5) / double(crossFadeFrames);
    const CubeLut& a = shots[before].lut;
    const CubeLut& b = shots[after].lut;
    blend.title = b.title;
    blend.size = b.size;
    std::copy(std::begin(b.domainMin), std::end(b.domainMin), std::begin(blend.domainMin));
    std::copy(std::begin(b.domainMax), std::end(b.domainMax), std::begin(blend.domainMax));
    blend.values.resize(b.values.size());
    const float wa = float(1.0 - t), wb = float(t);
    for (std::size_t i = 0; i < b.values.size(); ++i) blend.values[i] = wa * a.values[i] + wb * b.values[i];
    return blend;
}

ClipShotLook lookOfFrames(RecolorPipeline& pipeline, const std::vector<Image>& frames, int lutSize,
                          const std::string& title, const PipelineControl& control)
{
    if (frames.empty()) throw Error(ErrorCode::InvalidArgument, "no frame to compute the look from");
    const RecolorSettings& settings = pipeline.settings();
    std::vector<const Image*> pointers;
    for (const Image& f : frames) pointers.push_back(&f);
    auto pooled = std::make_shared<const Palette>(
        buildPooledPalette(pointers, {}, settings.space, settings.palette, settings.threads));
    pipeline.setSource(stack(frames));
    pipeline.setSourcePalette(std::move(pooled));
    LookLut look = exportPipelineLook(pipeline, lutSize, title, LookLutSource::Rendered, control);
    ClipShotLook shot;
    shot.lut = std::move(look.lut);
    shot.psnr = look.psnr;
    return shot;
}

double histogramDistance(const Image& a, const Image& b)
{
    const auto ha = histogram(a), hb = histogram(b);
    double sum = 0;
    for (std::size_t i = 0; i < ha.size(); ++i) sum += std::abs(double(ha[i]) - double(hb[i]));
    return 0.5 * sum;
}

std::vector<long long> detectCuts(const std::string& clip, double threshold, const PipelineControl& control,
                                  long long* frameCount)
{
    ClipReadOptions options;
    options.maxWidth = 160;  // colour histograms need few pixels
    const auto reader = ClipReader::open(clip, options);
    const long long count = reader->info().frameCount;
    std::vector<double> distance;  // distance[t]: frame t against frame t - 1 (distance[0] = 0)
    Image previous;
    ClipItem item;
    while (reader->next(item)) {
        if (!item.frame) continue;
        checkCancel(control);
        if (count > 0) report(control, double(distance.size()) / double(count));
        distance.push_back(distance.empty() ? 0.0 : histogramDistance(previous, item.frame->image));
        previous = std::move(item.frame->image);
    }
    if (frameCount) *frameCount = static_cast<long long>(distance.size());
    // A cut is a change above the threshold that stands out from both neighbours' (at least twice
    // theirs): a fade or a fast pan changes every frame a lot, and is no cut.
    std::vector<long long> cuts;
    for (std::size_t t = 1; t < distance.size(); ++t) {
        const double before = distance[t - 1];
        const double after = t + 1 < distance.size() ? distance[t + 1] : 0.0;
        if (distance[t] > threshold && distance[t] >= 2 * std::max(before, after)) cuts.push_back(static_cast<long long>(t));
    }
    return cuts;
}

ClipLook computeClipLook(RecolorPipeline& pipeline, const std::string& clip, const ClipLookOptions& options,
                         const PipelineControl& control, ClipInfo* info)
{
    if (options.sampleFrames < 1) throw Error(ErrorCode::InvalidArgument, "the look needs at least one sampled frame");
    ClipInfo clipInfo;
    {
        ClipReadOptions probe;
        probe.countFrames = true;
        clipInfo = ClipReader::open(clip, probe)->info();
    }
    const std::string title = "uot clip look";
    ClipLook look;
    look.crossFadeFrames = options.perShot ? options.crossFadeFrames : 0;
    std::vector<ClipShotLook> shots;
    if (options.lookFrame >= 0) {
        if (clipInfo.frameCount >= 0 && options.lookFrame >= clipInfo.frameCount)
            throw Error(ErrorCode::InvalidArgument, "--look-frame " + std::to_string(options.lookFrame) +
                                                        ": the clip has " + std::to_string(clipInfo.frameCount) +
                                                        " frames (0 to " + std::to_string(clipInfo.frameCount - 1) + ")");
        std::map<long long, Image> frames = readFrames(clip, {options.lookFrame}, options.analysisWidth, options.seek, control);
        ClipShotLook shot = lookOfFrames(pipeline, {std::move(frames.begin()->second)}, options.lutSize, title, control);
        shot.sampledFrames = {options.lookFrame};
        shots.push_back(std::move(shot));
    } else if (options.perShot) {
        long long count = 0;
        const std::vector<long long> cuts = detectCuts(clip, options.cutThreshold, control, &count);
        std::vector<long long> starts = {0};
        starts.insert(starts.end(), cuts.begin(), cuts.end());
        std::set<long long> wanted;
        for (std::size_t s = 0; s < starts.size(); ++s) {
            ClipShotLook shot;
            shot.firstFrame = starts[s];
            shot.endFrame = s + 1 < starts.size() ? starts[s + 1] : count;
            shot.sampledFrames = spread(shot.firstFrame, shot.endFrame, options.sampleFrames);
            wanted.insert(shot.sampledFrames.begin(), shot.sampledFrames.end());
            shots.push_back(std::move(shot));
        }
        std::map<long long, Image> frames = readFrames(clip, wanted, options.analysisWidth, options.seek, control);
        for (ClipShotLook& shot : shots) {
            std::vector<Image> shotFrames;
            for (long long i : shot.sampledFrames) shotFrames.push_back(frames.at(i));
            ClipShotLook computed = lookOfFrames(pipeline, shotFrames, options.lutSize, title, control);
            shot.lut = std::move(computed.lut);
            shot.psnr = computed.psnr;
        }
        clipInfo.frameCount = count;
    } else if (clipInfo.frameCount >= 0) {
        const std::vector<long long> indices = spread(0, clipInfo.frameCount, options.sampleFrames);
        std::map<long long, Image> frames =
            readFrames(clip, std::set<long long>(indices.begin(), indices.end()), options.analysisWidth, options.seek,
                       control);
        std::vector<Image> sampled;
        for (auto& [index, image] : frames) sampled.push_back(std::move(image));
        ClipShotLook shot = lookOfFrames(pipeline, sampled, options.lutSize, title, control);
        shot.sampledFrames = indices;
        shots.push_back(std::move(shot));
    } else {
        long long count = 0;
        auto picked = readSpreadUnknownLength(clip, options.sampleFrames, options.analysisWidth, &count, control);
        std::vector<Image> sampled;
        std::vector<long long> indices;
        for (auto& [index, image] : picked) {
            indices.push_back(index);
            sampled.push_back(std::move(image));
        }
        ClipShotLook shot = lookOfFrames(pipeline, sampled, options.lutSize, title, control);
        shot.sampledFrames = indices;
        shots.push_back(std::move(shot));
        clipInfo.frameCount = count;
    }
    if (!options.perShot) {
        shots.front().firstFrame = 0;
        shots.front().endFrame = clipInfo.frameCount;
    }
    look.shots = std::move(shots);
    if (info) *info = clipInfo;
    return look;
}

}  // namespace uot
