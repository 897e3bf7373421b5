// StudioSession: runs and their result. Run and cancel, what the worker
// reports back, whether the result is still what the inputs give, saving it,
// and the machine's peaks for the roofline.
#include "ui/studio_session.h"

#include <QDir>
#include <QFileInfo>
#include <QSettings>
#include <QtConcurrent/QtConcurrentRun>

#include <cmath>

#include "core/transport/uot_error.h"

namespace uot::ui {

namespace {

bool sameFile(const QString& a, const QString& b)
{
    if (a.isEmpty() || b.isEmpty() || a.startsWith(":/") || b.startsWith(":/")) return false;
    const QFileInfo x(a), y(b);
    if (x.exists() && y.exists()) return x.canonicalFilePath() == y.canonicalFilePath();
    return QDir::cleanPath(x.absoluteFilePath()) == QDir::cleanPath(y.absoluteFilePath());
}

}  // namespace

void StudioSession::connectWorker()
{
    SolveWorker* worker = m_worker.get();
    connect(worker, &SolveWorker::jobStarted, this, [this](quint64 g) {
        if (g == m_runGeneration) emit status(tr("Working..."));
    });
    connect(worker, &SolveWorker::runStarted, this, [this](quint64 g, const RunInfo& info) {
        if (g == m_runGeneration) emit runStarted(info);
    });
    connect(worker, &SolveWorker::progress, this, [this](quint64 g, const QVector<ProgressSample>& samples) {
        if (g != m_runGeneration || g != m_worker->latestGeneration()) return;  // stale
        emit progress(samples);
        for (const ProgressSample& sample : samples)
            if (sample.channel == 0) m_estimate.add(sample.progress);
        if (!m_remapOnly) emit estimateChanged(m_estimate.iteration(), m_estimate.maxIterations(), m_estimate.text());
    });
    connect(worker, &SolveWorker::phaseChanged, this, [this](quint64 g, const QString& text) {
        if (g == m_runGeneration && g == m_worker->latestGeneration()) emit status(text);
    });
    connect(worker, &SolveWorker::jobFinished, this, &StudioSession::onFinished);
    connect(worker, &SolveWorker::jobFailed, this, [this](quint64 g, const QString& message) {
        if (g != m_runGeneration) return;
        reportError(tr("Recolor failed"), tr("The recolor failed:\n%1\n\nThe previous result is kept.").arg(message));
        emit runFailed(message);
    });
    connect(worker, &SolveWorker::jobCancelled, this, [this](quint64 g) {
        if (g != m_runGeneration) return;
        emit status(tr("Cancelled. The previous result is kept."));
        emit cancelled();
    });
    connect(worker, &SolveWorker::idle, this, [this] {
        if (!m_worker->isBusy()) setBusy(false);
    });
}

void StudioSession::run()
{
    m_autoRunTimer.stop();
    if (hasClip()) return runClip();
    if (!hasSource() || (!hasReference() && m_regional.regions.isEmpty())) {
        reportError(tr("Run"), tr("Open a source image and a reference image first (File menu, or drop files on the panes)."));
        emit runFailed(m_lastError);
        return;
    }
    const StudioParameters p = m_parameters;
    {
        QSettings settings;
        p.save(settings);
    }
    m_remapOnly = m_haveSolved && p.sameSolveAs(m_solvedParameters) && m_pipeline->sourceId == m_source.id &&
                  m_pipeline->referenceId == m_reference.id && m_regional.regions.isEmpty() &&
                  m_regional == m_solvedRegional;
    m_runInputs = currentInputs();
    m_runRegional = m_regional;
    m_runGeneration = m_worker->submit(m_remapOnly ? tr("Re-map") : tr("Recolor"), regionalJob(p));
    m_lastError.clear();
    // A solve counts iterations; a re-map is short and only says that it is busy.
    m_estimate.begin(p.maxIterations, p.tolerance);
    if (m_remapOnly) emit estimateChanged(0, 0, QString());
    else emit estimateChanged(0, p.maxIterations, tr("preparing palettes..."));
    setBusy(true);
}

void StudioSession::cancel()
{
    m_autoRunTimer.stop();
    m_worker->cancel();
}

void StudioSession::onFinished(quint64 generation, const std::shared_ptr<const JobOutput>& job)
{
    const auto output = outputOf<RecolorOutput>(job);
    if (generation != m_runGeneration || !output) return;
    if (output->solve) {
        m_solvedParameters = m_runInputs.parameters;  // not the current ones: they may have changed meanwhile
        m_solvedRegional = m_runRegional;
        m_haveSolved = true;
        emit solved(*output->solve, output->timings);
    } else if (output->remapped) {
        // The solve is the last one; the mapping is new.
        const StudioParameters& p = m_runInputs.parameters;
        emit remapped(tr("re-mapped (strength %1 %%2%3) with the last solve")
                          .arg(std::lround(p.strength * 100))
                          .arg(p.preserveLuminance ? tr(", luminance preserved") : QString())
                          .arg(p.smoothing > 0 ? tr(", smoothing %1").arg(p.smoothing) : QString()));
    }
    if (!output->image.isNull()) {
        // Made from the inputs the run started with: when they changed while it
        // ran, it is out of date at once.
        m_result = StudioResult{output->image, output->pixels, m_runInputs};
        m_resultRegional = m_runRegional;
        m_announced = ResultValidity::None;  // a new picture is always announced
        emit newResult();
        announceResult();
        computeScopes();
    }
    QString done;
    if (output->notice.isEmpty()) {
        // Whether the plan behind the picture converged, in words a photographer can act on.
        done = tr("Done");
        if (output->solve) {
            const RunOutcome& run = *output->solve;
            if (run.result.converged)
                done += tr(" · converged in %1 iterations").arg(run.result.iterations);
            else if (!run.result.cancelled && run.tolerance > 0)
                done += tr(" · NOT converged (error %1 > tolerance %2): raise Max iterations under Advanced settings")
                            .arg(run.result.error, 0, 'g', 2)
                            .arg(run.tolerance, 0, 'g', 2);
        }
        done = tr("%1. %2").arg(done, output->timings);
    }
    emit finished(done, output->notice);
}

void StudioSession::setBusy(bool busy)
{
    if (busy == m_busy) return;
    m_busy = busy;
    announceResult();  // Updating <-> OutOfDate
    emit busyChanged(busy);
}

// --- validity ---

ResultInputs StudioSession::currentInputs() const { return ResultInputs{m_source, m_reference, m_parameters}; }

QStringList StudioSession::staleInputs() const
{
    if (m_result.empty()) return {};
    const ResultInputs current = currentInputs();
    ResultInputs made = m_result.inputs;
    if (!m_resultRegional.regions.isEmpty() && !m_regional.regions.isEmpty()) {
        // Regions use neither the panel's settings nor the main reference: each has its own.
        made.reference = current.reference;
        made.parameters = current.parameters;
    }
    QStringList stale = made.differencesFrom(current);
    if (!(m_resultRegional == m_regional)) stale << tr("the mask or regions");
    if (hasClip() && m_resultLookFrame != m_clip->lookFrame()) stale << tr("the look frame");
    return stale;
}

ResultValidity StudioSession::validity() const
{
    if (m_result.empty()) return ResultValidity::None;
    if (staleInputs().isEmpty()) return ResultValidity::Current;
    // A run of the current inputs is under way (e.g. auto-run re-mapping a strength change).
    return m_busy && m_runInputs.differencesFrom(currentInputs()).isEmpty() && m_runRegional == m_regional
               ? ResultValidity::Updating
                                                                            : ResultValidity::OutOfDate;
}

void StudioSession::announceResult()
{
    const ResultValidity now = validity();
    const QStringList stale = staleInputs();
    if (now == m_announced && stale == m_announcedStale) return;
    m_announced = now;
    m_announcedStale = stale;
    emit resultChanged(now);
}

bool StudioSession::checkResultSaveable(const QString& title)
{
    if (m_result.empty()) {
        reportError(title, tr("There is no result to save yet: press Run first."));
        return false;
    }
    const QStringList stale = staleInputs();
    if (stale.isEmpty()) return true;
    reportError(title, tr("The result is out of date: %1 changed since it was made. Press Run to make a new result "
                          "from the current images and settings, then try again.").arg(ResultInputs::inWords(stale)));
    return false;
}

// --- saving ---

bool StudioSession::checkSaveTarget(const QString& path, QString& why) const
{
    // The result's own inputs and the current ones (the same unless the result is out of date).
    const QString name = QFileInfo(path).fileName();
    if (sameFile(path, m_source.path) || sameFile(path, m_result.inputs.source.path)) {
        why = tr("%1 is the source image. The studio never replaces your original: choose another file name.").arg(name);
        return false;
    }
    if (sameFile(path, m_reference.path) || sameFile(path, m_result.inputs.reference.path)) {
        why = tr("%1 is the reference image. The studio never replaces your originals: choose another file name.").arg(name);
        return false;
    }
    if (QFileInfo(path).isDir()) {
        why = tr("%1 is a folder. Choose a file name.").arg(name);
        return false;
    }
    return true;
}

void StudioSession::saveResultTo(const QString& path)
{
    QSettings settings;
    saveResultTo(path, StudioSaveOptions::load(settings));
}

void StudioSession::saveResultTo(const QString& path, const StudioSaveOptions& chosen)
{
    if (!checkResultSaveable(tr("Save"))) {
        emit saveFailed(m_lastError);
        return;
    }
    QString why;
    if (!checkSaveTarget(path, why)) {
        reportError(tr("Save"), why);
        emit saveFailed(m_lastError);
        return;
    }
    // Depth, color, quality and the color profile (the pixels are converted from
    // sRGB into it), and the EXIF/XMP/IPTC of the photo the result was made from.
    WriteOptions options = chosen.writeOptions();
    const StudioSaveOptions remembered = chosen;
    options.metadataFrom = m_result.metadataSource().toStdString();
    // A bundled sample is no file with a profile of its own: it was read as sRGB.
    if (options.profile == OutputProfile::Source && options.metadataFrom.empty()) options.profile = OutputProfile::Srgb;
    // The writer refuses these too: a second guard.
    for (const QString& p : {m_source.path, m_reference.path, m_result.inputs.source.path, m_result.inputs.reference.path})
        if (!p.isEmpty() && !p.startsWith(":/")) options.protectedPaths.push_back(p.toStdString());
    auto pixels = m_result.pixels;
    const quint64 sourceId = m_result.inputs.source.id;
    auto* watcher = new QFutureWatcher<QString>(this);
    connect(watcher, &QFutureWatcher<QString>::finished, this, [this, watcher, path, remembered, sourceId] {
        const QString error = watcher->result();
        watcher->deleteLater();
        if (!error.isEmpty()) {
            reportError(tr("Save"), tr("Could not save %1:\n%2\n\nChoose another file name or folder.")
                                        .arg(QDir::toNativeSeparators(path), error));
            emit saveFailed(m_lastError);
            return;
        }
        if (sourceId == m_source.id) {  // Ctrl+S goes there while this picture is the source
            m_savePath = path;
            m_saveOptions = remembered;
        }
        emit status(tr("Saved %1").arg(QDir::toNativeSeparators(path)));
        emit saved(path);
    });
    // Encoding a large image takes a while: off the GUI thread (writes are atomic).
    watcher->setFuture(QtConcurrent::run([pixels, path, options]() -> QString {
        try {
            writeImage(path.toStdString(), *pixels, options);
            return {};
        } catch (const std::exception& e) {
            return QString::fromStdString(e.what());
        }
    }));
}

// --- the jobs of the other views ---

JobFunction StudioSession::comparisonJob(const QString& variantA, const QString& variantB, bool concurrent) const
{
    if (hasMask() || !m_regional.regions.isEmpty() || !m_regional.references.isEmpty())
        return regionalComparisonJob(variantA, variantB, concurrent);
    return makeComparisonJob(m_source, m_reference, m_parameters, variantA, variantB, concurrent);
}

JobFunction StudioSession::lutJob(LutRequest request) const
{
    request.protectedPaths = {m_source.path, m_reference.path};
    if (hasClip()) return clipLutJob(request);
    if (hasMask() || !m_regional.regions.isEmpty()) {
        // As `uot recolor` refuses --export-lut with --mask: a LUT has no mask.
        return [](JobContext&) -> std::shared_ptr<JobOutput> {
            throw uot::Error(ErrorCode::InvalidArgument,
                             "A LUT applies to every pixel: it does not go with a mask or regions. Clear the mask "
                             "(Mask dock) and remove the regions to export the look as a LUT.");
        };
    }
    JobFunction job = makeLutJob(m_pipeline, m_source, m_reference, m_parameters, request);
    // The pipeline may still hold the palette of a mask cleared since the last run,
    // or of references changed since: the LUT is made from the current ones.
    const PalettePreparation prepare = palettePreparation(m_parameters, nullptr);
    return [job, prepare](JobContext& context) {
        Mask unused;
        prepare(context, unused);
        return job(context);
    };
}

// --- the machine ---

void StudioSession::measureMachinePeaks()
{
    // Measured once per process (core/perf and core/registry cache them), off the GUI thread.
    auto* watcher = new QFutureWatcher<MachinePeaks>(this);
    connect(watcher, &QFutureWatcher<MachinePeaks>::finished, this, [this, watcher] {
        m_peaks = watcher->result();
        watcher->deleteLater();
        m_peaksKnown = true;
        emit peaksMeasured();
    });
    watcher->setFuture(QtConcurrent::run([] { return uot::ui::measureMachinePeaks(true); }));
}

Roof StudioSession::roofFor(const QString& variant) const
{
    const std::string name = variant.toStdString();
    return Roof{m_peaks.bandwidthFor(name, true), m_peaks.computeFor(name), runsOnGpu(variant)};
}

QString StudioSession::currentVariant() const { return solverNameFor(m_parameters); }

}  // namespace uot::ui
