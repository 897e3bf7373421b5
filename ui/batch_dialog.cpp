#include "ui/batch_dialog.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDialogButtonBox>
#include <QDir>
#include <QFileDialog>
#include <QFileInfo>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QListWidget>
#include <QPlainTextEdit>
#include <QProgressBar>
#include <QPushButton>
#include <QSettings>
#include <QSpinBox>
#include <QVBoxLayout>

#include "core/params/parameter_schema.h"
#include "ui/parameter_tooltip.h"
#include "ui/pipeline_jobs.h"

namespace uot::ui {

BatchDialog::BatchDialog(SolveWorker* worker, const QString& referencePath, const StudioParameters& parameters,
                         QWidget* parent)
    : QDialog(parent), m_worker(worker), m_referencePath(referencePath), m_parameters(parameters)
{
    setWindowTitle(tr("Batch Recolor"));
    auto* layout = new QVBoxLayout(this);
    layout->addWidget(new QLabel(tr("Recolor with the palette of <b>%1</b> and the current parameters.")
                                     .arg(QFileInfo(referencePath).fileName().toHtmlEscaped())));

    m_inputs = new QListWidget;
    m_inputs->setSelectionMode(QAbstractItemView::ExtendedSelection);
    m_inputs->setToolTip(tr("Files and folders to recolor (folders: their images, not recursive)."));
    auto* addFiles = new QPushButton(tr("Add Files..."));
    auto* addFolder = new QPushButton(tr("Add Folder..."));
    auto* remove = new QPushButton(tr("Remove"));
    auto* inputButtons = new QHBoxLayout;
    inputButtons->addWidget(addFiles);
    inputButtons->addWidget(addFolder);
    inputButtons->addWidget(remove);
    inputButtons->addStretch(1);
    layout->addWidget(m_inputs, 1);
    layout->addLayout(inputButtons);

    auto* form = new QFormLayout;
    m_outDir = new QLineEdit;
    m_outDir->setToolTip(tr("Folder for the results; created when missing."));
    auto* browse = new QPushButton(tr("Browse..."));
    auto* outRow = new QHBoxLayout;
    outRow->addWidget(m_outDir, 1);
    outRow->addWidget(browse);
    form->addRow(tr("Output folder"), outRow);
    m_pattern = new QLineEdit(QStringLiteral("{name}_recolored.{ext}"));
    m_pattern->setToolTip(tr("Output file name: {name} is the input's name without extension, {ext} its extension."));
    form->addRow(tr("Name pattern"), m_pattern);
    m_format = new QComboBox;
    m_format->addItem(tr("same as the input"), QString());
    for (const char* ext : {"png", "jpg", "tif", "webp", "bmp"}) m_format->addItem(QString(ext).toUpper(), QString(ext));
    m_format->setToolTip(tr("File format of the results."));
    form->addRow(tr("Format"), m_format);
    // The table's entry, as in the Save Options (ui/save_options_dialog.cpp).
    const params::Parameter& quality = params::parameter("jpeg-quality");
    m_quality = new QSpinBox;
    m_quality->setRange(int(quality.min), int(quality.max));
    m_quality->setValue(int(quality.defaultValue));
    m_quality->setToolTip(parameterToolTip(quality));
    form->addRow(QString::fromStdString(quality.studioTitle()), m_quality);
    m_overwrite = new QCheckBox(tr("Replace existing output files"));
    m_overwrite->setToolTip(tr("Off: existing outputs are skipped. Source files are never replaced."));
    form->addRow(QString(), m_overwrite);
    layout->addLayout(form);

    m_overall = new QProgressBar;
    m_overall->setRange(0, 1);
    m_overall->setValue(0);
    m_overall->setFormat(tr("not started"));
    m_file = new QProgressBar;
    m_file->setRange(0, 1);
    m_file->setValue(0);
    m_file->setFormat(tr("current file"));
    layout->addWidget(m_overall);
    layout->addWidget(m_file);
    m_summary = new QPlainTextEdit;
    m_summary->setReadOnly(true);
    m_summary->setMaximumBlockCount(2000);
    m_summary->setPlaceholderText(tr("The summary appears here."));
    layout->addWidget(m_summary, 1);

    auto* buttons = new QDialogButtonBox;
    m_start = buttons->addButton(tr("Start"), QDialogButtonBox::ActionRole);
    m_cancel = buttons->addButton(tr("Cancel Batch"), QDialogButtonBox::ActionRole);
    m_close = buttons->addButton(QDialogButtonBox::Close);
    layout->addWidget(buttons);
    resize(620, 560);

    connect(addFiles, &QPushButton::clicked, this, [this] {
        const QStringList files = QFileDialog::getOpenFileNames(this, tr("Add Files"), lastInputFolder(),
                                                                tr("Images (*.jpg *.jpeg *.png *.tif *.tiff *.webp *.bmp)"));
        m_inputs->addItems(files);
    });
    connect(addFolder, &QPushButton::clicked, this, [this] {
        const QString dir = QFileDialog::getExistingDirectory(this, tr("Add Folder"), lastInputFolder());
        if (!dir.isEmpty()) m_inputs->addItem(dir);
    });
    connect(remove, &QPushButton::clicked, this, [this] { qDeleteAll(m_inputs->selectedItems()); });
    connect(browse, &QPushButton::clicked, this, [this] {
        const QString dir = QFileDialog::getExistingDirectory(this, tr("Output Folder"), m_outDir->text());
        if (!dir.isEmpty()) m_outDir->setText(dir);
    });
    connect(m_start, &QPushButton::clicked, this, &BatchDialog::start);
    connect(m_cancel, &QPushButton::clicked, this, [this] {
        if (m_generation != 0) m_worker->cancel();
    });
    connect(m_close, &QPushButton::clicked, this, &BatchDialog::reject);

    connect(m_worker, &SolveWorker::stepChanged, this, [this](quint64 g, int done, int total, const QString& input) {
        if (g != m_generation) return;
        m_overall->setRange(0, std::max(1, total));
        m_overall->setValue(done);
        m_overall->setFormat(tr("%1 of %2 files done").arg(done).arg(total));
        const bool fileEnded = done > m_filesDone;
        m_filesDone = done;
        m_file->setRange(0, 1);
        m_file->setValue(fileEnded ? 1 : 0);  // a file that converged early still ends at 100 %
        if (!input.isEmpty()) m_file->setFormat(tr("%1: %p %").arg(QFileInfo(input).fileName()));
    });
    connect(m_worker, &SolveWorker::progress, this, [this](quint64 g, const QVector<ProgressSample>& samples) {
        if (g != m_generation || samples.isEmpty()) return;
        if (m_file->maximum() == 1 && m_file->value() == 1) return;  // this file has ended
        m_file->setRange(0, m_parameters.maxIterations);
        m_file->setValue(std::min(m_parameters.maxIterations, samples.last().progress.iteration));
    });
    connect(m_worker, &SolveWorker::jobFinished, this, [this](quint64 g, std::shared_ptr<const JobOutput> output) {
        if (g == m_generation) finish(output, false);
    });
    connect(m_worker, &SolveWorker::jobCancelled, this, [this](quint64 g, std::shared_ptr<const JobOutput> output) {
        if (g == m_generation) finish(output, true);
    });
    connect(m_worker, &SolveWorker::jobFailed, this, [this](quint64 g, const QString& message) {
        if (g != m_generation) return;
        setRunning(false);
        m_summary->setPlainText(tr("The batch could not start:\n%1").arg(message));
        emit batchFinished();
    });
    setRunning(false);
    restoreChoices();
}

QString BatchDialog::lastInputFolder() const
{
    for (int i = m_inputs->count() - 1; i >= 0; --i) {
        const QFileInfo info(m_inputs->item(i)->text());
        if (info.isDir()) return info.absoluteFilePath();
        if (info.exists()) return info.absolutePath();
    }
    return {};
}

void BatchDialog::restoreChoices()
{
    // The inputs, output folder and format of the last batch; inputs that are gone are left out.
    QSettings settings;
    QStringList inputs;
    for (const QString& path : settings.value("batch/inputs").toStringList())
        if (QFileInfo::exists(path)) inputs << path;
    m_inputs->addItems(inputs);
    m_outDir->setText(settings.value("batch/outputFolder").toString());
    m_pattern->setText(settings.value("batch/pattern", m_pattern->text()).toString());
    m_format->setCurrentIndex(std::max(0, m_format->findData(settings.value("batch/format").toString())));
    m_quality->setValue(settings.value("batch/quality", m_quality->value()).toInt());
    m_overwrite->setChecked(settings.value("batch/replace", false).toBool());
}

void BatchDialog::rememberChoices() const
{
    QSettings settings;
    settings.setValue("batch/inputs", inputs());
    settings.setValue("batch/outputFolder", m_outDir->text());
    settings.setValue("batch/pattern", m_pattern->text());
    settings.setValue("batch/format", m_format->currentData().toString());
    settings.setValue("batch/quality", m_quality->value());
    settings.setValue("batch/replace", m_overwrite->isChecked());
}

void BatchDialog::setInputs(const QStringList& paths)
{
    m_inputs->clear();
    m_inputs->addItems(paths);
}

QStringList BatchDialog::inputs() const
{
    QStringList paths;
    for (int i = 0; i < m_inputs->count(); ++i) paths << m_inputs->item(i)->text();
    return paths;
}

void BatchDialog::setOutputDirectory(const QString& path) { m_outDir->setText(path); }
QString BatchDialog::outputDirectory() const { return m_outDir->text(); }
void BatchDialog::setPattern(const QString& pattern) { m_pattern->setText(pattern); }
void BatchDialog::setOverwrite(bool overwrite) { m_overwrite->setChecked(overwrite); }
QString BatchDialog::summaryText() const { return m_summary->toPlainText(); }

BatchSettings BatchDialog::batchSettings() const
{
    BatchSettings settings;
    settings.recolor = recolorSettingsFor(m_parameters);
    settings.outDir = m_outDir->text().toStdString();
    QString pattern = m_pattern->text();
    const QString format = m_format->currentData().toString();
    if (!format.isEmpty()) pattern.replace(QStringLiteral("{ext}"), format);
    settings.pattern = pattern.toStdString();
    settings.overwrite = m_overwrite->isChecked();
    settings.overwriteSource = false;  // never touch sources
    settings.write.jpegQuality = settings.write.webpQuality = m_quality->value();
    return settings;
}

void BatchDialog::start()
{
    if (m_generation != 0) return;
    if (inputs().isEmpty() || m_outDir->text().isEmpty()) {
        m_summary->setPlainText(tr("Add files or a folder, and choose an output folder."));
        return;
    }
    m_summary->clear();
    rememberChoices();
    m_filesDone = 0;
    m_overall->setRange(0, 1);
    m_overall->setValue(0);
    m_overall->setFormat(tr("collecting files..."));
    m_file->setRange(0, 1);
    m_file->setValue(0);
    m_generation = m_worker->submit(tr("Batch"), makeBatchJob(m_referencePath, inputs(), batchSettings()));
    setRunning(true);
}

void BatchDialog::finish(const std::shared_ptr<const JobOutput>& finished, bool cancelled)
{
    setRunning(false);
    const auto output = outputOf<BatchOutput>(finished);
    m_last = output;
    QStringList lines;
    if (cancelled) lines << tr("Cancelled. Finished files were kept; no partial files were written.");
    if (output) {
        lines << tr("%n file(s) written", nullptr, int(output->written.size()));
        if (output->skipped > 0) lines << tr("%n existing output(s) skipped (enable replacing to redo them)", nullptr, output->skipped);
        if (!output->failures.isEmpty()) {
            lines << tr("%n file(s) failed:", nullptr, int(output->failures.size()));
            for (const QString& failure : output->failures) lines << "  " + failure;
        }
        if (!output->timings.isEmpty()) lines << output->timings;
        // Files that ended (written, skipped or failed); a cancelled batch stops short of the total.
        const int done = int(output->written.size()) + output->skipped + int(output->failures.size());
        const int total = cancelled ? std::max(done, m_overall->maximum()) : done;
        m_overall->setRange(0, std::max(1, total));
        m_overall->setValue(done);
        m_overall->setFormat(cancelled ? tr("cancelled: %1 of %2 files done").arg(done).arg(total)
                                       : tr("%1 of %2 files done").arg(done).arg(total));
        if (!cancelled) {
            m_file->setRange(0, 1);
            m_file->setValue(1);  // the last file ended (it may converge before the iteration limit)
        }
    }
    m_summary->setPlainText(lines.join('\n'));
    emit batchFinished();
}

void BatchDialog::setRunning(bool running)
{
    if (!running) m_generation = 0;
    m_start->setEnabled(!running);
    m_cancel->setEnabled(running);
    m_close->setEnabled(!running);
}

void BatchDialog::reject()
{
    if (m_generation != 0) {
        m_worker->cancel();
        return;  // closes once the batch has stopped and the summary is shown
    }
    QDialog::reject();
}

}  // namespace uot::ui
