#pragma once
// The jobs the studio runs on its SolveWorker that need no images (synthetic
// solves and comparisons), the output types of solves and comparisons, and the
// conversions from the studio's parameters to solver options. With
// pipeline_jobs.h and lut_job.h, the studio session's half of ui/ that calls
// the solver registry; the views ask the session (ui/studio_session.h).

#include <QImage>
#include <QString>
#include <QStringList>

#include <cstddef>
#include <functional>
#include <limits>
#include <memory>
#include <vector>

#include "core/color/image.h"
#include "core/transport/solve_result.h"
#include "core/transport/uot_problem.h"
#include "ui/solve_worker.h"
#include "ui/studio_parameters.h"

namespace uot::ui {

// One solver run inside a job.
struct RunOutcome {
    QString label;   // what the user sees, e.g. "CPU fused"
    QString solver;  // variant name that produced the result
    SolveResult result;
    std::size_t rows = 0;
    std::size_t cols = 0;
    Precision precision = Precision::Fp32;
    double wallSeconds = 0;  // whole solve() call
    double tolerance = 0;    // what the solve was asked for (0 = run maxIterations)
    int maxIterations = 0;
    QImage image;            // recolored with this run's plan (comparisons), may be null
};

// What makeSyntheticSolveJob hands back: its one run.
struct SyntheticSolveOutput final : JobOutput {
    RunOutcome run;
};

// What a comparison (makeSyntheticComparisonJob, makeComparisonJob) hands back.
struct ComparisonOutput final : JobOutput {
    std::vector<RunOutcome> runs;  // variant A, then B (both, unless cancelled)
    // max |P1 - P2| / max P1 over the plans, and max |I1 - I2| / 255 over the
    // recolored images (NaN when not computed).
    double planMaxRelDiff = std::numeric_limits<double>::quiet_NaN();
    double imageMaxRelDiff = std::numeric_limits<double>::quiet_NaN();
};

// Hardware cache counters and peak memory for one run on this thread's process
// (core/perf). Without PMU access, snapshots are invalid and reason() says why.
class RunCounters final {
public:
    RunCounters();
    ~RunCounters();
    Q_DISABLE_COPY_MOVE(RunCounters)
    void start();  // resets the peak memory and starts counting
    CounterSnapshot snapshot() const;
    QString reason() const;  // empty when every counter is available

private:
    struct State;
    std::unique_ptr<State> m_state;
};

// Why cache counters are unavailable on this machine (empty when they are).
QString cacheCountersUnavailableReason();
// The same in a few words, for one line (empty when the counters work).
QString cacheCountersUnavailableSummary();

// A random point-cloud problem (rows x cols points in the unit cube, uniform
// weights, fixed seed) solved with the chosen variant. Used by tests and by
// the comparison view when no images are loaded.
JobFunction makeSyntheticSolveJob(std::size_t rows, std::size_t cols, const StudioParameters& parameters);

// Runs the same synthetic problem with two variants, concurrently or one after
// the other, on progress channels 0 and 1, and compares the plans.
JobFunction makeSyntheticComparisonJob(std::size_t rows, std::size_t cols, const StudioParameters& parameters,
                                       const QString& variantA, const QString& variantB, bool concurrent);

// The solver options the parameters describe.
SolveOptions solveOptionsFor(const StudioParameters& parameters);
// Registry name of the variant the parameters ask for on their device
// ("auto" on a GPU device = "gpu-fused").
QString solverNameFor(const StudioParameters& parameters);
// The variant a registry name stands for ("auto" -> "fused"), asked of the registry.
QString resolvedVariantName(const QString& name);
// "CPU fused", "GPU gpu-fused"...
QString runLabel(const QString& solverName);

// Runs `first` on this thread and `second` at the same time on Qt's thread
// pool (a concurrent comparison); returns once both have ended, then rethrows
// what `second` threw. A throw from `first` waits for `second` and goes on.
void runSideBySide(const std::function<void()>& first, const std::function<void()>& second);

// max_ij |P1 - P2| / max_ij P1 for two solutions of the same problem.
double planMaxRelativeDifference(const UotProblem& problem, const SolveResult& first, const SolveResult& second);

}  // namespace uot::ui
