#include "ui/lut_actions.h"

#include <QAction>
#include <QComboBox>
#include <QDir>
#include <QDialogButtonBox>
#include <QFileDialog>
#include <QFileInfo>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QMessageBox>
#include <QPushButton>
#include <QSettings>
#include <QVBoxLayout>

#include <algorithm>
#include <cstdio>

#include "ui/image_view.h"
#include "ui/studio_session.h"

namespace uot::ui {

ExportLutDialog::ExportLutDialog(const QString& suggestedPath, int size, QWidget* parent) : QDialog(parent)
{
    setWindowTitle(tr("Export LUT"));
    m_path = new QLineEdit(suggestedPath);
    auto* browse = new QPushButton(tr("Browse..."));
    connect(browse, &QPushButton::clicked, this, [this] {
        const QString chosen = QFileDialog::getSaveFileName(this, tr("Export LUT"), m_path->text(), tr("3D LUT (*.cube);;Hald CLUT image (*.png)"));
        if (!chosen.isEmpty()) m_path->setText(chosen);
    });
    auto* pathRow = new QHBoxLayout;
    pathRow->addWidget(m_path, 1);
    pathRow->addWidget(browse);
    m_size = new QComboBox;
    for (int n : {17, 33, 65}) m_size->addItem(tr("%1 \u00d7 %1 \u00d7 %1").arg(n), n);
    m_size->setCurrentIndex(std::max(0, m_size->findData(size)));
    m_size->setToolTip(tr("Nodes per axis of a .cube file. 33 suits most work; 65 follows the look more closely "
                          "(larger file); 17 is coarse. A Hald CLUT (.png) always has 64 (level 8)."));
    auto* form = new QFormLayout;
    form->addRow(tr("File:"), pathRow);
    form->addRow(tr("Size:"), m_size);
    auto* note = new QLabel(tr("Adobe/Resolve .cube, or a Hald CLUT .png for darktable, RawTherapee and G'MIC; "
                               "sRGB-encoded input and output. %1")
                                .arg(QString::fromUtf8(kLutHoldsGlobalMapOnly)));
    note->setObjectName("globalMapNote");
    note->setWordWrap(true);
    auto* buttons = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel);
    buttons->button(QDialogButtonBox::Ok)->setText(tr("Export"));
    connect(buttons, &QDialogButtonBox::accepted, this, &QDialog::accept);
    connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
    auto* layout = new QVBoxLayout(this);
    layout->addLayout(form);
    layout->addWidget(note);
    layout->addWidget(buttons);
    setMinimumWidth(480);
}

QString ExportLutDialog::path() const
{
    QString p = m_path->text().trimmed();
    if (!p.isEmpty() && !p.endsWith(".cube", Qt::CaseInsensitive) && !p.endsWith(".png", Qt::CaseInsensitive))
        p += ".cube";
    return p;
}

int ExportLutDialog::size() const { return m_size->currentData().toInt(); }

LutActions::LutActions(StudioSession* session, ImageView* resultView, bool interactive, QWidget* parent)
    : QObject(parent), m_session(session), m_resultView(resultView), m_parent(parent), m_interactive(interactive)
{
    setSize(QSettings().value("lut/size", 33).toInt());
    m_exportAction = new QAction(tr("Export &LUT..."), this);
    m_exportAction->setObjectName("exportLutAction");
    m_exportAction->setShortcut(QKeySequence(tr("Ctrl+L")));
    m_exportAction->setStatusTip(tr("Save the look as a 3D LUT (.cube or Hald .png) fitted to the result, with its PSNR"));
    connect(m_exportAction, &QAction::triggered, this, &LutActions::askAndExport);
    m_previewAction = new QAction(tr("&LUT Preview"), this);
    m_previewAction->setObjectName("lutPreviewAction");
    m_previewAction->setCheckable(true);
    m_previewAction->setShortcut(QKeySequence(tr("Ctrl+Shift+L")));
    m_previewAction->setStatusTip(tr("Show the source as the exported LUT renders it"));
    connect(m_previewAction, &QAction::toggled, this, &LutActions::setPreviewOn);
    SolveWorker* worker = session->worker();
    connect(worker, &SolveWorker::jobFinished, this, &LutActions::onFinished);
    connect(worker, &SolveWorker::jobFailed, this, &LutActions::onFailed);
    connect(worker, &SolveWorker::jobCancelled, this, [this](quint64 generation) {
        if (generation == m_exportGeneration) fail(tr("The LUT export was cancelled."));
    });
    // A new result (new parameters or images): the preview follows it.
    connect(session, &StudioSession::newResult, this, [this] {
        if (m_previewOn) refreshPreview();
    });
}

