#include "ui/statistics_panel.h"

#include <QFormLayout>
#include <QHash>
#include <QLabel>
#include <QStringList>

#include <cmath>

#include "ui/elided_label.h"
#include "ui/cache_simulation_row.h"
#include "ui/studio_session.h"

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

// How the solve ended, held against what was asked: converged (error below the
// tolerance), the iteration cap reached, stopped for another reason, or cancelled.
QString outcomeText(const RunOutcome& run)
{
    const SolveResult& r = run.result;
    const QString error = QString::number(r.error, 'g', 3), tolerance = QString::number(run.tolerance, 'g', 3);
    const auto passes = static_cast<qulonglong>(r.passes);
    QString text;
    if (r.cancelled)
        text = QObject::tr("cancelled after %1 iterations").arg(r.iterations);
    else if (r.converged)
        text = QObject::tr("converged: error %1 < tolerance %2 after %3 iterations, %4 passes")
                   .arg(error, tolerance).arg(r.iterations).arg(passes);
    else if (!(run.tolerance > 0))
        text = QObject::tr("ran the %1 iterations asked (tolerance 0), %2 passes, error %3").arg(r.iterations).arg(passes).arg(error);
    else if (run.maxIterations > 0 && r.iterations >= run.maxIterations)
        text = QObject::tr("NOT converged: cap of %1 iterations reached, error %2 > tolerance %3")
                   .arg(r.iterations).arg(error, tolerance);
    else
        text = QObject::tr("NOT converged: stopped after %1 iterations, error %2 > tolerance %3")
                   .arg(r.iterations).arg(error, tolerance);
    if (!r.message.empty()) text += " - " + QString::fromStdString(r.message);
    return text;
}

// One line per eps-scaling stage: eps, iterations, passes, error and whether it
// reached its tolerance (the stages before the target stop at a looser one).
QString stagesText(const RunOutcome& run, double targetEps)
{
    const SolveResult& r = run.result;
    if (r.stages.empty())
        return targetEps > 0 ? QObject::tr("one stage at eps %1 (eps scaling off)").arg(targetEps, 0, 'g', 3)
                             : QObject::tr("one stage (eps scaling off)");
    QStringList lines;
    for (std::size_t k = 0; k < r.stages.size(); ++k) {
        const SolveStage& stage = r.stages[k];
        const bool target = k + 1 == r.stages.size();
        lines << QObject::tr("%1. eps %2: %3 it, %4 passes, error %5%6")
                     .arg(k + 1)
                     .arg(stage.eps, 0, 'g', 3)
                     .arg(stage.iterations)
                     .arg(static_cast<qulonglong>(stage.passes))
                     .arg(stage.error, 0, 'g', 2)
                     .arg(stage.converged ? (target ? QObject::tr(" (target, converged)") : QObject::tr(" (done)"))
                                          : (target ? QObject::tr(" (target, NOT converged)") : QObject::tr(" (cut short)")));
    }
    return lines.join(QLatin1Char('\n'));
}

}  // namespace

StatisticsPanel::StatisticsPanel(QWidget* parent) : QWidget(parent)
{
    m_form = new QFormLayout(this);
    m_form->setLabelAlignment(Qt::AlignRight);
    add("run", tr("Run"), tr("Solver variant and problem size (source palette x reference palette)."));
    add("status", tr("Status"),
        tr("Converged (final error below the tolerance), NOT converged (the iteration cap or another stop), or\n"
           "cancelled; iterations and passes over the matrix, all eps stages included."));
    add("stages", tr("eps stages"),
        tr("eps-scaling: each stage's eps, iterations, passes over the matrix and final error. Stages before the\n"
           "target eps stop at a looser tolerance; the target eps is solved to the tolerance."), 12);
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

ElidedLabel* StatisticsPanel::add(const QString& key, const QString& title, const QString& tip, int maxLines)
{
    // Long values wrap over maxLines lines and end in "…" past that; the tooltip then holds them whole.
    auto* value = new ElidedLabel(maxLines);
    value->setTextInteractionFlags(Qt::TextSelectableByMouse);
    value->setDescription(tip);
    value->setFullText(QStringLiteral("-"));
    value->setProperty("baseToolTip", tip);
    auto* label = new QLabel(title);
    label->setToolTip(tip);
    m_form->addRow(label, value);
    m_values.insert(key, value);
    return value;
}

QString StatisticsPanel::text(const QString& field) const
{
    const ElidedLabel* label = m_values.value(field);
    return label ? label->fullText() : QString();
}

void StatisticsPanel::setStatus(const QString& text) { m_values["status"]->setFullText(text); }

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
    m_values["peak"]->setFullText(measured || m_peakNote.isEmpty() ? m_peaks.describeFor(name) : m_peakNote);
}

