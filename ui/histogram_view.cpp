#include "ui/histogram_view.h"

#include <QPainter>
#include <QPainterPath>

#include <algorithm>

namespace uot::ui {

HistogramView::HistogramView(QWidget* parent) : QWidget(parent)
{
    setMaximumWidth(kMaxWidth);
    setToolTip(tr("Histograms of the source, the reference and the result: luminance (grey) and red, green, blue."));
}

void HistogramView::setImage(Slot slot, const QImage& image)
{
    m_histograms[slot] = computeHistogram(image);
    update();
}

void HistogramView::paintEvent(QPaintEvent*)
{
    QPainter painter(this);
    painter.setRenderHint(QPainter::Antialiasing);
    painter.fillRect(rect(), palette().color(QPalette::Base));
    const QString titles[3] = {tr("Source"), tr("Reference"), tr("Result")};
    const int gap = 8;
    const QFontMetrics fm(font());
    // Side by side in a wide dock, stacked in a tall one.
    const bool stacked = width() < 2 * height();
    const double cellW = stacked ? width() - 2.0 * gap : (width() - 4.0 * gap) / 3.0;
    const double cellH = stacked ? (height() - 4.0 * gap) / 3.0 : height() - 2.0 * gap;
    for (int s = 0; s < 3; ++s) {
        const QPointF origin = stacked ? QPointF(gap, gap + s * (cellH + gap)) : QPointF(gap + s * (cellW + gap), gap);
        const QRectF box(origin.x(), origin.y() + fm.height() + 2, cellW, cellH - fm.height() - 2);
        painter.setPen(palette().color(QPalette::Text));
        painter.drawText(QRectF(origin.x(), origin.y(), cellW, fm.height()), Qt::AlignLeft, titles[s]);
        painter.setPen(palette().color(QPalette::Mid));
        painter.setBrush(Qt::NoBrush);
        painter.drawRect(box);
        const Histogram& h = m_histograms[s];
        if (h.empty) continue;
        // One vertical scale for the four curves of a panel; the tallest bin just fits.
        double peak = 0;
        for (const auto& channel : h.bins) peak = std::max(peak, *std::max_element(channel.begin(), channel.end()));
        if (peak <= 0) continue;
        auto curve = [&](int channel) {
            QPainterPath path(QPointF(box.left(), box.bottom()));
            for (int i = 0; i < 256; ++i)
                path.lineTo(box.left() + box.width() * (i + 0.5) / 256.0, box.bottom() - box.height() * h.bins[channel][i] / peak);
            path.lineTo(box.right(), box.bottom());
            return path;
        };
        painter.setPen(Qt::NoPen);
        painter.setBrush(QColor(128, 128, 128, 110));
        painter.drawPath(curve(Histogram::Luma));
        painter.setBrush(Qt::NoBrush);
        const QColor colors[3] = {QColor(220, 40, 40, 200), QColor(40, 170, 40, 200), QColor(50, 90, 230, 200)};
        for (int c = 0; c < 3; ++c) {
            painter.setPen(QPen(colors[c], 1.2));
            painter.drawPath(curve(Histogram::Red + c));
        }
    }
}

}  // namespace uot::ui
