// End-to-end speed of the recolor pipeline on a large photo: a sample image
// upscaled to --megapixels (default 12, 4:3), written as JPEG, then
// read -> palettes -> cost -> solve -> map -> write JPEG, timed per phase.
// Prints the median of --repeat runs. Same options as `uot recolor`.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <string>
#include <unistd.h>
#include <vector>

#include <opencv2/core.hpp>
#include <opencv2/imgcodecs.hpp>
#include <opencv2/imgproc.hpp>

#include "app/cli/arg_parser.h"
#include "app/cli/recolor_options.h"
#include "bench/quality/bench_machine.h"
#include "core/imageio/image_io.h"
#include "core/pipeline/recolor_pipeline.h"

namespace fs = std::filesystem;
using namespace uot;
using Clock = std::chrono::steady_clock;

static double since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

int main(int argc, char** argv)
{
    using namespace uot::cli;
    ArgParser parser("uot_pipeline_speed [--source F] [--reference F] [--megapixels X] [recolor options]",
                     "Times the recolor pipeline end to end on an upscaled photo.");
    parser.addOption("source", "FILE", "image upscaled to the test size", "resources/samples/leuvenA.jpg");
    parser.addOption("reference", "FILE", "reference image (used as is)", "resources/samples/starry_night.jpg");
    parser.addOption("megapixels", "X", "size of the upscaled source", "12");
    parser.addOption("repeat", "N", "runs (the median is reported)", "3");
    addRecolorOptions(parser);
    try {
        parser.parse(std::vector<std::string>(argv + 1, argv + argc));
        if (parser.helpRequested()) {
            std::printf("%s", parser.helpText().c_str());
            return 0;
        }
        const RecolorCliSettings cli = readRecolorOptions(parser);
        const double mp = parser.number("megapixels");
        const auto [w, h] = uot::bench::photoSizeOf(mp);
        const fs::path dir = fs::temp_directory_path() / ("uot_speed_" + std::to_string(::getpid()));
        fs::create_directories(dir);
        const std::string big = (dir / "source.jpg").string(), out = (dir / "out.jpg").string();
        {
            cv::Mat m = cv::imread(parser.value("source"), cv::IMREAD_COLOR), up;
            if (m.empty()) throw std::runtime_error("cannot read " + parser.value("source"));
            cv::resize(m, up, cv::Size(w, h), 0, 0, cv::INTER_CUBIC);
            cv::imwrite(big, up, {cv::IMWRITE_JPEG_QUALITY, 92});
        }
        std::printf("source %dx%d (%.1f MP) JPEG, reference %s, palette %d, solver %s, eps %g, max-iter %d, threads %d\n",
                    w, h, w * h / 1e6, parser.value("reference").c_str(), cli.recolor.palette.size,
                    cli.recolor.transport.solver.c_str(), cli.recolor.transport.eps,
                    cli.recolor.transport.options.maxIterations, cli.recolor.threads);
        const int repeat = std::max(1, parser.integer("repeat"));
        std::vector<PhaseTimings> runs;
        std::vector<double> wall;
        int iterations = 0;
        std::size_t m = 0, n = 0;
        for (int r = 0; r < repeat; ++r) {
            const auto t0 = Clock::now();
            PhaseTimings t;
            auto t1 = Clock::now();
            Image src = readImage(big, cli.read);
            Image ref = readImage(parser.value("reference"), cli.read);
            t.decode = since(t1);
            RecolorPipeline pipeline(cli.recolor);
            pipeline.setSource(std::move(src));
            pipeline.setReference(std::move(ref));
            Image result = pipeline.run();
            const PhaseTimings& p = pipeline.stats().timings;
            t.palette = p.palette, t.cost = p.cost, t.solve = p.solve, t.map = p.map;
            t1 = Clock::now();
            WriteOptions wo = cli.write;
            writeImage(out, result, wo);
            t.encode = since(t1);
            wall.push_back(since(t0));
            runs.push_back(t);
            iterations = pipeline.stats().solve ? pipeline.stats().solve->iterations : 0;
            m = pipeline.stats().sourcePaletteSize, n = pipeline.stats().referencePaletteSize;
            std::printf("run %d: total %.3f s = decode %.3f + palette %.3f + cost %.4f + solve %.3f + map %.3f + encode %.3f\n",
                        r + 1, wall.back(), t.decode, t.palette, t.cost, t.solve, t.map, t.encode);
        }
        std::vector<std::size_t> order(runs.size());
        for (std::size_t k = 0; k < order.size(); ++k) order[k] = k;
        std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return wall[a] < wall[b]; });
        const std::size_t med = order[order.size() / 2];
        const PhaseTimings& t = runs[med];
        std::printf("median: %.3f s end to end (palettes %zu x %zu, %d iterations): decode %.3f, palette %.3f, cost %.4f, "
                    "solve %.3f, map %.3f, encode %.3f\n",
                    wall[med], m, n, iterations, t.decode, t.palette, t.cost, t.solve, t.map, t.encode);
        fs::remove_all(dir);
    } catch (const std::exception& e) {
        std::fprintf(stderr, "uot_pipeline_speed: %s\n", e.what());
        return 1;
    }
    return 0;
}
