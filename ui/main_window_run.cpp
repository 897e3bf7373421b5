// MainWindow: run control. Run, cancel and compare; what the worker reports
// back (progress, results, failures) and the busy state.
#include "ui/main_window.h"

#include "core/registry/solver_registry.h"

#include <QAction>
#include <QDockWidget>
#include <QLabel>
#include <QMessageBox>
#include <QProgressBar>
#include <QSettings>

#include "ui/comparison_view.h"
#include "ui/histogram_view.h"
#include "ui/image_view.h"
#include "ui/live_charts.h"
#include "ui/lut_actions.h"
#include "ui/parameters_panel.h"
#include "ui/statistics_panel.h"

namespace uot::ui {

void MainWindow::connectWorker()
{
    SolveWorker* worker = m_worker.get();
    connect(worker, &SolveWorker::jobStarted, this, &MainWindow::onJobStarted);
    connect(worker, &SolveWorker::runStarted, this, &MainWindow::onRunStarted);
    connect(worker, &SolveWorker::progress, this, &MainWindow::onProgress);
    connect(worker, &SolveWorker::jobFinished, this, &MainWindow::onFinished);
    connect(worker, &SolveWorker::jobFailed, this, &MainWindow::onFailed);
    connect(worker, &SolveWorker::jobCancelled, this, [this](quint64 g) { onCancelled(g); });
    connect(worker, &SolveWorker::phaseChanged, this, [this](quint64 g, const QString& text) {
        if (g == m_runGeneration && g == m_worker->latestGeneration()) m_phase->setText(text);
    });
    connect(worker, &SolveWorker::idle, this, [this] {
        if (!m_worker->isBusy()) setBusy(false);
    });
}

bool MainWindow::isRunning() const { return m_busy; }

void MainWindow::run()
{
    m_autoRunTimer.stop();
    if (!hasSource() || !hasReference()) {
        showError(tr("Run"), tr("Open a source image and a reference image first (File menu, or drop files on the panes)."));
        emit runFailed(m_lastError);
        return;
    }
    const StudioParameters p = parameters();
    {
        QSettings settings;
        p.save(settings);
    }
    const bool remapOnly = m_haveSolved && p.sameSolveAs(m_solvedParameters) && m_session->sourceId == m_source.id &&
                           m_session->referenceId == m_reference.id;
    if (!remapOnly) m_charts->archiveRooflinePoints();
    m_runInputs = currentInputs();
    m_runGeneration = m_worker->submit(remapOnly ? tr("Re-map") : tr("Recolor"),
                                       makeRecolorJob(m_session, m_source, m_reference, p));
    m_lastError.clear();
    // A solve counts iterations; a re-map is short and only shows that it is busy.
    m_estimate.begin(p.maxIterations, p.tolerance);
    if (remapOnly) {
        m_progress->setRange(0, 0);
    } else {
        m_progress->setRange(0, p.maxIterations);
        m_progress->setValue(0);
        m_progress->setFormat(tr("preparing palettes..."));
    }
    setBusy(true);
}

void MainWindow::cancel()
{
    m_autoRunTimer.stop();
    m_worker->cancel();
}

void MainWindow::compare()
{
    m_comparisonDock->show();  // at a third of the window the first time (createDocks)
    m_comparisonDock->raise();
    m_comparison->start();
}

void MainWindow::onJobStarted(quint64 generation)
{
    if (generation != m_runGeneration) return;
    m_phase->setText(tr("Working..."));
}

void MainWindow::onRunStarted(quint64 generation, const RunInfo& info)
{
    if (generation != m_runGeneration) return;
    m_charts->beginRun(0, info.label);
    m_statistics->beginRun(info);
    showRoofFor(m_parameters->parameters());
}

void MainWindow::onProgress(quint64 generation, const QVector<ProgressSample>& samples)
{
    if (generation != m_runGeneration || generation != m_worker->latestGeneration()) return;  // stale
    m_charts->addSamples(samples);
    m_statistics->addSamples(samples);
    m_charts->setRooflinePoint(0, m_statistics->lastOperationalIntensity(), m_statistics->lastGflops());
    for (const ProgressSample& sample : samples)
        if (sample.channel == 0) m_estimate.add(sample.progress);
    if (m_progress->maximum() > 0) {
        m_progress->setValue(std::min(m_estimate.iteration(), m_progress->maximum()));
        m_progress->setFormat(m_estimate.text());
    }
}

void MainWindow::onFinished(quint64 generation, std::shared_ptr<const JobOutput> output)
{
    if (generation != m_runGeneration || !output) return;
    if (!output->runs.empty()) {
        const RunOutcome& run = output->runs.front();
        m_statistics->finishRun(run, output->timings);
        m_charts->setRooflinePoint(0, m_statistics->lastOperationalIntensity(), m_statistics->lastGflops());
        m_solvedParameters = m_runInputs.parameters;  // not the panel's: they may have changed meanwhile
        m_haveSolved = true;
    } else if (output->kind == JobOutput::Kind::Remap) {
        // The solve is the last one; the mapping is new.
        const StudioParameters& p = m_runInputs.parameters;
        m_statistics->setStatus(tr("re-mapped (strength %1 %%2%3) with the last solve")
                                    .arg(std::lround(p.strength * 100))
                                    .arg(p.preserveLuminance ? tr(", luminance preserved") : QString())
                                    .arg(p.smoothing > 0 ? tr(", smoothing %1").arg(p.smoothing) : QString()));
    }
    if (!output->image.isNull()) {
        // Made from the inputs the run started with: when they changed while it
        // ran, updateResultState marks it out of date at once.
        m_result = StudioResult{output->image, output->pixels, m_runInputs};
        m_resultView->setImage(m_result.image);
        m_histogram->setImage(HistogramView::Result, m_result.image);
        m_zoomLabel->setText(m_resultView->zoomText());
        updateResultState();
    }
    if (!output->notice.isEmpty()) {
        m_phase->setText(output->notice);
        if (m_options.interactive) QMessageBox::information(this, tr("Solved on the CPU"), output->notice);
    } else {
        // Whether the plan behind the picture converged, in words a photographer can act on.
        QString done = tr("Done");
        if (!output->runs.empty()) {
            const RunOutcome& run = output->runs.front();
            if (run.result.converged)
                done += tr(" · converged in %1 iterations").arg(run.result.iterations);
            else if (!run.result.cancelled && run.tolerance > 0)
                done += tr(" · NOT converged (error %1 > tolerance %2): raise Max iterations under Advanced settings")
                            .arg(run.result.error, 0, 'g', 2)
                            .arg(run.tolerance, 0, 'g', 2);
        }
        m_phase->setText(tr("%1. %2").arg(done, output->timings));
    }
    emit resultReady();
}

void MainWindow::onFailed(quint64 generation, const QString& message)
{
    if (generation != m_runGeneration) return;
    showError(tr("Recolor failed"), tr("The recolor failed:\n%1\n\nThe previous result is kept.").arg(message));
    emit runFailed(message);
}

void MainWindow::onCancelled(quint64 generation)
{
    if (generation != m_runGeneration) return;
    m_phase->setText(tr("Cancelled. The previous result is kept."));
    m_statistics->setStatus(tr("cancelled"));
    emit runCancelled();
}

void MainWindow::onParametersChanged()
{
    recordParameters();
    updateResultState();
    const StudioParameters p = parameters();
    QSettings settings;
    p.save(settings);
    if (p.autoRun && hasSource() && hasReference()) m_autoRunTimer.start();
}

void MainWindow::setBusy(bool busy)
{
    if (busy == m_busy) return;
    m_busy = busy;
    m_parameters->setRunning(busy);
    m_progress->setVisible(busy);
    updateResultState();
    emit busyChanged(busy);
}

ResultInputs MainWindow::currentInputs() const { return ResultInputs{m_source, m_reference, parameters()}; }

bool MainWindow::resultOutOfDate() const
{
    return !m_result.empty() && !m_result.inputs.differencesFrom(currentInputs()).isEmpty();
}

void MainWindow::updateResultState()
{
    const ResultInputs now = currentInputs();
    const QStringList changed = m_result.empty() ? QStringList() : m_result.inputs.differencesFrom(now);
    QString banner;
    if (!changed.isEmpty()) {
        const QString what = ResultInputs::inWords(changed);
        // A run of the current inputs is under way (e.g. auto-run re-mapping a strength change).
        const bool updating = m_busy && m_runInputs.differencesFrom(now).isEmpty();
        const QAction* runAction = action(QStringLiteral("runAction"));
        const QString key = runAction ? runAction->shortcut().toString(QKeySequence::NativeText) : QString();
        banner = updating ? tr("Out of date: %1 changed. Updating...").arg(what)
                          : tr("Out of date: %1 changed. Press Run (%2).").arg(what, key);
    }
    m_resultView->setBanner(banner);
    const bool saveable = !m_result.empty() && changed.isEmpty();
    m_saveAction->setEnabled(saveable);
    m_saveAsAction->setEnabled(saveable);
    m_lut->exportAction()->setEnabled(changed.isEmpty());
}

bool MainWindow::refuseOutOfDateResult(const QString& title)
{
    if (!resultOutOfDate()) return false;
    const QString what = ResultInputs::inWords(m_result.inputs.differencesFrom(currentInputs()));
    showError(title, tr("The result is out of date: %1 changed since it was made. Press Run to make a new result "
                        "from the current images and settings, then try again.").arg(what));
    return true;
}

// The roofline's roofs for the device the current settings solve on.
void MainWindow::showRoofFor(const StudioParameters& parameters)
{
    const std::string variant = solverNameFor(parameters).toStdString();
    const double gbps = m_peaks.bandwidthFor(variant, true), gflops = m_peaks.computeFor(variant);
    const QString where = runsOnGpu(variant) ? tr("GPU") : tr("host");
    // A matrix-free variant's compute roof is its device's exp-and-FMA peak (MachinePeaks::computeFor).
    const QString label = gflops > 0 ? tr("%1 memory roof %2 GB/s, compute roof %3 GFLOP/s")
                                           .arg(where)
                                           .arg(gbps, 0, 'f', 1)
                                           .arg(gflops, 0, 'f', 0)
                                     : tr("%1 memory roof %2 GB/s").arg(where).arg(gbps, 0, 'f', 1);
    m_charts->setBandwidthRoof(gbps, label, gflops);
}

}  // namespace uot::ui
