// StudioSession: the mask, the regions, the extra references and the scopes.
// Every change of the mask, the regions or the references is one undo step and
// makes the result out of date; a run with a mask solves on the source palette
// weighted by the mask (kept, with the plan, while only the mapping changes) and
// blends the result with the source; a run with regions solves each region on
// its own (core recolorRegions). After each new result its scopes are computed
// on a worker thread.
#include "ui/studio_session.h"

#include <QColor>
#include <QElapsedTimer>
#include <QFileInfo>
#include <QPointF>
#include <QUndoStack>
#include <QtConcurrent/QtConcurrentRun>

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstring>

#include "core/color/palette.h"
#include "core/pipeline/region_mask_file.h"
#include "core/pipeline/region_recolor.h"
#include "core/transport/uot_error.h"
#include "core/color/mask_tools.h"
#include "ui/undo_commands.h"

namespace uot::ui {

namespace {

bool sameRegion(const StudioRegion& a, const StudioRegion& b)
{
    return a.name == b.name && a.mask == b.mask && a.reference.id == b.reference.id &&
           a.parameters.sameLookAs(b.parameters);
}

bool sameReference(const ExtraReference& a, const ExtraReference& b)
{
    return a.image.id == b.image.id && a.weight == b.weight;
}

// An undo step's hold on a mask: the mask itself while the session (the current
// mask, the result, a region) still holds it, else its runs (packMask), so that
// a long history of brush strokes does not keep a full copy of the mask per step.
class KeptMask {
public:
    explicit KeptMask(const std::shared_ptr<const Mask>& mask)
        : m_live(mask), m_packed(mask ? std::make_shared<const PackedMask>(packMask(*mask)) : nullptr)
    {
    }
    std::shared_ptr<const Mask> get() const
    {
        if (auto mask = m_live.lock()) return mask;
        if (!m_packed) return nullptr;
        auto mask = std::make_shared<const Mask>(unpackMask(*m_packed));
        m_live = mask;  // the same object again while it lives (undo, redo, undo)
        return mask;
    }

private:
    mutable std::weak_ptr<const Mask> m_live;
    std::shared_ptr<const PackedMask> m_packed;
};

// The inputs an undo step goes back or forward to, with the mask kept as KeptMask.
struct KeptInputs {
    explicit KeptInputs(RegionalInputs inputs) : mask(inputs.mask), rest(std::move(inputs)) { rest.mask = nullptr; }
    RegionalInputs get() const
    {
        RegionalInputs inputs = rest;
        inputs.mask = mask.get();
        return inputs;
    }
    KeptMask mask;
    RegionalInputs rest;
};

template <class T, class Same>
bool sameList(const QVector<T>& a, const QVector<T>& b, Same same)
{
    return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), same);
}

// The mask at the source's size (a mask made for the source before a new one of another size was opened).
Mask fittedMask(const Mask& mask, const Image& source)
{
    if (mask.width == source.width && mask.height == source.height) return mask;
    return resizeMask(mask, source.width, source.height);
}

JobFunction makeRegionsJob(LoadedImage source, QVector<StudioRegion> regions)
{
    return [source, regions](JobContext& context) -> std::shared_ptr<JobOutput> {
        auto output = std::make_shared<RecolorOutput>();
        if (!source.image) throw uot::Error(ErrorCode::InvalidArgument, "Open a source image first.");
        PipelineControl control;
        control.cancel = context.cancelFlag();
        QElapsedTimer timer;
        timer.start();
        try {
            context.phase(QObject::tr("Building the palettes of %n region(s)...", "", int(regions.size())));
            std::vector<RecolorRegion> list;
            for (const StudioRegion& region : regions) {
                const RecolorSettings settings = recolorSettingsFor(region.parameters);
                list.push_back({fittedMask(*region.mask, *source.image),
                                computePalette(*region.reference.image, settings, control), settings});
            }
            context.phase(QObject::tr("Recoloring %n region(s)...", "", int(regions.size())));
            Image result = recolorRegions(*source.image, list, control);
            output->timings = QObject::tr("%n region(s) in %1 s", "", int(regions.size())).arg(timer.elapsed() / 1000.0, 0, 'f', 2);
            output->image = toQImage(result);
            output->pixels = std::make_shared<const Image>(std::move(result));
        } catch (const Cancelled&) {
            output->cancelled = true;
        }
        return output;
    };
}

}  // namespace

