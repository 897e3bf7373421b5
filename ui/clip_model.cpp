#include "ui/clip_model.h"

#include <QDir>
#include <QFileInfo>
#include <QMetaObject>
#include <QRegularExpression>
#include <QtConcurrent/QtConcurrentRun>

#include <algorithm>
#include <cmath>
#include <deque>
#include <limits>
#include <map>

#include "core/transport/uot_error.h"
#include "core/video/clip_paths.h"
#ifdef UOT_HAVE_VIDEO
#include "core/video/clip_recolor.h"
#endif

namespace uot::ui {

namespace {

std::atomic<quint64> g_nextClipId{1};

}  // namespace

bool ClipModel::isClipPath(const QString& path) { return uot::isClipPath(path.toStdString()); }

QString ClipModel::clipPathFor(const QString& file)
{
    if (isClipPath(file)) return file;
    // "frame_00012.png" -> "frame_%05d.png": the digits before the extension are the frame number.
    const QFileInfo info(file);
    static const QRegularExpression numbered(QStringLiteral("^(.*?)(\\d+)(\\.[A-Za-z0-9]+)$"));
    const QRegularExpressionMatch m = numbered.match(info.fileName());
    if (!m.hasMatch()) return file;
    const QString number = QLatin1String("%0") + QString::number(m.captured(2).size()) + QLatin1Char('d');
    const QString pattern = m.captured(1) + number + m.captured(3);
    return isClipPath(pattern) ? info.dir().filePath(pattern) : file;
}

ClipModel::ClipModel(QObject* parent) : QObject(parent)
{
    qRegisterMetaType<uot::ui::ClipDescription>("uot::ui::ClipDescription");
    qRegisterMetaType<uot::ui::ClipFrameOutput>("uot::ui::ClipFrameOutput");
    qRegisterMetaType<uot::ui::ClipExportProgress>("uot::ui::ClipExportProgress");
    m_framePool.setMaxThreadCount(1);
    m_exportPool.setMaxThreadCount(1);
}

ClipModel::~ClipModel()
{
    if (m_exportCancel) m_exportCancel->store(true);
    m_exportPool.waitForDone();
    m_framePool.waitForDone();
}

double ClipModel::secondsOf(long long index) const
{
    return m_description.framesPerSecond > 0 ? double(index) / m_description.framesPerSecond : 0.0;
}

void ClipModel::close()
{
    if (!isOpen()) return;
    m_clipId = 0;
    m_description = {};
    m_decoder.reset();
    m_look = {};
    m_lastFrame = {};
    m_pending = -1;
    m_lookFrame = -1;
    emit closed();
}

void ClipModel::setLookFrame(long long index)
{
    index = std::max<long long>(index, -1);
    if (index == m_lookFrame) return;
    m_lookFrame = index;
    emit lookFrameChanged(index);
}

void ClipModel::setLook(const ClipLookState& look)
{
    m_look = look;
    showFrame(m_requested);  // the frame shown, mapped with the new look (not decoded again)
}

void ClipModel::showFrame(long long index)
{
    if (!isOpen()) return;
    m_requested = std::clamp<long long>(index, 0, std::max<long long>(m_description.frames - 1, 0));
    if (m_frameWatcher && m_frameWatcher->isRunning()) {
        m_pending = m_requested;  // replaces any request that waits
        return;
    }
    startFrame(m_requested);
}

#ifndef UOT_HAVE_VIDEO

bool ClipModel::supported() { return false; }

QString ClipModel::unsupportedReason()
{
    return tr("Clips need FFmpeg support: this build of the studio has no FFmpeg libraries (UOT_VIDEO; install "
              "libavformat-dev, libavcodec-dev and libswscale-dev and build again).");
}

struct ClipModel::Decoder {};

void ClipModel::open(const QString&) { emit openFailed(unsupportedReason()); }
void ClipModel::startFrame(long long) {}

JobFunction ClipModel::lookJob(const LoadedImage&, const StudioParameters&, int) const
{
    return [](JobContext&) -> std::shared_ptr<JobOutput> { throw uot::Error(ErrorCode::Unavailable, unsupportedReason().toStdString()); };
}

JobFunction ClipModel::lutJob(const LoadedImage& reference, const StudioParameters& parameters, const LutRequest&,
                              const LoadedImage&) const
{
    return lookJob(reference, parameters);
}

void ClipModel::exportClip(const QString&, bool, const QStringList&) { emit exportFailed(unsupportedReason()); }
void ClipModel::cancelExport() {}

#else

bool ClipModel::supported() { return true; }
QString ClipModel::unsupportedReason() { return {}; }

// The reader of the clip and the index of the frame it gives next: moving
// forward skips frames (cheaper than converting them), moving back opens the
// clip again. The frames decoded last are kept (up to kCacheBytes), so that
// scrubbing back and forth over them decodes nothing.
struct ClipModel::Decoder {
    static constexpr std::size_t kCacheBytes = std::size_t(256) << 20;
    std::string path;
    std::unique_ptr<ClipReader> reader;
    long long next = 0;
    std::map<long long, std::shared_ptr<const Image>> cache;
    std::deque<long long> cacheOrder;  // oldest first
    std::size_t cachedBytes = 0;

