#pragma once
// Every chart of the studio lives in this class (so that a later move from
// Qt Charts to Qt Graphs touches one place): convergence (error and marginal
// violation against iteration or wall time, log axis, with a dashed line and
// the eps at the start of each eps-scaling stage), time per iteration, and
// a roofline (operational intensity against attained GFLOP/s under the measured
// bandwidth roof) placing the current and previous runs.
//
// Live updates follow the Qt Charts "openglseries" pattern: each series has a
// preallocated QList<QPointF> buffer, new samples are appended to the buffer and
// the series gets it through one replace() call; axes are created once; no
// animations.

#include <QHash>
#include <QList>
#include <QPointF>
#include <QString>
#include <QStringList>
#include <QVector>
#include <QWidget>

#include "ui/solve_worker.h"

QT_BEGIN_NAMESPACE
class QChart;
class QChartView;
class QGraphicsSimpleTextItem;
class QLineSeries;
class QScatterSeries;
class QLogValueAxis;
class QValueAxis;
class QTabWidget;
QT_END_NAMESPACE

namespace uot::ui {

class LiveCharts final : public QWidget {
    Q_OBJECT
public:
    enum class XAxis { Iteration, WallTime };
    enum class Layout { Tabs, Stacked, Row };
    explicit LiveCharts(Layout layout = Layout::Tabs, QWidget* parent = nullptr);
    ~LiveCharts() override;
    Q_DISABLE_COPY_MOVE(LiveCharts)

    // Starts (or restarts) the curves of `channel`, labelled for the legend.
    void beginRun(int channel, const QString& label);
    // Removes every curve (the roofline keeps its previous runs).
    void clearRuns();
    // Adds progress samples (any channels); one replace() per touched series.
    void addSamples(const QVector<ProgressSample>& samples);
    // X axis of the convergence chart.
    void setConvergenceAxis(XAxis axis);
    XAxis convergenceAxis() const { return m_axis; }

    // The roofs of the roofline chart: bandwidth in GB/s (0 = unknown, not
    // drawn) and, where known, the compute roof in GFLOP/s (0 = none drawn).
    void setBandwidthRoof(double gbps, const QString& label, double computeGflops = 0);
    // Places the run of `channel` on the roofline (moves while it runs). The
    // intensity axis (and the roof) grows to take compute-bound points such as
    // the matrix-free variants' (thousands of flop/byte).
    void setRooflinePoint(int channel, double operationalIntensity, double gflops);
    // Keeps the current roofline points as "previous runs" (at most a few).
    void archiveRooflinePoints();

    // For tests and the statistics: points held by the channel's curves.
    int errorPointCount(int channel) const;
    int timePointCount(int channel) const;
    int rooflinePointCount() const;
    double rooflineMaxIntensity() const { return m_rooflineXMax; }  // right end of the intensity axis
    QList<QPointF> roofPoints() const;                              // the drawn roof, left to right
    // The eps-scaling stages marked on the convergence chart for a channel: where
    // each stage starts (iteration, counted across stages) and its eps, and the
    // label drawn there.
    struct StageMark {
        int stage = 0;
        double eps = 0;
        double iteration = 0;
        double seconds = 0;
    };
    QList<StageMark> stageMarks(int channel) const;
    QStringList stageLabels(int channel) const;
    int channelCount() const { return int(m_channels.size()); }
    QChartView* convergenceView() const { return m_convergenceView; }

private:
    struct DrawnStage {
        StageMark mark;
        QLineSeries* line = nullptr;               // the dashed vertical line (none for the first stage)
        QGraphicsSimpleTextItem* label = nullptr;  // "eps 0.04" near the top
    };
    struct Channel {
        QString label;
        QList<DrawnStage> stages;
        int lastStage = -1;
        double lastIteration = 0, lastSeconds = 0;  // the latest sample
        QLineSeries* error = nullptr;
        QLineSeries* marginal = nullptr;
        QLineSeries* time = nullptr;
        QScatterSeries* roofline = nullptr;
        QList<QPointF> errorByIteration, errorByTime, marginalByIteration, marginalByTime, timeBuffer;
    };
    Channel& channel(int index);
    void refreshConvergence();
    void rescale();
    void drawRoof();
    void addStageMark(Channel& channel, int index, const StageMark& mark);
    void clearStageMarks(Channel& channel);
    void placeStageMarks();

    XAxis m_axis = XAxis::Iteration;
    QChart* m_convergence = nullptr;
    QChart* m_time = nullptr;
    QChart* m_roofline = nullptr;
    QChartView* m_convergenceView = nullptr;
    QValueAxis* m_convergenceX = nullptr;
    QLogValueAxis* m_convergenceY = nullptr;
    QValueAxis* m_timeX = nullptr;
    QValueAxis* m_timeY = nullptr;
    QLogValueAxis* m_rooflineX = nullptr;
    QLogValueAxis* m_rooflineY = nullptr;
    QLineSeries* m_roof = nullptr;
    QScatterSeries* m_previous = nullptr;
    QList<QPointF> m_previousPoints;
    double m_roofGBps = 0;
    double m_roofGflops = 0;
    double m_rooflineXMax = 100;
    QHash<int, Channel> m_channels;
};

}  // namespace uot::ui
