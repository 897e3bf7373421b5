// Time to solution on the recolor problems: for every ordered pair of the
// bundled sample images, the palette problem the pipeline solves (default
// settings, --palette-size points a side), at each --eps: the passes over K
// until the plan is within --target (relative L1) of the converged float64
// plan, and the wall time of the float64 solve that gets there, for four
// columns: plain, translation-invariant (TI), TI with over-relaxation (auto
// omega) and TI with over-relaxation and eps-scaling (--schedule-start times
// eps, shrinking by --schedule-factor). Accuracy is measured against the
// converged plan (plain iteration, float64, POT's criterion 1e-13), never by
// each mode's own stopping rule.
//
//   uot_time_to_solution [--samples DIR] [--palette-size N] [--eps 0.01,0.003] [--tau X]
//                        [--target 1e-6] [--schedule-start 8] [--schedule-factor 0.25] [--chunk 10]
//                        [--threads N] [--solver NAME]
//
// Plain and TI passes are counted in chunks of --chunk iterations (a warm start
// continues those iterations exactly), so they are exact to within one chunk;
// the accelerated columns by bisection on --max-iter from scratch
// (passesToTargetFromScratch). Prints one JSON
// object per case and the medians per eps.

#include <algorithm>
#include <chrono>
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
#include "tests/support/passes_to_target.h"

namespace fs = std::filesystem;
using namespace uot;
using uot::bench::median;

namespace {

std::vector<double> numberList(const std::string& text)
{
    std::vector<double> out;
    std::size_t start = 0;
    while (start < text.size()) {
        const std::size_t end = text.find(',', start);
        out.push_back(std::stod(text.substr(start, end - start)));
        if (end == std::string::npos) break;
        start = end + 1;
    }
    return out;
}

}  // namespace

