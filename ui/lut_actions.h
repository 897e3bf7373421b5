#pragma once
// File > Export LUT... and View > LUT Preview of the studio. The export dialog
// offers 17, 33 or 65 nodes per axis and says that a LUT holds the global colour
// map only (not the structure smoothing). The preview shows, in the result
// pane, the source as the exported LUT renders it; it follows new results
// while it is on, and turning it off shows the result again. A view of the
// StudioSession: the work runs as the session's LUT job (ui/lut_job.h) on its
// worker, and status lines go out through statusMessage.

#include <QDialog>
#include <QImage>
#include <QObject>

#include "ui/lut_job.h"

QT_BEGIN_NAMESPACE
class QAction;
class QComboBox;
class QLineEdit;
QT_END_NAMESPACE

namespace uot::ui {

class ImageView;
class StudioSession;

// The export dialog: file, size, and what a LUT holds.
class ExportLutDialog final : public QDialog {
    Q_OBJECT
public:
    ExportLutDialog(const QString& suggestedPath, int size, QWidget* parent = nullptr);
    QString path() const;  // with ".cube" appended when missing
    int size() const;

private:
    QLineEdit* m_path = nullptr;
    QComboBox* m_size = nullptr;
};

class LutActions final : public QObject {
    Q_OBJECT
public:
    // The preview is shown in `resultView`; dialogs open over `parent`.
    LutActions(StudioSession* session, ImageView* resultView, bool interactive, QWidget* parent);

    QAction* exportAction() const { return m_exportAction; }
    QAction* previewAction() const { return m_previewAction; }

    // Exports without the dialog (tests, scripts); exported or exportFailed follows.
    // Refused (exportFailed) while the result shown is out of date: the file would
    // hold a look the user has not seen.
    void exportTo(const QString& path, int size);
    // The size used by the preview and offered first by the dialog (last export's).
    int size() const { return m_size; }
    void setSize(int size);
    bool previewShown() const { return !m_preview.isNull() && m_previewOn; }
    const QImage& previewImage() const { return m_preview; }

signals:
    void exported(const QString& path);
    void exportFailed(const QString& message);
    void previewReady();
    // A line for the status bar, shown for `milliseconds` (0: until the next).
    void statusMessage(const QString& text, int milliseconds);

private:
    void askAndExport();
    bool refuseOutOfDate();
    void setPreviewOn(bool on);
    void refreshPreview();
    void onFinished(quint64 generation, std::shared_ptr<const JobOutput> finished);
    void onFailed(quint64 generation, const QString& message);
    void fail(const QString& message);

    StudioSession* m_session;
    ImageView* m_resultView;
    QWidget* m_parent;
    bool m_interactive;
    QAction* m_exportAction = nullptr;
    QAction* m_previewAction = nullptr;
    int m_size = 33;
    bool m_previewOn = false;
    QImage m_preview;
    quint64 m_exportGeneration = 0;
    quint64 m_previewGeneration = 0;
    QString m_exportPath;
};

}  // namespace uot::ui