bool RegionalInputs::operator==(const RegionalInputs& other) const
{
    return mask == other.mask && sameList(regions, other.regions, sameRegion) && mainWeight == other.mainWeight &&
           sameList(references, other.references, sameReference);
}

// --- the job of a run ---

JobFunction StudioSession::regionalJob(const StudioParameters& p) const
{
    if (!m_regional.regions.isEmpty()) return makeRegionsJob(m_source, m_regional.regions);
    JobFunction plain = makeRecolorJob(m_pipeline, m_source, m_reference, p);
    if (!m_regional.mask && m_regional.references.isEmpty() && !m_regionalState->mask && !m_regionalState->pooled)
        return plain;
    const PalettePreparation prepare = palettePreparation(p, m_regional.mask);
    return [plain, prepare, source = m_source, p](JobContext& context) -> std::shared_ptr<JobOutput> {
        Mask resized;
        const Mask* fitted = prepare(context, resized);
        std::shared_ptr<JobOutput> out = plain(context);
        auto recolor = std::dynamic_pointer_cast<RecolorOutput>(out);
        if (!fitted || !recolor || recolor->cancelled || !recolor->pixels || p.strength == 0.0) return out;
        Image blended = *recolor->pixels;
        blendMasked(*source.image, *fitted, blended, recolorSettingsFor(p).threads);
        recolor->image = toQImage(blended);
        recolor->pixels = std::make_shared<const Image>(std::move(blended));
        return out;
    };
}

StudioSession::PalettePreparation StudioSession::palettePreparation(const StudioParameters& p,
                                                                    std::shared_ptr<const Mask> mask) const
{
    QVector<LoadedImage> references{m_reference};
    QVector<double> weights{m_regional.mainWeight};
    for (const ExtraReference& extra : m_regional.references) {
        references << extra.image;
        weights << extra.weight;
    }
    return [state = m_regionalState, mask, references, weights, session = m_pipeline, source = m_source,
            p](JobContext& context, Mask& resized) -> const Mask* {
        PipelineSession& ps = *session;
        const RecolorSettings settings = recolorSettingsFor(p);
        const bool sameSettings = state->parameters.sameSolveAs(p);
        QVector<quint64> ids;
        for (const LoadedImage& r : references) ids << r.id;
        // The source palette: the mask's, kept (with the plan) while the mask,
        // the source and the palette settings stay; else the source's own.
        const bool sourceReady = state->mask == mask && state->sourceId == source.id && sameSettings && ps.sourceId == source.id;
        if (!sourceReady && state->mask) ps.sourceId = 0;  // useSessionImages sets the source anew
        const bool pooled = references.size() > 1;
        const bool referenceReady = state->pooled == pooled &&
                                    (!pooled || (state->referenceIds == ids && state->weights == weights && sameSettings &&
                                                 ps.referenceId == references[0].id));
        if (!referenceReady && state->pooled) ps.referenceId = 0;
        useSessionImages(ps, source, references[0]);
        ps.pipeline.setSettings(settings);
        state->mask = nullptr;
        state->pooled = false;
        // The mask at the source's size (setMask fits it; a source opened since may differ).
        const Mask* fitted = mask.get();
        if (mask && (mask->width != source.image->width || mask->height != source.image->height)) {
            resized = fittedMask(*mask, *source.image);
            fitted = &resized;
        }
        if (mask && !sourceReady) {
            context.phase(QObject::tr("Building the palette of the mask..."));
            ps.pipeline.setSourcePalette(std::make_shared<const Palette>(buildWeightedImagePalette(
                *source.image, fitted->values.data(), settings.space, settings.palette, settings.threads)));
        }
        if (pooled && !referenceReady) {
            context.phase(QObject::tr("Pooling %1 references...").arg(references.size()));
            std::vector<const Image*> images;
            for (const LoadedImage& r : references) images.push_back(r.image.get());
            ps.pipeline.setReferencePalette(std::make_shared<const Palette>(buildPooledPalette(
                images, std::vector<double>(weights.begin(), weights.end()), settings.space, settings.palette,
                settings.threads)));
        }
        *state = RegionalPipelineState{mask, source.id, p, pooled, ids, weights};
        return fitted;
    };
}

