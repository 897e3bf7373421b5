#include "ui/clip_scrubber.h"

#include <QHBoxLayout>
#include <QLabel>
#include <QProgressBar>
#include <QPushButton>
#include <QSignalBlocker>
#include <QSlider>
#include <QSpinBox>
#include <QVBoxLayout>

#include <cmath>

#include "ui/elided_label.h"
#include "ui/studio_session.h"

namespace uot::ui {

namespace {

// "1:02.40": minutes, seconds and hundredths.
QString clockText(double seconds)
{
    const int minutes = int(seconds / 60);
    return QStringLiteral("%1:%2").arg(minutes).arg(seconds - 60.0 * minutes, 5, 'f', 2, QLatin1Char('0'));
}

}  // namespace

ClipScrubber::ClipScrubber(StudioSession* session, QWidget* parent) : QWidget(parent), m_session(session)
{
    setObjectName(QStringLiteral("clipScrubber"));
    m_slider = new QSlider(Qt::Horizontal);
    m_slider->setObjectName(QStringLiteral("clipSlider"));
    m_slider->setToolTip(tr("Scrub the clip: the frame shown is the source, and the result is it with the clip's look."));
    m_frame = new QSpinBox;
    m_frame->setObjectName(QStringLiteral("clipFrameBox"));
    m_frame->setPrefix(tr("frame "));
    m_frame->setToolTip(tr("The frame shown (0 is the first)."));
    m_time = new QLabel;
    m_time->setObjectName(QStringLiteral("clipTimeLabel"));
    m_look = new QLabel;
    m_look->setObjectName(QStringLiteral("clipLookLabel"));
    m_useFrame = new QPushButton(tr("Use This Frame as the Look Frame"));
    m_useFrame->setObjectName(QStringLiteral("useLookFrameButton"));
    m_useFrame->setToolTip(tr("Compute the clip's look from the frame shown alone (uot recolor --look-frame N)."));
    m_pooled = new QPushButton(tr("Pool Sampled Frames"));
    m_pooled->setObjectName(QStringLiteral("pooledLookButton"));
    m_pooled->setToolTip(tr("Compute the clip's look from 8 frames spread over the clip, pooled (the default)."));
    auto* scrub = new QHBoxLayout;
    scrub->setContentsMargins(0, 0, 0, 0);
    scrub->addWidget(m_slider, 1);
    scrub->addWidget(m_frame);
    scrub->addWidget(m_time);

    m_exportRow = new QWidget;
    m_exportBar = new QProgressBar;
    m_exportBar->setObjectName(QStringLiteral("clipExportBar"));
    m_exportText = new ElidedLabel(1);
    m_exportText->setDescription(tr("The clip's export: frames done, frames per second, time left."));
    m_exportText->setObjectName(QStringLiteral("clipExportLabel"));
    m_cancelExport = new QPushButton(tr("Cancel Export"));
    m_cancelExport->setObjectName(QStringLiteral("cancelClipExportButton"));
    auto* exporting = new QHBoxLayout(m_exportRow);
    exporting->setContentsMargins(0, 0, 0, 0);
    exporting->addWidget(m_exportBar, 1);
    exporting->addWidget(m_exportText, 2);
    exporting->addWidget(m_cancelExport);
    m_exportRow->hide();
    auto* lookRow = new QHBoxLayout;
    lookRow->setContentsMargins(0, 0, 0, 0);
    lookRow->addWidget(m_look);
    lookRow->addWidget(m_useFrame);
    lookRow->addWidget(m_pooled);
    lookRow->addSpacing(12);
    lookRow->addWidget(m_exportRow, 1);
    lookRow->addStretch(0);

    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(6, 2, 6, 2);
    layout->addLayout(scrub);
    layout->addLayout(lookRow);
    hide();

    ClipModel* clip = session->clip();
    connect(clip, &ClipModel::opened, this, &ClipScrubber::showClip);
    connect(clip, &ClipModel::closed, this, &QWidget::hide);
    connect(session, &StudioSession::clipFrameShown, this, &ClipScrubber::showFrameShown);
    connect(clip, &ClipModel::lookFrameChanged, this, &ClipScrubber::showLookFrame);
    connect(m_slider, &QSlider::valueChanged, this, &ClipScrubber::requestFrame);
    connect(m_frame, &QSpinBox::valueChanged, this, &ClipScrubber::requestFrame);
    connect(m_useFrame, &QPushButton::clicked, this, [this] { m_session->setClipLookFrame(m_slider->value()); });
    connect(m_pooled, &QPushButton::clicked, this, [this] { m_session->setClipLookFrame(-1); });
    connect(m_cancelExport, &QPushButton::clicked, clip, &ClipModel::cancelExport);
    connect(clip, &ClipModel::exportStarted, this, [this](const QString&) {
        m_exportBar->setRange(0, 0);
        m_exportText->setFullText(tr("Exporting..."));
        m_cancelExport->setEnabled(true);
        m_exportRow->show();
    });
    connect(clip, &ClipModel::exportProgress, this, &ClipScrubber::showExportProgress);
    connect(clip, &ClipModel::exportFinished, this,
            [this](const QString& path, const QString& summary) { endExport(tr("Exported %1: %2").arg(path, summary)); });
    connect(clip, &ClipModel::exportFailed, this, [this](const QString&) { endExport(tr("Export failed: nothing written.")); });
    connect(clip, &ClipModel::exportCancelled, this, [this] { endExport(tr("Export cancelled: nothing written.")); });
}

void ClipScrubber::showClip(const ClipDescription& clip)
{
    const int last = int(std::max<long long>(clip.frames - 1, 0));
    const QSignalBlocker a(m_slider), b(m_frame);
    m_slider->setRange(0, last);
    m_slider->setValue(0);
    m_frame->setRange(0, last);
    m_frame->setValue(0);
    m_frame->setSuffix(tr(" of %1").arg(clip.frames));
    m_exportRow->hide();
    showFrameShown(0);
    show();
}

void ClipScrubber::requestFrame(int index)
{
    const QSignalBlocker a(m_slider), b(m_frame);
    m_slider->setValue(index);
    m_frame->setValue(index);
    m_session->showClipFrame(index);
}

void ClipScrubber::showFrameShown(long long index)
{
    const ClipModel* clip = m_session->clip();
    if (!m_slider->isSliderDown() && index == clip->requestedFrame()) {
        // Asked for elsewhere (a script, the session): the controls follow.
        const QSignalBlocker a(m_slider), b(m_frame);
        m_slider->setValue(int(index));
        m_frame->setValue(int(index));
    }
    m_time->setText(tr("%1 / %2").arg(clockText(clip->secondsOf(index)), clockText(clip->secondsOf(clip->description().frames))));
}

void ClipScrubber::showLookFrame(long long index)
{
    m_look->setText(index < 0 ? tr("Look: sampled frames pooled") : tr("Look: frame %1").arg(index));
    m_pooled->setEnabled(index >= 0);
}

void ClipScrubber::showExportProgress(const ClipExportProgress& p)
{
    if (p.frames > 0) m_exportBar->setRange(0, int(p.frames));
    m_exportBar->setValue(int(p.frame));
    QString text = tr("frame %1/%2  %3 frames/s")
                       .arg(p.frame)
                       .arg(p.frames >= 0 ? QString::number(p.frames) : QStringLiteral("?"))
                       .arg(p.framesPerSecond, 0, 'f', 1);
    if (p.secondsLeft >= 0) text += tr("  %1 s left").arg(std::lround(p.secondsLeft));
    m_exportText->setFullText(text);
}

void ClipScrubber::endExport(const QString& text)
{
    m_exportBar->setRange(0, 1);
    m_exportBar->setValue(1);
    m_exportText->setFullText(text);
    m_cancelExport->setEnabled(false);
}

}  // namespace uot::ui
