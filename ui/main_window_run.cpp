// MainWindow: what the session announces. New images, parameters, runs and
// their progress, results and whether they are still valid, the busy state;
// run, cancel and compare are forwarded to the session and the comparison dock.
#include "ui/main_window.h"

#include <QAction>
#include <QDockWidget>
#include <QFileInfo>
#include <QLabel>
#include <QMessageBox>
#include <QProgressBar>
#include <QSignalBlocker>
#include <QStatusBar>

#include "ui/comparison_view.h"
#include "ui/histogram_view.h"
#include "ui/image_view.h"
#include "ui/library_panel.h"
#include "ui/live_charts.h"
#include "ui/lut_actions.h"
#include "ui/parameters_panel.h"
#include "ui/statistics_panel.h"

namespace uot::ui {

void MainWindow::connectSession()
{
    StudioSession* s = m_session;
    connect(s, &StudioSession::failed, this, &MainWindow::showError);
    connect(s, &StudioSession::status, m_phase, &QLabel::setText);
    connect(s, &StudioSession::sourceChanged, this, &MainWindow::showSource);
    connect(s, &StudioSession::referenceChanged, this, &MainWindow::showReference);
    connect(s, &StudioSession::sourceLoaded, this, [this](const QString& path) {
        addRecentFile(path);
        emit sourceLoaded();
    });
    connect(s, &StudioSession::referenceLoaded, this, [this](const QString& path) {
        addRecentFile(path);
        emit referenceLoaded();
    });
    connect(s, &StudioSession::loadFailed, this, &MainWindow::loadFailed);
    connect(s, &StudioSession::parametersChanged, this, &MainWindow::showParameters);
    connect(s, &StudioSession::newResult, this, &MainWindow::showNewResult);
    connect(s, &StudioSession::resultChanged, this, &MainWindow::showResultState);
    connect(s, &StudioSession::busyChanged, this, &MainWindow::showBusy);
    connect(s, &StudioSession::estimateChanged, this, &MainWindow::showEstimate);
    connect(s, &StudioSession::runStarted, this, [this](const RunInfo& info) {
        charts()->archiveRooflinePoints();
        charts()->beginRun(0, info.label);
        statisticsPanel()->beginRun(info);
        showRoof();
    });
    connect(s, &StudioSession::progress, this, [this](const QVector<ProgressSample>& samples) {
        charts()->addSamples(samples);
        statisticsPanel()->addSamples(samples);
        charts()->setRooflinePoint(0, statisticsPanel()->lastOperationalIntensity(), statisticsPanel()->lastGflops());
    });
    connect(s, &StudioSession::solved, this, [this](const RunOutcome& run, const QString& timings) {
        statisticsPanel()->finishRun(run, timings);
        charts()->setRooflinePoint(0, statisticsPanel()->lastOperationalIntensity(), statisticsPanel()->lastGflops());
    });
    connect(s, &StudioSession::remapped, this, [this](const QString& what) { statisticsPanel()->setStatus(what); });
    connect(s, &StudioSession::finished, this, &MainWindow::showFinished);
    connect(s, &StudioSession::runFailed, this, &MainWindow::runFailed);
    connect(s, &StudioSession::cancelled, this, [this] {
        statisticsPanel()->setStatus(tr("cancelled"));
        emit runCancelled();
    });
    connect(s, &StudioSession::saved, this, &MainWindow::resultSaved);
    connect(s, &StudioSession::saveFailed, this, &MainWindow::saveFailed);
    connect(s, &StudioSession::libraryChanged, libraryPanel(), &LibraryPanel::refresh);
    connect(s, &StudioSession::peaksMeasured, this, [this] {
        statisticsPanel()->setMachinePeaks(m_session->peaks(), tr("could not be measured"));
        showRoof();
        comparisonView()->setMachinePeaks(m_session->peaks());
        emit bandwidthMeasured();
    });
    connect(m_lut, &LutActions::statusMessage, statusBar(), &QStatusBar::showMessage);
}

bool MainWindow::isRunning() const { return m_session->isBusy(); }
void MainWindow::run() { m_session->run(); }
void MainWindow::cancel() { m_session->cancel(); }

void MainWindow::compare()
{
    QDockWidget* comparison = dock(QStringLiteral("comparisonDock"));
    comparison->show();  // at a third of the window the first time (createDocks)
    comparison->raise();
    comparisonView()->start();
}

bool MainWindow::resultOutOfDate() const { return !m_session->staleInputs().isEmpty(); }

void MainWindow::showSource()
{
    const LoadedImage& image = m_session->source();
    const QImage shown = image.image ? toQImage(*image.image) : QImage();
    m_sourceView->setImage(shown);
    m_resultView->setBeforeImage(shown);
    imageInfoLabel()->setText(image.image ? tr("%1-bit · %2").arg(image.image->depth)
                                                .arg(image.profile.isEmpty() ? tr("sRGB (assumed)") : image.profile)
                                          : QString());
    histogramView()->setImage(HistogramView::Source, shown);
    updateTitle();
}

void MainWindow::showReference()
{
    const LoadedImage& image = m_session->reference();
    const QImage shown = image.image ? toQImage(*image.image) : QImage();
    m_referenceView->setImage(shown);
    histogramView()->setImage(HistogramView::Reference, shown);
    updateTitle();
}

void MainWindow::showParameters(const StudioParameters& parameters)
{
    if (m_parameters->parameters() != parameters) {
        // The panel shows them; its echo would be a second edit.
        const QSignalBlocker block(m_parameters);
        m_parameters->setParameters(parameters);
    }
}

void MainWindow::showNewResult()
{
    const QImage& image = m_session->result().image;
    m_resultView->setImage(image);
    histogramView()->setImage(HistogramView::Result, image);
    part<QLabel>("zoomLabel")->setText(m_resultView->zoomText());
}

void MainWindow::showResultState()
{
    const QStringList changed = m_session->staleInputs();
    QString banner;
    if (!changed.isEmpty()) {
        const QString what = ResultInputs::inWords(changed);
        const QAction* runAction = action(QStringLiteral("runAction"));
        const QString key = runAction ? runAction->shortcut().toString(QKeySequence::NativeText) : QString();
        banner = m_session->validity() == ResultValidity::Updating
                     ? tr("Out of date: %1 changed. Updating...").arg(what)
                     : tr("Out of date: %1 changed. Press Run (%2).").arg(what, key);
    }
    m_resultView->setBanner(banner);
    const bool saveable = m_session->validity() == ResultValidity::Current;
    action(QStringLiteral("saveAction"))->setEnabled(saveable);
    action(QStringLiteral("saveAsAction"))->setEnabled(saveable);
    m_lut->exportAction()->setEnabled(changed.isEmpty());
    action(QStringLiteral("exportClipAction"))->setEnabled(saveable && m_session->hasClip() && ClipModel::supported());
}

void MainWindow::showBusy(bool busy)
{
    m_parameters->setRunning(busy);
    m_progress->setVisible(busy);
    emit busyChanged(busy);
}

void MainWindow::showEstimate(int iteration, int maximum, const QString& text)
{
    // A re-map (maximum 0) only shows that it is busy.
    if (m_progress->maximum() != maximum) m_progress->setRange(0, maximum);
    if (maximum > 0) {
        m_progress->setValue(std::min(iteration, maximum));
        m_progress->setFormat(text);
    }
}

void MainWindow::showFinished(const QString& status, const QString& notice)
{
    if (!notice.isEmpty()) {
        m_phase->setText(notice);
        if (m_options.interactive) QMessageBox::information(this, tr("Solved on the CPU"), notice);
    } else {
        m_phase->setText(status);
    }
    emit resultReady();
}

// The roofline's roofs for the device the current settings solve on.
void MainWindow::showRoof()
{
    const Roof roof = m_session->roofFor(m_session->currentVariant());
    const QString where = roof.gpu ? tr("GPU") : tr("host");
    // A matrix-free variant's compute roof is its device's exp-and-FMA peak (MachinePeaks::computeFor).
    const QString label = roof.gflops > 0 ? tr("%1 memory roof %2 GB/s, compute roof %3 GFLOP/s")
                                                .arg(where)
                                                .arg(roof.gbps, 0, 'f', 1)
                                                .arg(roof.gflops, 0, 'f', 0)
                                          : tr("%1 memory roof %2 GB/s").arg(where).arg(roof.gbps, 0, 'f', 1);
    charts()->setBandwidthRoof(roof.gbps, label, roof.gflops);
}

}  // namespace uot::ui
