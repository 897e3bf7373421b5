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
#include <QDir>
#include <QFileInfo>
#include <QSettings>
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
#include "ui/pipeline_jobs.h"
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

// The core's regions for the studio's: each mask at the source's size, the palette
// of its reference, its settings (with the solver `solver` when not empty).
std::vector<RecolorRegion> regionListOf(const Image& source, const QVector<StudioRegion>& regions,
                                        const PipelineControl& control, const QString& solver = {})
{
    std::vector<RecolorRegion> list;
    for (const StudioRegion& region : regions) {
        RecolorSettings settings = recolorSettingsFor(region.parameters);
        if (!solver.isEmpty()) settings.transport.solver = solver.toStdString();
        list.push_back({fittedMask(*region.mask, source), computePalette(*region.reference.image, settings, control), settings});
    }
    return list;
}

std::shared_ptr<const Palette> maskPaletteOf(const Image& source, const Mask& mask, const RecolorSettings& settings)
{
    return std::make_shared<const Palette>(
        buildWeightedImagePalette(source, mask.values.data(), settings.space, settings.palette, settings.threads));
}

std::shared_ptr<const Palette> pooledPaletteOf(const QVector<LoadedImage>& references, const QVector<double>& weights,
                                               const RecolorSettings& settings)
{
    std::vector<const Image*> images;
    for (const LoadedImage& r : references) images.push_back(r.image.get());
    return std::make_shared<const Palette>(buildPooledPalette(images, std::vector<double>(weights.begin(), weights.end()),
                                                              settings.space, settings.palette, settings.threads));
}

// The main reference and the extra ones, with their weights (the main one first).
void referencesOf(const LoadedImage& main, const RegionalInputs& regional, QVector<LoadedImage>& references,
                  QVector<double>& weights)
{
    references = {main};
    weights = {regional.mainWeight};
    for (const ExtraReference& extra : regional.references) {
        references << extra.image;
        weights << extra.weight;
    }
}

// The statistics panel's timings of a region run: each recolored region's phases, then the whole run.
QString regionTimingsText(const std::vector<PipelineStats>& stats, double seconds)
{
    QStringList parts;
    for (std::size_t k = 0; k < stats.size(); ++k)
        parts << QObject::tr("region %1: %2").arg(k + 1).arg(timingsText(stats[k].timings));
    parts << QObject::tr("%n region(s) in %1 s", "", int(stats.size())).arg(seconds, 0, 'f', 2);
    return parts.join(QStringLiteral("; "));
}

// The run the statistics panel shows for a region run: the first recolored
// region's solve, labelled with how many regions were solved and by what.
RunOutcome regionOutcome(const std::vector<PipelineStats>& stats, const std::vector<RecolorRegion>& regions)
{
    std::size_t first = 0;
    while (first < regions.size() && regions[first].settings.mapping.strength == 0.0) ++first;
    double solveSeconds = 0;
    for (const PipelineStats& s : stats) solveSeconds += s.timings.solve;
    RunOutcome run = outcomeOf(stats.front(), regions[std::min(first, regions.size() - 1)].settings, solveSeconds);
    run.label = QObject::tr("%1, region %2 of %3").arg(run.label).arg(first + 1).arg(regions.size());
    return run;
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
            const std::vector<RecolorRegion> list = regionListOf(*source.image, regions, control);
            context.phase(QObject::tr("Recoloring %n region(s)...", "", int(regions.size())));
            std::vector<PipelineStats> stats;
            Image result = recolorRegions(*source.image, list, control, &stats);
            output->timings = regionTimingsText(stats, timer.elapsed() / 1000.0);
            if (!stats.empty()) output->solve = regionOutcome(stats, list);
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
    QVector<LoadedImage> references;
    QVector<double> weights;
    referencesOf(m_reference, m_regional, references, weights);
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
            ps.pipeline.setSourcePalette(maskPaletteOf(*source.image, *fitted, settings));
        }
        if (pooled && !referenceReady) {
            context.phase(QObject::tr("Pooling %1 references...").arg(references.size()));
            ps.pipeline.setReferencePalette(pooledPaletteOf(references, weights, settings));
        }
        *state = RegionalPipelineState{mask, source.id, p, pooled, ids, weights};
        return fitted;
    };
}

