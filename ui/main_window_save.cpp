// MainWindow: the dialogs of saving. Save (Ctrl+S) writes to the file this
// source's result was saved to, else behaves as Save As (Ctrl+Shift+S). Save As
// checks the chosen file before asking anything else: the source and reference
// are never replaced. Folder, format and the Save Options (ui/save_options_dialog.h)
// are remembered. The
// session writes (StudioSession::saveResultTo): an out-of-date result is never
// saved, and the name offered, the metadata copied and the files protected come
// from the inputs kept with the result.
#include "ui/main_window.h"

#include <QAction>
#include <QDialog>
#include <QDir>
#include <QFileDialog>
#include <QFileInfo>
#include <QLabel>
#include <QMessageBox>
#include <QRegularExpression>
#include <QSettings>

#include "ui/save_options_dialog.h"

namespace uot::ui {

namespace {

const QStringList& saveFilters()
{
    static const QStringList filters = {QObject::tr("PNG (*.png)"), QObject::tr("JPEG (*.jpg *.jpeg)"),
                                        QObject::tr("TIFF (*.tif *.tiff)"), QObject::tr("WebP (*.webp)"),
                                        QObject::tr("BMP (*.bmp)")};
    return filters;
}

// "JPEG (*.jpg *.jpeg)" -> "jpg"
QString extensionOf(const QString& filter)
{
    const int star = filter.indexOf("*.");
    if (star < 0) return QStringLiteral("png");
    const int end = filter.indexOf(QRegularExpression("[ )]"), star);
    return filter.mid(star + 2, end - star - 2);
}

}  // namespace

SavePrompts MainWindow::defaultPrompts()
{
    SavePrompts prompts;
    if (!m_options.interactive) {
        // Scripted runs never block on a dialog: Save As needs a path (saveResultTo).
        prompts.choosePath = [](QString&, QString&) { return false; };
        prompts.confirmReplace = [](const QString&) { return false; };
        prompts.chooseOptions = [](const QString&, StudioSaveOptions&) { return true; };
        return prompts;
    }
    prompts.choosePath = [this](QString& path, QString& filter) {
        QFileDialog dialog(this, tr("Save Result As"));
        dialog.setAcceptMode(QFileDialog::AcceptSave);
        // Replacing is asked after the source check, by confirmReplace.
        dialog.setOption(QFileDialog::DontConfirmOverwrite);
        dialog.setNameFilters(saveFilters());
        dialog.selectNameFilter(filter);
        dialog.setDirectory(QFileInfo(path).absolutePath());
        dialog.selectFile(QFileInfo(path).fileName());
        if (dialog.exec() != QDialog::Accepted || dialog.selectedFiles().isEmpty()) return false;
        path = dialog.selectedFiles().first();
        filter = dialog.selectedNameFilter();
        return true;
    };
    prompts.confirmReplace = [this](const QString& path) {
        return QMessageBox::question(this, tr("Replace File?"),
                                     tr("%1 already exists.\nDo you want to replace it?").arg(QFileInfo(path).fileName()),
                                     QMessageBox::Yes | QMessageBox::No, QMessageBox::No) == QMessageBox::Yes;
    };
    prompts.chooseOptions = [this](const QString& path, StudioSaveOptions& options) {
        const QString extension = QFileInfo(path).suffix();
        if (!SaveOptionsDialog::hasOptions(extension)) return true;
        SaveOptionsDialog dialog(extension, options, this);
        if (dialog.exec() != QDialog::Accepted) return false;
        options = dialog.options();
        return true;
    };
    return prompts;
}

void MainWindow::save()
{
    if (m_session->hasResult() && !m_session->checkResultSaveable(tr("Save"))) {
        emit saveFailed(lastError());
        return;
    }
    if (m_session->savePath().isEmpty()) {
        saveAs();
        return;
    }
    saveResultTo(m_session->savePath(), m_session->saveOptions());
}

void MainWindow::saveAs()
{
    if (!m_session->checkResultSaveable(m_session->hasResult() ? tr("Save Result As") : tr("Save"))) {
        emit saveFailed(lastError());
        return;
    }
    QSettings settings;
    QString filter = settings.value("dialogs/save/filter", saveFilters().first()).toString();
    if (!saveFilters().contains(filter)) filter = saveFilters().first();
    // Named after the source the result was made from.
    const StudioResult& result = m_session->result();
    const QString folder = startFolder(settings.value("dialogs/save/folder").toString(), result.inputs.source.path);
    QString path = !m_session->savePath().isEmpty()
                       ? m_session->savePath()
                       : QDir(folder).filePath(result.baseName() + "_recolored." + extensionOf(filter));
    for (;;) {
        if (!m_prompts.choosePath(path, filter)) return;
        if (QFileInfo(path).suffix().isEmpty()) path += "." + extensionOf(filter);
        QString why;
        if (m_session->checkSaveTarget(path, why)) break;
        // Said before any other question, and the dialog opens again.
        m_session->reportError(tr("Save Result As"), why);
        emit saveFailed(lastError());
    }
    if (QFileInfo::exists(path) && !m_prompts.confirmReplace(path)) return;
    // The last choice, checked like every saved setting (a bad value gives the default).
    QStringList problems;
    StudioSaveOptions options = StudioSaveOptions::load(settings, &problems);
    if (!problems.isEmpty()) m_phase->setText(problems.join(QStringLiteral("; ")));
    if (!m_prompts.chooseOptions(path, options)) return;
    settings.setValue("dialogs/save/folder", QFileInfo(path).absolutePath());
    settings.setValue("dialogs/save/filter", filter);
    options.save(settings);
    saveResultTo(path, options);
}

void MainWindow::saveResultTo(const QString& path, const StudioSaveOptions& options)
{
    m_session->saveResultTo(path, options);
}

void MainWindow::saveResultTo(const QString& path) { m_session->saveResultTo(path); }

}  // namespace uot::ui