// --- changes as undo steps ---

void StudioSession::changeRegional(const RegionalInputs& next, const QString& what)
{
    auto before = std::make_shared<const KeptInputs>(m_regional), after = std::make_shared<const KeptInputs>(next);
    applyRegional(next);
    m_undo->push(new FunctionCommand(
        what, [this, after] { applyRegional(after->get()); }, [this, before] { applyRegional(before->get()); }, true));
}

void StudioSession::applyRegional(const RegionalInputs& inputs)
{
    const bool maskMoved = inputs.mask != m_regional.mask;
    const bool regionsMoved = !sameList(inputs.regions, m_regional.regions, sameRegion);
    const bool referencesMoved = inputs.mainWeight != m_regional.mainWeight ||
                                 !sameList(inputs.references, m_regional.references, sameReference);
    m_regional = inputs;
    if (maskMoved) emit maskChanged();
    if (regionsMoved) emit regionsChanged();
    if (referencesMoved) emit referencesChanged();
    announceResult();
    scheduleAutoRun();
}

// --- the mask ---

QImage StudioSession::maskImage() const
{
    if (!m_regional.mask) return {};
    const Image gray = maskToGrayImage(*m_regional.mask);
    return toQImage(gray);
}

void StudioSession::setMask(const Mask& mask, const QString& what)
{
    if (!hasSource()) {
        reportError(tr("Mask"), tr("Open a source image first: a mask is drawn on the source."));
        return;
    }
    RegionalInputs next = m_regional;
    next.mask = std::make_shared<const Mask>(fittedMask(mask, *m_source.image));
    changeRegional(next, what);
}

void StudioSession::clearMask()
{
    if (!m_regional.mask) return;
    RegionalInputs next = m_regional;
    next.mask = nullptr;
    changeRegional(next, tr("clear the mask"));
}

void StudioSession::paintMask(const QVector<QPointF>& points, const MaskBrush& brush)
{
    if (!hasSource() || points.isEmpty()) return;
    Mask mask;
    if (m_regional.mask) {
        mask = fittedMask(*m_regional.mask, *m_source.image);
    } else {
        // No mask is the whole image: erasing starts from white, painting from black.
        mask.width = m_source.image->width;
        mask.height = m_source.image->height;
        mask.values.assign(m_source.image->pixelCount(), brush.erase ? 1.0f : 0.0f);
    }
    std::vector<StrokePoint> stroke;
    for (const QPointF& p : points) stroke.push_back({p.x(), p.y()});
    paintStroke(mask, stroke, brush.size, brush.hardness, brush.opacity, brush.erase);
    setMask(mask, brush.erase ? tr("erase from the mask") : tr("paint the mask"));
}

void StudioSession::maskFromLuminance(double low, double high, double softness)
{
    if (!hasSource()) return setMask({}, {});
    setMask(luminanceRangeMask(*m_source.image, low, high, softness), tr("mask a luminance range"));
}

void StudioSession::maskFromColor(const QColor& color, double tolerance, double softness)
{
    if (!hasSource()) return setMask({}, {});
    const double rgb[3] = {color.redF(), color.greenF(), color.blueF()};
    setMask(colorRangeMask(*m_source.image, rgb, tolerance, softness), tr("mask a color range"));
}

void StudioSession::maskFromSky()
{
    if (!hasSource()) return setMask({}, {});
    setMask(skyMask(*m_source.image), tr("mask the sky"));
}

void StudioSession::featherMask(int radius)
{
    if (!m_regional.mask || !hasSource() || radius <= 0) return;
    const std::shared_ptr<const Mask> mask = m_regional.mask;
    const std::shared_ptr<const Image> source = m_source.image;
    const WorkingSpace space = recolorSettingsFor(m_parameters).space;
    auto* watcher = new QFutureWatcher<std::shared_ptr<const Mask>>(this);
    connect(watcher, &QFutureWatcher<std::shared_ptr<const Mask>>::finished, this, [this, watcher, mask, source, radius] {
        const std::shared_ptr<const Mask> feathered = watcher->result();
        watcher->deleteLater();
        // Only onto the mask and the source it was made from (an edit meanwhile wins).
        if (!feathered || m_regional.mask != mask || m_source.image != source) return;
        setMask(*feathered, tr("feather the mask by %1 px").arg(radius));
    });
    emit status(tr("Feathering the mask..."));
    watcher->setFuture(QtConcurrent::run([mask, source, radius, space]() -> std::shared_ptr<const Mask> {
        return std::make_shared<const Mask>(prepareMask(*mask, *source, radius, space));
    }));
}

