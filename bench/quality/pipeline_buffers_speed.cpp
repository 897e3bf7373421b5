// Speed of the recolor pipeline from decoded buffers (no OpenCV, no files at
// run time beyond two binary PPMs): the source is upscaled bilinearly to
// --megapixels, then palettes -> cost -> solve -> map are timed per phase.
// Builds on the headless GPU machine; run it pinned to 2 cores to compare with
// the 2-core VM:  taskset -c 0,1 env OMP_NUM_THREADS=2 uot_pipeline_buffers_speed ...
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "bench/quality/bench_machine.h"
#include "core/pipeline/recolor_pipeline.h"

using namespace uot;
using Clock = std::chrono::steady_clock;

namespace {

Image readPpm(const std::string& path)
{
    std::ifstream in(path, std::ios::binary);
    std::string magic;
    int w = 0, h = 0, maxv = 0;
    in >> magic >> w >> h >> maxv;
    in.get();
    if (!in || magic != "P6" || maxv != 255) throw std::runtime_error(path + ": not a binary 8-bit PPM (P6)");
    Image img = Image::allocate(w, h, 3, 8);
    in.read(reinterpret_cast<char*>(img.data.data()), static_cast<std::streamsize>(img.data.size()));
    if (!in) throw std::runtime_error(path + ": truncated");
    return img;
}

Image upscale(const Image& src, int w, int h)
{
    Image out = Image::allocate(w, h, 3, 8);
#pragma omp parallel for schedule(static)
    for (int y = 0; y < h; ++y) {
        const float fy = std::clamp((y + 0.5f) * src.height / h - 0.5f, 0.0f, src.height - 1.0f);
        const int y0 = static_cast<int>(fy), y1 = std::min(y0 + 1, src.height - 1);
        const float wy = fy - y0;
        for (int x = 0; x < w; ++x) {
            const float fx = std::clamp((x + 0.5f) * src.width / w - 0.5f, 0.0f, src.width - 1.0f);
            const int x0 = static_cast<int>(fx), x1 = std::min(x0 + 1, src.width - 1);
            const float wx = fx - x0;
            for (int c = 0; c < 3; ++c) {
                const auto at = [&](int yy, int xx) { return static_cast<float>(src.data[(static_cast<std::size_t>(yy) * src.width + xx) * 3 + c]); };
                const float v = (1 - wy) * ((1 - wx) * at(y0, x0) + wx * at(y0, x1)) + wy * ((1 - wx) * at(y1, x0) + wx * at(y1, x1));
                out.data[(static_cast<std::size_t>(y) * w + x) * 3 + c] = static_cast<std::uint8_t>(std::lround(v));
            }
        }
    }
    return out;
}

}  // namespace

