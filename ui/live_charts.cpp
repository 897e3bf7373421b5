#include "ui/live_charts.h"

#include <QChart>
#include <QChartView>
#include <QGraphicsSimpleTextItem>
#include <QLegendMarker>
#include <QLineSeries>
#include <QLogValueAxis>
#include <QPainter>
#include <QScatterSeries>
#include <QTabWidget>
#include <QValueAxis>
#include <QHBoxLayout>
#include <QVBoxLayout>

#include <algorithm>
#include <cmath>
#include <limits>

namespace uot::ui {

namespace {

constexpr int kReserve = 4096;  // points preallocated per buffer
const QColor kChannelColors[] = {QColor(31, 119, 180), QColor(214, 39, 40), QColor(44, 160, 44), QColor(148, 103, 189)};

QChart* makeChart(const QString& title)
{
    auto* chart = new QChart;
    chart->setTitle(title);
    chart->setAnimationOptions(QChart::NoAnimation);
    chart->legend()->setAlignment(Qt::AlignBottom);
    chart->setMargins(QMargins(4, 4, 4, 4));
    return chart;
}

QChartView* makeView(QChart* chart)
{
    auto* view = new QChartView(chart);
    view->setRenderHint(QPainter::Antialiasing);
    // Short enough that a bottom dock of charts (Charts, Comparison) fits in a third of a
    // 720-pixel window instead of taking almost half of it (issue 16, defect 7).
    view->setMinimumSize(240, 200);
    return view;
}

// Log axes cannot show 0 or negative values: clamp to a floor.
double positive(double v) { return std::isfinite(v) && v > 0 ? v : std::numeric_limits<double>::quiet_NaN(); }

void logRange(QLogValueAxis* axis, double lo, double hi)
{
    if (!(lo > 0) || !(hi > 0)) return;
    axis->setRange(std::pow(10.0, std::floor(std::log10(lo))), std::pow(10.0, std::ceil(std::log10(hi * 1.0001))));
}

}  // namespace

LiveCharts::LiveCharts(Layout layout, QWidget* parent) : QWidget(parent)
{
    m_convergence = makeChart(tr("Convergence"));
    m_convergenceX = new QValueAxis;
    m_convergenceX->setTitleText(tr("iteration"));
    m_convergenceX->setLabelFormat("%g");
    m_convergenceY = new QLogValueAxis;
    m_convergenceY->setTitleText(tr("error (log)"));
    m_convergenceY->setLabelFormat("%.0e");
    m_convergenceY->setRange(1e-8, 1);
    m_convergence->addAxis(m_convergenceX, Qt::AlignBottom);
    m_convergence->addAxis(m_convergenceY, Qt::AlignLeft);

    m_time = makeChart(tr("Time per iteration"));
    m_timeX = new QValueAxis;
    m_timeX->setTitleText(tr("iteration"));
    m_timeX->setLabelFormat("%g");
    m_timeY = new QValueAxis;
    m_timeY->setTitleText(tr("ms / iteration"));
    m_timeY->setLabelFormat("%.3g");
    m_time->addAxis(m_timeX, Qt::AlignBottom);
    m_time->addAxis(m_timeY, Qt::AlignLeft);

    m_roofline = makeChart(tr("Roofline"));
    m_rooflineX = new QLogValueAxis;
    m_rooflineX->setTitleText(tr("operational intensity (flop/byte)"));
    m_rooflineX->setLabelFormat("%g");
    m_rooflineX->setRange(0.01, 100);
    m_rooflineY = new QLogValueAxis;
    m_rooflineY->setTitleText(tr("GFLOP/s"));
    m_rooflineY->setLabelFormat("%g");
    m_rooflineY->setRange(0.01, 1000);
    m_roofline->addAxis(m_rooflineX, Qt::AlignBottom);
    m_roofline->addAxis(m_rooflineY, Qt::AlignLeft);
    m_roof = new QLineSeries;
    m_roof->setName(tr("bandwidth roof"));
    m_roof->setPen(QPen(Qt::darkGray, 2, Qt::DashLine));
    m_roofline->addSeries(m_roof);
    m_roof->attachAxis(m_rooflineX);
    m_roof->attachAxis(m_rooflineY);
    m_previous = new QScatterSeries;
    m_previous->setName(tr("previous runs"));
    m_previous->setColor(QColor(160, 160, 160));
    m_previous->setMarkerSize(8);
    m_roofline->addSeries(m_previous);
    m_previous->attachAxis(m_rooflineX);
    m_previous->attachAxis(m_rooflineY);

    m_convergenceView = makeView(m_convergence);
    connect(m_convergence, &QChart::plotAreaChanged, this, [this] { placeStageMarks(); });
    auto* box = new QVBoxLayout(this);
    box->setContentsMargins(0, 0, 0, 0);
    if (layout == Layout::Tabs) {
        auto* tabs = new QTabWidget;
        tabs->addTab(m_convergenceView, tr("Convergence"));
        tabs->addTab(makeView(m_time), tr("Time / iteration"));
        tabs->addTab(makeView(m_roofline), tr("Roofline"));
        box->addWidget(tabs);
    } else {
        QBoxLayout* charts = box;
        if (layout == Layout::Row) {
            charts = new QHBoxLayout;
            box->addLayout(charts);
        }
        charts->addWidget(m_convergenceView, 2);
        charts->addWidget(makeView(m_time), 1);
        charts->addWidget(makeView(m_roofline), 1);
    }
}

LiveCharts::~LiveCharts() = default;

LiveCharts::Channel& LiveCharts::channel(int index)
{
    auto it = m_channels.find(index);
    if (it != m_channels.end()) return *it;
    Channel c;
    const QColor color = kChannelColors[index % 4];
    // Channel 0 is drawn wider and lighter so that an identical second curve on top stays visible.
    const double width = index == 0 ? 5 : 2;
    QColor under = color;
    if (index == 0) under.setAlpha(150);
    c.error = new QLineSeries;
    c.error->setPen(QPen(under, width));
    c.marginal = new QLineSeries;
    c.marginal->setPen(QPen(under, width * 0.75, Qt::DotLine));
    m_convergence->addSeries(c.error);
    m_convergence->addSeries(c.marginal);
    for (QLineSeries* s : {c.error, c.marginal}) {
        s->attachAxis(m_convergenceX);
        s->attachAxis(m_convergenceY);
    }
    c.time = new QLineSeries;
    c.time->setPen(QPen(under, width));
    m_time->addSeries(c.time);
    c.time->attachAxis(m_timeX);
    c.time->attachAxis(m_timeY);
    c.roofline = new QScatterSeries;
    c.roofline->setColor(color);
    c.roofline->setMarkerSize(12);
    m_roofline->addSeries(c.roofline);
    c.roofline->attachAxis(m_rooflineX);
    c.roofline->attachAxis(m_rooflineY);
    for (QList<QPointF>* buffer :
         {&c.errorByIteration, &c.errorByTime, &c.marginalByIteration, &c.marginalByTime, &c.timeBuffer})
        buffer->reserve(kReserve);
    return *m_channels.insert(index, c);
}

void LiveCharts::beginRun(int index, const QString& label)
{
    Channel& c = channel(index);
    c.label = label;
    c.error->setName(tr("%1 error").arg(label));
    c.marginal->setName(tr("%1 marginal violation").arg(label));
    c.time->setName(label);
    c.roofline->setName(label);
    for (QList<QPointF>* buffer :
         {&c.errorByIteration, &c.errorByTime, &c.marginalByIteration, &c.marginalByTime, &c.timeBuffer})
        buffer->clear();  // keeps the capacity
    clearStageMarks(c);
    c.error->clear();
    c.marginal->clear();
    c.time->clear();
    c.roofline->clear();
    rescale();
}

void LiveCharts::clearRuns()
{
    for (Channel& c : m_channels) {
        clearStageMarks(c);
        m_convergence->removeSeries(c.error);
        m_convergence->removeSeries(c.marginal);
        m_time->removeSeries(c.time);
        m_roofline->removeSeries(c.roofline);
        delete c.error;
        delete c.marginal;
        delete c.time;
        delete c.roofline;
    }
    m_channels.clear();
}

void LiveCharts::addSamples(const QVector<ProgressSample>& samples)
{
    QList<int> touched;
    for (const ProgressSample& s : samples) {
        Channel& c = channel(s.channel);
        if (!touched.contains(s.channel)) touched << s.channel;
        const double it = s.progress.iteration, t = s.progress.elapsedSeconds;
        if (s.progress.stageCount > 1 && s.progress.stage != c.lastStage) {
            // A new eps stage starts where the previous one's last check was (0 for the first).
            const bool first = c.lastStage < 0;
            addStageMark(c, s.channel, {s.progress.stage, s.progress.stageEps, first ? 0.0 : c.lastIteration,
                                        first ? 0.0 : c.lastSeconds});
            c.lastStage = s.progress.stage;
        }
        c.lastIteration = it;
        c.lastSeconds = t;
        const double error = positive(s.progress.error);
        if (std::isfinite(error)) {
            c.errorByIteration.append({it, error});
            c.errorByTime.append({t, error});
        }
        const double marginal = positive(s.progress.marginalErrorA + s.progress.marginalErrorB);
        if (std::isfinite(marginal)) {
            c.marginalByIteration.append({it, marginal});
            c.marginalByTime.append({t, marginal});
        }
        if (s.progress.secondsPerIteration > 0) c.timeBuffer.append({it, 1e3 * s.progress.secondsPerIteration});
    }
    for (int index : touched) {
        Channel& c = m_channels[index];
        const bool byIteration = m_axis == XAxis::Iteration;
        c.error->replace(byIteration ? c.errorByIteration : c.errorByTime);
        c.marginal->replace(byIteration ? c.marginalByIteration : c.marginalByTime);
        c.time->replace(c.timeBuffer);
    }
    if (!touched.isEmpty()) rescale();
}

void LiveCharts::setConvergenceAxis(XAxis axis)
{
    m_axis = axis;
    m_convergenceX->setTitleText(axis == XAxis::Iteration ? tr("iteration") : tr("wall time (s)"));
    refreshConvergence();
}

void LiveCharts::refreshConvergence()
{
    for (Channel& c : m_channels) {
        const bool byIteration = m_axis == XAxis::Iteration;
        c.error->replace(byIteration ? c.errorByIteration : c.errorByTime);
        c.marginal->replace(byIteration ? c.marginalByIteration : c.marginalByTime);
    }
    rescale();
}

void LiveCharts::rescale()
{
    double xMax = 0, yMin = std::numeric_limits<double>::infinity(), yMax = 0, tMax = 0, itMax = 0;
    for (const Channel& c : m_channels) {
        const bool byIteration = m_axis == XAxis::Iteration;
        for (const QList<QPointF>* buffer : {byIteration ? &c.errorByIteration : &c.errorByTime,
                                             byIteration ? &c.marginalByIteration : &c.marginalByTime}) {
            for (const QPointF& p : *buffer) {
                xMax = std::max(xMax, p.x());
                yMin = std::min(yMin, p.y());
                yMax = std::max(yMax, p.y());
            }
        }
        for (const QPointF& p : c.timeBuffer) {
            itMax = std::max(itMax, p.x());
            tMax = std::max(tMax, p.y());
        }
    }
    m_convergenceX->setRange(0, xMax > 0 ? xMax : 1.0);
    m_convergenceX->applyNiceNumbers();
    if (yMax > 0) logRange(m_convergenceY, yMin, yMax);
    placeStageMarks();
    m_timeX->setRange(0, itMax > 0 ? itMax : 1.0);
    m_timeX->applyNiceNumbers();
    m_timeY->setRange(0, tMax > 0 ? tMax * 1.15 : 1.0);
    m_timeY->applyNiceNumbers();
}

void LiveCharts::addStageMark(Channel& c, int index, const StageMark& mark)
{
    DrawnStage drawn;
    drawn.mark = mark;
    const QColor color = kChannelColors[index % 4].darker(130);
    if (!c.stages.isEmpty()) {
        drawn.line = new QLineSeries;
        drawn.line->setPen(QPen(color, 1, Qt::DashLine));
        m_convergence->addSeries(drawn.line);
        drawn.line->attachAxis(m_convergenceX);
        drawn.line->attachAxis(m_convergenceY);
        for (QLegendMarker* marker : m_convergence->legend()->markers(drawn.line)) marker->setVisible(false);
    }
    drawn.label = new QGraphicsSimpleTextItem(tr("eps %1").arg(mark.eps, 0, 'g', 3), m_convergence);
    QFont font = drawn.label->font();
    font.setPointSizeF(font.pointSizeF() * 0.85);
    drawn.label->setFont(font);
    drawn.label->setBrush(color);
    drawn.label->setZValue(10);
    c.stages.append(drawn);
}

void LiveCharts::clearStageMarks(Channel& c)
{
    for (DrawnStage& drawn : c.stages) {
        if (drawn.line) {
            m_convergence->removeSeries(drawn.line);
            delete drawn.line;
        }
        delete drawn.label;
    }
    c.stages.clear();
    c.lastStage = -1;
    c.lastIteration = c.lastSeconds = 0;
}

void LiveCharts::placeStageMarks()
{
    const double yLow = m_convergenceY->min(), yHigh = m_convergenceY->max();
    const QRectF plot = m_convergence->plotArea();
    constexpr int kRows = 3;  // short stages put their labels on the next line down instead of overlapping
    int channelRow = 0;
    for (Channel& c : m_channels) {
        double rowEnd[kRows];
        std::fill(std::begin(rowEnd), std::end(rowEnd), -std::numeric_limits<double>::infinity());
        for (DrawnStage& drawn : c.stages) {
            const double x = m_axis == XAxis::Iteration ? drawn.mark.iteration : drawn.mark.seconds;
            if (drawn.line) drawn.line->replace(QList<QPointF>{{x, yLow}, {x, yHigh}});
            // The label just right of its line, near the top of the plot.
            const QPointF at = m_convergence->mapToPosition(QPointF(x, yHigh), c.error);
            const QRectF box = drawn.label->boundingRect();
            int row = 0;
            while (row + 1 < kRows && at.x() + 3 < rowEnd[row]) ++row;
            rowEnd[row] = at.x() + 3 + box.width() + 4;
            drawn.label->setPos(at.x() + 3, plot.top() + 2 + (channelRow * kRows + row) * box.height());
            drawn.label->setVisible(plot.isValid() && at.x() >= plot.left() - 1 && at.x() <= plot.right());
        }
        ++channelRow;
    }
}

QList<LiveCharts::StageMark> LiveCharts::stageMarks(int index) const
{
    QList<StageMark> marks;
    const auto it = m_channels.find(index);
    if (it != m_channels.end())
        for (const DrawnStage& drawn : it->stages) marks.append(drawn.mark);
    return marks;
}

QStringList LiveCharts::stageLabels(int index) const
{
    QStringList labels;
    const auto it = m_channels.find(index);
    if (it != m_channels.end())
        for (const DrawnStage& drawn : it->stages) labels.append(drawn.label->text());
    return labels;
}

void LiveCharts::setBandwidthRoof(double gbps, const QString& label, double computeGflops)
{
    m_roofGBps = gbps;
    m_roofGflops = computeGflops;
    if (gbps > 0) m_roof->setName(label);
    drawRoof();
}

void LiveCharts::drawRoof()
{
    m_roof->clear();
    if (!(m_roofGBps > 0)) return;
    // GFLOP/s = GB/s * flop/byte across the visible intensity range, capped by
    // the compute roof where one is known (the ridge point is where they meet).
    QList<QPointF> roof;
    const bool flat = m_roofGflops > 0;
    for (double x = 0.01; x <= m_rooflineXMax * 1.0001; x *= 10) {
        if (flat && m_roofGBps * x > m_roofGflops) {
            roof.append({m_roofGflops / m_roofGBps, m_roofGflops});
            roof.append({m_rooflineXMax, m_roofGflops});
            break;
        }
        roof.append({x, m_roofGBps * x});
    }
    m_roof->replace(roof);
    const double top = flat ? m_roofGflops * 2 : m_roofGBps * m_rooflineXMax;
    m_rooflineY->setRange(0.01, std::pow(10.0, std::ceil(std::log10(top))));
}

void LiveCharts::setRooflinePoint(int index, double intensity, double gflops)
{
    if (!(intensity > 0) || !(gflops > 0)) return;
    Channel& c = channel(index);
    c.roofline->replace(QList<QPointF>{{intensity, gflops}});
    if (intensity * 2 > m_rooflineXMax) {
        m_rooflineXMax = std::pow(10.0, std::ceil(std::log10(intensity * 2)));
        m_rooflineX->setRange(0.01, m_rooflineXMax);
        drawRoof();
    }
    if (gflops * 2 > m_rooflineY->max()) m_rooflineY->setMax(std::pow(10.0, std::ceil(std::log10(gflops * 2))));
}

QList<QPointF> LiveCharts::roofPoints() const
{
    return m_roof->points();
}

void LiveCharts::archiveRooflinePoints()
{
    for (Channel& c : m_channels) {
        const QList<QPointF> points = c.roofline->points();
        if (!points.isEmpty()) m_previousPoints.append(points.last());
    }
    while (m_previousPoints.size() > 8) m_previousPoints.removeFirst();
    m_previous->replace(m_previousPoints);
}

int LiveCharts::errorPointCount(int index) const
{
    const auto it = m_channels.find(index);
    return it == m_channels.end() ? 0 : int(it->error->count());
}

int LiveCharts::timePointCount(int index) const
{
    const auto it = m_channels.find(index);
    return it == m_channels.end() ? 0 : int(it->time->count());
}

int LiveCharts::rooflinePointCount() const
{
    int n = int(m_previous->count());
    for (const Channel& c : m_channels) n += int(c.roofline->count());
    return n;
}

}  // namespace uot::ui
