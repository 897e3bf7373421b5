#include "ui/studio_jobs.h"

#include <QElapsedTimer>
#include <QFuture>
#include <QtConcurrent/QtConcurrentRun>

#include <algorithm>
#include <cmath>
#include <random>
#include <thread>

#include "core/perf/cache_counters.h"
#include "core/perf/peak_memory.h"
#include "core/registry/solver_registry.h"
#include "core/transport/plan_evaluation.h"
#include "core/transport/uot_error.h"

namespace uot::ui {

struct RunCounters::State {
    perf::CacheCounters counters;
};

RunCounters::RunCounters() : m_state(std::make_unique<State>()) {}
RunCounters::~RunCounters() = default;

void RunCounters::start()
{
    perf::resetPeakRss();
    m_state->counters.start();
}

CounterSnapshot RunCounters::snapshot() const
{
    CounterSnapshot s;
    s.peakRssBytes = perf::peakRssBytes();
    if (!m_state->counters.running()) return s;
    const perf::CacheCounterSample sample = m_state->counters.read();
    s.valid = sample.l1dReadMisses.valid || sample.llcMisses.valid;
    s.l1dMisses = sample.l1dReadMisses.valid ? double(sample.l1dReadMisses.value) : std::nan("");
    s.llcMisses = sample.llcMisses.valid ? double(sample.llcMisses.value) : std::nan("");
    s.instructions = sample.instructions.valid ? double(sample.instructions.value) : std::nan("");
    return s;
}

QString RunCounters::reason() const { return QString::fromStdString(m_state->counters.unavailableReason()); }

namespace {

// Probed once per process (opens and closes one counter).
const perf::CacheCounters& countersProbe()
{
    static const perf::CacheCounters probe;
    return probe;
}

}  // namespace

QString cacheCountersUnavailableReason() { return QString::fromStdString(countersProbe().unavailableReason()); }

QString cacheCountersUnavailableSummary() { return QString::fromStdString(countersProbe().unavailableSummary()); }

SolveOptions solveOptionsFor(const StudioParameters& p) { return p.recolorSettings().transport.options; }

QString solverNameFor(const StudioParameters& p) { return QString::fromStdString(p.recolorSettings().transport.solver); }

QString resolvedVariantName(const QString& name)
{
    try {
        return QString::fromStdString(createSolver(name.toStdString())->name());
    } catch (const std::exception&) {
        return name;
    }
}

void runSideBySide(const std::function<void()>& first, const std::function<void()>& second)
{
    std::exception_ptr failure;
    QFuture<void> other = QtConcurrent::run([&second, &failure] {
        try {
            second();
        } catch (...) {
            failure = std::current_exception();
        }
    });
    try {
        first();
    } catch (...) {
        other.waitForFinished();
        throw;
    }
    other.waitForFinished();
    if (failure) std::rethrow_exception(failure);
}

QString runLabel(const QString& solverName)
{
    const std::optional<SolverCapabilities> caps = solverCapabilities(solverName.toStdString());
    if (!caps) return solverName;
    return caps->device == DeviceKind::Gpu ? QStringLiteral("GPU %1").arg(QString::fromStdString(caps->algorithm))
                                           : QStringLiteral("CPU %1").arg(solverName);
}

double planMaxRelativeDifference(const UotProblem& problem, const SolveResult& first, const SolveResult& second)
{
    // P2_ij = P1_ij * exp(dU_i + dV_j): one pass over P1 gives both plans.
    const std::size_t rows = problem.rows(), cols = problem.cols();
    std::vector<double> dV(cols);
    for (std::size_t j = 0; j < cols; ++j) dV[j] = second.logV[j] - first.logV[j];
    std::vector<double> rowMax(rows, 0.0), rowDiff(rows, 0.0);
    forEachPlanRow(problem, first.logU, first.logV, [&](std::size_t i, const double* row) {
        const double dU = second.logU[i] - first.logU[i];
        double m = 0, d = 0;
        for (std::size_t j = 0; j < cols; ++j) {
            const double p2 = row[j] * std::exp(dU + dV[j]);
            m = std::max(m, row[j]);
            d = std::max(d, std::abs(p2 - row[j]));
        }
        rowMax[i] = m;
        rowDiff[i] = d;
    });
    const double m = *std::max_element(rowMax.begin(), rowMax.end());
    const double d = *std::max_element(rowDiff.begin(), rowDiff.end());
    return m > 0 ? d / m : std::numeric_limits<double>::quiet_NaN();
}

namespace {

// The synthetic problem: owns its point sets and weights.
struct SyntheticProblem {
    std::vector<double> x, y, a, b;
    UotProblem problem;

