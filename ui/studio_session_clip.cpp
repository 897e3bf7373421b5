// StudioSession: a clip as the source (ui/clip_model.h). The frame shown is the
// source image; a run computes the look of the whole clip (as `uot recolor
// CLIP`), and every frame shown afterwards is the result with that look's LUT
// applied, until a setting, the reference or the look frame changes.
#include "ui/studio_session.h"

#include <QDir>
#include <QFileInfo>

#include "core/transport/uot_error.h"

namespace uot::ui {

void StudioSession::openClip(const QString& path)
{
    if (!ClipModel::supported()) {
        reportError(tr("Open clip"), ClipModel::unsupportedReason());
        emit loadFailed(m_lastError);
        return;
    }
    emit status(tr("Opening the clip %1...").arg(QFileInfo(path).fileName()));
    m_clip->open(path);
}

void StudioSession::connectClip()
{
    connect(m_clip, &ClipModel::opened, this, [this](const ClipDescription& clip) {
        m_clipFirstFrame = true;
        m_resultLookFrame = -1;
        emit status(tr("Opened the clip %1 (%2)").arg(QFileInfo(clip.path).fileName(), clip.summary));
    });
    connect(m_clip, &ClipModel::openFailed, this, [this](const QString& message) {
        reportError(tr("Open clip"), message);
        emit loadFailed(message);
    });
    connect(m_clip, &ClipModel::frameReady, this, &StudioSession::onClipFrame);
    connect(m_clip, &ClipModel::exportFailed, this, [this](const QString& message) {
        reportError(tr("Export Clip"), tr("The clip was not exported:\n%1\n\nNo output file was left.").arg(message));
    });
    connect(m_clip, &ClipModel::exportFinished, this, [this](const QString& path, const QString& summary) {
        emit status(tr("Exported %1: %2").arg(QDir::toNativeSeparators(path), summary));
    });
    connect(m_clip, &ClipModel::exportCancelled, this,
            [this] { emit status(tr("Export cancelled: no output file was left.")); });
    connect(m_worker.get(), &SolveWorker::jobFinished, this, &StudioSession::onClipLook);
}

void StudioSession::showClipFrame(long long index) { m_clip->showFrame(index); }

void StudioSession::setClipLookFrame(long long index)
{
    if (!hasClip()) return;
    m_clip->setLookFrame(index);
    announceResult();
    scheduleAutoRun();
}

void StudioSession::runClip()
{
    if (!hasReference()) {
        reportError(tr("Run"), tr("Open a reference image first (File > Open Reference...)."));
        emit runFailed(m_lastError);
        return;
    }
    if (hasMask() || !m_regional.regions.isEmpty()) {
        reportError(tr("Run"), tr("A clip gets one look over the whole frame: clear the mask (Mask dock) and remove "
                                  "the regions to recolor it."));
        emit runFailed(m_lastError);
        return;
    }
    m_runInputs = currentInputs();
    m_runRegional = m_regional;
    m_remapOnly = false;
    m_clipRunEnding = false;
    m_runGeneration = m_worker->submit(tr("Clip look"), m_clip->lookJob(m_reference, m_parameters));
    m_lastError.clear();
    emit estimateChanged(0, 0, tr("computing the clip's look..."));
    setBusy(true);
}

void StudioSession::onClipLook(quint64 generation, const std::shared_ptr<const JobOutput>& job)
{
    const auto output = outputOf<ClipLookOutput>(job);
    if (generation != m_runGeneration || !output || output->cancelled || output->clipId != m_clip->clipId()) return;
    m_clipLookInputs = m_runInputs;
    m_clipRunEnding = true;
    emit status(tr("The clip's look from %1").arg(output->state.sampledFrames));
    m_clip->setLook(output->state);  // the frame shown is mapped again: onClipFrame ends the run
}

void StudioSession::onClipFrame(const ClipFrameOutput& frame)
{
    if (!frame.error.isEmpty()) {
        reportError(tr("Clip"), frame.error);
        if (m_clipFirstFrame) emit loadFailed(frame.error);
        m_clipFirstFrame = false;
        return;
    }
    const bool mapped = frame.lookId != 0 && frame.lookId == m_clip->look().id;
    if (mapped) {
        // Made from the frame and the inputs the look was computed with: out of date at
        // once when a setting, the reference or the look frame changed since.
        m_result = StudioResult{frame.mapped, frame.mappedPixels,
                                ResultInputs{frame.frame, m_clipLookInputs.reference, m_clipLookInputs.parameters}};
        m_resultRegional = RegionalInputs{};
        m_resultLookFrame = m_clip->look().lookFrame;
    }
    if (frame.frame.id != m_source.id) applyImage(true, frame.frame, true);
    if (mapped) {
        m_announced = ResultValidity::None;  // a new picture is always announced
        emit newResult();
        announceResult();
        computeScopes();
    }
    emit clipFrameShown(frame.index);
    if (m_clipFirstFrame) {
        m_clipFirstFrame = false;
        emit sourceLoaded(m_clip->description().path);
        scheduleAutoRun();
    }
    if (mapped && m_clipRunEnding) {
        m_clipRunEnding = false;
        emit finished(tr("Done. The clip's look (%1) on frame %2.").arg(m_clip->look().sampledFrames).arg(frame.index),
                      QString());
    }
}

bool StudioSession::exportClip(const QString& path, bool overwrite)
{
    const QString title = tr("Export Clip");
    if (!hasClip()) {
        reportError(title, tr("Open a clip first (File > Open Clip...)."));
        return false;
    }
    if (!checkResultSaveable(title)) return false;
    if (!ClipModel::isClipPath(path)) {
        reportError(title, tr("%1 is no clip name: choose a .mp4, .mov, .mkv or .webm file, or a pattern such as "
                              "frame_%05d.png.").arg(QFileInfo(path).fileName()));
        return false;
    }
    if (QFileInfo(path).absoluteFilePath() == QFileInfo(m_clip->description().path).absoluteFilePath()) {
        reportError(title, tr("%1 is the clip itself. The studio never replaces your original: choose another file "
                              "name.").arg(QFileInfo(path).fileName()));
        return false;
    }
    m_clip->exportClip(path, overwrite, {m_reference.path});
    return true;
}

JobFunction StudioSession::clipLutJob(const LutRequest& request) const
{
    if (hasMask() || !m_regional.regions.isEmpty())
        return [](JobContext&) -> std::shared_ptr<JobOutput> {
            throw uot::Error(ErrorCode::InvalidArgument, "A clip gets one look over the whole frame: clear the mask and "
                                                         "remove the regions to export its look as a LUT.");
        };
    return m_clip->lutJob(m_reference, m_parameters, request, m_source);
}

}  // namespace uot::ui
