#include "core/transport/eps_scaling.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <vector>
#include <sstream>

#include "core/transport/kernel_matrix.h"
#include "core/transport/relaxed_step.h"
#include "core/transport/uot_error.h"

namespace uot {

namespace {
[[noreturn]] void fail(const std::string& message) { throw Error(ErrorCode::InvalidArgument, message); }

constexpr std::size_t kMaxStages = 200;

double parseNumber(const std::string& text, const char* what)
{
    char* end = nullptr;
    const double value = std::strtod(text.c_str(), &end);
    if (text.empty() || end != text.c_str() + text.size())
        fail(std::string("eps schedule: ") + what + " '" + text + "' is not a number (expected START,FACTOR, e.g. 1,0.5)");
    return value;
}

// Omega for the next stage from the one that worked at this stage: the rate model
// 1 - rate ~ eps gives sqrt(1 - rate') = sqrt(1 - rate) sqrt(factor).
double nextOmega(double omega, double epsRatio)
{
    if (!(omega > 1.0)) return 1.0;
    const double root = (2.0 / omega - 1.0) * std::sqrt(epsRatio);
    return std::clamp(2.0 / (1.0 + root), 1.0, OmegaController::kMaxOmega);
}
}  // namespace

EpsSchedule automaticEpsSchedule(const UotProblem& problem)
{
    const std::size_t rows = problem.rows(), cols = problem.cols();
    double lo = std::numeric_limits<double>::infinity(), hi = -lo;
    std::vector<double> row(cols);
    for (std::size_t i = 0; i < rows; ++i) {
        fillCostRow(problem.cost, i, row.data());
        for (double c : row) {
            lo = std::min(lo, c);
            hi = std::max(hi, c);
        }
    }
    EpsSchedule schedule;
    const double range = hi - lo;
    if (!(range > 0) || !std::isfinite(range) || !(problem.eps < range / kAutomaticScheduleRatio)) return schedule;
    // None where halves would take more than kMaxStages (eps far below the costs, e.g. 1e-300):
    // a schedule nobody asked for must not refuse the solve (validateEpsSchedule would).
    const double start = range / kAutomaticScheduleStart;
    if (std::ceil(std::log(problem.eps / start) / std::log(0.5)) + 1 > static_cast<double>(kMaxStages)) return schedule;
    schedule.start = start;
    schedule.factor = 0.5;
    return schedule;
}

EpsSchedule parseEpsSchedule(const std::string& text)
{
    EpsSchedule schedule;
    if (text.empty() || text == "none") {
        schedule.start = 0;
        return schedule;
    }
    const std::size_t comma = text.find(',');
    schedule.start = parseNumber(text.substr(0, comma), "start");
    if (comma != std::string::npos) schedule.factor = parseNumber(text.substr(comma + 1), "factor");
    if (!(schedule.start > 0) || !std::isfinite(schedule.start)) {
        std::ostringstream msg;
        msg << "eps schedule: start " << schedule.start << " must be a finite number > 0 (or 'none')";
        fail(msg.str());
    }
    return schedule;
}

void validateEpsSchedule(const EpsSchedule& schedule, double targetEps)
{
    std::ostringstream msg;
    if (!(schedule.start > 0) || !std::isfinite(schedule.start)) {
        msg << "eps schedule: start " << schedule.start << " must be a finite number > 0";
        fail(msg.str());
    }
    if (!(schedule.factor > 0) || !(schedule.factor < 1)) {
        msg << "eps schedule: factor " << schedule.factor
            << " must be in (0, 1): eps shrinks by it from stage to stage until it reaches the target";
        fail(msg.str());
    }
    if (schedule.start < targetEps) {
        msg << "eps schedule: start " << schedule.start << " is below the target eps " << targetEps
            << ": it must start at or above the target (e.g. --eps-schedule " << 100 * targetEps << ","
            << schedule.factor << ")";
        fail(msg.str());
    }
    const double stages = std::ceil(std::log(targetEps / schedule.start) / std::log(schedule.factor));
    if (stages + 1 > static_cast<double>(kMaxStages)) {
        msg << "eps schedule: from " << schedule.start << " to " << targetEps << " by a factor " << schedule.factor
            << " takes " << stages + 1 << " stages (at most " << kMaxStages << "): use a smaller factor or start";
        fail(msg.str());
    }
}

std::vector<double> epsStages(const EpsSchedule& schedule, double targetEps)
{
    validateEpsSchedule(schedule, targetEps);
    std::vector<double> stages;
    for (double eps = schedule.start; eps > targetEps * (1 + 1e-12); eps *= schedule.factor) stages.push_back(eps);
    stages.push_back(targetEps);
    return stages;
}

SolveResult solveWithEpsSchedule(UotSolver& solver, const UotProblem& problem, const SolveOptions& options,
                                 const SolveControl& control)
{
    validateProblem(problem);
    const std::vector<double> stages = epsStages(options.epsSchedule, problem.eps);
    SolveResult total;
    std::vector<double> warmLogU, warmLogV;
    double omega = 0;  // the last stage's omega (0: none yet)
    int iterationsLeft = options.maxIterations;
    for (std::size_t k = 0; k < stages.size(); ++k) {
        const bool target = k + 1 == stages.size();
        UotProblem stage = problem;
        stage.eps = stages[k];
        SolveOptions stageOptions = options;
        stageOptions.epsSchedule = EpsSchedule{};
        stageOptions.maxIterations = iterationsLeft;
        if (!target) {
            stageOptions.tolerance = std::max(options.tolerance, kEpsStageTolerance);
            stageOptions.evaluateFinalPlan = false;
        }
        if (k > 0) {
            stageOptions.warmU = {};
            stageOptions.warmV = {};
            stageOptions.warmLogU = warmLogU;
            stageOptions.warmLogV = warmLogV;
            // Auto carries omega over (scaled to the new eps) instead of measuring the rate again.
            if (options.acceleration == Acceleration::Auto && omega > 1.0)
                stageOptions.autoInitialOmega = nextOmega(omega, stages[k] / stages[k - 1]);
        }
        // Progress counts across the stages and says which stage it belongs to.
        const int stageIndex = static_cast<int>(k), stageCount = static_cast<int>(stages.size());
        const double stageEps = stages[k];
        const SolveControl stageControl = continuedControl(
            control, total.iterations, total.timings.iterateSeconds,
            total.bytesPerIteration * static_cast<std::uint64_t>(total.iterations),
            [stageIndex, stageCount, stageEps](SolveProgress& q) {
                q.stage = stageIndex;
                q.stageCount = stageCount;
                q.stageEps = stageEps;
            });
        SolveResult r = solver.solve(stage, stageOptions, stageControl);
        total.stages.push_back({stages[k], r.iterations, r.passes, r.error, r.converged});
        const int iterations = total.iterations + r.iterations;
        const std::uint64_t passes = total.passes + r.passes;
        const int rejected = total.rejectedSteps + r.rejectedSteps;
        SolveTimings timings = total.timings;
        timings.setupSeconds += r.timings.setupSeconds;
        timings.iterateSeconds += r.timings.iterateSeconds;
        timings.evaluateSeconds += r.timings.evaluateSeconds;
        std::vector<SolveStage> stageReports = std::move(total.stages);
        total = std::move(r);
        total.stages = std::move(stageReports);
        total.iterations = iterations;
        total.passes = passes;
        total.rejectedSteps = rejected;
        total.timings = timings;
        total.timings.msPerIteration = iterations > 0 ? 1e3 * timings.iterateSeconds / iterations : 0.0;
        iterationsLeft = options.maxIterations - iterations;
        const bool usable = total.status == NumericalStatus::Ok || total.status == NumericalStatus::SwitchedToLogDomain;
        if (target || total.cancelled || !usable) break;
        if (iterationsLeft <= 0) {
            total.converged = false;
            total.message = "the eps schedule used up --max-iter before the target eps " + std::to_string(problem.eps);
            break;
        }
        omega = total.omega;
        const double ratio = stages[k] / stages[k + 1];
        warmLogU = total.logU;
        warmLogV = total.logV;
        for (double& x : warmLogU) x *= ratio;
        for (double& x : warmLogV) x *= ratio;
    }
    return total;
}

}  // namespace uot
