// A clip's stages measured apart, CPU against GPU in one run (docs/BENCHMARKS.md):
//
//   uot_clip_map_bench CLIP LOOK.cube [--frames N] [--check-dir DIR] [--analysis REFERENCE]
//
// - decode: the clip's frames read into memory (reading, decoding, RGB conversion);
// - map: the same frames through the look (FrameLutRunner) on the CPU, then on
//   the GPU (uploads and downloads included), decode and encode excluded; the
//   GPU frames against the CPU frames (worst code-value difference, lowest PSNR);
// - --check-dir: the whole pipeline (applyClipLook) on the CPU and on the GPU into
//   PNG sequences there, compared frame by frame (order included);
// - --analysis: the clip's look (computeClipLook, 8 sampled frames) with and
//   without seeking to the sampled frames; the two LUTs must be equal.
// One JSON object per line; exit 1 when a GPU frame is below 50 dB against
// the CPU's, or the looks differ.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/color/cube_lut.h"
#include "core/color/lut_apply.h"
#include "core/imageio/image_io.h"
#include "core/video/clip_look.h"
#include "core/video/clip_recolor.h"

using namespace uot;
using Clock = std::chrono::steady_clock;

namespace {

double secondsSince(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

struct Difference {
    int worst = 0;
    double psnr = INFINITY;
};

Difference compare(const Image& a, const Image& b)
{
    Difference d;
    double sum = 0;
    for (std::size_t i = 0; i < a.data.size(); ++i) {
        const int e = int(a.data[i]) - int(b.data[i]);
        d.worst = std::max(d.worst, std::abs(e));
        sum += double(e) * e;
    }
    if (sum > 0) d.psnr = 10 * std::log10(255.0 * 255.0 * double(a.data.size()) / sum);
    return d;
}

// Maps every frame through a runner into `out`; seconds.
double mapAll(const CubeLut& lut, bool useGpu, const std::vector<Image>& frames, std::vector<Image>& out,
              std::string& where)
{
    FrameLutRunner::Options options;
    options.useGpu = useGpu;
    FrameLutRunner runner(lut, options);
    out.resize(frames.size());
    for (std::size_t k = 0; k < frames.size(); ++k)
        if (out[k].data.size() != frames[k].data.size()) out[k] = frames[k];
    const auto start = Clock::now();
    for (std::size_t k = 0; k < frames.size(); ++k) runner.submit(frameViewOf(frames[k]), frameViewOf(out[k]));
    runner.flush();
    const double seconds = secondsSince(start);
    where = runner.describe() + (runner.fallbackMessage().empty() ? "" : "; " + runner.fallbackMessage());
    return seconds;
}

std::string quoted(const std::string& s)
{
    std::string q = "\"";
    for (char c : s) q += c == '"' || c == '\\' ? std::string("\\") + c : std::string(1, c);
    return q + "\"";
}

bool checkPipeline(const std::string& clip, const CubeLut& lut, const std::string& dir)
{
    ClipLook look;
    look.shots.resize(1);
    look.shots[0].endFrame = -1;
    look.shots[0].lut = lut;
    ClipRecolorReport reports[2];
    for (int gpu = 0; gpu < 2; ++gpu) {
        ClipRecolorOptions options;
        options.useGpu = gpu == 1;
        options.write.overwrite = true;
        reports[gpu] = applyClipLook(clip, look, dir + (gpu ? "/gpu_%05d.png" : "/cpu_%05d.png"), options);
    }
    Difference worst;
    for (long long t = 1; t <= reports[0].frames; ++t) {  // a video's frames are numbered from 1
        char a[32], b[32];
        std::snprintf(a, sizeof a, "/cpu_%05lld.png", t);
        std::snprintf(b, sizeof b, "/gpu_%05lld.png", t);
        const Difference d = compare(readImage(dir + a), readImage(dir + b));
        worst.worst = std::max(worst.worst, d.worst);
        worst.psnr = std::min(worst.psnr, d.psnr);
    }
    const bool ok = reports[0].frames == reports[1].frames && worst.psnr >= 50.0;
    std::printf("{\"pipeline_check\": {\"frames\": %lld, \"cpu\": %s, \"gpu\": %s, \"worst_code_values\": %d, "
                "\"lowest_psnr_db\": %.2f, \"ok\": %s}}\n",
                reports[1].frames, quoted(reports[0].mapDevice).c_str(),
                quoted(reports[1].mapDevice + (reports[1].mapNote.empty() ? "" : "; " + reports[1].mapNote)).c_str(),
                worst.worst, std::isfinite(worst.psnr) ? worst.psnr : 999.0, ok ? "true" : "false");
    return ok;
}

bool analysis(const std::string& clip, const std::string& reference)
{
    double seconds[2] = {};
    CubeLut luts[2];
    for (int seek = 1; seek >= 0; --seek) {
        RecolorPipeline pipeline{RecolorSettings{}};
        pipeline.setReference(readImage(reference));
        ClipLookOptions options;
        options.seek = seek == 1;
        const auto start = Clock::now();
        luts[seek] = computeClipLook(pipeline, clip, options).shots.front().lut;
        seconds[seek] = secondsSince(start);
    }
    // The same sampled frames give the same look (up to the solver's threaded sums).
    double apart = luts[0].values.size() == luts[1].values.size() ? 0 : INFINITY;
    for (std::size_t i = 0; i < luts[0].values.size() && i < luts[1].values.size(); ++i)
        apart = std::max(apart, double(std::abs(luts[0].values[i] - luts[1].values[i])));
    const bool same = apart <= 1e-3;
    std::printf("{\"analysis\": {\"seconds_seek\": %.3f, \"seconds_decode_all\": %.3f, \"ratio\": %.2f, "
                "\"lut_apart\": %.2g, \"same_look\": %s}}\n",
                seconds[1], seconds[0], seconds[0] / seconds[1], apart, same ? "true" : "false");
    return same;
}

}  // namespace

int main(int argc, char** argv)
{
    if (argc < 3) {
        std::fprintf(stderr, "usage: %s CLIP LOOK.cube [--frames N] [--check-dir DIR] [--analysis REFERENCE]\n", argv[0]);
        return 2;
    }
    const std::string clip = argv[1];
    const CubeLut lut = readCubeFile(argv[2]);
    long long maxFrames = -1;
    std::string checkDir, reference;
    for (int i = 3; i + 1 < argc; i += 2) {
        if (!std::strcmp(argv[i], "--frames")) maxFrames = std::atoll(argv[i + 1]);
        else if (!std::strcmp(argv[i], "--check-dir")) checkDir = argv[i + 1];
        else if (!std::strcmp(argv[i], "--analysis")) reference = argv[i + 1];
    }
    bool ok = true;
    try {
        std::vector<Image> frames;
        const auto start = Clock::now();
        {
            const auto reader = ClipReader::open(clip);
            ClipItem item;
            while ((maxFrames < 0 || (long long)frames.size() < maxFrames) && reader->next(item))
                if (item.frame) frames.push_back(std::move(item.frame->image));
        }
        const double decode = secondsSince(start);
        if (frames.empty()) throw std::runtime_error("no frame");
        std::vector<Image> cpu, gpu;
        std::string cpuWhere, gpuWhere;
        const double cpuSeconds = mapAll(lut, false, frames, cpu, cpuWhere);
        mapAll(lut, true, frames, gpu, gpuWhere);  // the device's first use (context, lattice) left out
        const double gpuSeconds = mapAll(lut, true, frames, gpu, gpuWhere);
        Difference worst;
        for (std::size_t k = 0; k < frames.size(); ++k) {
            const Difference d = compare(cpu[k], gpu[k]);
            worst.worst = std::max(worst.worst, d.worst);
            worst.psnr = std::min(worst.psnr, d.psnr);
        }
        const double n = double(frames.size());
        std::printf("{\"clip\": %s, \"frames\": %zu, \"width\": %d, \"height\": %d, \"decode_fps\": %.1f, "
                    "\"cpu\": %s, \"cpu_map_fps\": %.1f, \"gpu\": %s, \"gpu_map_fps\": %.1f, \"gpu_over_cpu\": %.2f, "
                    "\"worst_code_values\": %d, \"lowest_psnr_db\": %.2f}\n",
                    quoted(clip).c_str(), frames.size(), frames[0].width, frames[0].height, n / decode,
                    quoted(cpuWhere).c_str(), n / cpuSeconds, quoted(gpuWhere).c_str(), n / gpuSeconds,
                    cpuSeconds / gpuSeconds, worst.worst, std::isfinite(worst.psnr) ? worst.psnr : 999.0);
        ok = worst.psnr >= 50.0;
        frames.clear();
        cpu.clear();
        gpu.clear();
        if (!checkDir.empty()) ok = checkPipeline(clip, lut, checkDir) && ok;
        if (!reference.empty()) ok = analysis(clip, reference) && ok;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "uot_clip_map_bench: %s\n", e.what());
        return 1;
    }
    std::fflush(stdout);
    return ok ? 0 : 1;
}
