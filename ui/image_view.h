#pragma once
// One image pane: fit to the window or a zoom factor, pan by dragging, zoom
// with the wheel around the cursor; optionally a before/after split showing
// `before` left of a draggable divider and the main image right of it (both
// drawn in the same geometry). Accepts image files dropped onto it.

#include <QImage>
#include <QPointF>
#include <QString>
#include <QWidget>

namespace uot::ui {

class ImageView final : public QWidget {
    Q_OBJECT
public:
    explicit ImageView(const QString& placeholder, QWidget* parent = nullptr);
    Q_DISABLE_COPY_MOVE(ImageView)

    void setImage(const QImage& image);
    const QImage& image() const { return m_image; }
    // The "before" image of the split view (same size as the image, else scaled to it).
    void setBeforeImage(const QImage& image);
    void setSplitEnabled(bool enabled);
    bool splitEnabled() const { return m_split; }
    // Position of the divider, 0..1 of the visible part of the image's width.
    void setSplitPosition(double fraction);
    double splitPosition() const { return m_splitPosition; }
    void setPlaceholder(const QString& text);
    // A short name drawn in the top-left corner ("Source", "Result"); in split
    // view, the label of the right-hand side.
    void setCaption(const QString& text);
    // What the "before" image is ("Source"): the label of the split view's left side.
    void setBeforeCaption(const QString& text);
    enum class SplitSide { Before, After };
    // The label drawn on that side of the split view ("Before: Source").
    QString splitLabel(SplitSide side) const;
    // A warning over the image (e.g. "Out of date: press Run"): a band across
    // the top of the pane, with the image dimmed under it; empty: none.
    void setBanner(const QString& text);
    const QString& banner() const { return m_banner; }

    bool fitToWindow() const { return m_fit; }
    double zoom() const;  // effective display scale
    QString zoomText() const;  // "100 %", as drawn in the corner
    // The divider's x in widget coordinates (inside the visible part of the image).
    double dividerX() const;

    QSize sizeHint() const override { return {320, 240}; }

public slots:
    void fit();             // fit the whole image into the pane
    void zoomBy(double factor);
    void zoomActualSize();  // 100 %

signals:
    void fileDropped(const QString& path);
    // The effective scale changed: a zoom, fit, a new image size or, when fitted, a resize.
    void zoomChanged(double zoom);

protected:
    void paintEvent(QPaintEvent* event) override;
    void resizeEvent(QResizeEvent* event) override;
    void wheelEvent(QWheelEvent* event) override;
    void mousePressEvent(QMouseEvent* event) override;
    void mouseMoveEvent(QMouseEvent* event) override;
    void mouseReleaseEvent(QMouseEvent* event) override;
    void mouseDoubleClickEvent(QMouseEvent* event) override;
    void dragEnterEvent(QDragEnterEvent* event) override;
    void dropEvent(QDropEvent* event) override;

private:
    QRectF imageRect() const;  // where the image is drawn, widget coordinates
    QRectF visibleImageRect() const;  // the part of imageRect() inside the widget
    double fitScale() const;
    bool nearDivider(const QPointF& pos) const;
    void notifyZoom();  // emits zoomChanged when zoom() differs from the last one told

    QImage m_image;
    QImage m_before;
    QString m_placeholder;
    QString m_caption;
    QString m_beforeCaption;
    QString m_banner;
    bool m_fit = true;
    double m_scale = 1.0;
    double m_notifiedZoom = 0.0;  // the zoom last told through zoomChanged (0: no image)
    QPointF m_offset;  // image centre offset from the widget centre when not fitting
    bool m_split = false;
    double m_splitPosition = 0.5;
    enum class Drag { None, Pan, Divider } m_drag = Drag::None;
    QPointF m_lastMouse;
};

}  // namespace uot::ui
