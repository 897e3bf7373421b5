// Accuracy and time of the recolor's own solve: for every ordered pair of the
// images in --samples (or the one pair --source/--reference), the pipeline's
// solve at its defaults (fp32, `auto`, to its tolerance; --palette-size and
// --eps as `uot recolor` takes them), its plan against the converged float64
// plan of the same palette problem (relative L1, computed in float64), and
// which path it took (status, iterations, passes of the log-domain
// continuation run in exact log-sum-exp form, absorptions). The reference is
// `auto` in float64 (over-relaxed, to the criterion 1e-13; its own status must
// be ok), so a solve that stops on a wrong plan shows up in the distance, not
// in its own stopping rule.
//
//   uot_palette_accuracy [--samples DIR | --source A --reference B] [--palette-size N]
//                        [--eps X] [--repeat R] [--threads N]
//
// One JSON object per pair (solve seconds: the median of --repeat solves, caches
// dropped before each), then the worst distance and the median solve time.

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "app/cli/arg_parser.h"
#include "bench/quality/median.h"
#include "bench/quality/sample_images.h"
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
    ArgParser parser("uot_palette_accuracy [options]",
                     "The recolor's solve (defaults) against the converged float64 plan of its palette problem.");
    parser.addOption("samples", "DIR", "folder of images (every ordered pair is used)", "resources/samples");
    parser.addOption("source", "FILE", "one pair only: the source image", "");
    parser.addOption("reference", "FILE", "one pair only: the reference image", "");
    parser.addOption("palette-size", "N", "points per palette (the recolor's --palette-size)", "512");
    parser.addOption("eps", "X", "entropic regularisation (the recolor's --eps)", "0.003");
    parser.addOption("repeat", "R", "solves per pair for the time (median)", "1");
    parser.addOption("threads", "N", "CPU threads, 0 = all", "0");
    try {
        parser.parse(std::vector<std::string>(argv + 1, argv + argc));
        if (parser.helpRequested()) {
            std::fputs(parser.helpText().c_str(), stdout);
            return 0;
        }
        std::vector<std::pair<std::string, std::string>> pairs;
        if (!parser.value("source").empty() || !parser.value("reference").empty()) {
            pairs.emplace_back(parser.value("source"), parser.value("reference"));
        } else {
            const std::vector<std::string> files = uot::bench::sampleImages(parser.value("samples"));
            for (const std::string& s : files)
                for (const std::string& r : files)
                    if (s != r) pairs.emplace_back(s, r);
        }
        RecolorSettings settings;
        settings.palette.size = parser.integer("palette-size");
        settings.transport.eps = parser.number("eps");
        settings.threads = parser.integer("threads");
        settings.transport.options.threads = settings.threads;
        const int repeat = std::max(1, parser.integer("repeat"));
        auto reference = createSolver("auto");
        std::vector<double> distances, times;
        for (const auto& [source, target] : pairs) {
            const Image a = readImage(source), b = readImage(target);
            std::vector<double> seconds;
            SolveResult solved;
            std::optional<UotProblem> problem;
            // One pipeline (the problem views its palettes), caches dropped before each
            // solve; its solver keeps its buffers between repeats, as in the studio.
            RecolorPipeline p(settings);
            for (int k = 0; k < repeat; ++k) {
                p.clearCaches();
                p.setSource(a);
                p.setReference(b);
                p.preparePalettes();
                const auto start = std::chrono::steady_clock::now();
                p.solve();
                seconds.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
                solved = *p.stats().solve;
                problem = p.transportProblem();
            }
            SolveOptions exact;
            exact.precision = Precision::Fp64;
            exact.acceleration = Acceleration::Auto;
            exact.maxIterations = 200000;
            exact.tolerance = 1e-13;
            exact.checkEvery = 10;
            exact.threads = settings.threads;
            const SolveResult converged = reference->solve(*problem, exact);
            const double distance = test::planRelativeL1(*problem, solved, converged);
            distances.push_back(distance);
            times.push_back(median(seconds));
            std::printf("{\"pair\": \"%s->%s\", \"m\": %zu, \"n\": %zu, \"eps\": %g, \"status\": \"%s\", "
                        "\"solver\": \"%s\", \"converged\": %s, \"iterations\": %d, \"exact_passes\": %d, "
                        "\"absorptions\": %d, \"mass\": %.9f, \"plan_rel_l1\": %.3e, \"solve_s\": %.4f, "
                        "\"reference_status\": \"%s\", \"reference_converged\": %s, \"reference_mass\": %.9f}\n",
                        fs::path(source).stem().c_str(), fs::path(target).stem().c_str(), problem->rows(),
                        problem->cols(), problem->eps, toString(solved.status).c_str(), solved.solver.c_str(),
                        solved.converged ? "true" : "false", solved.iterations, solved.exactPasses,
                        solved.absorptions, solved.mass, distance, median(seconds), toString(converged.status).c_str(),
                        converged.converged ? "true" : "false", converged.mass);
            std::fflush(stdout);
        }
        std::printf("{\"pairs\": %zu, \"max_plan_rel_l1\": %.3e, \"median_plan_rel_l1\": %.3e, \"median_solve_s\": %.4f}\n",
                    distances.size(), *std::max_element(distances.begin(), distances.end()), median(distances),
                    median(times));
    } catch (const std::exception& e) {
        std::fprintf(stderr, "uot_palette_accuracy: %s\n", e.what());
        return 1;
    }
    return 0;
}
