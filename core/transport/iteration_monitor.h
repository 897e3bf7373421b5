#pragma once
// The bookkeeping every iterative solver shares: cancellation polling, the
// check cadence, timing, bytes moved and progress reports. A solver asks
// shouldStop() before each iteration and report() at each check.

#include <chrono>
#include <cmath>
#include <cstdint>
#include <limits>

#include "core/transport/solve_options.h"

namespace uot {

class IterationMonitor {
public:
    IterationMonitor(const SolveOptions& options, const SolveControl& control, std::uint64_t bytesPerIteration)
        : m_options(options), m_control(control), m_bytesPerIteration(bytesPerIteration),
          m_checkEvery(options.checkEvery > 0 ? options.checkEvery : 1),
          m_start(Clock::now()), m_lastCheck(m_start)
    {
    }

    bool cancelRequested() const
    {
        return m_control.cancel && m_control.cancel->load(std::memory_order_relaxed);
    }

    // True when iteration number `iteration` (1-based, about to run) ends at a check.
    bool isCheckIteration(int iteration) const
    {
        return iteration % m_checkEvery == 0 || iteration == m_options.maxIterations;
    }

    // Reports a check after `iterations` completed iterations; returns true
    // when the stopping criterion is met.
    bool report(int iterations, double error, double marginalErrorA = std::numeric_limits<double>::quiet_NaN(),
                double marginalErrorB = std::numeric_limits<double>::quiet_NaN())
    {
        const auto now = Clock::now();
        SolveProgress p;
        p.iteration = iterations;
        p.error = error;
        p.marginalErrorA = marginalErrorA;
        p.marginalErrorB = marginalErrorB;
        p.elapsedSeconds = seconds(m_start, now);
        const int done = iterations - m_lastCheckIteration;
        p.secondsPerIteration = done > 0 ? seconds(m_lastCheck, now) / done : 0.0;
        p.bytesPerIteration = m_bytesPerIteration;
        p.bytesMoved = m_bytesPerIteration * static_cast<std::uint64_t>(iterations);
        m_lastCheck = now;
        m_lastCheckIteration = iterations;
        if (m_control.onProgress) m_control.onProgress(p);
        return m_options.tolerance > 0 && error < m_options.tolerance;
    }

    double elapsedSeconds() const { return seconds(m_start, Clock::now()); }

private:
    using Clock = std::chrono::steady_clock;
    static double seconds(Clock::time_point a, Clock::time_point b)
    {
        return std::chrono::duration<double>(b - a).count();
    }

    const SolveOptions& m_options;
    const SolveControl& m_control;
    std::uint64_t m_bytesPerIteration;
    int m_checkEvery;
    Clock::time_point m_start;
    Clock::time_point m_lastCheck;
    int m_lastCheckIteration = 0;
};

}  // namespace uot
