#pragma once
// File > Batch Recolor: recolors files or a folder with the current reference
// and parameters through the pipeline's batch engine (the engine of `uot
// batch`), in the background, with overall and per-file progress, cancellation
// (finished files stay, no partial files) and a summary of failures and why.

#include <QDialog>
#include <QStringList>

#include <memory>

#include "ui/solve_worker.h"
#include "ui/pipeline_jobs.h"
#include "ui/studio_parameters.h"

QT_BEGIN_NAMESPACE
class QCheckBox;
class QComboBox;
class QLineEdit;
class QListWidget;
class QPlainTextEdit;
class QProgressBar;
class QPushButton;
class QSpinBox;
QT_END_NAMESPACE

namespace uot {
struct BatchSettings;
}

namespace uot::ui {

class BatchDialog final : public QDialog {
    Q_OBJECT
public:
    BatchDialog(SolveWorker* worker, const QString& referencePath, const StudioParameters& parameters,
                QWidget* parent = nullptr);
    Q_DISABLE_COPY_MOVE(BatchDialog)

    void setInputs(const QStringList& paths);
    QString referencePath() const { return m_referencePath; }
    QStringList inputs() const;
    void setOutputDirectory(const QString& path);
    QString outputDirectory() const;
    QProgressBar* overallProgress() const { return m_overall; }
    QProgressBar* fileProgress() const { return m_file; }
    void setPattern(const QString& pattern);
    void setOverwrite(bool overwrite);
    // Starts the batch (what the Start button does).
    void start();
    bool isRunning() const { return m_generation != 0; }
    QString summaryText() const;
    const BatchOutput* lastOutput() const { return m_last.get(); }
    // The engine's settings for the dialog's current state.
    BatchSettings batchSettings() const;

signals:
    void batchFinished();

protected:
    void reject() override;  // closing while running cancels first

private:
    void finish(const std::shared_ptr<const JobOutput>& finished, bool cancelled);
    void setRunning(bool running);
    // The last batch's inputs, output folder, pattern, format and quality (QSettings).
    void restoreChoices();
    void rememberChoices() const;
    QString lastInputFolder() const;  // where Add Files/Add Folder start

    SolveWorker* m_worker;
    QString m_referencePath;
    StudioParameters m_parameters;
    quint64 m_generation = 0;
    int m_filesDone = 0;
    std::shared_ptr<const BatchOutput> m_last;
    QListWidget* m_inputs = nullptr;
    QLineEdit* m_outDir = nullptr;
    QLineEdit* m_pattern = nullptr;
    QComboBox* m_format = nullptr;
    QSpinBox* m_quality = nullptr;
    QCheckBox* m_overwrite = nullptr;
    QProgressBar* m_overall = nullptr;
    QProgressBar* m_file = nullptr;
    QPlainTextEdit* m_summary = nullptr;
    QPushButton* m_start = nullptr;
    QPushButton* m_cancel = nullptr;
    QPushButton* m_close = nullptr;
};

}  // namespace uot::ui
