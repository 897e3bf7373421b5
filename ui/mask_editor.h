#pragma once
// The Mask dock: the tools that make the session's mask (ui/studio_session.h).
// A soft brush and an eraser painted on the source pane (size, hardness,
// opacity; each stroke one undo step), a mask from a luminance range or from a
// color range picked with the eyedropper, the automatic sky mask, the mask
// shown as a red overlay on the source, and mask files (open, save, clear).

#include <QColor>
#include <QImage>
#include <QWidget>

QT_BEGIN_NAMESPACE
class QAbstractButton;
class QButtonGroup;
class QCheckBox;
class QDoubleSpinBox;
class QLabel;
class QSpinBox;
QT_END_NAMESPACE

namespace uot::ui {

class ImageView;
class StudioSession;
struct MaskBrush;

class MaskEditor final : public QWidget {
    Q_OBJECT
public:
    // Paints on `canvas` (the source pane) and shows the overlay there.
    MaskEditor(StudioSession* session, ImageView* canvas, QWidget* parent = nullptr);
    Q_DISABLE_COPY_MOVE(MaskEditor)

    enum class Tool { Pan, Brush, Eraser, Eyedropper };
    void setTool(Tool tool);
    MaskBrush brush() const;
    void setOverlayVisible(bool visible);
    QColor pickedColor() const { return m_color; }

    // The mask (8-bit gray, white = full transfer) as a translucent red overlay.
    static QImage overlayFor(const QImage& mask);

private:
    void showMask();
    void pick(const QPointF& point);
    void openMask();
    void saveMask();

    StudioSession* m_session;
    ImageView* m_canvas;
    QButtonGroup* m_tools = nullptr;
    QSpinBox* m_size = nullptr;
    QSpinBox* m_hardness = nullptr;
    QSpinBox* m_opacity = nullptr;
    QDoubleSpinBox* m_low = nullptr;
    QDoubleSpinBox* m_high = nullptr;
    QDoubleSpinBox* m_lumaSoftness = nullptr;
    QDoubleSpinBox* m_tolerance = nullptr;
    QDoubleSpinBox* m_colorSoftness = nullptr;
    QLabel* m_swatch = nullptr;
    QCheckBox* m_overlay = nullptr;
    QSpinBox* m_feather = nullptr;
    QColor m_color = QColor(110, 150, 210);
};

}  // namespace uot::ui
