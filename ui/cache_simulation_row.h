#pragma once
// The Statistics panel's "Simulated caches" row: a button that runs
// CacheSimulation (cachegrind) on a scaled-down copy of the last problem, the
// figures in one line labelled "simulated (cachegrind, N x N)" and the detail
// in its tooltip. The button turns into Cancel while the simulation runs.

#include <QWidget>

#include "ui/cache_simulation.h"

QT_BEGIN_NAMESPACE
class QLabel;
class QPushButton;
QT_END_NAMESPACE

namespace uot::ui {

class CacheSimulationRow final : public QWidget {
    Q_OBJECT
public:
    explicit CacheSimulationRow(QWidget* parent = nullptr);
    Q_DISABLE_COPY_MOVE(CacheSimulationRow)

    // The problem to copy (the last run's variant, palette sizes and precision).
    void setProblem(const QString& solver, std::size_t rows, std::size_t cols, Precision precision);
    // Size cap and caches of the copy (tests use a tiny copy and small caches).
    void setRequestTemplate(const CacheSimulationRequest& request) { m_template = request; }
    void start();
    void cancel() { m_simulation->cancel(); }
    bool running() const { return m_simulation->running(); }
    QString text() const;

signals:
    void simulated(const uot::ui::CacheSimulationResult& result);
    void simulationFailed(const QString& message);

private:
    void showIdle();

    QLabel* m_label = nullptr;
    QPushButton* m_button = nullptr;
    CacheSimulation* m_simulation = nullptr;
    CacheSimulationRequest m_template;
    CacheSimulationRequest m_problem;
};

}  // namespace uot::ui
