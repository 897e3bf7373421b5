// MainWindow: what persists between sessions (QSettings): parameters, window
// geometry and dock layout, the images of the session, the mask and the regions,
// recent files, and the folders the open dialogs start in. (The session remembers its images itself.)
#include "ui/main_window.h"

#include <QAction>
#include <QDir>
#include <QDockWidget>
#include <QFileDialog>
#include <QFileInfo>
#include <QMenu>
#include <QScreen>
#include <QSettings>
#include <QStandardPaths>
#include <QTimer>

#include "ui/parameters_panel.h"

namespace uot::ui {

namespace {

constexpr int kMaxRecent = 8;
// Bumped when the dock layout changes so that an older saved layout is not
// restored over the new default.
constexpr int kLayoutVersion = 2;

}  // namespace

void MainWindow::restoreSettings()
{
    QSettings settings;
    const QStringList problems = m_session->restoreSavedParameters();
    if (!problems.isEmpty()) {
        // Said once, at this start; the defaults are what the file gets from now on.
        const QString message = tr("Some saved settings were not valid and were replaced by their defaults "
                                   "(saved from now on):\n%1").arg(problems.join('\n'));
        if (m_options.interactive)  // once the window is up
            QTimer::singleShot(0, this, [this, message] { m_session->reportError(tr("Settings"), message); });
        else
            m_session->reportError(tr("Settings"), message);
    }
    if (!restoreGeometry(settings.value("window/geometry").toByteArray())) {
        // First start: most of the screen. At its size hint the window takes a
        // third of a large screen, and the images are thumbnails.
        if (const QScreen* s = screen()) resize((s->availableGeometry().size() * 0.85).expandedTo(sizeHint()));
    }
    restoreState(settings.value("window/state").toByteArray(), kLayoutVersion);
    m_parameters->setAdvancedVisible(settings.value("window/advancedSettings", false).toBool());
    action(QStringLiteral("advancedPanelsAction"))
        ->setChecked(!dock(QStringLiteral("statisticsDock"))->isHidden() || !dock(QStringLiteral("chartsDock"))->isHidden());
    updateRecentMenu();
}

void MainWindow::saveSettings()
{
    QSettings settings;
    settings.setValue("window/geometry", saveGeometry());
    settings.setValue("window/state", saveState(kLayoutVersion));
    settings.setValue("window/advancedSettings", m_parameters->advancedVisible());
    parameters().save(settings);
    // The mask and the regions, restored at the next start with the same source;
    // their mask files in a folder next to the settings file.
    const QFileInfo file(settings.fileName());
    m_session->saveRegionalSession(settings, file.absolutePath() + "/" + file.completeBaseName() + "-session");
}

QString MainWindow::startFolder(const QString& remembered, const QString& imagePath)
{
    const QString image = !imagePath.isEmpty() && !imagePath.startsWith(":/") ? QFileInfo(imagePath).absolutePath() : QString();
    for (const QString& folder : {remembered, image, QStandardPaths::writableLocation(QStandardPaths::PicturesLocation)})
        if (!folder.isEmpty() && QFileInfo(folder).isDir()) return QFileInfo(folder).absoluteFilePath();
    return QDir::homePath();
}

QString MainWindow::openDialog(const QString& title, const QString& key)
{
    // The folder this dialog was last used in, else the current image's, else Pictures.
    QSettings settings;
    const QString setting = "dialogs/" + key + "/folder";
    const QString folder =
        startFolder(settings.value(setting).toString(), key == "reference" ? m_session->reference().path : m_session->source().path);
    const QString path = m_openPrompt ? m_openPrompt(title, folder)
                                      : QFileDialog::getOpenFileName(this, title, folder,
                                                                     tr("Images (*.jpg *.jpeg *.png *.tif *.tiff *.webp *.bmp)"));
    if (!path.isEmpty()) settings.setValue(setting, QFileInfo(path).absolutePath());
    return path;
}

void MainWindow::addRecentFile(const QString& path)
{
    QSettings settings;
    QStringList recent = settings.value("recentFiles").toStringList();
    const QString absolute = QFileInfo(path).absoluteFilePath();
    recent.removeAll(absolute);
    recent.prepend(absolute);
    while (recent.size() > kMaxRecent) recent.removeLast();
    settings.setValue("recentFiles", recent);
    updateRecentMenu();
}

void MainWindow::updateRecentMenu()
{
    QMenu* recentMenu = part<QMenu>("recentMenu");
    recentMenu->clear();
    const QStringList recent = QSettings().value("recentFiles").toStringList();
    for (const QString& path : recent) {
        QMenu* entry = recentMenu->addMenu(QFileInfo(path).fileName());
        entry->setToolTip(path);
        entry->addAction(tr("Open as Source"), this, [this, path] { openSource(path); });
        entry->addAction(tr("Open as Reference"), this, [this, path] { openReference(path); });
    }
    recentMenu->setEnabled(!recent.isEmpty());
}

}  // namespace uot::ui
