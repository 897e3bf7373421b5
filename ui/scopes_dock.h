#pragma once
// The Scopes dock: the waveform, the RGB parade and the vectorscope of the
// source, the reference or the result (a selector and tabs), drawn from the
// session's scopes, which it computes off the GUI thread after each render.

#include <QWidget>

QT_BEGIN_NAMESPACE
class QComboBox;
class QTabBar;
QT_END_NAMESPACE

namespace uot::ui {

class StudioSession;

class ScopesDock final : public QWidget {
    Q_OBJECT
public:
    explicit ScopesDock(StudioSession* session, QWidget* parent = nullptr);
    Q_DISABLE_COPY_MOVE(ScopesDock)

    // Which image (0 source, 1 reference, 2 result) and which scope (0 waveform, 1 parade, 2 vectorscope).
    void select(int image, int kind);
    // What is drawn now (null before the first scopes).
    QImage currentPicture() const { return m_picture; }
    QSize sizeHint() const override { return {360, 300}; }

protected:
    void paintEvent(QPaintEvent* event) override;

private:
    void redraw();

    StudioSession* m_session;
    QComboBox* m_image = nullptr;
    QTabBar* m_kind = nullptr;
    QImage m_picture;
};

}  // namespace uot::ui
