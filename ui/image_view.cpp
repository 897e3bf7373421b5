#include "ui/image_view.h"

#include <QDragEnterEvent>
#include <QDropEvent>
#include <QMimeData>
#include <QMouseEvent>
#include <QPainter>
#include <QPainterPath>
#include <QUrl>
#include <QWheelEvent>

#include <algorithm>
#include <cmath>

namespace uot::ui {

namespace {
QString firstLocalFile(const QMimeData* mime)
{
    if (!mime || !mime->hasUrls()) return {};
    for (const QUrl& url : mime->urls())
        if (url.isLocalFile()) return url.toLocalFile();
    return {};
}
}  // namespace

ImageView::ImageView(const QString& placeholder, QWidget* parent) : QWidget(parent), m_placeholder(placeholder)
{
    setAcceptDrops(true);
    setMouseTracking(true);
    setMinimumSize(120, 90);
    setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Expanding);
    setAutoFillBackground(false);
}

void ImageView::setImage(const QImage& image)
{
    const bool sizeChanged = image.size() != m_image.size();
    m_image = image;
    if (sizeChanged) m_fit = true;
    update();
    notifyZoom();
}

void ImageView::setBeforeImage(const QImage& image)
{
    m_before = image;
    update();
}

void ImageView::setOverlay(const QImage& overlay)
{
    m_overlay = overlay;
    update();
}

void ImageView::setTool(Tool tool)
{
    m_tool = tool;
    m_stroke.clear();
    m_drag = Drag::None;
    setCursor(tool == Tool::Pan ? Qt::ArrowCursor : Qt::CrossCursor);
}

void ImageView::setTransform(const Transform& transform)
{
    m_fit = transform.fit;
    m_scale = transform.scale;
    m_offset = transform.offset;
    update();
    notifyZoom();
}

QPointF ImageView::imagePoint(const QPointF& widgetPoint) const
{
    const QRectF r = imageRect();
    return (widgetPoint - r.topLeft()) / zoom();
}

void ImageView::setSplitEnabled(bool enabled)
{
    m_split = enabled;
    update();
}

void ImageView::setSplitPosition(double fraction)
{
    m_splitPosition = std::clamp(fraction, 0.0, 1.0);
    update();
}

void ImageView::setCaption(const QString& text)
{
    m_caption = text;
    update();
}

void ImageView::setBeforeCaption(const QString& text)
{
    m_beforeCaption = text;
    update();
}

void ImageView::setBanner(const QString& text)
{
    if (text == m_banner) return;
    m_banner = text;
    update();
}

void ImageView::setPlaceholder(const QString& text)
{
    m_placeholder = text;
    update();
}

double ImageView::fitScale() const
{
    if (m_image.isNull()) return 1.0;
    const double sx = double(width()) / m_image.width(), sy = double(height()) / m_image.height();
    return std::min(sx, sy);
}

double ImageView::zoom() const { return m_fit ? fitScale() : m_scale; }

QRectF ImageView::imageRect() const
{
    const double s = zoom();
    const QSizeF size(m_image.width() * s, m_image.height() * s);
    QPointF centre = QPointF(width(), height()) / 2.0;
    if (!m_fit) centre += m_offset;
    return QRectF(centre - QPointF(size.width(), size.height()) / 2.0, size);
}

void ImageView::fit()
{
    m_fit = true;
    m_offset = {};
    update();
    notifyZoom();
    emit transformChanged();
}

void ImageView::notifyZoom()
{
    const double now = m_image.isNull() ? 0.0 : zoom();
    if (now == m_notifiedZoom) return;
    m_notifiedZoom = now;
    emit zoomChanged(now);
}

void ImageView::resizeEvent(QResizeEvent* event)
{
    QWidget::resizeEvent(event);
    notifyZoom();  // fitted: the scale follows the pane's size
}

void ImageView::zoomBy(double factor)
{
    if (m_image.isNull()) return;
    const double current = zoom();
    m_scale = std::clamp(current * factor, 0.02, 32.0);
    if (m_fit) m_offset = {};
    m_fit = false;
    update();
    notifyZoom();
    emit transformChanged();
}

void ImageView::zoomActualSize()
{
    if (m_image.isNull()) return;
    m_fit = false;
    m_scale = 1.0;
    m_offset = {};
    update();
    notifyZoom();
    emit transformChanged();
}

