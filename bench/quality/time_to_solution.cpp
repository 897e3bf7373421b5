// Time to solution on the recolor problems: for every ordered pair of the
// bundled sample images, the palette problem the pipeline solves (default
// settings, --palette-size points a side), at each --eps: the passes over K
// until the plan is within --target (relative L1) of the converged float64
// plan, plain vs translation-invariant iteration, and the wall time of a solve
// to POT's criterion --tol in each mode. Accuracy is measured against the
// converged plan (plain iteration, float64, POT's criterion 1e-13), never by
// each mode's own stopping rule.
//
//   uot_time_to_solution [--samples DIR] [--palette-size N] [--eps 0.01,0.003] [--tau X]
//                        [--target 1e-6] [--tol 1e-6] [--chunk 10] [--threads N] [--solver NAME]
//
// Passes are counted in chunks of --chunk iterations (a warm start continues the
// iteration exactly), so they are exact to within one chunk. Prints one JSON
// object per case and the medians per eps.

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "app/cli/arg_parser.h"
#include "core/color/color_space.h"
#include "core/imageio/image_io.h"
#include "core/pipeline/recolor_pipeline.h"
#include "core/registry/solver_registry.h"
#include "tests/gpu/plan_distance.h"
#include "tests/support/passes_to_target.h"

namespace fs = std::filesystem;
using namespace uot;

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

double median(std::vector<double> x)
{
    if (x.empty()) return 0;
    std::sort(x.begin(), x.end());
    const std::size_t k = x.size() / 2;
    return x.size() % 2 ? x[k] : 0.5 * (x[k - 1] + x[k]);
}

}  // namespace

int main(int argc, char** argv)
{
    using namespace uot::cli;
    ArgParser parser("uot_time_to_solution [options]",
                     "Passes and time to a converged plan on the sample pairs' palette problems, plain vs TI.");
    parser.addOption("samples", "DIR", "folder of sample images (every ordered pair is used)", "resources/samples");
    parser.addOption("palette-size", "N", "points per palette", "1024");
    parser.addOption("eps", "X[,X...]", "entropic regularisation(s)", "0.01,0.003");
    parser.addOption("tau", "X", "marginal penalty on both sides", "1");
    parser.addOption("target", "X", "plan accuracy to reach (relative L1 to the converged float64 plan)", "1e-6");
    parser.addOption("tol", "X", "POT's criterion for the timed solves", "1e-6");
    parser.addOption("chunk", "N", "iterations between accuracy measurements", "10");
    parser.addOption("threads", "N", "CPU threads", "2");
    parser.addOption("solver", "NAME", "CPU variant", "auto");
    try {
        parser.parse(std::vector<std::string>(argv + 1, argv + argc));
        if (parser.helpRequested()) {
            std::fputs(parser.helpText().c_str(), stdout);
            return 0;
        }
        std::vector<std::string> files;
        for (const auto& entry : fs::directory_iterator(parser.value("samples")))
            if (entry.path().extension() == ".jpg" || entry.path().extension() == ".png")
                files.push_back(entry.path().string());
        std::sort(files.begin(), files.end());
        const int threads = parser.integer("threads"), chunk = parser.integer("chunk");
        const double tau = parser.number("tau"), target = parser.number("target"), tol = parser.number("tol");
        RecolorSettings settings;
        settings.palette.size = parser.integer("palette-size");
        settings.threads = threads;
        std::vector<std::shared_ptr<const Palette>> palettes;
        for (const std::string& f : files) palettes.push_back(computePalette(readImage(f), settings));
        auto solver = createSolver(parser.value("solver"));
        const double range = nominalRange(settings.space);

        for (double eps : numberList(parser.value("eps"))) {
            std::vector<double> ratios, ratiosWall, plainPasses, tiPasses;
            for (std::size_t s = 0; s < files.size(); ++s)
                for (std::size_t r = 0; r < files.size(); ++r) {
                    if (s == r) continue;
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
                    test::PassCount count[2];
                    double wallMs[2] = {0, 0}, wallDist[2] = {0, 0};
                    int wallIterations[2] = {0, 0};
                    for (int k = 0; k < 2; ++k) {
                        const IterationMode mode = k == 0 ? IterationMode::Plain : IterationMode::TranslationInvariant;
                        SolveOptions counted;
                        counted.precision = Precision::Fp64;
                        counted.mode = mode;
                        counted.threads = threads;
                        count[k] = test::passesToTarget(*solver, problem, counted, converged, target, chunk);
                        SolveOptions timed = ref;
                        timed.mode = mode;
                        timed.precision = Precision::Fp32;
                        timed.tolerance = tol;
                        const auto start = std::chrono::steady_clock::now();
                        const SolveResult t = solver->solve(problem, timed);
                        wallMs[k] = 1e3 * std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
                        wallIterations[k] = t.iterations;
                        wallDist[k] = test::planRelativeL1(problem, t, converged);
                    }
                    const std::string pair = fs::path(files[s]).stem().string() + "->" + fs::path(files[r]).stem().string();
                    std::printf("{\"pair\": \"%s\", \"m\": %zu, \"n\": %zu, \"eps\": %g, \"tau\": %g, "
                                "\"reference_converged\": %s, \"reference_iterations\": %d, \"target\": %g, "
                                "\"plain_passes\": %llu, \"ti_passes\": %llu, \"plain_dist\": %.2e, \"ti_dist\": %.2e, "
                                "\"plain_fp32_tol_ms\": %.1f, \"ti_fp32_tol_ms\": %.1f, \"plain_fp32_tol_iterations\": %d, "
                                "\"ti_fp32_tol_iterations\": %d, \"plain_fp32_tol_dist\": %.2e, \"ti_fp32_tol_dist\": %.2e}\n",
                                pair.c_str(), problem.rows(), problem.cols(), eps, tau,
                                converged.converged ? "true" : "false", converged.iterations, target,
                                static_cast<unsigned long long>(count[0].passes),
                                static_cast<unsigned long long>(count[1].passes), count[0].distance, count[1].distance,
                                wallMs[0], wallMs[1], wallIterations[0], wallIterations[1], wallDist[0], wallDist[1]);
                    std::fflush(stdout);
                    plainPasses.push_back(double(count[0].passes));
                    tiPasses.push_back(double(count[1].passes));
                    ratios.push_back(double(count[0].passes) / double(std::max<std::uint64_t>(1, count[1].passes)));
                    ratiosWall.push_back(wallMs[0] / std::max(1e-9, wallMs[1]));
                }
            std::printf("{\"summary_eps\": %g, \"pairs\": %zu, \"median_plain_passes\": %.0f, \"median_ti_passes\": %.0f, "
                        "\"median_pass_ratio_plain_over_ti\": %.2f, \"median_wall_ratio_fp32_tol\": %.2f}\n",
                        eps, ratios.size(), median(plainPasses), median(tiPasses), median(ratios), median(ratiosWall));
        }
    } catch (const std::exception& e) {
        std::fprintf(stderr, "uot_time_to_solution: %s\n", e.what());
        return 1;
    }
    return 0;
}
