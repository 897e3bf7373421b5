#include "ui/cache_simulation_row.h"

#include <QVBoxLayout>
#include <QLabel>
#include <QPushButton>

namespace uot::ui {

CacheSimulationRow::CacheSimulationRow(QWidget* parent) : QWidget(parent)
{
    m_label = new QLabel(QStringLiteral("-"));
    m_label->setWordWrap(true);  // a narrow dock must not clip it
    m_label->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_button = new QPushButton;
    m_button->setObjectName(QStringLiteral("simulateCachesButton"));
    // The button under the figures: side by side they would widen the panel.
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(m_label);
    layout->addWidget(m_button, 0, Qt::AlignLeft);
    m_simulation = new CacheSimulation(this);
    connect(m_button, &QPushButton::clicked, this, [this] {
        if (running()) cancel();
        else start();
    });
    connect(m_simulation, &CacheSimulation::progress, m_label, &QLabel::setText);
    connect(m_simulation, &CacheSimulation::finished, this, [this](const CacheSimulationResult& r) {
        showIdle();
        m_label->setText(r.summary());
        m_label->setToolTip(r.details());
        emit simulated(r);
    });
    connect(m_simulation, &CacheSimulation::failed, this, [this](const QString& message) {
        showIdle();
        m_label->setText(tr("simulation: %1").arg(message));
        m_label->setToolTip(message);
        emit simulationFailed(message);
    });
    showIdle();
}

void CacheSimulationRow::showIdle()
{
    m_button->setText(tr("Simulate"));
    QString why;
    plannedSimulation(m_problem, &why);
    m_button->setEnabled(why.isEmpty());
    m_button->setToolTip(why.isEmpty() ? tr("Simulate the CPU caches with valgrind's cachegrind on a scaled-down copy "
                                            "of this problem (runs in the background; a few seconds)")
                                       : tr("Cannot simulate: %1").arg(why));
}

void CacheSimulationRow::setProblem(const QString& solver, std::size_t rows, std::size_t cols, Precision precision)
{
    m_problem.solver = solver;
    m_problem.rows = rows;
    m_problem.cols = cols;
    m_problem.precision = precision;
    if (!running()) showIdle();
}

void CacheSimulationRow::start()
{
    CacheSimulationRequest request = m_template;
    request.solver = m_problem.solver;
    request.rows = m_problem.rows;
    request.cols = m_problem.cols;
    request.precision = m_problem.precision;
    m_label->setToolTip({});
    m_simulation->start(request);
    m_button->setText(tr("Cancel"));
    m_button->setEnabled(true);
    m_button->setToolTip(tr("Stop the simulation"));
}

QString CacheSimulationRow::text() const { return m_label->text(); }

}  // namespace uot::ui
