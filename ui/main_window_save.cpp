// MainWindow: the dialogs of saving. Save (Ctrl+S) writes to the file this
// source's result was saved to, else behaves as Save As (Ctrl+Shift+S). Save As
// checks the chosen file before asking anything else: the source and reference
// are never replaced. Folder, format, bit depth and quality are remembered. The
// session writes (StudioSession::saveResultTo): an out-of-date result is never
// saved, and the name offered, the metadata copied and the files protected come
// from the inputs kept with the result.
#include "ui/main_window.h"

#include <QAction>
#include <QComboBox>
#include <QDialog>
#include <QDialogButtonBox>
#include <QDir>
#include <QFileDialog>
#include <QFileInfo>
#include <QFormLayout>
#include <QLabel>
#include <QMessageBox>
#include <QRegularExpression>
#include <QSettings>
#include <QSpinBox>

#include "ui/parameter_reader.h"

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

// The list of output color profiles (output_profile.h), `current` selected.
QComboBox* outputProfileBox(OutputProfile current)
{
    auto* box = new QComboBox;
    box->setObjectName("outputProfileBox");
    box->addItem(QObject::tr("sRGB"), "srgb");
    box->addItem(QObject::tr("the source's own profile"), "source");
    box->addItem(QObject::tr("Display P3"), "display-p3");
    box->addItem(QObject::tr("Adobe RGB (1998)"), "adobe-rgb");
    box->setToolTip(QObject::tr("The color profile the result is converted into and tagged with.\n"
                                "sRGB suits the web; Display P3 and Adobe RGB keep more saturated colors\n"
                                "for wide-gamut screens and print."));
    box->setCurrentIndex(std::max(0, box->findData(QString::fromStdString(toString(current)))));
    return box;
}

// Bit depth, quality and color profile for the chosen format, starting from the last choice.
bool askWriteOptions(QWidget* parent, const QString& path, WriteOptions& options)
{
    const QString ext = QFileInfo(path).suffix().toLower();
    const bool lossy = ext == "jpg" || ext == "jpeg" || ext == "webp";
    const bool deep = ext == "png" || ext == "tif" || ext == "tiff";
    if (!lossy && !deep) return true;  // BMP carries no profile
    QDialog dialog(parent);
    dialog.setWindowTitle(QObject::tr("Save Options"));
    auto* form = new QFormLayout(&dialog);
    QComboBox* depth = nullptr;
    QSpinBox* quality = nullptr;
    if (deep) {
        depth = new QComboBox;
        depth->addItem(QObject::tr("same as the source"), 0);
        depth->addItem(QObject::tr("8 bit"), 8);
        depth->addItem(QObject::tr("16 bit"), 16);
        depth->setCurrentIndex(std::max(0, depth->findData(options.depth)));
        form->addRow(QObject::tr("Bit depth"), depth);
    }
    if (lossy) {
        quality = new QSpinBox;
        quality->setRange(1, 100);
        quality->setValue(options.jpegQuality);
        form->addRow(QObject::tr("Quality"), quality);
    }
    QComboBox* profile = nullptr;
    if (ext != "webp") {  // WebP carries no profile here: always sRGB
        profile = outputProfileBox(options.profile);
        form->addRow(QObject::tr("Color profile"), profile);
    }
    auto* buttons = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel);
    QObject::connect(buttons, &QDialogButtonBox::accepted, &dialog, &QDialog::accept);
    QObject::connect(buttons, &QDialogButtonBox::rejected, &dialog, &QDialog::reject);
    form->addRow(buttons);
    if (dialog.exec() != QDialog::Accepted) return false;
    if (depth) options.depth = depth->currentData().toInt();
    if (quality) options.jpegQuality = options.webpQuality = quality->value();
    if (profile) options.profile = parseOutputProfile(profile->currentData().toString().toStdString());
    return true;
}

}  // namespace

SavePrompts MainWindow::defaultPrompts()
{
    SavePrompts prompts;
    if (!m_options.interactive) {
        // Scripted runs never block on a dialog: Save As needs a path (saveResultTo).
        prompts.choosePath = [](QString&, QString&) { return false; };
        prompts.confirmReplace = [](const QString&) { return false; };
        prompts.chooseOptions = [](const QString&, WriteOptions&) { return true; };
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
    prompts.chooseOptions = [this](const QString& path, WriteOptions& options) {
        return askWriteOptions(this, path, options);
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
    saveResultTo(m_session->savePath(), m_session->saveOptions().depth, m_session->saveOptions().jpegQuality);
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
    WriteOptions options;
    QStringList problems;
    ParameterReader remembered(settings, problems);
    options.depth = remembered.integer("save/depth", 0, 0, 16);
    if (options.depth != 8 && options.depth != 16) options.depth = 0;
    options.jpegQuality = options.webpQuality = remembered.integer("save/quality", 95, 1, 100);
    options.profile = StudioSession::savedOutputProfile();
    if (!problems.isEmpty()) m_phase->setText(problems.join(QStringLiteral("; ")));
    if (!m_prompts.chooseOptions(path, options)) return;
    settings.setValue("dialogs/save/folder", QFileInfo(path).absolutePath());
    settings.setValue("dialogs/save/filter", filter);
    settings.setValue("save/depth", options.depth);
    settings.setValue("save/quality", options.jpegQuality);
    settings.setValue("save/profile", QString::fromStdString(toString(options.profile)));
    saveResultTo(path, options.depth, options.jpegQuality);
}

void MainWindow::saveResultTo(const QString& path, int depth, int quality)
{
    m_session->saveResultTo(path, depth, quality);
}

}  // namespace uot::ui
