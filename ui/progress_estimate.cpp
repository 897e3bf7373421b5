#include "ui/progress_estimate.h"

#include <QObject>

#include <algorithm>
#include <cmath>

namespace uot::ui {

void ProgressEstimate::begin(int maxIterations, double tolerance)
{
    m_maxIterations = maxIterations;
    m_tolerance = tolerance;
    m_haveFirst = false;
    m_first = m_last = SolveProgress{};
}

void ProgressEstimate::add(const SolveProgress& progress)
{
    // A new eps-scaling stage starts from a larger error: extrapolate within the stage.
    if (!m_haveFirst || progress.stage != m_last.stage) {
        m_first = progress;
        m_haveFirst = true;
    }
    m_last = progress;
}

double ProgressEstimate::iterationsLeft() const
{
    const int span = m_last.iteration - m_first.iteration;
    if (!m_haveFirst || span <= 0) return -1;
    double left = std::max(0, m_maxIterations - m_last.iteration);
    // ln(error) falls about linearly with the iterations: extrapolate to the tolerance.
    if (m_tolerance > 0 && m_first.error > 0 && m_last.error > 0) {
        const double slope = (std::log(m_last.error) - std::log(m_first.error)) / span;
        if (m_last.error <= m_tolerance) left = 0;
        else if (slope < 0) left = std::min(left, (std::log(m_tolerance) - std::log(m_last.error)) / slope);
    }
    return left;
}

double ProgressEstimate::secondsLeft() const
{
    const double left = iterationsLeft();
    const int span = m_last.iteration - m_first.iteration;
    if (left < 0 || span <= 0) return -1;
    const double perIteration = (m_last.elapsedSeconds - m_first.elapsedSeconds) / span;
    if (!(perIteration > 0)) return -1;
    return left * perIteration;
}

QString ProgressEstimate::text() const
{
    QString text = QObject::tr("iteration %1 of %2").arg(m_last.iteration).arg(m_maxIterations);
    if (m_last.stageCount > 1)
        text += QObject::tr(" · eps stage %1 of %2").arg(m_last.stage + 1).arg(m_last.stageCount);
    if (m_haveFirst) text += QObject::tr(" · error %1").arg(m_last.error, 0, 'g', 2);
    const double seconds = secondsLeft();
    if (seconds >= 0) {
        text += seconds < 1 ? QObject::tr(" · under 1 s left")
                            : QObject::tr(" · about %1 s left").arg(std::ceil(seconds), 0, 'f', 0);
    }
    return text;
}

}  // namespace uot::ui
