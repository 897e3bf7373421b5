// Passes of `--solver auto` at a small eps on the recolor palette problems, with
// and without the automatic eps-scaling (core/transport/eps_scaling.h,
// automaticEpsSchedule), and the matrix-free variant with and without its
// acceleration. Cases: --pairs ordered pairs of the sample images (evenly spaced over
// all ordered pairs of the folders' images; 0 = all), each the palette problem
// (--palette-size points a side, costs in Lab / 100^2, so in [0, 1] for the Lab
// gamut), tau --tau. Columns:
//   - with / without: `auto` solved to --tol from scratch, with its automatic schedule
//     and without it (a zero log warm start: the same start, no schedule), and each
//     plan's relative L1 distance to the converged float64 plan (auto, tolerance 1e-12);
//   - auto_to_target: the passes `auto` (TI + auto over-relaxation + its automatic
//     schedule) needs until its plan is within --target of the converged plan
//     (smallest --max-iter that gets there, by bisection from scratch,
//     tests/support/passes_to_target.h; stages and rejected steps included);
//   - at --mr-eps (0: skipped): `mapreduce` fp64 plain (today's default iteration of
//     the named variant; chunks of --chunk iterations, warm starts continue it
//     exactly) against `mapreduce` with TI + auto over-relaxation (bisection), passes
//     to --target of the converged plan at that eps, and their ratio.
// Prints one JSON object per pair and the medians.
//
//   uot_auto_schedule_passes [--samples DIR[,DIR...]] [--pairs N] [--palette-size N] [--eps X]
//                            [--tau X] [--tol X] [--target X] [--mr-eps X] [--chunk N] [--threads N]

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
#include "core/transport/eps_scaling.h"
#include "tests/gpu/plan_distance.h"
#include "tests/support/passes_to_target.h"

namespace fs = std::filesystem;
using namespace uot;
using uot::bench::median;

