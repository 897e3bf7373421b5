// The GPU frame LUT (gpu/lut_apply.h) at 1080p, 8-bit RGB, 33^3 LUT: the
// kernel alone (frame on the device), and frames from host memory to host
// memory through the slots (uploads, kernels, downloads and the host copies
// into page-locked staging overlapped) with 1 (no overlap) and 3 frames in
// flight; the CPU kernel on this host's cores for the ratio; and a check of the
// GPU output against the CPU kernel (at most 1 code value apart). No Qt.
//
//   lut_apply_bench [frames=300] [width=1920] [height=1080]
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <omp.h>
#include <vector>

#include "core/color/cube_lut.h"
#include "core/color/lut_apply.h"
#include "gpu/lut_apply.h"

using namespace uot;
using Clock = std::chrono::steady_clock;

int main(int argc, char** argv)
{
    const int frames = argc > 1 ? std::atoi(argv[1]) : 300;
    const int w = argc > 2 ? std::atoi(argv[2]) : 1920, h = argc > 3 ? std::atoi(argv[3]) : 1080;
    try {
        CubeLut cube = identityCube(33);
        for (std::size_t k = 0; k < cube.values.size(); k += 3) {
            const float r = cube.values[k], g = cube.values[k + 1], b = cube.values[k + 2];
            cube.values[k] = 0.9f * r + 0.1f * g * b, cube.values[k + 1] = 0.05f + 0.9f * g, cube.values[k + 2] = 0.8f * b + 0.1f * r;
        }
        const FrameLut lut(cube);
        // Four distinct source frames in host memory, cycled.
        const std::size_t bytes = static_cast<std::size_t>(w) * h * 3;
        std::vector<std::vector<std::uint8_t>> src(4, std::vector<std::uint8_t>(bytes));
        for (int f = 0; f < 4; ++f)
            for (std::size_t k = 0; k < bytes; ++k)
                src[f][k] = static_cast<std::uint8_t>((k / 3 % w) * 200 / w + (k / 3 / w) * 40 / h + 5 * f + (k * 2654435761u >> 29 & 7));
        std::vector<std::vector<std::uint8_t>> dst(4, std::vector<std::uint8_t>(bytes));
        auto view = [&](std::vector<std::uint8_t>& b) { return FrameView{b.data(), w, h, static_cast<std::size_t>(w) * 3, FramePixelFormat::Rgb8}; };
        const double mp = double(w) * h / 1e6;

        gpu::FrameLutDevice probe(lut);
        const double kernelMs = probe.kernelMilliseconds(w, h, FramePixelFormat::Rgb8, frames);
        std::printf("{\"device\": \"%s\", \"width\": %d, \"height\": %d, \"lut\": 33, \"frames\": %d}\n",
                    probe.deviceName().c_str(), w, h, frames);
        std::printf("{\"case\": \"kernel only\", \"ms_per_frame\": %.4f, \"fps\": %.0f, \"MPps\": %.0f}\n", kernelMs,
                    1e3 / kernelMs, mp * 1e3 / kernelMs);
        double pipelinedFps = 0;
        for (int inFlight : {1, 3}) {
            gpu::FrameLutDevice device(lut, 0, inFlight);
            for (int k = 0; k < 4; ++k) device.submit(view(src[k]), view(dst[k]));  // allocate slots, warm up
            device.flush();
            const auto t0 = Clock::now();
            for (int k = 0; k < frames; ++k) device.submit(view(src[k % 4]), view(dst[k % 4]));
            device.flush();
            const double ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count() / frames;
            if (inFlight == 3) pipelinedFps = 1e3 / ms;
            std::printf("{\"case\": \"host to host, %d in flight\", \"ms_per_frame\": %.4f, \"fps\": %.0f, \"MPps\": %.0f}\n",
                        inFlight, ms, 1e3 / ms, mp * 1e3 / ms);
        }
        // The CPU kernel on this host, all cores and one.
        std::vector<std::uint8_t> cpuOut(bytes);
        for (int threads : {omp_get_max_threads(), 1}) {
            applyLutToFrame(lut, view(src[0]), view(cpuOut), threads);
            const int n = threads == 1 ? 10 : 50;
            const auto t0 = Clock::now();
            for (int k = 0; k < n; ++k) applyLutToFrame(lut, view(src[k % 4]), view(cpuOut), threads);
            const double ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count() / n;
            std::printf("{\"case\": \"CPU %s, %d threads\", \"ms_per_frame\": %.4f, \"fps\": %.0f, \"gpu_pipelined_speedup\": %.2f}\n",
                        toString(bestLutKernelPath()).c_str(), threads, ms, 1e3 / ms, pipelinedFps * ms / 1e3);
        }
        // dst[k] holds frame k's mapping from the last loop; compare with the CPU.
        int worst = 0;
        for (int f = 0; f < 4; ++f) {
            applyLutToFrame(lut, view(src[f]), view(cpuOut));
            for (std::size_t k = 0; k < bytes; ++k) worst = std::max(worst, std::abs(int(cpuOut[k]) - int(dst[f][k])));
        }
        std::printf("{\"check\": \"GPU vs CPU kernel\", \"max_code_value_difference\": %d, \"ok\": %s}\n", worst,
                    worst <= 1 ? "true" : "false");
        return worst <= 1 ? 0 : 1;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "lut_apply_bench: %s\n", e.what());
        return 2;
    }
}