void StatisticsPanel::showHardwareCounters(const SolveResult& r)
{
    const HardwareCounters& c = r.counters;
    if (!StudioSession::runsOnGpu(QString::fromStdString(r.solver))) {
        m_values["gpuCounters"]->setFullText(QStringLiteral("-"));
        return;
    }
    if (!c.sampled) {
        m_values["gpuCounters"]->setFullText(c.note.empty() ? tr("not read") : tr("not read: %1").arg(QString::fromStdString(c.note)));
        return;
    }
    m_values["gpuCounters"]->setFullText(
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
    m_values["l1d"]->setFullText(text);
    m_values["llc"]->setFullText(summary.isEmpty() ? text : tr("unavailable (same reason)"));
    for (const char* key : {"l1d", "llc"}) {
        QString tip = m_values[key]->property("baseToolTip").toString();
        if (!details.isEmpty()) tip += QStringLiteral("\n\n") + details + tr("\n\nSimulated caches > Simulate runs cachegrind instead.");
        m_values[key]->setDescription(tip);
    }
}

void StatisticsPanel::beginRun(const RunInfo& info)
{
    m_finished.reset();
    m_run = info;
    m_values["run"]->setFullText(tr("%1, %2 x %3, %4")
                                 .arg(info.label)
                                 .arg(info.rows)
                                 .arg(info.cols)
                                 .arg(QString::fromStdString(toString(info.precision))));
    for (const char* key : {"elapsed", "msPerIteration", "iterationsPerSecond", "bandwidth", "gflops", "result", "stages"})
        m_values[key]->setFullText(QStringLiteral("-"));
    setStatus(tr("running"));
    const perf::IterationCost cost = perf::iterationCost(info.variant.toStdString(), info.rows, info.cols, info.precision);
    m_values["bytesPerIteration"]->setFullText(bytesText(double(cost.bytes)));
    m_intensity = perf::operationalIntensity(cost);
    m_values["intensity"]->setFullText(QStringLiteral("%1 flop/byte").arg(m_intensity, 0, 'g', 3));
    setCountersUnavailable(m_countersReason, m_countersDetails);
    m_simulation->setProblem(info.variant, info.rows, info.cols, info.precision);
    showPeak(info.variant);
    m_values["gpuCounters"]->setFullText(StudioSession::runsOnGpu(info.variant) ? tr("read after the run") : QStringLiteral("-"));
}

void StatisticsPanel::addSamples(const QVector<ProgressSample>& samples, int channel)
{
    const ProgressSample* last = nullptr;
    for (const ProgressSample& s : samples)
        if (s.channel == channel) last = &s;
    if (!last) return;
    const SolveProgress& p = last->progress;
    m_values["elapsed"]->setFullText(durationText(p.elapsedSeconds));
    QString status = tr("iteration %1, error %2").arg(p.iteration).arg(p.error, 0, 'g', 3);
    if (p.stageCount > 1) {
        status += tr(" (eps stage %1 of %2)").arg(p.stage + 1).arg(p.stageCount);
        m_values["stages"]->setFullText(
            tr("stage %1 of %2 at eps %3").arg(p.stage + 1).arg(p.stageCount).arg(p.stageEps, 0, 'g', 3));
    }
    m_values["status"]->setFullText(status);
    if (p.secondsPerIteration > 0) {
        perf::IterationCost cost = perf::iterationCost(m_run.variant.toStdString(), m_run.rows, m_run.cols, m_run.precision);
        if (p.bytesPerIteration > 0) cost.bytes = p.bytesPerIteration;  // the solver's own figure is authoritative
        const double peak = m_peaks.bandwidthFor(m_run.variant.toStdString(), cost.readOnly);
        const perf::RooflineFigures f = perf::rooflineFigures(cost, p.secondsPerIteration, peak);
        m_intensity = f.operationalIntensity;
        m_gflops = f.gflops;
        m_gbps = f.gbps;
        m_values["bytesPerIteration"]->setFullText(bytesText(double(cost.bytes)));
        m_values["msPerIteration"]->setFullText(tr("%1 ms").arg(f.msPerIteration, 0, 'g', 4));
        m_values["iterationsPerSecond"]->setFullText(QString::number(f.iterationsPerSecond, 'f', 1));
        m_values["bandwidth"]->setFullText(bandwidthText(f, peak));
        m_values["intensity"]->setFullText(QStringLiteral("%1 flop/byte").arg(f.operationalIntensity, 0, 'g', 3));
        m_values["gflops"]->setFullText(QString::number(f.gflops, 'f', 2));
    }
    const CounterSnapshot& c = last->counters;
    if (c.peakRssBytes > 0) m_values["memory"]->setFullText(bytesText(double(c.peakRssBytes)));
    if (c.valid) {
        auto show = [&](const char* key, double misses) {
            if (!std::isfinite(misses)) return;
            QString text = countText(misses);
            if (c.instructions > 0) text += tr(" (%1 per 1000 instructions)").arg(1000.0 * misses / c.instructions, 0, 'f', 2);
            m_values[key]->setFullText(text);
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
    setStatus(outcomeText(run));
    m_values["stages"]->setFullText(stagesText(run, m_run.eps));
    m_values["run"]->setFullText(tr("%1, %2 x %3, %4")
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
        m_values["iterationsPerSecond"]->setFullText(QString::number(f.iterationsPerSecond, 'f', 1));
        m_values["bandwidth"]->setFullText(bandwidthText(f, peak));
        m_values["intensity"]->setFullText(QStringLiteral("%1 flop/byte").arg(f.operationalIntensity, 0, 'g', 3));
        m_values["gflops"]->setFullText(QString::number(f.gflops, 'f', 2));
        m_values["bytesPerIteration"]->setFullText(bytesText(double(cost.bytes)));
        m_values["msPerIteration"]->setFullText(tr("%1 ms (mean)").arg(r.timings.msPerIteration, 0, 'g', 4));
        m_values["elapsed"]->setFullText(
            tr("%1 iterating, %2 setup").arg(durationText(r.timings.iterateSeconds), durationText(r.timings.setupSeconds)));
    }
    showPeak(run.solver);
    showHardwareCounters(r);
    m_simulation->setProblem(run.solver, run.rows, run.cols, run.precision);
    if (r.peakDeviceBytes > 0) m_values["memory"]->setFullText(tr("%1 on the device").arg(bytesText(double(r.peakDeviceBytes))));
    if (std::isfinite(r.mass)) {
        QString text = tr("mass %1, marginal violation %2 (source) / %3 (reference)")
                           .arg(r.mass, 0, 'g', 4)
                           .arg(r.marginalErrorA, 0, 'g', 3)
                           .arg(r.marginalErrorB, 0, 'g', 3);
        // A balanced side makes the objective infinite unless its marginal is met exactly.
        if (std::isfinite(r.objective)) text += tr(", objective %1").arg(r.objective, 0, 'g', 5);
        m_values["result"]->setFullText(text);
    }
    m_values["timings"]->setFullText(timings.isEmpty() ? QStringLiteral("-") : timings);
}

}  // namespace uot::ui