void ImageView::paintEvent(QPaintEvent*)
{
    QPainter painter(this);
    painter.fillRect(rect(), palette().color(QPalette::Dark));
    if (m_image.isNull()) {
        painter.setPen(palette().color(QPalette::BrightText));
        painter.drawText(rect().adjusted(8, 8, -8, -8), Qt::AlignCenter | Qt::TextWordWrap, m_placeholder);
        return;
    }
    painter.setRenderHint(QPainter::SmoothPixmapTransform, zoom() < 1.0);
    const QRectF target = imageRect();
    painter.drawImage(target, m_image);
    if (!m_overlay.isNull()) painter.drawImage(target, m_overlay);
    if (m_drag == Drag::Paint && !m_stroke.isEmpty()) {
        // The stroke so far, as wide as the brush, until the mask takes it.
        QPolygonF path;
        for (const QPointF& p : m_stroke) path << target.topLeft() + p * zoom();
        painter.save();
        painter.setRenderHint(QPainter::Antialiasing);
        painter.setPen(QPen(QColor(255, 60, 60, 110), std::max(1.0, m_brushDiameter * zoom()), Qt::SolidLine, Qt::RoundCap,
                            Qt::RoundJoin));
        if (path.size() == 1) painter.drawPoint(path.front());
        else painter.drawPolyline(path);
        painter.restore();
    }
    // The banner's band (drawn last, over everything); the caption goes under it.
    QFont bold = font();
    bold.setBold(true);
    const QRectF band(0, 0, width(), m_banner.isEmpty() ? 0.0 : 2.0 * QFontMetrics(bold).height() + 8);
    const double top = m_banner.isEmpty() ? 4.0 : band.bottom() + 4;
    if (!m_caption.isEmpty() && !(m_split && !m_before.isNull())) {
        const QFontMetrics fm(font());
        const QRectF box(4, top, fm.horizontalAdvance(m_caption) + 12, fm.height() + 6);
        painter.fillRect(box, QColor(0, 0, 0, 150));
        painter.setPen(Qt::white);
        painter.drawText(box, Qt::AlignCenter, m_caption);
    }
    if (m_split && !m_before.isNull()) {
        // The divider and its labels live in the visible part of the image, so
        // they stay on screen however far the image is zoomed and panned.
        const QRectF shown = visibleImageRect();
        const double x = dividerX();
        painter.save();
        painter.setClipRect(QRectF(QPointF(target.left(), target.top()), QPointF(x, target.bottom())));
        painter.drawImage(target, m_before);
        painter.restore();
        QPen pen(Qt::white, 2);
        painter.setPen(pen);
        painter.drawLine(QPointF(x, shown.top()), QPointF(x, shown.bottom()));
        // Labels and a handle so that the divider is discoverable.
        const QPointF mid(x, shown.center().y());
        painter.setBrush(Qt::white);
        painter.drawEllipse(mid, 7, 7);
        painter.setPen(Qt::black);
        const QFontMetrics fm(font());
        const QString before = splitLabel(SplitSide::Before), after = splitLabel(SplitSide::After);
        auto label = [&](const QString& text, QPointF at) {
            const QRectF box(at, QSizeF(fm.horizontalAdvance(text) + 10, fm.height() + 4));
            painter.fillRect(box, QColor(255, 255, 255, 200));
            painter.drawText(box, Qt::AlignCenter, text);
        };
        label(before, QPointF(shown.left() + 6, shown.top() + 6));
        label(after, QPointF(shown.right() - fm.horizontalAdvance(after) - 16, shown.top() + 6));
    }
    if (!m_banner.isEmpty()) {
        painter.fillRect(target.intersected(QRectF(rect())), QColor(0, 0, 0, 110));
        painter.fillRect(band, QColor(176, 96, 0, 235));
        painter.setFont(bold);
        painter.setPen(Qt::white);
        painter.drawText(band.adjusted(8, 0, -8, 0), Qt::AlignCenter | Qt::TextWordWrap, m_banner);
        painter.setFont(font());
    }
    // The zoom level, bottom right.
    const QFontMetrics fm(font());
    const QString percent = zoomText();
    const QRectF badge(width() - fm.horizontalAdvance(percent) - 16, height() - fm.height() - 10,
                       fm.horizontalAdvance(percent) + 12, fm.height() + 6);
    painter.fillRect(badge, QColor(0, 0, 0, 150));
    painter.setPen(Qt::white);
    painter.drawText(badge, Qt::AlignCenter, percent);
}

