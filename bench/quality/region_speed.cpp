// The cost of regions at photo size, from decoded buffers (docs/REGIONS.md):
//   - a recolor through one mask against the unmasked recolor of the same
//     source and reference (fresh pipelines, runs interleaved, medians), the
//     ratio printed from this one run; with --feather R also the feathered mask;
//   - the scopes (core/color/scopes.h) of the source, median of --repeat runs;
//   - with --regions, instead of the masks: recolorRegions with one region (the
//     ellipse, from --reference) and one over the whole image (white, from
//     --reference) against two (the ellipse and the rest, the rest from
//     --reference2), solve and render, after one untimed run of each (a GPU's
//     start-up), the two regions run concurrently and one by one
//     (RegionSchedule); with --device gpu the two regions' problems go to the
//     batched GPU solver in one call.
// The source is a sample photo upscaled to --megapixels (default 12, 4:3); the
// mask an ellipse drawn at a quarter of the size (prepareMask resizes it). The
// load average of the machine is printed with the figures.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include <opencv2/core.hpp>
#include <opencv2/imgcodecs.hpp>
#include <opencv2/imgproc.hpp>

#include "app/cli/arg_parser.h"
#include "app/cli/recolor_options.h"
#include "bench/quality/bench_machine.h"
#include "bench/quality/median.h"
#include "core/color/scopes.h"
#include "core/imageio/image_io.h"
#include "core/pipeline/region_recolor.h"

using namespace uot;
using Clock = std::chrono::steady_clock;

namespace {

double since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }


// The sample photo resized to w x h (bicubic), as an 8-bit RGB Image.
Image upscaled(const std::string& path, int w, int h)
{
    const Image small = readImage(path);
    cv::Mat m(small.height, small.width, small.channels == 1 ? CV_8UC1 : CV_8UC3, const_cast<std::uint8_t*>(small.data.data()));
    cv::Mat up;
    cv::resize(m, up, cv::Size(w, h), 0, 0, cv::INTER_CUBIC);
    Image out = Image::allocate(w, h, up.channels(), 8);
    std::copy(up.data, up.data + out.data.size(), out.data.begin());
    return out;
}

// Times recolorRegions with the first region of `regions` alone, with `whole`
// (one region over the whole image) and with all of `regions` (concurrently and
// one by one), interleaved, and prints the medians and their ratios to the first two.
void timeRegions(const Image& source, const std::vector<RecolorRegion>& regions, const RecolorRegion& whole, int repeat)
{
    const std::vector<RecolorRegion> one(regions.begin(), regions.begin() + 1), wholeOnly{whole};
    struct Case {
        const char* name;
        const std::vector<RecolorRegion>* regions;
        RegionSchedule schedule;
        std::vector<double> total, solve, palette, map;
    };
    std::vector<Case> cases = {{"one region", &one, RegionSchedule::Concurrent, {}, {}, {}, {}},
                               {"whole image", &wholeOnly, RegionSchedule::Concurrent, {}, {}, {}, {}},
                               {"two regions", &regions, RegionSchedule::Concurrent, {}, {}, {}, {}},
                               {"two 1-by-1", &regions, RegionSchedule::OneByOne, {}, {}, {}, {}}};
    for (int r = -1; r < repeat; ++r) {  // run -1: untimed warm-up
        for (Case& c : cases) {
            std::vector<PipelineStats> stats;
            const auto t0 = Clock::now();
            recolorRegions(source, *c.regions, {}, &stats, c.schedule);
            const double total = since(t0);
            if (r < 0) continue;
            double solve = 0, palette = 0, map = 0;
            std::string solvers;
            for (const PipelineStats& s : stats) {
                solve += s.timings.solve;
                palette += s.timings.palette;
                map += s.timings.map;
                solvers += (solvers.empty() ? "" : ",") + (s.solve ? s.solve->solver : std::string("-"));
            }
            c.total.push_back(total);
            c.solve.push_back(solve);
            c.palette.push_back(palette);
            c.map.push_back(map);
            std::printf("run %d %-12s total %.3f s (palette %.3f, solve %.3f, map %.3f; solved by %s)\n", r + 1, c.name,
                        total, palette, solve, map, solvers.c_str());
        }
    }
    // The solve varies most on a loaded CPU (and is one per region there): the
    // ratios of total - solve are printed too.
    const auto rest = [](const Case& c) {
        std::vector<double> r;
        for (std::size_t k = 0; k < c.total.size(); ++k) r.push_back(c.total[k] - c.solve[k]);
        return bench::median(r);
    };
    const double base = bench::median(cases[0].total), wholeBase = bench::median(cases[1].total);
    for (const Case& c : cases)
        std::printf("median %-12s %.3f s (palette %.3f, solve %.3f, map %.3f); ratio to one region %.3f, to the whole "
                    "image %.3f; total - solve %.3f s, its ratio to the whole image's %.3f\n",
                    c.name, bench::median(c.total), bench::median(c.palette), bench::median(c.solve),
                    bench::median(c.map), bench::median(c.total) / base, bench::median(c.total) / wholeBase, rest(c),
                    rest(c) / rest(cases[1]));
    std::printf("load average %s\n", uot::bench::loadAverage().c_str());
}

}  // namespace

