// Passes of `--solver auto` at a small eps on the recolor palette problems, with
// and without the automatic eps-scaling (core/transport/eps_scaling.h,
// automaticEpsSchedule): for every ordered pair of the sample images, the palette
// problem (--palette-size points a side, costs in Lab / 100^2), solved to --tol
// from scratch both ways ("without": a zero log warm start, which is the same
// start and turns the automatic schedule off), and each plan's relative L1
// distance to the converged float64 plan (auto, tolerance 1e-12). Prints one JSON
// object per pair and the medians.
//
//   uot_auto_schedule_passes [--samples DIR] [--palette-size N] [--eps X] [--tau X] [--tol X] [--threads N]

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "app/cli/arg_parser.h"
#include "bench/quality/median.h"
#include "bench/quality/sample_images.h"
#include "core/color/color_space.h"
#include "core/imageio/image_io.h"
#include "core/pipeline/recolor_pipeline.h"
#include "core/registry/solver_registry.h"
#include "tests/gpu/plan_distance.h"

namespace fs = std::filesystem;
using namespace uot;
using uot::bench::median;

int main(int argc, char** argv)
{
    using namespace uot::cli;
    ArgParser parser("uot_auto_schedule_passes [options]",
                     "Passes of --solver auto at a small eps with and without the automatic eps-scaling.");
    parser.addOption("samples", "DIR", "folder of sample images (every ordered pair is used)", "resources/samples");
    parser.addOption("palette-size", "N", "points per palette", "128");
    parser.addOption("eps", "X", "entropic regularisation", "1e-4");
    parser.addOption("tau", "X", "marginal penalty on both sides", "1");
    parser.addOption("tol", "X", "stopping tolerance of the measured solves", "1e-6");
    parser.addOption("threads", "N", "CPU threads", "2");
    try {
        parser.parse(std::vector<std::string>(argv + 1, argv + argc));
        if (parser.helpRequested()) {
            std::fputs(parser.helpText().c_str(), stdout);
            return 0;
        }
        const std::vector<std::string> files = uot::bench::sampleImages(parser.value("samples"));
        const int threads = parser.integer("threads");
        RecolorSettings settings;
        settings.palette.size = parser.integer("palette-size");
        settings.threads = threads;
        std::vector<std::shared_ptr<const Palette>> palettes;
        for (const std::string& f : files) palettes.push_back(computePalette(readImage(f), settings));
        const double range = nominalRange(settings.space);
        auto solver = createSolver("auto");
        std::vector<double> before, after, distBefore, distAfter;
        for (std::size_t s = 0; s < files.size(); ++s)
            for (std::size_t r = 0; r < files.size(); ++r) {
                if (s == r) continue;
                UotProblem problem;
                problem.cost = PointCloudCost{palettes[s]->points.data(), palettes[r]->points.data(),
                                              palettes[s]->size(), palettes[r]->size(), 3, 1.0 / (range * range)};
                problem.a = palettes[s]->weights;
                problem.b = palettes[r]->weights;
                problem.eps = parser.number("eps");
                problem.tauA = problem.tauB = parser.number("tau");
                SolveOptions o;
                o.precision = Precision::Fp64;
                o.threads = threads;
                o.maxIterations = 400000;
                o.mode = IterationMode::TranslationInvariant;
                o.acceleration = Acceleration::Auto;
                SolveOptions exact = o;
                exact.tolerance = 1e-12;
                const SolveResult converged = solver->solve(problem, exact);
                o.tolerance = parser.number("tol");
                const SolveResult with = solver->solve(problem, o);
                const std::vector<double> zeroU(problem.rows(), 0.0), zeroV(problem.cols(), 0.0);
                SolveOptions cold = o;
                cold.warmLogU = zeroU;
                cold.warmLogV = zeroV;
                const SolveResult without = solver->solve(problem, cold);
                const double dWith = test::planRelativeL1(problem, with, converged);
                const double dWithout = test::planRelativeL1(problem, without, converged);
                before.push_back(double(without.passes));
                after.push_back(double(with.passes));
                distBefore.push_back(dWithout);
                distAfter.push_back(dWith);
                std::printf("{\"pair\": \"%s->%s\", \"m\": %zu, \"n\": %zu, \"reference_converged\": %s, "
                            "\"without_passes\": %llu, \"without_converged\": %s, \"without_dist\": %.2e, "
                            "\"with_passes\": %llu, \"with_converged\": %s, \"with_stages\": %zu, \"with_dist\": %.2e}\n",
                            fs::path(files[s]).stem().c_str(), fs::path(files[r]).stem().c_str(), problem.rows(),
                            problem.cols(), converged.converged ? "true" : "false",
                            static_cast<unsigned long long>(without.passes), without.converged ? "true" : "false",
                            dWithout, static_cast<unsigned long long>(with.passes), with.converged ? "true" : "false",
                            with.stages.size(), dWith);
                std::fflush(stdout);
            }
        std::printf("{\"pairs\": %zu, \"median_without_passes\": %.0f, \"median_with_passes\": %.0f, "
                    "\"max_without_dist\": %.2e, \"max_with_dist\": %.2e}\n",
                    before.size(), median(before), median(after),
                    *std::max_element(distBefore.begin(), distBefore.end()),
                    *std::max_element(distAfter.begin(), distAfter.end()));
    } catch (const std::exception& e) {
        std::fprintf(stderr, "uot_auto_schedule_passes: %s\n", e.what());
        return 1;
    }
    return 0;
}