QColor StudioSession::sourceColorAt(const QPointF& point) const
{
    if (!hasSource()) return {};
    const Image& image = *m_source.image;
    const int x = int(std::floor(point.x())), y = int(std::floor(point.y()));
    if (x < 0 || y < 0 || x >= image.width || y >= image.height) return {};
    double rgb[3];
    pixelRgb(image, std::size_t(y) * image.width + x, rgb);
    return QColor::fromRgbF(float(rgb[0]), float(rgb[1]), float(rgb[2]));
}

bool StudioSession::loadMask(const QString& path)
{
    if (!hasSource()) {
        reportError(tr("Open Mask"), tr("Open a source image first: a mask is made for a source."));
        return false;
    }
    try {
        const WorkingSpace space = recolorSettingsFor(m_parameters).space;
        setMask(readMaskFor(path.toStdString(), *m_source.image, 0, space), tr("open mask %1").arg(QFileInfo(path).fileName()));
        return true;
    } catch (const std::exception& e) {
        reportError(tr("Open Mask"), tr("Could not use the mask %1:\n%2").arg(path, QString::fromStdString(e.what())));
        return false;
    }
}

bool StudioSession::saveMask(const QString& path)
{
    if (!m_regional.mask) {
        reportError(tr("Save Mask"), tr("There is no mask to save: paint one or build one from a range first."));
        return false;
    }
    try {
        writeImage(path.toStdString(), maskToGrayImage(*m_regional.mask));  // atomic
        emit status(tr("Saved the mask to %1").arg(path));
        return true;
    } catch (const std::exception& e) {
        reportError(tr("Save Mask"), tr("Could not save the mask to %1:\n%2").arg(path, QString::fromStdString(e.what())));
        return false;
    }
}

// --- regions and references ---

template <class Then>
void StudioSession::loadInBackground(const QString& path, Then then)
{
    auto* watcher = new QFutureWatcher<LoadedImage>(this);
    connect(watcher, &QFutureWatcher<LoadedImage>::finished, this, [this, watcher, path, then] {
        const LoadedImage loaded = watcher->result();
        watcher->deleteLater();
        if (!loaded.image) {
            reportError(tr("Open image"), tr("Could not open %1:\n%2").arg(path, loaded.path));
            emit loadFailed(m_lastError);
            return;
        }
        then(loaded);
    });
    watcher->setFuture(QtConcurrent::run([path]() -> LoadedImage {
        try {
            return loadAnyImage(path);
        } catch (const std::exception& e) {
            LoadedImage failed;
            failed.path = QString::fromStdString(e.what());
            return failed;
        }
    }));
}

void StudioSession::addRegion(const QString& referencePath)
{
    if (!m_regional.mask) {
        reportError(tr("Regions"), tr("Paint or build a mask first: it becomes the new region's mask."));
        return;
    }
    if (m_regional.regions.size() >= kMaxRegions) {
        reportError(tr("Regions"), tr("At most %1 regions: remove one first.").arg(kMaxRegions));
        return;
    }
    const std::shared_ptr<const Mask> mask = m_regional.mask;
    const StudioParameters parameters = m_parameters;
    loadInBackground(referencePath, [this, mask, parameters](const LoadedImage& reference) {
        if (m_regional.regions.size() >= kMaxRegions) return;
        RegionalInputs next = m_regional;
        next.regions.append({tr("Region %1").arg(next.regions.size() + 1), mask, reference, parameters});
        if (next.mask == mask) next.mask = nullptr;  // the mask is the region's now
        changeRegional(next, tr("add a region"));
    });
}

void StudioSession::addRegionFromFiles(const QString& maskPath, const QString& referencePath)
{
    if (loadMask(maskPath)) addRegion(referencePath);
}

