#pragma once
// Runs the current problem with two variants (CPU against GPU, or two CPU
// variants when there is no GPU, which it says) at the same time or one after
// the other, and shows both convergence curves on one chart (against
// iterations or wall time), their set-up and iteration times, times per
// iteration, bandwidths, the speedup and how closely they agree (plans and
// recolored images).

#include <QWidget>

#include <functional>
#include <memory>

#include "ui/machine_peaks.h"
#include "ui/solve_worker.h"
#include "ui/studio_jobs.h"

QT_BEGIN_NAMESPACE
class QCheckBox;
class QComboBox;
class QLabel;
class QPushButton;
class QTableWidget;
QT_END_NAMESPACE

namespace uot::ui {

class ImageView;
class LiveCharts;

class ComparisonView final : public QWidget {
    Q_OBJECT
public:
    using JobFactory = std::function<JobFunction(const QString& variantA, const QString& variantB, bool concurrent)>;

    explicit ComparisonView(SolveWorker* worker, QWidget* parent = nullptr);
    Q_DISABLE_COPY_MOVE(ComparisonView)

    void setJobFactory(JobFactory factory) { m_factory = std::move(factory); }
    void setVariants(const QString& a, const QString& b);
    void setConcurrent(bool concurrent);
    // The peaks each side's run is held against (its own device's).
    void setMachinePeaks(const MachinePeaks& peaks);
    // Starts a comparison with the chosen variants.
    void start();
    bool isRunning() const { return m_generation != 0; }

    LiveCharts* charts() const { return m_charts; }
    const ComparisonOutput* lastOutput() const { return m_last.get(); }
    QString gpuNotice() const;

signals:
    void comparisonFinished();
    void comparisonFailed(const QString& message);

private:
    void onFinished(quint64 generation, std::shared_ptr<const JobOutput> output);
    void showOutput(const ComparisonOutput& output);
    void showRoofFor(const QString& variant);
    // The column title of side 0 (A) or 1 (B): the variant that ran ("CPU log"),
    // with the one chosen when they differ.
    QString sideLabel(int side, const RunOutcome& run) const;
    void setRunning(bool running);

    SolveWorker* m_worker;
    JobFactory m_factory;
    quint64 m_generation = 0;
    std::shared_ptr<const ComparisonOutput> m_last;
    QComboBox* m_a = nullptr;
    QComboBox* m_b = nullptr;
    QCheckBox* m_concurrent = nullptr;
    QComboBox* m_axis = nullptr;
    QPushButton* m_run = nullptr;
    QPushButton* m_cancel = nullptr;
    QLabel* m_notice = nullptr;
    QLabel* m_summary = nullptr;
    QTableWidget* m_table = nullptr;
    LiveCharts* m_charts = nullptr;
    ImageView* m_imageA = nullptr;
    ImageView* m_imageB = nullptr;
    MachinePeaks m_peaks;
    QString m_chosen[2];  // the variants of the running or last comparison, as chosen (resolved when each run starts)
};

}  // namespace uot::ui
