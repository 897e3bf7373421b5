// MainWindow: the non-destructive workflow, forwarded to the session (which
// keeps the undo history, presets and named references): swaps, presets,
// references, copy/paste of settings, and the dialogs that ask for names.
#include "ui/main_window.h"

#include <QClipboard>
#include <QFileInfo>
#include <QGuiApplication>
#include <QInputDialog>
#include <QLabel>

namespace uot::ui {

void MainWindow::swapImages() { m_session->swapImages(); }
void MainWindow::savePreset(const QString& name) { m_session->savePreset(name); }
bool MainWindow::applyPreset(const QString& name) { return m_session->applyPreset(name); }
void MainWindow::saveNamedReference(const QString& name) { m_session->saveNamedReference(name); }
bool MainWindow::applyNamedReference(const QString& name) { return m_session->applyNamedReference(name); }

void MainWindow::copySettings()
{
    QGuiApplication::clipboard()->setText(m_session->settingsText());
    m_phase->setText(tr("Copied the settings. Paste them on another image with Edit > Paste Settings."));
}

bool MainWindow::pasteSettings() { return m_session->pasteSettings(QGuiApplication::clipboard()->text()); }

void MainWindow::askAndSavePreset()
{
    if (!m_options.interactive) return;
    bool ok = false;
    const QString name = QInputDialog::getText(this, tr("Save Preset"), tr("Name of the preset:"), QLineEdit::Normal,
                                               QString(), &ok);
    if (ok) savePreset(name);
}

void MainWindow::askAndSaveReference()
{
    if (!m_options.interactive) return;
    bool ok = false;
    const QString suggested = QFileInfo(m_session->reference().path).completeBaseName();
    const QString name = QInputDialog::getText(this, tr("Save Reference"),
                                               tr("Name for this reference image and its settings:"), QLineEdit::Normal,
                                               suggested, &ok);
    if (ok) saveNamedReference(name);
}

}  // namespace uot::ui