int main(int argc, char** argv)
{
    if (argc < 3) {
        std::fprintf(stderr, "usage: uot_pipeline_buffers_speed SOURCE.ppm REFERENCE.ppm [megapixels=12] [repeat=3] [solver=auto] [max-iter=100] [multiscale=1] [evaluate=1]\n");
        return 2;
    }
    try {
        const double mp = argc > 3 ? std::atof(argv[3]) : 12.0;
        const int repeat = argc > 4 ? std::atoi(argv[4]) : 3;
        RecolorSettings settings;
        if (argc > 5) settings.transport.solver = argv[5];
        if (argc > 6) settings.transport.options.maxIterations = std::atoi(argv[6]);
        if (argc > 7) settings.transport.multiscale = std::atoi(argv[7]) != 0;
        if (argc > 8) settings.transport.options.evaluateFinalPlan = std::atoi(argv[8]) != 0;
        const auto [w, h] = uot::bench::photoSizeOf(mp);
        const Image source = upscale(readPpm(argv[1]), w, h);
        const Image reference = readPpm(argv[2]);
        std::printf("source %dx%d (%.1f MP), reference %dx%d, palette %d, solver %s, eps %g, max-iter %d, multiscale %d, "
                    "evaluate %d\n",
                    w, h, w * h / 1e6, reference.width, reference.height, settings.palette.size,
                    settings.transport.solver.c_str(), settings.transport.eps, settings.transport.options.maxIterations,
                    int(settings.transport.multiscale), int(settings.transport.options.evaluateFinalPlan));
        std::vector<double> totals;
        for (int r = 0; r < repeat; ++r) {
            RecolorPipeline pipeline(settings);
            pipeline.setSource(source);
            pipeline.setReference(reference);
            const auto t0 = Clock::now();
            const Image out = pipeline.run();
            const double total = std::chrono::duration<double>(Clock::now() - t0).count();
            const PhaseTimings& t = pipeline.stats().timings;
            totals.push_back(total);
            const SolveTimings& st = pipeline.stats().solve->timings;
            std::printf("run %d: %.3f s = palette %.3f + cost %.4f + solve %.3f (%d it, %.2f ms/it, %s; set-up %.4f, "
                        "iterations %.4f, evaluation %.4f) + map %.3f\n",
                        r + 1, total, t.palette, t.cost, t.solve, pipeline.stats().solve->iterations, st.msPerIteration,
                        pipeline.stats().solve->solver.c_str(), st.setupSeconds, st.iterateSeconds, st.evaluateSeconds,
                        t.map);
            if (pipeline.stats().solvedOnGpu || pipeline.stats().mappedOnGpu || !pipeline.stats().gpuNote.empty())
                std::printf("       solve on %s, map on %s (GPU upload+convert %.4f s, compose+download %.4f s)%s%s\n",
                            pipeline.stats().solvedOnGpu ? "GPU" : "CPU", pipeline.stats().mappedOnGpu ? "GPU" : "CPU",
                            pipeline.stats().gpuSourceSeconds, pipeline.stats().gpuComposeSeconds,
                            pipeline.stats().gpuNote.empty() ? "" : ": ", pipeline.stats().gpuNote.c_str());
            // A strength change re-runs the per-pixel composition only.
            RecolorSettings half = settings;
            half.mapping.strength = 0.5;
            pipeline.setSettings(half);
            const auto t1 = Clock::now();
            (void)pipeline.render();
            std::printf("       strength change: %.3f s\n", std::chrono::duration<double>(Clock::now() - t1).count());
        }
        {
            // Where the palette phase goes (one more time, outside the runs).
            const auto tp0 = Clock::now();
            std::vector<float> colors(source.pixelCount() * 3);
            imageToSpace(source, settings.space, colors.data(), settings.threads);
            const auto tp1 = Clock::now();
            const Palette sp = buildPalette(colors.data(), source.pixelCount(), settings.space, settings.palette, settings.threads);
            const auto tp2 = Clock::now();
            const auto rp = computePalette(reference, settings);
            const auto tp3 = Clock::now();
            const Palette sampled = buildImagePalette(source, settings.space, settings.palette, settings.threads);
            const auto tp4 = Clock::now();
            const auto sec = [](Clock::time_point a, Clock::time_point b) { return std::chrono::duration<double>(b - a).count(); };
            std::printf("palette phase parts: source to working space %.4f s, source palette %.4f s (%zu points), reference "
                        "palette %.4f s; source palette from the sampled pixels only (the GPU path) %.4f s%s\n",
                        sec(tp0, tp1), sec(tp1, tp2), sp.size(), sec(tp2, tp3), sec(tp3, tp4),
                        sampled.points == sp.points ? "" : " (DIFFERENT PALETTE)");
            // Where the CPU part of the map phase goes: the LUT of the entropic map
            // (at the block means) and the guided-filter coefficients.
            RecolorPipeline pipeline(settings);
            pipeline.setSource(source);
            pipeline.setReference(reference);
            pipeline.solve();
            const MappingSettings& ms = settings.mapping;
            const int radius = smoothingRadiusPixels(ms, source.width, source.height);
            const int sub = smoothingSubsample(ms, radius);
            const auto tm0 = Clock::now();
            const LowResolution low = downsampleColors(colors.data(), source.width, source.height, settings.space, sub);
            const auto tm1 = Clock::now();
            const DisplacementLut lut = buildDisplacementLut(*pipeline.transportProblem(), pipeline.stats().solve->logV,
                                                             *pipeline.referencePalette(), low.colors.data(),
                                                             low.colors.size() / 3, ms.lutSize);
            const auto tm2 = Clock::now();
            const DisplacementField field = computeDisplacementField(lut, low, source.width, source.height, ms);
            const auto tm3 = Clock::now();
            const Image out = Image::allocate(source.width, source.height, 3, 8);
            const auto tm4 = Clock::now();
            std::printf("map phase CPU parts: block means %.4f s, LUT %.4f s, guided filter %.4f s, result allocation %.4f s\n",
                        sec(tm0, tm1), sec(tm1, tm2), sec(tm2, tm3), sec(tm3, tm4));
        }
        std::sort(totals.begin(), totals.end());
        std::printf("median %.3f s (decoded buffers in, encoded-ready buffer out)\n", totals[totals.size() / 2]);
    } catch (const std::exception& e) {
        std::fprintf(stderr, "uot_pipeline_buffers_speed: %s\n", e.what());
        return 1;
    }
    return 0;
}
