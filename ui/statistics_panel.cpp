#include "ui/statistics_panel.h"

#include <QFormLayout>
#include <QHash>
#include <QLabel>

#include <cmath>

#include "core/perf/roofline.h"
#include "core/registry/solver_registry.h"
#include "ui/cache_simulation_row.h"

namespace uot::ui {

namespace {

QString bytesText(double bytes)
{
    if (!(bytes > 0)) return QStringLiteral("-");
    const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    int u = 0;
    while (bytes >= 1024 && u < 4) {
        bytes /= 1024;
        ++u;
    }
    return QStringLiteral("%1 %2").arg(bytes, 0, 'f', bytes < 10 ? 2 : 1).arg(units[u]);
}

QString countText(double v)
{
    if (!std::isfinite(v)) return QStringLiteral("-");
    if (v >= 1e9) return QStringLiteral("%1 G").arg(v / 1e9, 0, 'f', 2);
    if (v >= 1e6) return QStringLiteral("%1 M").arg(v / 1e6, 0, 'f', 2);
    if (v >= 1e3) return QStringLiteral("%1 k").arg(v / 1e3, 0, 'f', 1);
    return QString::number(v, 'f', 0);
}

QString bandwidthText(const perf::RooflineFigures& f, double peak)
{
    if (!(peak > 0)) return QObject::tr("%1 GB/s").arg(f.gbps, 0, 'f', 2);
    QString text = QObject::tr("%1 GB/s (%2 % of peak)").arg(f.gbps, 0, 'f', 2).arg(f.pctOfPeak, 0, 'f', 0);
    // The peak is a DRAM stream much larger than the caches; a matrix that fits
    // in the last-level cache can be read faster than that.
    if (f.pctOfPeak > 100) text += QObject::tr(", above the memory peak: the matrix is served from cache");
    return text;
}

}  // namespace

StatisticsPanel::StatisticsPanel(QWidget* parent) : QWidget(parent)
{
    m_form = new QFormLayout(this);
    m_form->setLabelAlignment(Qt::AlignRight);
    add("run", tr("Run"), tr("Solver variant and problem size (source palette x reference palette)."));
    add("status", tr("Status"), tr("Iterations done, convergence and numerical status."));
    add("elapsed", tr("Elapsed"), tr("Wall time of the iterations so far."));
    add("msPerIteration", tr("Time / iteration"), tr("Over the last check interval."));
    add("iterationsPerSecond", tr("Iterations / s"), tr("Over the last check interval."));
    add("bytesPerIteration", tr("Bytes / iteration"), tr("Matrix bytes the variant must move per iteration."));
    add("bandwidth", tr("Bandwidth"),
        tr("Bytes moved per second, and its share of the peak of the device the run used (measured once)."));
    add("peak", tr("Machine peak"),
        tr("The peak this run is held against, measured once: host memory bandwidth for CPU runs; the GPU's own "
           "streaming read, copy bandwidth and fp32 rate for GPU runs."));
    add("intensity", tr("Op. intensity"), tr("Floating-point operations per byte of matrix traffic."));
    add("gflops", tr("GFLOP/s"), tr("Attained floating-point rate (4 M N flops per iteration)."));
    add("memory", tr("Peak memory"), tr("Peak resident memory of the process during the run (GPU: device memory)."));
    add("l1d", tr("L1D misses"), tr("L1 data cache read misses during the run, and per 1000 instructions."));
    add("llc", tr("LLC misses"), tr("Last-level cache misses during the run, and per 1000 instructions."));
    m_simulation = new CacheSimulationRow;
    auto* simulatedLabel = new QLabel(tr("Simulated caches"));
    simulatedLabel->setToolTip(tr("CPU runs: L1D and last-level misses simulated by valgrind's cachegrind on a "
                                  "scaled-down copy of the problem, on request (for where the counters are hidden)."));
    m_form->addRow(simulatedLabel, m_simulation);
    add("gpuCounters", tr("GPU counters"),
        tr("GPU runs: DRAM bytes read and written per iteration, L2 and L1 hit rates, read by CUPTI's range profiler "
           "over a few extra iterations apart from the timed ones, next to the traffic model's bytes."));
    add("result", tr("Result"), tr("Mass, marginal violations and objective of the final plan."));
    add("timings", tr("Phases"), tr("Seconds spent in each phase of the last run."));
    setMachinePeaks({}, tr("measuring..."));
    setCountersUnavailable(QString());
}

QLabel* StatisticsPanel::add(const QString& key, const QString& title, const QString& tip)
{
    auto* value = new QLabel(QStringLiteral("-"));
    value->setTextInteractionFlags(Qt::TextSelectableByMouse);
    value->setWordWrap(true);
    value->setToolTip(tip);
    value->setProperty("baseToolTip", tip);
    auto* label = new QLabel(title);
    label->setToolTip(tip);
    m_form->addRow(label, value);
    m_values.insert(key, value);
    return value;
}

QString StatisticsPanel::text(const QString& field) const
{
    const QLabel* label = m_values.value(field);
    return label ? label->text() : QString();
}

void StatisticsPanel::setStatus(const QString& text) { m_values["status"]->setText(text); }

void StatisticsPanel::setMachinePeaks(const MachinePeaks& peaks, const QString& note)
{
    m_peaks = peaks;
    m_peakNote = note;
    showPeak(m_run.variant);
    if (m_finished) finishRun(*m_finished, m_finishedTimings);  // show the share of the peak
}

void StatisticsPanel::showPeak(const QString& variant)
{
    const std::string name = variant.toStdString();
    const bool measured = m_peaks.bandwidthFor(name, true) > 0;
    m_values["peak"]->setText(measured || m_peakNote.isEmpty() ? m_peaks.describeFor(name) : m_peakNote);
}

void StatisticsPanel::showHardwareCounters(const SolveResult& r)
{
    const HardwareCounters& c = r.counters;
    if (!runsOnGpu(r.solver)) {
        m_values["gpuCounters"]->setText(QStringLiteral("-"));
        return;
    }
    if (!c.sampled) {
        m_values["gpuCounters"]->setText(c.note.empty() ? tr("not read") : tr("not read: %1").arg(QString::fromStdString(c.note)));
        return;
    }
    m_values["gpuCounters"]->setText(
        tr("DRAM %1 read + %2 written per iteration (model %3); L2 hit %4 %, L1 hit %5 %")
            .arg(bytesText(c.dramReadBytesPerIteration))
            .arg(bytesText(c.dramWriteBytesPerIteration))
            .arg(bytesText(double(r.bytesPerIteration)))
            .arg(100 * c.l2HitRate, 0, 'f', 1)
            .arg(100 * c.l1HitRate, 0, 'f', 1));
}

void StatisticsPanel::setCountersUnavailable(const QString& summary, const QString& details)
{
    m_countersReason = summary;
    m_countersDetails = details;
    const QString text = summary.isEmpty() ? QStringLiteral("-") : tr("unavailable: %1").arg(summary);
    m_values["l1d"]->setText(text);
    m_values["llc"]->setText(summary.isEmpty() ? text : tr("unavailable (same reason)"));
    for (const char* key : {"l1d", "llc"}) {
        QString tip = m_values[key]->property("baseToolTip").toString();
        if (!details.isEmpty()) tip += QStringLiteral("\n\n") + details + tr("\n\nSimulated caches > Simulate runs cachegrind instead.");
        m_values[key]->setToolTip(tip);
    }
}

void StatisticsPanel::beginRun(const RunInfo& info)
{
    m_finished.reset();
    m_run = info;
    m_values["run"]->setText(tr("%1, %2 x %3, %4")
                                 .arg(info.label)
                                 .arg(info.rows)
                                 .arg(info.cols)
                                 .arg(QString::fromStdString(toString(info.precision))));
    for (const char* key : {"elapsed", "msPerIteration", "iterationsPerSecond", "bandwidth", "gflops", "result"})
        m_values[key]->setText(QStringLiteral("-"));
    setStatus(tr("running"));
    const perf::IterationCost cost = perf::iterationCost(info.variant.toStdString(), info.rows, info.cols, info.precision);
    m_values["bytesPerIteration"]->setText(bytesText(double(cost.bytes)));
    m_intensity = perf::operationalIntensity(cost);
    m_values["intensity"]->setText(QStringLiteral("%1 flop/byte").arg(m_intensity, 0, 'g', 3));
    setCountersUnavailable(m_countersReason, m_countersDetails);
    m_simulation->setProblem(info.variant, info.rows, info.cols, info.precision);
    showPeak(info.variant);
    m_values["gpuCounters"]->setText(runsOnGpu(info.variant.toStdString()) ? tr("read after the run") : QStringLiteral("-"));
}

void StatisticsPanel::addSamples(const QVector<ProgressSample>& samples, int channel)
{
    const ProgressSample* last = nullptr;
    for (const ProgressSample& s : samples)
        if (s.channel == channel) last = &s;
    if (!last) return;
    const SolveProgress& p = last->progress;
    m_values["elapsed"]->setText(durationText(p.elapsedSeconds));
    m_values["status"]->setText(tr("iteration %1, error %2").arg(p.iteration).arg(p.error, 0, 'g', 3));
    if (p.secondsPerIteration > 0) {
        perf::IterationCost cost = perf::iterationCost(m_run.variant.toStdString(), m_run.rows, m_run.cols, m_run.precision);
        if (p.bytesPerIteration > 0) cost.bytes = p.bytesPerIteration;  // the solver's own figure is authoritative
        const double peak = m_peaks.bandwidthFor(m_run.variant.toStdString(), cost.readOnly);
        const perf::RooflineFigures f = perf::rooflineFigures(cost, p.secondsPerIteration, peak);
        m_intensity = f.operationalIntensity;
        m_gflops = f.gflops;
        m_gbps = f.gbps;
        m_values["bytesPerIteration"]->setText(bytesText(double(cost.bytes)));
        m_values["msPerIteration"]->setText(tr("%1 ms").arg(f.msPerIteration, 0, 'g', 4));
        m_values["iterationsPerSecond"]->setText(QString::number(f.iterationsPerSecond, 'f', 1));
        m_values["bandwidth"]->setText(bandwidthText(f, peak));
        m_values["intensity"]->setText(QStringLiteral("%1 flop/byte").arg(f.operationalIntensity, 0, 'g', 3));
        m_values["gflops"]->setText(QString::number(f.gflops, 'f', 2));
    }
    const CounterSnapshot& c = last->counters;
    if (c.peakRssBytes > 0) m_values["memory"]->setText(bytesText(double(c.peakRssBytes)));
    if (c.valid) {
        auto show = [&](const char* key, double misses) {
            if (!std::isfinite(misses)) return;
            QString text = countText(misses);
            if (c.instructions > 0) text += tr(" (%1 per 1000 instructions)").arg(1000.0 * misses / c.instructions, 0, 'f', 2);
            m_values[key]->setText(text);
        };
        show("l1d", c.l1dMisses);
        show("llc", c.llcMisses);
    }
}

void StatisticsPanel::finishRun(const RunOutcome& run, const QString& timings)
{
    if (!m_finished || &*m_finished != &run) {
        RunOutcome kept = run;
        kept.image = QImage();  // the figures only
        m_finished = std::move(kept);
        m_finishedTimings = timings;
    }
    const SolveResult& r = run.result;
    QString status = r.cancelled ? tr("cancelled after %1 iterations").arg(r.iterations)
                     : r.converged ? tr("converged in %1 iterations, %2 passes (error %3)")
                                         .arg(r.iterations)
                                         .arg(static_cast<qulonglong>(r.passes))
                                         .arg(r.error, 0, 'g', 3)
                                   : tr("NOT converged: stopped at the cap of %1 iterations (error %2)")
                                         .arg(r.iterations)
                                         .arg(r.error, 0, 'g', 3);
    if (!r.message.empty()) status += " - " + QString::fromStdString(r.message);
    setStatus(status);
    m_values["run"]->setText(tr("%1, %2 x %3, %4")
                                 .arg(run.label)
                                 .arg(run.rows)
                                 .arg(run.cols)
                                 .arg(QString::fromStdString(toString(run.precision))));
    if (r.timings.msPerIteration > 0 && r.iterations > 0) {
        // Figures of the whole run, for the variant that finished it (after any automatic switch).
        perf::IterationCost cost = perf::iterationCost(run.solver.toStdString(), run.rows, run.cols, run.precision);
        if (r.bytesPerIteration > 0) cost.bytes = r.bytesPerIteration;
        const double peak = m_peaks.bandwidthFor(run.solver.toStdString(), cost.readOnly);
        const perf::RooflineFigures f = perf::rooflineFigures(cost, r.timings.msPerIteration * 1e-3, peak);
        m_intensity = f.operationalIntensity;
        m_gflops = f.gflops;
        m_gbps = f.gbps;
        m_values["iterationsPerSecond"]->setText(QString::number(f.iterationsPerSecond, 'f', 1));
        m_values["bandwidth"]->setText(bandwidthText(f, peak));
        m_values["intensity"]->setText(QStringLiteral("%1 flop/byte").arg(f.operationalIntensity, 0, 'g', 3));
        m_values["gflops"]->setText(QString::number(f.gflops, 'f', 2));
        m_values["bytesPerIteration"]->setText(bytesText(double(cost.bytes)));
        m_values["msPerIteration"]->setText(tr("%1 ms (mean)").arg(r.timings.msPerIteration, 0, 'g', 4));
        m_values["elapsed"]->setText(
            tr("%1 iterating, %2 setup").arg(durationText(r.timings.iterateSeconds), durationText(r.timings.setupSeconds)));
    }
    showPeak(run.solver);
    showHardwareCounters(r);
    m_simulation->setProblem(run.solver, run.rows, run.cols, run.precision);
    if (r.peakDeviceBytes > 0) m_values["memory"]->setText(tr("%1 on the device").arg(bytesText(double(r.peakDeviceBytes))));
    if (std::isfinite(r.mass)) {
        QString text = tr("mass %1, marginal violation %2 (source) / %3 (reference)")
                           .arg(r.mass, 0, 'g', 4)
                           .arg(r.marginalErrorA, 0, 'g', 3)
                           .arg(r.marginalErrorB, 0, 'g', 3);
        // A balanced side makes the objective infinite unless its marginal is met exactly.
        if (std::isfinite(r.objective)) text += tr(", objective %1").arg(r.objective, 0, 'g', 5);
        m_values["result"]->setText(text);
    }
    m_values["timings"]->setText(timings.isEmpty() ? QStringLiteral("-") : timings);
}

}  // namespace uot::ui