int main(int argc, char** argv)
{
    using namespace uot::cli;
    ArgParser parser("uot_time_to_solution [options]",
                     "Passes and time to a converged plan on the sample pairs' palette problems: plain, TI, TI+relax, TI+relax+eps-scaling.");
    parser.addOption("samples", "DIR", "folder of sample images (every ordered pair is used)", "resources/samples");
    parser.addOption("palette-size", "N", "points per palette", "1024");
    parser.addOption("eps", "X[,X...]", "entropic regularisation(s)", "0.01,0.003");
    parser.addOption("tau", "X", "marginal penalty on both sides", "1");
    parser.addOption("target", "X", "plan accuracy to reach (relative L1 to the converged float64 plan)", "1e-6");
    parser.addOption("schedule-start", "R", "eps-scaling column: first stage at R times the target eps", "8");
    parser.addOption("schedule-factor", "F", "eps-scaling column: eps shrinks by F per stage", "0.25");
    parser.addOption("pairs", "N", "use only the first N ordered pairs (0 = all)", "0");
    parser.addOption("chunk", "N", "iterations between accuracy measurements", "10");
    parser.addOption("threads", "N", "CPU threads", "2");
    parser.addOption("solver", "NAME", "CPU variant", "auto");
    try {
        parser.parse(std::vector<std::string>(argv + 1, argv + argc));
        if (parser.helpRequested()) {
            std::fputs(parser.helpText().c_str(), stdout);
            return 0;
        }
        const std::vector<std::string> files = uot::bench::sampleImages(parser.value("samples"));
        const int threads = parser.integer("threads"), chunk = parser.integer("chunk");
        const int maxPairs = parser.integer("pairs");
        const double tau = parser.number("tau"), target = parser.number("target");
        const double scheduleRatio = parser.number("schedule-start"), scheduleFactor = parser.number("schedule-factor");
        RecolorSettings settings;
        settings.palette.size = parser.integer("palette-size");
        settings.threads = threads;
        std::vector<std::shared_ptr<const Palette>> palettes;
        for (const std::string& f : files) palettes.push_back(computePalette(readImage(f), settings));
        auto solver = createSolver(parser.value("solver"));
        const double range = nominalRange(settings.space);

        for (double eps : numberList(parser.value("eps"))) {
            int pairIndex = 0;
            std::vector<double> passes[4], walls[4], dists[4], ratioPlain, ratioTi, ratioTiRelax;
            for (std::size_t s = 0; s < files.size(); ++s)
                for (std::size_t r = 0; r < files.size(); ++r) {
                    if (s == r) continue;
                    if (maxPairs > 0 && pairIndex++ >= maxPairs) continue;
                    UotProblem problem;
                    problem.cost = PointCloudCost{palettes[s]->points.data(), palettes[r]->points.data(),
                                                  palettes[s]->size(), palettes[r]->size(), 3,
                                                  1.0 / (range * range)};
                    problem.a = palettes[s]->weights;
                    problem.b = palettes[r]->weights;
                    problem.eps = eps;
                    problem.tauA = problem.tauB = tau;
                    SolveOptions ref;
                    ref.precision = Precision::Fp64;
                    ref.threads = threads;
                    ref.maxIterations = 400000;
                    ref.tolerance = 1e-13;
                    ref.checkEvery = 10;
                    ref.evaluateFinalPlan = false;
                    const SolveResult converged = solver->solve(problem, ref);
                    // The four columns: plain, TI, TI + over-relaxation (auto omega), and that
                    // with eps-scaling. Plain and TI continue exactly across warm starts
                    // (counted in chunks); the accelerated ones are counted from scratch.
                    constexpr int kColumns = 4;
                    const char* names[kColumns] = {"plain", "ti", "ti_relax", "ti_relax_eps"};
                    test::PassCount count[kColumns];
                    double wallMs[kColumns] = {0, 0, 0, 0};
                    for (int k = 0; k < kColumns; ++k) {
                        SolveOptions counted;
                        counted.precision = Precision::Fp64;
                        counted.mode = k == 0 ? IterationMode::Plain : IterationMode::TranslationInvariant;
                        counted.threads = threads;
                        if (k >= 2) counted.acceleration = Acceleration::Auto;
                        if (k == 3) counted.epsSchedule = EpsSchedule{scheduleRatio * eps, scheduleFactor};
                        if (k < 2) {
                            count[k] = test::passesToTarget(*solver, problem, counted, converged, target, chunk);
                            SolveOptions timed = counted;  // the same iterations from scratch, timed
                            timed.maxIterations = count[k].iterations;
                            timed.tolerance = 0;
                            timed.checkEvery = chunk;
                            timed.evaluateFinalPlan = false;
                            const auto start = std::chrono::steady_clock::now();
                            (void)solver->solve(problem, timed);
                            wallMs[k] = 1e3 * std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
                        } else {
                            count[k] = test::passesToTargetFromScratch(*solver, problem, counted, converged, target,
                                                                        &wallMs[k]);
                        }
                        passes[k].push_back(double(count[k].passes));
                        walls[k].push_back(wallMs[k]);
                        dists[k].push_back(count[k].distance);
                    }
                    const std::string pair = fs::path(files[s]).stem().string() + "->" + fs::path(files[r]).stem().string();
                    std::printf("{\"pair\": \"%s\", \"m\": %zu, \"n\": %zu, \"eps\": %g, \"tau\": %g, "
                                "\"reference_converged\": %s, \"reference_iterations\": %d, \"target\": %g",
                                pair.c_str(), problem.rows(), problem.cols(), eps, tau,
                                converged.converged ? "true" : "false", converged.iterations, target);
                    for (int k = 0; k < kColumns; ++k)
                        std::printf(", \"%s_passes\": %llu, \"%s_ms\": %.2f, \"%s_dist\": %.2e", names[k],
                                    static_cast<unsigned long long>(count[k].passes), names[k], wallMs[k], names[k],
                                    count[k].distance);
                    std::printf("}\n");
                    std::fflush(stdout);
                    ratioPlain.push_back(double(count[0].passes) / double(std::max<std::uint64_t>(1, count[3].passes)));
                    ratioTi.push_back(double(count[1].passes) / double(std::max<std::uint64_t>(1, count[3].passes)));
                    ratioTiRelax.push_back(double(count[1].passes) / double(std::max<std::uint64_t>(1, count[2].passes)));
                }
            std::printf("{\"summary_eps\": %g, \"pairs\": %zu", eps, ratioPlain.size());
            const char* names[4] = {"plain", "ti", "ti_relax", "ti_relax_eps"};
            for (int k = 0; k < 4; ++k)
                std::printf(", \"median_%s_passes\": %.0f, \"median_%s_ms\": %.2f, \"max_%s_dist\": %.2e", names[k],
                            median(passes[k]), names[k], median(walls[k]), names[k],
                            *std::max_element(dists[k].begin(), dists[k].end()));
            std::printf(", \"median_passes_plain_over_ti_relax_eps\": %.2f, \"median_passes_ti_over_ti_relax_eps\": %.2f, "
                        "\"median_passes_ti_over_ti_relax\": %.2f}\n",
                        median(ratioPlain), median(ratioTi), median(ratioTiRelax));
        }
    } catch (const std::exception& e) {
        std::fprintf(stderr, "uot_time_to_solution: %s\n", e.what());
        return 1;
    }
    return 0;
}