void StudioSession::setRegionParameters(int index, const StudioParameters& parameters)
{
    if (index < 0 || index >= m_regional.regions.size()) return;
    RegionalInputs next = m_regional;
    next.regions[index].parameters = parameters;
    if (next == m_regional) return;
    changeRegional(next, tr("settings of %1").arg(next.regions[index].name));
}

void StudioSession::removeRegion(int index)
{
    if (index < 0 || index >= m_regional.regions.size()) return;
    RegionalInputs next = m_regional;
    next.regions.removeAt(index);
    changeRegional(next, tr("remove a region"));
}

void StudioSession::addReference(const QString& path, double weight)
{
    if (!hasReference()) {  // the first one is the main reference
        openReference(path);
        return;
    }
    loadInBackground(path, [this, weight, path](const LoadedImage& image) {
        RegionalInputs next = m_regional;
        next.references.append({image, weight > 0 ? weight : 1.0});
        changeRegional(next, tr("add reference %1").arg(QFileInfo(path).fileName()));
    });
}

void StudioSession::setReferenceWeight(int index, double weight)
{
    if (!(weight > 0) || index < 0 || index > m_regional.references.size()) return;
    RegionalInputs next = m_regional;
    double& w = index == 0 ? next.mainWeight : next.references[index - 1].weight;
    if (w == weight) return;
    w = weight;
    changeRegional(next, tr("reference weight"));
}

void StudioSession::removeReference(int index)
{
    if (index < 1 || index > m_regional.references.size()) return;
    RegionalInputs next = m_regional;
    next.references.removeAt(index - 1);
    changeRegional(next, tr("remove a reference"));
}

// --- scopes ---

void StudioSession::computeScopes()
{
    if (m_result.empty()) return;
    const quint64 generation = ++m_scopesGeneration;
    const auto started = std::chrono::steady_clock::now();
    std::array<std::shared_ptr<const Image>, 3> images{m_result.inputs.source.image, m_result.inputs.reference.image,
                                                       m_result.pixels};
    const std::array<quint64, 3> ids{m_result.inputs.source.id, m_result.inputs.reference.id, 0};
    // The source's and the reference's scopes are kept while they are the same images.
    for (int k = 0; k < 2; ++k)
        if (ids[k] != 0 && m_scopeCache[k].id == ids[k]) images[k] = nullptr;
    using Computed = std::array<std::optional<Scopes>, 3>;
    auto* watcher = new QFutureWatcher<Computed>(this);
    connect(watcher, &QFutureWatcher<Computed>::finished, this, [this, watcher, generation, ids, started] {
        const Computed computed = watcher->result();
        watcher->deleteLater();
        if (generation != m_scopesGeneration) return;  // a newer result's scopes are on their way
        for (int k = 0; k < 3; ++k)
            if (computed[k]) m_scopeCache[k] = {*computed[k], ids[k]};
        m_scopesLatencyMs = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - started).count();
        m_scopesReady = true;
        emit scopesReady();
    });
    watcher->setFuture(QtConcurrent::run([images]() -> Computed {
        Computed out;
        for (int k = 0; k < 3; ++k)
            if (images[k]) {
                try {
                    out[k] = uot::computeScopes(*images[k]);
                } catch (const std::exception&) {
                    out[k] = Scopes{};  // an image the scopes cannot read: empty plots
                }
            }
        return out;
    }));
}

const Scopes& StudioSession::scopes(ScopeImage image) const { return m_scopeCache[int(image)].scopes; }

QImage StudioSession::scopeImage(ScopeImage image, ScopeKind kind, int channel) const
{
    const Scopes& s = scopes(image);
    auto gray = [](const ScopePlot& plot) {
        if (plot.width <= 0 || plot.height <= 0) return QImage();
        const std::vector<std::uint8_t> bytes = scopeToGray8(plot);
        QImage out(plot.width, plot.height, QImage::Format_Grayscale8);
        for (int y = 0; y < plot.height; ++y)
            std::memcpy(out.scanLine(y), bytes.data() + std::size_t(y) * plot.width, std::size_t(plot.width));
        return out;
    };
    switch (kind) {
    case ScopeKind::Waveform: return gray(s.waveform);
    case ScopeKind::Vectorscope: return gray(s.vectorscope);
    case ScopeKind::Parade: return gray(s.parade[std::clamp(channel, 0, 2)]);
    }
    return {};
}

}  // namespace uot::ui
