#pragma once
// The Histogram dock: source, reference and result side by side, each with its
// luminance (grey, filled) and R, G, B curves. Updated when an image changes.

#include <QImage>
#include <QWidget>

#include "ui/histogram.h"

namespace uot::ui {

class HistogramView final : public QWidget {
    Q_OBJECT
public:
    enum Slot { Source = 0, Reference = 1, Result = 2 };
    explicit HistogramView(QWidget* parent = nullptr);
    Q_DISABLE_COPY_MOVE(HistogramView)

    void setImage(Slot slot, const QImage& image);
    const Histogram& histogram(Slot slot) const { return m_histograms[slot]; }

    // Stacked in a narrow side dock: the image panes keep the width (the widget
    // is at most kMaxWidth wide, see the constructor).
    static constexpr int kMaxWidth = 340;
    QSize sizeHint() const override { return {260, 420}; }
    QSize minimumSizeHint() const override { return {180, 240}; }

protected:
    void paintEvent(QPaintEvent* event) override;

private:
    std::array<Histogram, 3> m_histograms;
};

}  // namespace uot::ui