    SyntheticProblem(std::size_t rows, std::size_t cols, const StudioParameters& p)
        : x(rows * 3), y(cols * 3), a(rows, 1.0 / double(rows)), b(cols, 1.0 / double(cols))
    {
        std::mt19937_64 rng(42);
        std::uniform_real_distribution<double> unit(0.0, 1.0);
        for (double& v : x) v = unit(rng);
        for (double& v : y) v = 0.3 + 0.7 * unit(rng);
        problem.cost = PointCloudCost{x.data(), y.data(), rows, cols, 3, 1.0};
        problem.a = a;
        problem.b = b;
        problem.eps = p.eps;
        problem.tauA = problem.tauB = p.balanced ? kInfinity : p.tau;
        problem.reference = p.referenceMeasure;
    }
};

RunOutcome solveOnce(const UotProblem& problem, const QString& name, SolveOptions options, const SolveControl& control,
                     JobContext& context, int channel)
{
    {
        RunInfo info;
        info.channel = channel;
        info.label = runLabel(name);
        info.variant = name;
        info.rows = problem.rows();
        info.cols = problem.cols();
        info.precision = options.precision;
        info.eps = problem.eps;
        context.beginRun(info);
    }
    RunOutcome run;
    run.solver = name;
    run.label = runLabel(name);
    run.rows = problem.rows();
    run.cols = problem.cols();
    run.precision = options.precision;
    run.tolerance = options.tolerance;
    run.maxIterations = options.maxIterations;
    std::unique_ptr<UotSolver> solver = createSolver(name.toStdString());
    QElapsedTimer timer;
    timer.start();
    run.result = solver->solve(problem, options, control);
    run.wallSeconds = timer.nsecsElapsed() * 1e-9;
    run.solver = QString::fromStdString(run.result.solver.empty() ? solver->name() : run.result.solver);
    if (run.result.bytesPerIteration == 0)
        run.result.bytesPerIteration = solver->bytesPerIteration(run.rows, run.cols, options.precision);
    return run;
}

}  // namespace

JobFunction makeSyntheticSolveJob(std::size_t rows, std::size_t cols, const StudioParameters& parameters)
{
    return [rows, cols, parameters](JobContext& context) {
        auto output = std::make_shared<SyntheticSolveOutput>();
        context.phase(QObject::tr("Solving a %1 x %2 problem...").arg(rows).arg(cols));
        SyntheticProblem synthetic(rows, cols, parameters);
        RunCounters counters;
        SolveControl control = context.solveControl(0);
        control.onProgress = [&context, &counters](const SolveProgress& p) { context.report(0, p, counters.snapshot()); };
        counters.start();
        output->run = solveOnce(synthetic.problem, solverNameFor(parameters), solveOptionsFor(parameters), control, context, 0);
        output->cancelled = output->run.result.cancelled;
        return output;
    };
}

JobFunction makeSyntheticComparisonJob(std::size_t rows, std::size_t cols, const StudioParameters& parameters,
                                       const QString& variantA, const QString& variantB, bool concurrent)
{
    return [=](JobContext& context) {
        auto output = std::make_shared<ComparisonOutput>();
        SyntheticProblem synthetic(rows, cols, parameters);
        SolveOptions options = solveOptionsFor(parameters);
        const bool bothCpu = !runsOnGpu(variantA.toStdString()) && !runsOnGpu(variantB.toStdString());
        if (concurrent && bothCpu) {
            // Share the cores between the two runs instead of oversubscribing them.
            const int all = options.threads > 0 ? options.threads : int(std::max(2u, std::thread::hardware_concurrency()));
            options.threads = std::max(1, all / 2);
        }
        RunOutcome first, second;
        const SolveControl controlA = context.solveControl(0), controlB = context.solveControl(1);
        context.phase(QObject::tr("Comparing %1 and %2...").arg(runLabel(variantA), runLabel(variantB)));
        if (concurrent) {
            runSideBySide([&] { first = solveOnce(synthetic.problem, variantA, options, controlA, context, 0); },
                          [&] { second = solveOnce(synthetic.problem, variantB, options, controlB, context, 1); });
        } else {
            first = solveOnce(synthetic.problem, variantA, options, controlA, context, 0);
            if (!context.cancelled()) second = solveOnce(synthetic.problem, variantB, options, controlB, context, 1);
        }
        output->cancelled = context.cancelled();
        if (!output->cancelled)
            output->planMaxRelDiff = planMaxRelativeDifference(synthetic.problem, first.result, second.result);
        output->runs = {first, second};
        return output;
    };
}

}  // namespace uot::ui
