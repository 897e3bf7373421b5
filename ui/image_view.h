#pragma once
// One image pane: fit to the window or a zoom factor, pan by dragging, zoom
// with the wheel around the cursor; optionally a before/after split showing
// `before` left of a draggable divider and the main image right of it (both
// drawn in the same geometry). Accepts image files dropped onto it. An
// overlay (the mask) can be drawn over the image; a left drag can paint a
// stroke or pick a pixel instead of panning (the mask editor's tools); the
// zoom and pan can be read and set to link two panes.

#include <QImage>
#include <QPointF>
#include <QString>
#include <QVector>
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

    // A picture drawn over the image in the same geometry (null: none).
    void setOverlay(const QImage& overlay);
    const QImage& overlay() const { return m_overlay; }
    // What a left drag does: pan, paint a stroke (strokePainted) or pick a pixel (pixelPicked).
    enum class Tool { Pan, Paint, Pick };
    void setTool(Tool tool);
    // The Paint tool's stroke is drawn while dragging this wide (image pixels).
    void setBrushDiameter(double diameter) { m_brushDiameter = diameter; }
    Tool tool() const { return m_tool; }
    // The zoom and pan as one value, to link panes: setTransform does not emit transformChanged.
    struct Transform {
        bool fit = true;
        double scale = 1.0;
        QPointF offset;  // of the image's centre from the pane's centre
    };
    Transform transform() const { return {m_fit, m_scale, m_offset}; }
    void setTransform(const Transform& transform);
    // The image pixel coordinates under a point of the widget.
    QPointF imagePoint(const QPointF& widgetPoint) const;

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
    // The user (or fit, zoomBy, zoomActualSize) zoomed or panned.
    void transformChanged();
    // A stroke of the Paint tool, in image pixel coordinates.
    void strokePainted(const QVector<QPointF>& points);
    // A click of the Pick tool, in image pixel coordinates.
    void pixelPicked(const QPointF& point);

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
    QImage m_overlay;
    Tool m_tool = Tool::Pan;
    QVector<QPointF> m_stroke;  // the Paint tool's stroke so far, image coordinates
    double m_brushDiameter = 1.0;
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
    enum class Drag { None, Pan, Divider, Paint } m_drag = Drag::None;
    QPointF m_lastMouse;
};

}  // namespace uot::ui