int main(int argc, char** argv)
{
    using namespace uot::cli;
    cli::ArgParser parser("uot_region_speed [--source F] [--reference F] [--megapixels X] [--repeat N] [--feather R] "
                          "[--regions [--reference2 F]] [recolor options]",
                          "Times a masked recolor against the unmasked one, and the scopes, at photo size.");
    parser.addOption("source", "FILE", "image upscaled to the test size", "resources/samples/leuvenA.jpg");
    parser.addOption("reference", "FILE", "reference image (used as is)", "resources/samples/starry_night.jpg");
    parser.addOption("megapixels", "X", "size of the upscaled source", "12");
    parser.addOption("repeat", "N", "runs of each variant (medians are reported)", "3");
    parser.addOption("feather", "R", "also time the mask feathered by R pixels (0 = not)", "0");
    parser.addFlag("regions", "time one region against two (recolorRegions) instead of the masks");
    parser.addOption("reference2", "FILE", "the second region's reference (--regions)", "resources/samples/fruits.jpg");
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
        const int repeat = std::max(1, parser.integer("repeat"));
        const int feather = parser.integer("feather");
        const Image source = upscaled(parser.value("source"), w, h);
        const Image reference = readImage(parser.value("reference"));
        // An ellipse over the middle of the image, at a quarter of its size.
        Mask quarter{w / 4, h / 4, std::vector<float>(static_cast<std::size_t>(w / 4) * (h / 4), 0.0f)};
        for (int y = 0; y < quarter.height; ++y)
            for (int x = 0; x < quarter.width; ++x) {
                const double u = (x - quarter.width / 2.0) / (0.35 * quarter.width), v = (y - quarter.height / 2.0) / (0.35 * quarter.height);
                if (u * u + v * v < 1) quarter.values[static_cast<std::size_t>(y) * quarter.width + x] = 1.0f;
            }
        std::printf("source %dx%d (%.1f MP), reference %s, palette %d, solver %s, eps %g, threads %d; load average %s\n",
                    w, h, w * h / 1e6, parser.value("reference").c_str(), cli.recolor.palette.size,
                    cli.recolor.transport.solver.c_str(), cli.recolor.transport.eps, cli.recolor.threads,
                    uot::bench::loadAverage().c_str());
        if (parser.flag("regions")) {
            const Mask ellipse = prepareMask(quarter, source, 0, cli.recolor.space, cli.recolor.threads);
            Mask rest = ellipse;
            for (float& m : rest.values) m = 1.0f - m;
            const auto paletteOf = [&](const Image& image) {
                return std::make_shared<const Palette>(
                    buildImagePalette(image, cli.recolor.space, cli.recolor.palette, cli.recolor.threads));
            };
            timeRegions(source,
                        {{ellipse, paletteOf(reference), cli.recolor},
                         {rest, paletteOf(readImage(parser.value("reference2"))), cli.recolor}},
                        {Mask{w, h, std::vector<float>(static_cast<std::size_t>(w) * h, 1.0f)}, paletteOf(reference),
                         cli.recolor},
                        repeat);
            return 0;
        }

        struct Variant {
            const char* name;
            int feather;  // -1: no mask
            std::vector<double> total, solve, rest;  // rest: total - solve of each run
        };
        std::vector<Variant> variants = {{"unmasked", -1, {}, {}, {}}, {"one mask", 0, {}, {}, {}}};
        if (feather > 0) variants.push_back({"one feathered mask", feather, {}, {}, {}});
        for (int r = 0; r < repeat; ++r) {
            for (Variant& v : variants) {
                const auto t0 = Clock::now();
                RecolorPipeline pipeline(cli.recolor);
                pipeline.setSource(source);
                pipeline.setReference(reference);
                double prepare = 0;
                if (v.feather < 0) {
                    pipeline.run();
                } else {
                    const auto t1 = Clock::now();
                    const Mask mask = prepareMask(quarter, source, v.feather, cli.recolor.space, cli.recolor.threads);
                    prepare = since(t1);
                    recolorMasked(pipeline, mask);
                }
                const double total = since(t0);
                const PhaseTimings& p = pipeline.stats().timings;
                v.total.push_back(total);
                v.solve.push_back(p.solve);
                v.rest.push_back(total - p.solve);
                std::printf("run %d %-20s total %.3f s (mask %.3f, palette %.3f, solve %.3f, map %.3f, %d iterations)\n",
                            r + 1, v.name, total, prepare, p.palette, p.solve, p.map,
                            pipeline.stats().solve ? pipeline.stats().solve->iterations : 0);
            }
        }
        // The solve varies most on a loaded machine: the medians of total - solve per run too.
        const double base = bench::median(variants[0].total), baseRest = bench::median(variants[0].rest);
        for (const Variant& v : variants)
            std::printf("median %-20s %.3f s (solve %.3f, total - solve %.3f); ratio to unmasked %.3f, of total - solve %.3f\n",
                        v.name, bench::median(v.total), bench::median(v.solve), bench::median(v.rest), bench::median(v.total) / base,
                        bench::median(v.rest) / baseRest);

        ScopeSettings scopeSettings;
        scopeSettings.threads = cli.recolor.threads;
        std::vector<double> scopeTimes;
        Scopes scopes;
        for (int r = 0; r < std::max(5, repeat); ++r) {
            const auto t0 = Clock::now();
            scopes = computeScopes(source, scopeSettings);
            scopeTimes.push_back(since(t0));
        }
        std::printf("scopes (waveform, parade, vectorscope) of %.1f MP: median %.1f ms of %zu runs (step %d, %zu pixels read); "
                    "load average %s\n",
                    w * h / 1e6, 1000 * bench::median(scopeTimes), scopeTimes.size(), scopes.step, scopes.samples,
                    uot::bench::loadAverage().c_str());
    } catch (const std::exception& e) {
        std::fprintf(stderr, "uot_region_speed: %s\n", e.what());
        return 1;
    }
    return 0;
}