    std::shared_ptr<const Image> frame(long long index)
    {
        if (const auto hit = cache.find(index); hit != cache.end()) return hit->second;
        auto image = std::make_shared<const Image>(decode(index));
        cache[index] = image;
        cacheOrder.push_back(index);
        cachedBytes += image->data.size();
        while (cachedBytes > kCacheBytes && cacheOrder.size() > 1) {
            const auto oldest = cache.find(cacheOrder.front());
            cachedBytes -= oldest->second->data.size();
            cache.erase(oldest);
            cacheOrder.pop_front();
        }
        return image;
    }

private:
    Image decode(long long index)
    {
        if (!reader || index < next) {
            ClipReadOptions options;
            options.countFrames = false;
            reader = ClipReader::open(path, options);
            next = 0;
        }
        const uot::Error beyondTheEnd(ErrorCode::Io, "frame " + std::to_string(index) + " is beyond the end of the clip");
        for (; next < index; ++next)
            if (!reader->skipFrame()) throw beyondTheEnd;
        ClipItem item;
        while (reader->next(item)) {
            if (!item.frame) continue;
            ++next;
            return std::move(item.frame->image);
        }
        throw beyondTheEnd;
    }
};

namespace {

QString describe(const ClipInfo& info) { return QString::fromStdString(describeClip(info)); }

QString framesText(const std::vector<long long>& frames)
{
    QStringList numbers;
    for (long long f : frames) numbers << QString::number(f);
    return (frames.size() == 1 ? QObject::tr("frame %1") : QObject::tr("frames %1")).arg(numbers.join(QStringLiteral(", ")));
}

}  // namespace

void ClipModel::open(const QString& path)
{
    if (m_openWatcher) m_openWatcher->disconnect(this);  // a newer open wins
    auto* watcher = new QFutureWatcher<ClipDescription>(this);
    m_openWatcher = watcher;
    connect(watcher, &QFutureWatcher<ClipDescription>::finished, this, [this, watcher] {
        const ClipDescription description = watcher->result();
        watcher->deleteLater();
        m_openWatcher = nullptr;
        if (description.width <= 0) {
            emit openFailed(description.summary);
            return;
        }
        m_clipId = g_nextClipId.fetch_add(1);
        m_description = description;
        m_decoder = std::make_shared<Decoder>();
        m_decoder->path = description.path.toStdString();
        m_look = {};
        m_lastFrame = {};
        m_pending = -1;
        m_lookFrame = -1;
        m_requested = 0;
        emit opened(m_description);
        emit lookFrameChanged(-1);
        showFrame(0);
    });
    watcher->setFuture(QtConcurrent::run(&m_framePool, [path]() -> ClipDescription {
        ClipDescription d;
        try {
            ClipReadOptions options;
            options.countFrames = true;
            const ClipInfo info = ClipReader::open(path.toStdString(), options)->info();
            if (info.frameCount == 0) throw uot::Error(ErrorCode::Io, "the clip holds no frame");
            d.path = path;
            d.sequence = info.sequence;
            d.width = info.width;
            d.height = info.height;
            d.frames = info.frameCount;
            d.framesPerSecond = double(info.frameRateNum) / std::max(info.frameRateDen, 1);
            d.summary = describe(info);
        } catch (const std::exception& e) {
            d.width = 0;
            d.summary = tr("Could not open the clip %1:\n%2").arg(path, QString::fromStdString(e.what()));
        }
        return d;
    }));
}

void ClipModel::startFrame(long long index)
{
    m_pending = -1;
    if (!m_frameWatcher) {
        m_frameWatcher = new QFutureWatcher<ClipFrameOutput>(this);
        connect(m_frameWatcher, &QFutureWatcher<ClipFrameOutput>::finished, this, [this] {
            const ClipFrameOutput out = m_frameWatcher->result();
            const bool current = out.clipId == m_clipId;  // else a frame of a clip closed since
            if (current && out.error.isEmpty()) m_lastFrame = out;
            if (m_pending >= 0 && isOpen()) startFrame(m_pending);
            if (current) emit frameReady(out);
        });
    }
    const ClipFrameOutput cached = m_lastFrame.index == index ? m_lastFrame : ClipFrameOutput{};
    m_frameWatcher->setFuture(QtConcurrent::run(
        &m_framePool, [decoder = m_decoder, look = m_look, clipId = m_clipId, path = m_description.path, index,
                       cached]() -> ClipFrameOutput {
            ClipFrameOutput out = cached;
            out.clipId = clipId;
            out.index = index;
            try {
                if (!out.frame.image) {
                    out.frame.image = decoder->frame(index);
                    out.frame.id = newImageId();
                    out.frame.path = path;
                    out.frame.profile = tr("frame %1 of the clip").arg(index);
                }
                if (look.look && out.lookId != look.id) {
                    CubeLut blend;
                    Image mapped = applyCubeToImage(look.look->lutFor(index, blend), *out.frame.image,
                                                    CubeInterpolation::Tetrahedral);
                    out.mapped = toQImage(mapped);
                    out.mappedPixels = std::make_shared<const Image>(std::move(mapped));
                    out.lookId = look.id;
                } else if (!look.look) {
                    out.mapped = {};
                    out.mappedPixels.reset();
                    out.lookId = 0;
                }
            } catch (const std::exception& e) {
                out.error = tr("Frame %1 of %2: %3").arg(index).arg(path, QString::fromStdString(e.what()));
            }
            return out;
        }));
}

namespace {

// The look of the clip as `uot recolor CLIP` computes it (app/cli/video_command.cpp):
// the settings and the reference in a pipeline of its own, then computeClipLook.
ClipLook computeLook(const std::string& path, long long lookFrame, const Image& reference,
                     const RecolorSettings& settings, int lutSize, const PipelineControl& control)
{
    RecolorPipeline pipeline(settings);
    pipeline.setReference(reference);
    ClipLookOptions options;
    options.lookFrame = lookFrame;
    options.lutSize = lutSize;
    return computeClipLook(pipeline, path, options, control);
}

}  // namespace

JobFunction ClipModel::lookJob(const LoadedImage& reference, const StudioParameters& parameters, int lutSize) const
{
    return [path = m_description.path.toStdString(), clipId = m_clipId, lookFrame = m_lookFrame, reference,
            settings = recolorSettingsFor(parameters), lutSize](JobContext& context) -> std::shared_ptr<JobOutput> {
        auto output = std::make_shared<ClipLookOutput>();
        output->clipId = clipId;
        if (!reference.image)
            throw uot::Error(ErrorCode::InvalidArgument, "Open a reference image first (File > Open Reference...).");
        PipelineControl control;
        control.cancel = context.cancelFlag();
        control.onProgress = [&context](const PipelineProgress& p) {
            context.step(int(std::lround(100 * p.fraction)), 100, QObject::tr("Computing the clip's look..."));
        };
        try {
            context.phase(QObject::tr("Computing the clip's look..."));
            ClipLook look = computeLook(path, lookFrame, *reference.image, settings, lutSize, control);
            output->state.sampledFrames = framesText(look.shots.front().sampledFrames);
            output->state.look = std::make_shared<const ClipLook>(std::move(look));
            output->state.lookFrame = lookFrame;
            static std::atomic<quint64> lookIds{1};
            output->state.id = lookIds.fetch_add(1);
        } catch (const Cancelled&) {
            output->cancelled = true;
        }
        return output;
    };
}

JobFunction ClipModel::lutJob(const LoadedImage& reference, const StudioParameters& parameters, const LutRequest& request,
                              const LoadedImage& frame) const
{
    const RecolorSettings settings = recolorSettingsFor(parameters);
    LookMaker maker = [current = m_look.look, path = m_description.path.toStdString(), lookFrame = m_look.lookFrame,
                      reference, settings](int nodes, const PipelineControl& control) -> LookLut {
        std::shared_ptr<const ClipLook> made = current;
        if (!made || made->shots.front().lut.size != nodes) {
            // Another size than the look shown: the clip's look at that size, as `uot lut CLIP --size N`.
            if (!reference.image) throw uot::Error(ErrorCode::InvalidArgument, "Open a reference image first.");
            made = std::make_shared<const ClipLook>(computeLook(path, lookFrame, *reference.image, settings, nodes, control));
        }
        LookLut lut;
        lut.lut = made->shots.front().lut;
        lut.psnr = made->shots.front().psnr;
        lut.globalMapPsnr = std::numeric_limits<double>::quiet_NaN();
        return lut;
    };
    return makeLookLutJob(std::move(maker), frame, settings.threads, request);
}

void ClipModel::exportClip(const QString& output, bool overwrite, const QStringList& protectedPaths)
{
    if (isExporting()) {
        emit exportFailed(tr("An export of this clip is already running: wait for it or cancel it."));
        return;
    }
    if (!isOpen() || !m_look.look) {
        emit exportFailed(tr("Open a clip and press Run to compute its look before exporting it."));
        return;
    }
    m_exportCancel = std::make_shared<std::atomic<bool>>(false);
    if (!m_exportWatcher) {
        m_exportWatcher = new QFutureWatcher<ExportResult>(this);
        connect(m_exportWatcher, &QFutureWatcher<ExportResult>::finished, this, [this] {
            const ExportResult result = m_exportWatcher->result();
            if (result.cancelled) emit exportCancelled();
            else if (!result.error.isEmpty()) emit exportFailed(result.error);
            else emit exportFinished(m_exportWatcher->property("output").toString(), result.summary);
        });
    }
    m_exportWatcher->setProperty("output", output);
    ClipRecolorOptions options;
    options.write.overwrite = overwrite;
    for (const QString& p : protectedPaths)
        if (!p.isEmpty() && !p.startsWith(QStringLiteral(":/")) && !isClipPath(p))
            options.write.protectedPaths.push_back(p.toStdString());
    if (!m_description.sequence) options.write.protectedPaths.push_back(m_description.path.toStdString());
    options.cancel = m_exportCancel.get();
    options.onProgress = [this](const ClipProgress& p) {
        const ClipExportProgress progress{p.frame, p.frames, p.framesPerSecond, p.secondsLeft};
        QMetaObject::invokeMethod(this, [this, progress] { emit exportProgress(progress); }, Qt::QueuedConnection);
    };
    emit exportStarted(output);
    m_exportWatcher->setFuture(QtConcurrent::run(
        &m_exportPool, [input = m_description.path.toStdString(), look = m_look.look, out = output.toStdString(), options,
                        cancel = m_exportCancel]() -> ExportResult {
            ExportResult result;
            try {
                const ClipRecolorReport report = applyClipLook(input, *look, out, options);
                result.summary = tr("%1 frames in %2 s (%3 frames/s)")
                                     .arg(report.frames)
                                     .arg(report.mapSeconds, 0, 'f', 1)
                                     .arg(report.framesPerSecond, 0, 'f', 1);
                for (const std::string& note : report.notes) result.summary += QStringLiteral("; ") + QString::fromStdString(note);
            } catch (const Cancelled&) {
                result.cancelled = true;
            } catch (const std::exception& e) {
                result.error = QString::fromStdString(e.what());
            }
            return result;
        }));
}

void ClipModel::cancelExport()
{
    if (m_exportCancel) m_exportCancel->store(true);
}

#endif

}  // namespace uot::ui
