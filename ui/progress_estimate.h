#pragma once
// What the status bar says while a solve runs: "iteration k of N", the current
// error and an estimate of the time left. The estimate extrapolates the error's
// geometric decay (Sinkhorn converges linearly) to the tolerance, capped by the
// iteration limit, at the measured time per iteration. Under eps-scaling the
// extrapolation restarts with each stage.

#include <QString>

#include "core/transport/solve_options.h"

namespace uot::ui {

class ProgressEstimate final {
public:
    // A new solve with this iteration limit and tolerance (0 = run them all).
    void begin(int maxIterations, double tolerance);
    void add(const SolveProgress& progress);

    int iteration() const { return m_last.iteration; }
    int maxIterations() const { return m_maxIterations; }
    double error() const { return m_last.error; }
    // Iterations still expected (< 0 before two samples).
    double iterationsLeft() const;
    // Seconds still expected (< 0 when unknown).
    double secondsLeft() const;
    // "iteration 40 of 100 · error 3.2e-03 · about 2 s left"
    QString text() const;

private:
    int m_maxIterations = 0;
    double m_tolerance = 0;
    bool m_haveFirst = false;
    SolveProgress m_first, m_last;
};

}  // namespace uot::ui
