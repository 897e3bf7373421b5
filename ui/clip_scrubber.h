#pragma once
// The clip bar under the studio's panes (shown while a clip is the source): a
// frame scrubber (slider, frame number, time), the choice of the look frame,
// and the progress of File > Export Clip with its Cancel button. A view of the
// StudioSession and its ClipModel (ui/clip_model.h): it asks for frames and
// shows what they announce.

#include <QWidget>

QT_BEGIN_NAMESPACE
class QLabel;
class QProgressBar;
class QPushButton;
class QSlider;
class QSpinBox;
QT_END_NAMESPACE

namespace uot::ui {

class ElidedLabel;
class StudioSession;
struct ClipDescription;
struct ClipExportProgress;

class ClipScrubber final : public QWidget {
    Q_OBJECT
public:
    explicit ClipScrubber(StudioSession* session, QWidget* parent = nullptr);

    QSlider* slider() const { return m_slider; }
    QSpinBox* frameBox() const { return m_frame; }
    QLabel* timeLabel() const { return m_time; }
    QLabel* lookLabel() const { return m_look; }
    QPushButton* useFrameButton() const { return m_useFrame; }
    QPushButton* pooledButton() const { return m_pooled; }
    QProgressBar* exportBar() const { return m_exportBar; }
    ElidedLabel* exportLabel() const { return m_exportText; }
    QPushButton* cancelExportButton() const { return m_cancelExport; }

private:
    void showClip(const ClipDescription& clip);
    void requestFrame(int index);
    void showFrameShown(long long index);
    void showLookFrame(long long index);
    void showExportProgress(const ClipExportProgress& progress);
    void endExport(const QString& text);

    StudioSession* m_session;
    QSlider* m_slider = nullptr;
    QSpinBox* m_frame = nullptr;
    QLabel* m_time = nullptr;
    QLabel* m_look = nullptr;
    QPushButton* m_useFrame = nullptr;
    QPushButton* m_pooled = nullptr;
    QWidget* m_exportRow = nullptr;
    QProgressBar* m_exportBar = nullptr;
    ElidedLabel* m_exportText = nullptr;  // elided: a long output path must not widen the window
    QPushButton* m_cancelExport = nullptr;
};

}  // namespace uot::ui
