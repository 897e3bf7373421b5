#pragma once
// Live figures of the running solve: elapsed time, time per iteration,
// iterations per second, bytes per iteration, achieved bandwidth and its share
// of the machine's peak (measured once, cached), operational intensity, peak
// memory, and the hardware cache counters or, in one line, why they are
// unavailable, with cachegrind's simulated figures on request.
// The roofline accounting is core/perf's (iterationCost, rooflineFigures).

#include <QString>

#include <optional>
#include <QWidget>

#include "ui/machine_peaks.h"
#include "ui/solve_worker.h"
#include "ui/studio_jobs.h"

QT_BEGIN_NAMESPACE
class QFormLayout;
class QLabel;
QT_END_NAMESPACE

namespace uot::ui {

class ElidedLabel;
class CacheSimulationRow;

class StatisticsPanel final : public QWidget {
    Q_OBJECT
public:
    explicit StatisticsPanel(QWidget* parent = nullptr);
    Q_DISABLE_COPY_MOVE(StatisticsPanel)

    // The peaks runs are held against (host for CPU variants, the GPU's own for
    // GPU variants); `note` is shown while nothing is measured.
    void setMachinePeaks(const MachinePeaks& peaks, const QString& note = {});
    // Why the hardware cache counters are unavailable: `summary` in the rows
    // (a few words), `details` in their tooltips. Empty: they are available.
    void setCountersUnavailable(const QString& summary, const QString& details = {});
    CacheSimulationRow* cacheSimulation() const { return m_simulation; }
    void beginRun(const RunInfo& info);
    void addSamples(const QVector<ProgressSample>& samples, int channel = 0);
    void finishRun(const RunOutcome& run, const QString& timings);
    void setStatus(const QString& text);

    // The latest figures (for the roofline chart and tests).
    double lastOperationalIntensity() const { return m_intensity; }
    double lastGflops() const { return m_gflops; }
    double lastBandwidthGBps() const { return m_gbps; }
    QString text(const QString& field) const;  // the whole value of a field, for tests
    // The label showing a field (elided when long), for tests.
    const ElidedLabel* valueLabel(const QString& field) const { return m_values.value(field); }

private:
    ElidedLabel* add(const QString& key, const QString& title, const QString& tip, int maxLines = 2);
    void showPeak(const QString& variant);
    void showHardwareCounters(const SolveResult& result);

    QFormLayout* m_form = nullptr;
    QHash<QString, ElidedLabel*> m_values;
    RunInfo m_run;
    std::optional<RunOutcome> m_finished;  // the last finished run, re-shown when the peak arrives
    QString m_finishedTimings;
    MachinePeaks m_peaks;
    QString m_peakNote;
    QString m_countersReason;
    QString m_countersDetails;
    CacheSimulationRow* m_simulation = nullptr;
    double m_intensity = 0, m_gflops = 0, m_gbps = 0;
};

}  // namespace uot::ui