int main(int argc, char** argv)
{
    using namespace uot::cli;
    ArgParser parser("uot_auto_schedule_passes [options]",
                     "Passes of --solver auto at a small eps with and without the automatic eps-scaling.");
    parser.addOption("samples", "DIR[,DIR...]", "folders of sample images",
                     "resources/samples,bench/quality/data");
    parser.addOption("pairs", "N", "ordered pairs, evenly spaced over all of them (0 = all)", "30");
    parser.addOption("palette-size", "N", "points per palette (the recolor's default)", "512");
    parser.addOption("eps", "X", "entropic regularisation", "1e-4");
    parser.addOption("tau", "X", "marginal penalty on both sides", "1");
    parser.addOption("tol", "X", "stopping tolerance of the measured solves", "1e-6");
    parser.addOption("target", "X", "plan accuracy of the passes-to-target columns (relative L1)", "1e-6");
    parser.addOption("mr-eps", "X", "eps of the mapreduce columns (0 = skip them)", "1e-3");
    parser.addOption("chunk", "N", "iterations between accuracy measurements of plain mapreduce", "50");
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
        auto mapreduce = createSolver("mapreduce");
        const double target = parser.number("target"), mrEps = parser.number("mr-eps");
        const int chunk = parser.integer("chunk");
        std::vector<std::pair<std::size_t, std::size_t>> pairs;
        for (std::size_t s = 0; s < files.size(); ++s)
            for (std::size_t r = 0; r < files.size(); ++r)
                if (s != r) pairs.emplace_back(s, r);
        const std::size_t wanted = parser.integer("pairs") > 0 ? std::size_t(parser.integer("pairs")) : pairs.size();
        std::vector<std::pair<std::size_t, std::size_t>> chosen;
        for (std::size_t k = 0; k < std::min(wanted, pairs.size()); ++k)
            chosen.push_back(pairs[k * pairs.size() / std::min(wanted, pairs.size())]);
        std::vector<double> before, after, distBefore, distAfter, toTarget, mrPlain, mrFast, mrRatio;
        for (const auto& [s, r] : chosen) {
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
            // The bisection runs fixed iteration counts, for which auto schedules nothing:
            // it gets the schedule auto would run (the one of this problem) explicitly.
            SolveOptions scheduled = o;
            scheduled.epsSchedule = automaticEpsSchedule(problem);
            const test::PassCount reach = test::passesToTargetFromScratch(*solver, problem, scheduled, converged, target);
            before.push_back(double(without.passes));
            after.push_back(double(with.passes));
            distBefore.push_back(dWithout);
            distAfter.push_back(dWith);
            toTarget.push_back(double(reach.passes));
            std::printf("{\"pair\": \"%s->%s\", \"m\": %zu, \"n\": %zu, \"eps\": %g, \"reference_converged\": %s, "
                        "\"without_passes\": %llu, \"without_converged\": %s, \"without_dist\": %.2e, "
                        "\"with_passes\": %llu, \"with_converged\": %s, \"with_stages\": %zu, \"with_dist\": %.2e, "
                        "\"auto_to_target_passes\": %llu, \"auto_to_target_dist\": %.2e",
                        fs::path(files[s]).stem().c_str(), fs::path(files[r]).stem().c_str(), problem.rows(),
                        problem.cols(), problem.eps, converged.converged ? "true" : "false",
                        static_cast<unsigned long long>(without.passes), without.converged ? "true" : "false",
                        dWithout, static_cast<unsigned long long>(with.passes), with.converged ? "true" : "false",
                        with.stages.size(), dWith, static_cast<unsigned long long>(reach.passes), reach.distance);
            if (mrEps > 0) {
                UotProblem mr = problem;
                mr.eps = mrEps;
                const SolveResult mrConverged = solver->solve(mr, exact);
                SolveOptions plain;
                plain.precision = Precision::Fp64;
                plain.threads = threads;
                const test::PassCount slow = test::passesToTarget(*mapreduce, mr, plain, mrConverged, target, chunk);
                SolveOptions fast = plain;
                fast.mode = IterationMode::TranslationInvariant;
                fast.acceleration = Acceleration::Auto;
                const test::PassCount quick = test::passesToTargetFromScratch(*mapreduce, mr, fast, mrConverged, target);
                mrPlain.push_back(double(slow.passes));
                mrFast.push_back(double(quick.passes));
                mrRatio.push_back(double(slow.passes) / double(std::max<std::uint64_t>(1, quick.passes)));
                std::printf(", \"mr_eps\": %g, \"mr_reference_converged\": %s, \"mr_plain_passes\": %llu, "
                            "\"mr_plain_dist\": %.2e, \"mr_ti_relax_passes\": %llu, \"mr_ti_relax_dist\": %.2e",
                            mrEps, mrConverged.converged ? "true" : "false",
                            static_cast<unsigned long long>(slow.passes), slow.distance,
                            static_cast<unsigned long long>(quick.passes), quick.distance);
            }
            std::printf("}\n");
            std::fflush(stdout);
        }
        std::printf("{\"pairs\": %zu, \"palette_size\": %d, \"target\": %g, \"median_without_passes\": %.0f, "
                    "\"median_with_passes\": %.0f, \"max_without_dist\": %.2e, \"max_with_dist\": %.2e, "
                    "\"median_auto_to_target_passes\": %.0f, \"max_auto_to_target_passes\": %.0f",
                    before.size(), settings.palette.size, target, median(before), median(after),
                    *std::max_element(distBefore.begin(), distBefore.end()),
                    *std::max_element(distAfter.begin(), distAfter.end()), median(toTarget),
                    *std::max_element(toTarget.begin(), toTarget.end()));
        if (mrEps > 0)
            std::printf(", \"mr_eps\": %g, \"median_mr_plain_passes\": %.0f, \"median_mr_ti_relax_passes\": %.0f, "
                        "\"median_mr_plain_over_ti_relax\": %.1f, \"min_mr_plain_over_ti_relax\": %.1f",
                        mrEps, median(mrPlain), median(mrFast), median(mrRatio),
                        *std::min_element(mrRatio.begin(), mrRatio.end()));
        std::printf("}\n");
    } catch (const std::exception& e) {
        std::fprintf(stderr, "uot_auto_schedule_passes: %s\n", e.what());
        return 1;
    }
    return 0;
}