// --- the comparison dock's job ---

namespace {

// Both sides recolor every region, each region solved with the side's variant
// (one side after the other; the regions' own settings otherwise). No live
// curves: each side's run is its first region's solve, as in the statistics panel.
JobFunction makeRegionsComparisonJob(LoadedImage source, QVector<StudioRegion> regions, QString variantA, QString variantB)
{
    return [=](JobContext& context) -> std::shared_ptr<JobOutput> {
        auto output = std::make_shared<ComparisonOutput>();
        if (!source.image) throw uot::Error(ErrorCode::InvalidArgument, "Open a source image first.");
        PipelineControl control;
        control.cancel = context.cancelFlag();
        try {
            Image images[2];
            for (int side = 0; side < 2; ++side) {
                const QString variant = side == 0 ? variantA : variantB;
                context.phase(QObject::tr("Recoloring %n region(s) with %1...", "", int(regions.size())).arg(runLabel(variant)));
                const std::vector<RecolorRegion> list = regionListOf(*source.image, regions, control, variant);
                std::vector<PipelineStats> stats;
                images[side] = recolorRegions(*source.image, list, control, &stats);
                RunOutcome run = stats.empty() ? RunOutcome{} : regionOutcome(stats, list);
                run.image = toQImage(images[side]);
                output->runs.push_back(std::move(run));
            }
            output->imageMaxRelDiff = imageMaxRelativeDifference(images[0], images[1]);
        } catch (const Cancelled&) {
            output->cancelled = true;
        }
        return output;
    };
}

}  // namespace

JobFunction StudioSession::regionalComparisonJob(const QString& variantA, const QString& variantB, bool concurrent) const
{
    if (!m_regional.regions.isEmpty()) return makeRegionsComparisonJob(m_source, m_regional.regions, variantA, variantB);
    QVector<LoadedImage> references;
    QVector<double> weights;
    referencesOf(m_reference, m_regional, references, weights);
    ComparisonLook look = [mask = m_regional.mask, references, weights, source = m_source,
                           p = m_parameters](JobContext& context, RecolorPipeline& pipeline) -> std::shared_ptr<const Mask> {
        const RecolorSettings settings = recolorSettingsFor(p);
        std::shared_ptr<const Mask> fitted = mask;
        if (mask) {
            if (mask->width != source.image->width || mask->height != source.image->height)
                fitted = std::make_shared<const Mask>(fittedMask(*mask, *source.image));
            context.phase(QObject::tr("Building the palette of the mask..."));
            pipeline.setSourcePalette(maskPaletteOf(*source.image, *fitted, settings));
        }
        if (references.size() > 1) {
            context.phase(QObject::tr("Pooling %1 references...").arg(references.size()));
            pipeline.setReferencePalette(pooledPaletteOf(references, weights, settings));
        }
        return fitted;
    };
    return makeComparisonJob(m_source, m_reference, m_parameters, variantA, variantB, concurrent, look);
}

// --- kept between sessions ---

namespace {
const QString kRegionalGroup = QStringLiteral("session/regional");
}  // namespace