QString ImageView::zoomText() const
{
    if (m_image.isNull()) return {};
    const double percent = zoom() * 100.0;
    return percent < 10 ? QStringLiteral("%1 %").arg(percent, 0, 'f', 1) : QStringLiteral("%1 %").arg(std::lround(percent));
}

QString ImageView::splitLabel(SplitSide side) const
{
    // Each side names what it shows: "Before: Source", "After: LUT preview (...)".
    if (side == SplitSide::Before)
        return m_beforeCaption.isEmpty() ? tr("Before") : tr("Before: %1").arg(m_beforeCaption);
    return m_caption.isEmpty() ? tr("After") : tr("After: %1").arg(m_caption);
}

QRectF ImageView::visibleImageRect() const { return imageRect().intersected(QRectF(rect())); }

double ImageView::dividerX() const
{
    const QRectF shown = visibleImageRect();
    return shown.left() + m_splitPosition * shown.width();
}

void ImageView::wheelEvent(QWheelEvent* event)
{
    if (m_image.isNull()) return;
    const double steps = event->angleDelta().y() / 120.0;
    if (steps == 0) return;
    const double before = zoom();
    const QRectF r = imageRect();
    const QPointF cursor = event->position();
    const QPointF imagePoint = (cursor - r.topLeft()) / before;  // image coordinates under the cursor
    zoomBy(std::pow(1.25, steps));
    // Keep the point under the cursor in place.
    const QRectF after = imageRect();
    const QPointF moved = after.topLeft() + imagePoint * zoom();
    m_offset += cursor - moved;
    update();
    emit transformChanged();
    event->accept();
}

bool ImageView::nearDivider(const QPointF& pos) const
{
    if (!m_split || m_before.isNull() || m_image.isNull()) return false;
    const QRectF r = visibleImageRect();
    return std::abs(pos.x() - dividerX()) < 8 && pos.y() >= r.top() && pos.y() <= r.bottom();
}

void ImageView::mousePressEvent(QMouseEvent* event)
{
    if (event->button() != Qt::LeftButton || m_image.isNull()) return;
    m_lastMouse = event->position();
    if (m_tool == Tool::Pick) {
        emit pixelPicked(imagePoint(event->position()));
        return;
    }
    if (m_tool == Tool::Paint) {
        m_drag = Drag::Paint;
        m_stroke = {imagePoint(event->position())};
        return;
    }
    if (nearDivider(event->position())) {
        m_drag = Drag::Divider;
    } else {
        if (m_fit) {
            m_scale = fitScale();
            m_fit = false;
        }
        m_drag = Drag::Pan;
        setCursor(Qt::ClosedHandCursor);
    }
}

void ImageView::mouseMoveEvent(QMouseEvent* event)
{
    const QPointF pos = event->position();
    if (m_drag == Drag::Divider) {
        const QRectF r = visibleImageRect();
        setSplitPosition((pos.x() - r.left()) / std::max(1.0, r.width()));
    } else if (m_drag == Drag::Pan) {
        m_offset += pos - m_lastMouse;
        update();
        emit transformChanged();
    } else if (m_drag == Drag::Paint) {
        m_stroke << imagePoint(pos);
        update();
    } else if (m_tool != Tool::Pan) {
        setCursor(Qt::CrossCursor);
    } else {
        setCursor(nearDivider(pos) ? Qt::SplitHCursor : Qt::ArrowCursor);
    }
    m_lastMouse = pos;
}

void ImageView::mouseReleaseEvent(QMouseEvent*)
{
    if (m_drag == Drag::Paint && !m_stroke.isEmpty()) {
        const QVector<QPointF> stroke = m_stroke;
        m_stroke.clear();
        m_drag = Drag::None;
        emit strokePainted(stroke);
        return;
    }
    m_drag = Drag::None;
    if (m_tool == Tool::Pan) unsetCursor();
}

void ImageView::mouseDoubleClickEvent(QMouseEvent*)
{
    if (m_tool == Tool::Pan) fit();
}

void ImageView::dragEnterEvent(QDragEnterEvent* event)
{
    if (!firstLocalFile(event->mimeData()).isEmpty()) event->acceptProposedAction();
}

void ImageView::dropEvent(QDropEvent* event)
{
    const QString path = firstLocalFile(event->mimeData());
    if (path.isEmpty()) return;
    event->acceptProposedAction();
    emit fileDropped(path);
}

}  // namespace uot::ui
