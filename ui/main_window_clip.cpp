// MainWindow: File > Open Clip... and File > Export Clip... (ui/clip_model.h
// holds the clip; the session opens, runs and exports it). In a build without
// FFmpeg the two entries stay in the menu, disabled, and say why.
#include "ui/main_window.h"

#include <QAction>
#include <QFileDialog>
#include <QFileInfo>
#include <QMenu>
#include <QSettings>

namespace uot::ui {

void MainWindow::createClipActions(QMenu* fileMenu)
{
    QAction* open = fileMenu->addAction(tr("Open &Clip..."), this, [this] {
        QSettings settings;
        const QString folder = startFolder(settings.value("dialogs/clip/folder").toString(), m_session->source().path);
        const QString title = tr("Open Clip (a video, or one frame of an image sequence)");
        const QString file = m_openPrompt ? m_openPrompt(title, folder)
                                          : QFileDialog::getOpenFileName(
                                                this, title, folder,
                                                tr("Clips (*.mp4 *.mov *.mkv *.webm *.png *.tif *.tiff *.jpg *.jpeg *.bmp *.webp)"));
        if (file.isEmpty()) return;
        settings.setValue("dialogs/clip/folder", QFileInfo(file).absolutePath());
        openSource(ClipModel::clipPathFor(file));
    });
    open->setObjectName(QStringLiteral("openClipAction"));
    QAction* exportClip = fileMenu->addAction(tr("Export C&lip..."), this, [this] {
        const ClipDescription& clip = m_session->clip()->description();
        const QFileInfo source(clip.path);
        const QString suggested = source.dir().filePath(source.completeBaseName().remove(QLatin1Char('%')) + QStringLiteral("_graded.mp4"));
        QString path = QFileDialog::getSaveFileName(this, tr("Export Clip"), suggested,
                                                    tr("Video (*.mp4 *.mov *.mkv *.webm);;PNG sequence (*.png)"));
        if (path.isEmpty()) return;
        if (!ClipModel::isClipPath(path) && path.endsWith(QStringLiteral(".png"), Qt::CaseInsensitive))
            path.insert(path.size() - 4, QStringLiteral("_%05d"));  // one file per frame
        m_session->exportClip(path, QFileInfo::exists(path));  // the dialog asked before replacing a file
    });
    exportClip->setObjectName(QStringLiteral("exportClipAction"));
    exportClip->setEnabled(false);  // until a clip's result is current (showResultState)
    if (!ClipModel::supported()) {
        for (QAction* a : {open, exportClip}) {
            a->setText(a->text() + tr(" (needs FFmpeg support)"));
            a->setToolTip(ClipModel::unsupportedReason());
            a->setEnabled(false);
        }
    }
}

}  // namespace uot::ui
