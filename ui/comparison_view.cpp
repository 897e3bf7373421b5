#include "ui/comparison_view.h"

#include <QCheckBox>
#include <QComboBox>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QPushButton>
#include <QScrollArea>
#include <QSplitter>
#include <QTableWidget>
#include <QVBoxLayout>

#include <cmath>

#include "ui/image_view.h"
#include "ui/live_charts.h"
#include "ui/studio_session.h"

namespace uot::ui {

ComparisonView::ComparisonView(SolveWorker* worker, QWidget* parent) : QWidget(parent), m_worker(worker)
{
    m_a = new QComboBox;
    m_b = new QComboBox;
    bool anyGpu = false;
    for (const SolverChoice& choice : StudioSession::solverChoices()) {
        if (choice.gpu && !choice.available) continue;
        anyGpu = anyGpu || choice.gpu;
        m_a->addItem(choice.label, choice.name);
        m_b->addItem(choice.label, choice.name);
    }
    m_a->setToolTip(tr("First variant (blue curves)."));
    m_b->setToolTip(tr("Second variant (red curves)."));
    m_concurrent = new QCheckBox(tr("run at the same time"));
    m_concurrent->setToolTip(tr("Run both at once (CPU variants then share the cores), or one after the other."));
    m_axis = new QComboBox;
    m_axis->addItem(tr("against iterations"));
    m_axis->addItem(tr("against wall time"));
    m_run = new QPushButton(tr("Compare"));
    m_cancel = new QPushButton(tr("Cancel"));
    m_notice = new QLabel;
    m_notice->setWordWrap(true);
    m_summary = new QLabel(tr("Choose two variants and press Compare."));
    m_summary->setWordWrap(true);
    m_summary->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_table = new QTableWidget(8, 2);
    m_table->setVerticalHeaderLabels({tr("iterations"), tr("converged"), tr("wall time"), tr("set-up"),
                                      tr("iterating"), tr("ms / iteration"), tr("bandwidth (GB/s)"),
                                      tr("final error")});
    m_table->verticalHeaderItem(3)->setToolTip(
        tr("The solver's set-up: building the kernel matrix (on the GPU: from the palettes' points, on the device), "
           "allocations (kept between solves of one size) and uploads."));
    m_table->verticalHeaderItem(4)->setToolTip(tr("The iterations alone (on the GPU: device time)."));
    m_table->setHorizontalHeaderLabels({tr("A"), tr("B")});
    m_table->horizontalHeader()->setSectionResizeMode(QHeaderView::Stretch);
    m_table->setEditTriggers(QAbstractItemView::NoEditTriggers);
    m_table->verticalHeader()->setDefaultSectionSize(m_table->fontMetrics().height() + 6);
    m_table->setMinimumHeight(9 * (m_table->fontMetrics().height() + 6) + 4);
    m_table->setVerticalScrollBarPolicy(Qt::ScrollBarAlwaysOff);

    if (!anyGpu) {
        const QString reason = StudioSession::gpuUnavailableReason();
        // One short line; why there is no GPU (driver, toolkit) is for the tooltip.
        m_notice->setText(tr("No GPU here: comparing two CPU variants."));
        m_notice->setToolTip(tr("No usable GPU: %1").arg(reason.isEmpty() ? QStringLiteral("none found") : reason));
        // Two different CPU variants, the classic one against the fast one where both exist.
        const int pot = m_a->findData("pot-style"), fused = m_b->findData("fused");
        m_a->setCurrentIndex(pot >= 0 ? pot : 0);
        m_b->setCurrentIndex(fused >= 0 ? fused : std::min(1, m_b->count() - 1));
        m_concurrent->setChecked(false);
    } else {
        const int cpu = m_a->findData(StudioSession::defaultVariant(false));
        const int gpu = m_b->findData(StudioSession::defaultVariant(true));
        if (cpu >= 0) m_a->setCurrentIndex(cpu);
        if (gpu >= 0) m_b->setCurrentIndex(gpu);
        m_concurrent->setChecked(true);
    }

    auto* controls = new QFormLayout;
    controls->addRow(tr("Variant A"), m_a);
    controls->addRow(tr("Variant B"), m_b);
    controls->addRow(QString(), m_concurrent);
    controls->addRow(tr("Convergence"), m_axis);
    auto* buttons = new QHBoxLayout;
    buttons->addWidget(m_run);
    buttons->addWidget(m_cancel);
    controls->addRow(buttons);
    auto* left = new QVBoxLayout;
    left->addLayout(controls);
    left->addWidget(m_notice);
    left->addWidget(m_table);
    left->addWidget(m_summary);
    left->addStretch(1);
    auto* leftInner = new QWidget;
    leftInner->setLayout(left);
    auto* leftWidget = new QScrollArea;  // never overlaps when the dock is short
    leftWidget->setWidget(leftInner);
    leftWidget->setWidgetResizable(true);
    leftWidget->setFrameShape(QFrame::NoFrame);
    leftWidget->setMinimumWidth(360);

    m_charts = new LiveCharts(LiveCharts::Layout::Tabs);
    m_imageA = new ImageView(tr("Result of A"));
    m_imageB = new ImageView(tr("Result of B"));
    auto* images = new QSplitter(Qt::Vertical);
    images->addWidget(m_imageA);
    images->addWidget(m_imageB);

    auto* splitter = new QSplitter(Qt::Horizontal);
    splitter->addWidget(leftWidget);
    splitter->addWidget(m_charts);
    splitter->addWidget(images);
    splitter->setStretchFactor(1, 2);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(2, 2, 2, 2);
    layout->addWidget(splitter);

    connect(m_run, &QPushButton::clicked, this, &ComparisonView::start);
    connect(m_cancel, &QPushButton::clicked, this, [this] {
        if (m_generation != 0) m_worker->cancel();
    });
    connect(m_b, &QComboBox::currentIndexChanged, this, [this] { showRoofFor(m_b->currentData().toString()); });
    connect(m_axis, &QComboBox::currentIndexChanged, this, [this](int index) {
        m_charts->setConvergenceAxis(index == 0 ? LiveCharts::XAxis::Iteration : LiveCharts::XAxis::WallTime);
    });
    connect(m_worker, &SolveWorker::runStarted, this, [this](quint64 g, const RunInfo& info) {
        if (g != m_generation) return;
        if (info.channel == 0 || info.channel == 1) m_chosen[info.channel] = info.variant;  // resolved on the worker
        m_charts->beginRun(info.channel, info.label);
        m_table->horizontalHeaderItem(info.channel)->setText(info.label);
    });
    connect(m_worker, &SolveWorker::progress, this, [this](quint64 g, const QVector<ProgressSample>& samples) {
        if (g == m_generation && g == m_worker->latestGeneration()) m_charts->addSamples(samples);
    });
    connect(m_worker, &SolveWorker::phaseChanged, this, [this](quint64 g, const QString& text) {
        if (g == m_generation) m_summary->setText(text);
    });
    connect(m_worker, &SolveWorker::jobFinished, this, &ComparisonView::onFinished);
    connect(m_worker, &SolveWorker::jobFailed, this, [this](quint64 g, const QString& message) {
        if (g != m_generation) return;
        setRunning(false);
        m_summary->setText(tr("The comparison failed: %1").arg(message));
        emit comparisonFailed(message);
    });
    connect(m_worker, &SolveWorker::jobCancelled, this, [this](quint64 g) {
        if (g != m_generation) return;
        setRunning(false);
        m_summary->setText(tr("Cancelled."));
    });
    setRunning(false);
}

QString ComparisonView::gpuNotice() const { return m_notice->text(); }

void ComparisonView::setVariants(const QString& a, const QString& b)
{
    const int ia = m_a->findData(a), ib = m_b->findData(b);
    if (ia >= 0) m_a->setCurrentIndex(ia);
    if (ib >= 0) m_b->setCurrentIndex(ib);
}

void ComparisonView::setConcurrent(bool concurrent) { m_concurrent->setChecked(concurrent); }

void ComparisonView::setMachinePeaks(const MachinePeaks& peaks)
{
    m_peaks = peaks;
    showRoofFor(m_b->currentData().toString());
}

// The roofline shows the roofs of variant B's device (the GPU in a CPU-GPU comparison).
void ComparisonView::showRoofFor(const QString& variant)
{
    const std::string name = variant.toStdString();
    const double gbps = m_peaks.bandwidthFor(name, true), gflops = m_peaks.computeFor(name);
    const QString where = StudioSession::runsOnGpu(variant) ? tr("GPU") : tr("host");
    m_charts->setBandwidthRoof(gbps, tr("%1 memory roof %2 GB/s").arg(where).arg(gbps, 0, 'f', 1), gflops);
}

void ComparisonView::setRunning(bool running)
{
    if (!running) m_generation = 0;
    m_run->setEnabled(!running);
    m_cancel->setEnabled(running);
}

void ComparisonView::start()
{
    if (!m_factory) return;
    m_charts->clearRuns();
    m_summary->setText(tr("Starting..."));
    const QString a = m_a->currentData().toString(), b = m_b->currentData().toString();
    m_chosen[0] = a;
    m_chosen[1] = b;
    m_generation = m_worker->submit(tr("Compare"), m_factory(a, b, m_concurrent->isChecked()));
    setRunning(true);
}

void ComparisonView::onFinished(quint64 generation, std::shared_ptr<const JobOutput> finished)
{
    const auto output = outputOf<ComparisonOutput>(finished);
    if (generation != m_generation || !output) return;
    setRunning(false);
    m_last = output;
    showOutput(*output);
    emit comparisonFinished();
}

QString ComparisonView::sideLabel(int side, const RunOutcome& run) const
{
    // The variant that ran; the one chosen too when the pipeline ran another
    // (e.g. matrix-free for a large palette, or a stabilised form).
    const QString chosen = m_chosen[side].isEmpty() ? run.solver : m_chosen[side];
    if (run.solver.isEmpty() || run.solver == chosen) return runLabel(chosen);
    return tr("%1, instead of %2").arg(runLabel(run.solver), chosen);
}

void ComparisonView::showOutput(const ComparisonOutput& output)
{
    if (output.runs.size() != 2) return;
    double msPerIteration[2] = {0, 0};
    const QString labels[2] = {sideLabel(0, output.runs[0]), sideLabel(1, output.runs[1])};
    for (int k = 0; k < 2; ++k) {
        const RunOutcome& run = output.runs[std::size_t(k)];
        const SolveResult& r = run.result;
        perf::IterationCost cost = perf::iterationCost(run.solver.toStdString(), run.rows, run.cols, run.precision);
        if (r.bytesPerIteration > 0) cost.bytes = r.bytesPerIteration;
        const double seconds = r.iterations > 0 ? r.timings.iterateSeconds / r.iterations : 0;
        msPerIteration[k] = 1e3 * seconds;
        const double peak = m_peaks.bandwidthFor(run.solver.toStdString(), cost.readOnly);
        const perf::RooflineFigures f = seconds > 0 ? perf::rooflineFigures(cost, seconds, peak) : perf::RooflineFigures{};
        const QStringList values = {QString::number(r.iterations), r.converged ? tr("yes") : tr("no"),
                                    durationText(run.wallSeconds), durationText(r.timings.setupSeconds),
                                    durationText(r.timings.iterateSeconds), QString::number(msPerIteration[k], 'g', 4),
                                    QString::number(f.gbps, 'f', 2), QString::number(r.error, 'g', 3)};
        for (int row = 0; row < values.size(); ++row) m_table->setItem(row, k, new QTableWidgetItem(values[row]));
        m_table->horizontalHeaderItem(k)->setText(sideLabel(k, run));
        if (seconds > 0) m_charts->setRooflinePoint(k, f.operationalIntensity, f.gflops);
    }
    m_imageA->setImage(output.runs[0].image);
    m_imageB->setImage(output.runs[1].image);
    QString summary;
    if (msPerIteration[0] > 0 && msPerIteration[1] > 0)
        summary += tr("%1 is %2x faster per iteration than %3. ")
                       .arg(msPerIteration[0] <= msPerIteration[1] ? labels[0] : labels[1])
                       .arg(std::max(msPerIteration[0], msPerIteration[1]) / std::min(msPerIteration[0], msPerIteration[1]), 0, 'f', 2)
                       .arg(msPerIteration[0] <= msPerIteration[1] ? labels[1] : labels[0]);
    const SolveTimings& ta = output.runs[0].result.timings;
    const SolveTimings& tb = output.runs[1].result.timings;
    summary += tr("Set-up %1 and %2, iterations %3 and %4 (%5, %6). ")
                   .arg(durationText(ta.setupSeconds), durationText(tb.setupSeconds), durationText(ta.iterateSeconds),
                        durationText(tb.iterateSeconds), labels[0], labels[1]);
    if (std::isfinite(output.planMaxRelDiff))
        summary += tr("Plans differ by at most %1 of the largest entry. ").arg(output.planMaxRelDiff, 0, 'g', 3);
    if (std::isfinite(output.imageMaxRelDiff))
        summary += tr("Recolored images differ by at most %1 % of full scale.").arg(100 * output.imageMaxRelDiff, 0, 'f', 2);
    m_summary->setText(summary);
}

}  // namespace uot::ui
