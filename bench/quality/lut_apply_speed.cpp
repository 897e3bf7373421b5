// Speed of mapping 1080p frames through a look's 3-D LUT on the CPU
// (core/color/lut_apply.h) against applyCubeToImage, 1 and 2 threads, in one
// run: median ms per frame, megapixels per second and the ratio to
// applyCubeToImage at the same thread count. Also the 8-bit table's build time
// and its speed. The frame is synthetic (smooth gradients, soft edges and
// grain: the colour coherence of a video frame); the LUT a smooth non-linear
// 33^3 look. No OpenCV, no files.
//
//   uot_lut_apply_speed [width=1920] [height=1080] [repeat=15] [lut-size=33]
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <functional>
#include <string>
#include <vector>

#include "bench/quality/median.h"
#include "core/color/cube_lut.h"
#include "core/color/lut_apply.h"

using namespace uot;
using Clock = std::chrono::steady_clock;

namespace {

Image syntheticFrame(int w, int h)
{
    Image img = Image::allocate(w, h, 3, 8);
    unsigned state = 7;
    for (int y = 0; y < h; ++y)
        for (int x = 0; x < w; ++x) {
            state = state * 1664525u + 1013904223u;
            const double u = double(x) / w, v = double(y) / h, grain = ((state >> 16) & 15) - 7.5;
            const double edge = 1 / (1 + std::exp(-40 * (u - 0.6 + 0.1 * std::sin(9 * v))));
            const double c[3] = {120 + 90 * std::sin(3.1 * u + 1.3 * v) * (1 - edge) + 60 * edge,
                                 110 + 80 * std::cos(2.3 * v - 0.7 * u) + 40 * edge,
                                 100 + 70 * std::sin(4.1 * v + 2.0 * u + 1) - 30 * edge};
            for (int a = 0; a < 3; ++a)
                img.data[(static_cast<std::size_t>(y) * w + x) * 3 + a] =
                    static_cast<std::uint8_t>(std::clamp(c[a] + grain, 0.0, 255.0));
        }
    return img;
}

CubeLut lookCube(int size)
{
    CubeLut lut = identityCube(size);
    for (std::size_t k = 0; k < lut.values.size(); k += 3) {
        const float r = lut.values[k], g = lut.values[k + 1], b = lut.values[k + 2];
        lut.values[k] = 0.9f * r + 0.08f * g + 0.05f * std::sin(6 * b);
        lut.values[k + 1] = 0.05f + 0.85f * g + 0.1f * r * b;
        lut.values[k + 2] = 0.1f + 0.7f * b + 0.15f * std::sqrt(r * g) - 0.02f;
    }
    return lut;
}

// Median wall-clock ms of `run`, and in cpuMs the median process CPU time (all
// threads): on a shared, loaded machine the CPU time is what the frame costs.
double medianMs(int repeat, const std::function<void()>& run, double& cpuMs)
{
    run();  // warm caches, tables and threads
    std::vector<double> ms, cpu;
    for (int k = 0; k < repeat; ++k) {
        const auto t0 = Clock::now();
        const std::clock_t c0 = std::clock();
        run();
        cpu.push_back(1e3 * double(std::clock() - c0) / CLOCKS_PER_SEC);
        ms.push_back(std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
    }
    cpuMs = bench::median(cpu);
    return bench::median(ms);
}

}  // namespace

int main(int argc, char** argv)
{
    const int w = argc > 1 ? std::atoi(argv[1]) : 1920, h = argc > 2 ? std::atoi(argv[2]) : 1080;
    const int repeat = argc > 3 ? std::atoi(argv[3]) : 15, size = argc > 4 ? std::atoi(argv[4]) : 33;
    const Image frame = syntheticFrame(w, h);
    const CubeLut cube = lookCube(size);
    const FrameLut lut(cube);
    Image out = Image::allocate(w, h, 3, 8);
    const double mp = double(w) * h / 1e6;
    std::printf("LUT apply, %dx%d 8-bit RGB, %d^3 LUT, tetrahedral, median of %d; best kernel here: %s\n", w, h, size,
                repeat, toString(bestLutKernelPath()).c_str());
    std::printf("%-26s %7s %9s %8s %12s %12s\n", "method", "threads", "ms/frame", "MP/s", "vs applyCube",
                "cpu ms/frame");
    const auto t0 = Clock::now();
    const FrameLutCache8 table(lut);
    const double buildMs = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
    double kernelMs1 = 0, tableMs1 = 0;  // 1 thread: the best kernel, the table
    for (int threads : {1, 2}) {
        double cpu = 0;
        const double base = medianMs(repeat, [&] { out = applyCubeToImage(cube, frame, CubeInterpolation::Tetrahedral, threads); }, cpu);
        auto row = [&](const char* name, double ms) {
            std::printf("%-26s %7d %9.2f %8.1f %11.2fx %12.2f\n", name, threads, ms, mp / ms * 1e3, base / ms, cpu);
        };
        row("applyCubeToImage", base);
        for (LutKernelPath path : {LutKernelPath::Generic, LutKernelPath::Avx2}) {
            if (!lutKernelPathSupported(path)) continue;
            const std::string name = "applyLutToFrame " + toString(path);
            const double ms = medianMs(repeat, [&] { applyLutToFrame(lut, frameViewOf(frame), frameViewOf(out), threads, path); }, cpu);
            row(name.c_str(), ms);
            if (threads == 1) kernelMs1 = ms;
        }
        const double ms = medianMs(repeat, [&] { table.apply(frameViewOf(frame), frameViewOf(out), threads); }, cpu);
        row("FrameLutCache8", ms);
        if (threads == 1) tableMs1 = ms;
    }
    std::printf("FrameLutCache8 build (all threads): %.1f ms, %.1f MiB", buildMs, table.bytes() / 1048576.0);
    if (tableMs1 < kernelMs1) std::printf("; pays off after %.0f frames at 1 thread\n", buildMs / (kernelMs1 - tableMs1));
    else std::printf("; never faster than the kernel here\n");
    return 0;
}
