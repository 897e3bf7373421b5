// MainWindow: the non-destructive workflow. The undo history (parameter
// changes, loads, swaps), presets and named references (settings_library,
// shown in the Library dock) and copy/paste of settings.
#include "ui/main_window.h"

#include <QClipboard>
#include <QDir>
#include <QFileInfo>
#include <QGuiApplication>
#include <QInputDialog>
#include <QLabel>
#include <QUndoStack>

#include "ui/histogram_view.h"
#include "ui/image_view.h"
#include "ui/library_panel.h"
#include "ui/parameters_panel.h"
#include "ui/settings_library.h"
#include "ui/undo_commands.h"

namespace uot::ui {

void MainWindow::applyImage(bool source, const LoadedImage& image)
{
    const QImage shown = image.image ? toQImage(*image.image) : QImage();
    if (source) {
        m_source = image;
        m_sourceView->setImage(shown);
        m_resultView->setBeforeImage(shown);
        m_savePath.clear();  // another picture: Ctrl+S must not write over the last one's file
        m_imageInfo->setText(image.image ? tr("%1-bit · %2").arg(image.image->depth)
                                               .arg(image.profile.isEmpty() ? tr("sRGB (assumed)") : image.profile)
                                         : QString());
        m_histogram->setImage(HistogramView::Source, shown);
    } else {
        m_reference = image;
        m_referenceView->setImage(shown);
        m_histogram->setImage(HistogramView::Reference, shown);
    }
    rememberSession();
    updateTitle();
    updateResultState();
}

void MainWindow::exchangeImages()
{
    const LoadedImage source = m_source, reference = m_reference;
    applyImage(true, reference);
    applyImage(false, source);
    if (parameters().autoRun && hasSource() && hasReference()) m_autoRunTimer.start();
}

void MainWindow::swapImages()
{
    m_undo->push(new FunctionCommand(tr("swap source and reference"), [this] { exchangeImages(); },
                                     [this] { exchangeImages(); }, false));
}

void MainWindow::recordParameters()
{
    const StudioParameters now = parameters();
    if (m_restoringHistory || now == m_recordedParameters) return;
    m_undo->push(new ParametersCommand(m_recordedParameters, now,
                                       [this](const StudioParameters& p) { restoreParameters(p); }, m_settingAll));
    m_recordedParameters = now;
}

void MainWindow::restoreParameters(const StudioParameters& p)
{
    m_restoringHistory = true;
    m_parameters->setParameters(p);  // onParametersChanged saves them and auto-runs, without recording
    m_restoringHistory = false;
    m_recordedParameters = p;
}

void MainWindow::savePreset(const QString& name)
{
    if (name.trimmed().isEmpty()) return;
    settings_library::savePreset(name, parameters());
    m_library->refresh();
    m_phase->setText(tr("Saved the preset %1").arg(name.trimmed()));
}

bool MainWindow::applyPreset(const QString& name)
{
    QStringList problems;
    auto preset = settings_library::preset(name, &problems);
    if (!preset) {
        showError(tr("Preset"), tr("There is no preset named %1 any more.").arg(name));
        m_library->refresh();
        return false;
    }
    if (!problems.isEmpty()) {
        showError(tr("Preset"), tr("The preset %1 was not applied: it holds values that are not valid.\n%2")
                                    .arg(name, problems.join('\n')));
        return false;
    }
    preset->autoRun = parameters().autoRun;
    setParameters(*preset);  // one undo step
    m_phase->setText(tr("Applied the preset %1").arg(name));
    return true;
}

void MainWindow::saveNamedReference(const QString& name)
{
    if (name.trimmed().isEmpty()) return;
    if (!hasReference()) {
        showError(tr("Save Reference"), tr("Open a reference image first: a named reference keeps the image and the settings."));
        return;
    }
    settings_library::saveReference({name, m_reference.path, parameters()});
    m_library->refresh();
    m_phase->setText(tr("Saved the reference %1").arg(name.trimmed()));
}

bool MainWindow::applyNamedReference(const QString& name)
{
    QStringList problems;
    auto reference = settings_library::reference(name, &problems);
    if (!reference) {
        showError(tr("Reference"), tr("There is no reference named %1 any more.").arg(name));
        m_library->refresh();
        return false;
    }
    if (!problems.isEmpty()) {
        showError(tr("Reference"), tr("The reference %1 was not applied: its settings hold values that are not valid.\n%2")
                                       .arg(name, problems.join('\n')));
        return false;
    }
    const QString path = reference->imagePath;
    if (!path.startsWith(":/") && !QFileInfo::exists(path)) {
        showError(tr("Reference"), tr("The image of %1 is no longer at %2.\nOpen it again (File > Open Reference...) and "
                                      "save the reference anew.").arg(name, QDir::toNativeSeparators(path)));
        return false;
    }
    reference->parameters.autoRun = parameters().autoRun;
    setParameters(reference->parameters);
    // One click gives the result: run once the image is in.
    if (hasReference() && QFileInfo(m_reference.path) == QFileInfo(path)) {
        if (hasSource()) run();
    } else {
        m_runWhenReferenceLoads = true;
        openReference(path);
    }
    return true;
}

void MainWindow::copySettings()
{
    QGuiApplication::clipboard()->setText(settings_library::toText(parameters()));
    m_phase->setText(tr("Copied the settings. Paste them on another image with Edit > Paste Settings."));
}

bool MainWindow::pasteSettings()
{
    QStringList problems;
    auto pasted = settings_library::fromText(QGuiApplication::clipboard()->text(), &problems);
    if (!problems.isEmpty()) {
        // Nothing is applied: half a set of settings would give a look nobody chose.
        showError(tr("Paste Settings"), tr("The settings were not pasted: %n value(s) not valid.\n%1", "", int(problems.size()))
                                            .arg(problems.join('\n')));
        return false;
    }
    if (!pasted) {
        showError(tr("Paste Settings"), tr("The clipboard holds no studio settings. Copy them first (Edit > Copy Settings)."));
        return false;
    }
    pasted->autoRun = parameters().autoRun;
    setParameters(*pasted);
    m_phase->setText(tr("Pasted the settings."));
    return true;
}

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
    const QString suggested = QFileInfo(m_reference.path).completeBaseName();
    const QString name = QInputDialog::getText(this, tr("Save Reference"),
                                               tr("Name for this reference image and its settings:"), QLineEdit::Normal,
                                               suggested, &ok);
    if (ok) saveNamedReference(name);
}

}  // namespace uot::ui