void LutActions::setSize(int size)
{
    m_size = isOfferedCubeSize(size) ? size : kDefaultCubeSize;
}

bool LutActions::refuseOutOfDate()
{
    if (m_session->staleInputs().isEmpty()) return false;
    fail(tr("The result is out of date: the images or settings changed since it was made. Press Run to see the "
            "current look, then export it."));
    return true;
}

void LutActions::askAndExport()
{
    if (!m_session->hasSource() || !m_session->hasReference()) {
        fail(tr("Open a source image and a reference image first."));
        return;
    }
    if (refuseOutOfDate()) return;
    QSettings settings;
    const QString folder = settings.value("lut/folder", QDir::homePath()).toString();
    ExportLutDialog dialog(QDir(folder).filePath("look.cube"), m_size, m_parent);
    if (dialog.exec() != QDialog::Accepted || dialog.path().isEmpty()) return;
    settings.setValue("lut/folder", QFileInfo(dialog.path()).absolutePath());
    settings.setValue("lut/size", dialog.size());
    exportTo(dialog.path(), dialog.size());
}

void LutActions::exportTo(const QString& path, int size)
{
    if (refuseOutOfDate()) return;
    setSize(size);
    LutRequest request;
    request.size = m_size;
    request.path = path;
    request.title = QFileInfo(path).completeBaseName();
    request.preview = m_previewOn;
    m_exportPath = path;
    m_exportGeneration = m_session->worker()->submit(tr("Export LUT"), m_session->lutJob(request));
    if (m_previewOn) m_previewGeneration = m_exportGeneration;
    emit statusMessage(tr("Exporting %1...").arg(QFileInfo(path).fileName()), 0);
}

void LutActions::setPreviewOn(bool on)
{
    m_previewOn = on;
    if (on) {
        refreshPreview();
    } else {
        m_previewGeneration = 0;
        m_resultView->setCaption(tr("Result"));
        m_resultView->setImage(m_session->result().image);
    }
}

void LutActions::refreshPreview()
{
    if (!m_session->hasSource() || !m_session->hasReference()) return;
    LutRequest request;
    request.size = m_size;
    request.preview = true;
    m_previewGeneration = m_session->worker()->submit(tr("LUT preview"), m_session->lutJob(request));
}

void LutActions::onFinished(quint64 generation, std::shared_ptr<const JobOutput> finished)
{
    const auto output = outputOf<LutOutput>(finished);
    if (!output || (generation != m_exportGeneration && generation != m_previewGeneration)) return;
    if (generation == m_exportGeneration) {
        m_exportGeneration = 0;
        if (output->cancelled) {
            fail(tr("The LUT export was cancelled."));
        } else {
            emit statusMessage(output->notice, 10000);
            emit exported(m_exportPath);
        }
    }
    if (generation == m_previewGeneration && m_previewOn && !output->image.isNull()) {
        m_preview = output->image;
        m_resultView->setCaption(
            tr("LUT preview (%1, %2 dB PSNR against the result)").arg(cubeSizeText(m_size)).arg(output->psnr, 0, 'f', 1));
        m_resultView->setImage(m_preview);
        emit previewReady();
    }
}

void LutActions::onFailed(quint64 generation, const QString& message)
{
    if (generation == m_exportGeneration) {
        m_exportGeneration = 0;
        fail(tr("The LUT export failed:\n%1").arg(message));
    } else if (generation == m_previewGeneration) {
        m_previewGeneration = 0;
        emit statusMessage(tr("LUT preview failed: %1").arg(message), 10000);
    }
}

void LutActions::fail(const QString& message)
{
    emit statusMessage(QString(message).replace('\n', ' '), 10000);
    if (m_interactive)
        QMessageBox::warning(m_parent, tr("Export LUT"), message);
    else
        std::fprintf(stderr, "uot-studio: %s\n", qPrintable(QString(message).replace('\n', ' ')));
    emit exportFailed(message);
}

}  // namespace uot::ui