void StudioSession::saveRegionalSession(QSettings& settings, const QString& folder) const
{
    settings.remove(kRegionalGroup);
    if (!m_regional.mask && m_regional.regions.isEmpty()) return;
    if (!QDir().mkpath(folder)) return;
    const auto write = [&](const Mask& mask, const QString& name) {
        const QString path = QDir(folder).filePath(name);
        try {
            writeImage(path.toStdString(), maskToGrayImage(mask));  // atomic
            return path;
        } catch (const std::exception&) {
            return QString();
        }
    };
    settings.beginGroup(kRegionalGroup);
    settings.setValue("source", m_source.path);
    if (m_regional.mask) settings.setValue("mask", write(*m_regional.mask, QStringLiteral("mask.png")));
    settings.setValue("regions", int(m_regional.regions.size()));
    for (int k = 0; k < m_regional.regions.size(); ++k) {
        const StudioRegion& region = m_regional.regions[k];
        settings.beginGroup(QStringLiteral("region%1").arg(k + 1));
        settings.setValue("name", region.name);
        settings.setValue("mask", write(*region.mask, QStringLiteral("region%1.png").arg(k + 1)));
        settings.setValue("reference", region.reference.path);
        region.parameters.save(settings);
        settings.endGroup();
    }
    settings.endGroup();
}

void StudioSession::restoreRegionalSession(QSettings& settings)
{
    settings.beginGroup(kRegionalGroup);
    const QString source = settings.value("source").toString();
    const QString maskFile = settings.value("mask").toString();
    QVector<SavedRegion> regions;
    const int count = std::min(settings.value("regions", 0).toInt(), kMaxRegions);
    for (int k = 0; k < count; ++k) {
        settings.beginGroup(QStringLiteral("region%1").arg(k + 1));
        regions.append({settings.value("name").toString(), settings.value("mask").toString(),
                        settings.value("reference").toString(), StudioParameters::load(settings), nullptr});
        settings.endGroup();
    }
    settings.endGroup();
    if (source.isEmpty() || (maskFile.isEmpty() && regions.isEmpty())) return;
    if (!m_loads[0]) {  // made for another source: not restored
        if (hasSource() && m_source.path == source) applySavedRegional(maskFile, regions);
        return;
    }
    // The source opens in the background at start: restore once it has.
    auto connection = std::make_shared<QMetaObject::Connection>();
    *connection = connect(this, &StudioSession::sourceLoaded, this, [this, source, maskFile, regions, connection](const QString& path) {
        disconnect(*connection);
        if (path == source) applySavedRegional(maskFile, regions);
    });
}

void StudioSession::applySavedRegional(const QString& maskFile, QVector<SavedRegion> regions)
{
    QStringList missing;
    const WorkingSpace space = recolorSettingsFor(m_parameters).space;
    const auto readMask = [&](const QString& path) -> std::shared_ptr<const Mask> {
        if (path.isEmpty() || !QFileInfo::exists(path)) {
            missing << tr("the mask file %1 is missing").arg(path.isEmpty() ? tr("(not written)") : path);
            return nullptr;
        }
        try {
            return std::make_shared<const Mask>(readMaskFor(path.toStdString(), *m_source.image, 0, space));
        } catch (const std::exception& e) {
            missing << tr("the mask %1 could not be used: %2").arg(path, QString::fromStdString(e.what()));
            return nullptr;
        }
    };
    RegionalInputs next = m_regional;
    if (!maskFile.isEmpty()) next.mask = readMask(maskFile);
    QVector<SavedRegion> usable;
    for (SavedRegion& region : regions) {
        if (!QFileInfo::exists(region.referencePath)) {
            missing << tr("the reference %1 of %2 is missing").arg(region.referencePath, region.name);
            continue;
        }
        region.mask = readMask(region.maskFile);
        if (region.mask) usable.append(region);
    }
    if (next.mask) applyRegional(next);
    if (!missing.isEmpty())
        reportError(tr("Restore the mask and regions"),
                    tr("Parts of the last session's mask and regions were left out:\n%1").arg(missing.join('\n')));
    restoreSavedRegions(usable);
}

void StudioSession::restoreSavedRegions(QVector<SavedRegion> pending)
{
    if (pending.isEmpty()) return;
    const SavedRegion region = pending.takeFirst();
    loadInBackground(region.referencePath, [this, region, pending](const LoadedImage& reference) {
        RegionalInputs next = m_regional;
        if (next.regions.size() < kMaxRegions) next.regions.append({region.name, region.mask, reference, region.parameters});
        applyRegional(next);
        restoreSavedRegions(pending);
    });
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
