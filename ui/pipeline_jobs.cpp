#include "ui/pipeline_jobs.h"

#include <QElapsedTimer>
#include <QObject>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>
#include <exception>
#include <limits>
#include <thread>

#include "core/imageio/image_io.h"
#include "core/imageio/image_metadata.h"
#include "core/io/pending_temporaries.h"
#include "core/pipeline/input_paths.h"
#include "core/registry/solver_registry.h"
#include "core/transport/uot_error.h"

namespace uot::ui {

namespace {

std::atomic<quint64> g_nextImageId{1};

QString stageText(PipelineStage stage)
{
    switch (stage) {
    case PipelineStage::Decode: return QObject::tr("Decoding...");
    case PipelineStage::Palette: return QObject::tr("Building palettes...");
    case PipelineStage::Cost: return QObject::tr("Computing costs...");
    case PipelineStage::Solve: return QObject::tr("Solving the transport problem...");
    case PipelineStage::Map: return QObject::tr("Mapping colors...");
    case PipelineStage::Encode: return QObject::tr("Encoding...");
    }
    return {};
}


// Forwards pipeline progress to the job context on `channel`: solver checks
// as progress samples, stage changes as phase text.
PipelineControl controlFor(JobContext& context, int channel, std::shared_ptr<PipelineStage> lastStage)
{
    PipelineControl control;
    control.cancel = context.cancelFlag();
    control.onProgress = [&context, channel, lastStage](const PipelineProgress& p) {
        if (p.solve) context.report(channel, *p.solve);
        if (p.stage != *lastStage) {
            *lastStage = p.stage;
            context.phase(stageText(p.stage));
        }
    };
    return control;
}


}  // namespace

RecolorSettings recolorSettingsFor(const StudioParameters& p) { return p.recolorSettings(); }

QString timingsText(const PhaseTimings& t)
{
    return QObject::tr("palette %1 s, cost %2 s, solve %3 s, map %4 s")
        .arg(t.palette, 0, 'f', 3)
        .arg(t.cost, 0, 'f', 3)
        .arg(t.solve, 0, 'f', 3)
        .arg(t.map, 0, 'f', 3);
}

double imageMaxRelativeDifference(const Image& a, const Image& b)
{
    if (a.data.size() != b.data.size() || a.depth != b.depth) return std::numeric_limits<double>::quiet_NaN();
    double worst = 0;
    const double full = a.depth == 16 ? 65535.0 : 255.0;
    const std::size_t n = a.data.size() / a.bytesPerSample();
    for (std::size_t k = 0; k < n; ++k) {
        const double x = a.depth == 16 ? a.samples16()[k] : a.samples8()[k];
        const double y = b.depth == 16 ? b.samples16()[k] : b.samples8()[k];
        worst = std::max(worst, std::abs(x - y) / full);
    }
    return worst;
}

RunOutcome outcomeOf(const PipelineStats& stats, const RecolorSettings& settings, double wallSeconds)
{
    RunOutcome run;
    if (stats.solve) run.result = *stats.solve;
    run.solver = QString::fromStdString(run.result.solver.empty() ? settings.transport.solver : run.result.solver);
    run.label = runLabel(run.solver);
    run.rows = stats.sourcePaletteSize;
    run.cols = stats.referencePaletteSize;
    run.precision = settings.transport.options.precision;
    run.tolerance = settings.transport.options.tolerance;
    run.maxIterations = settings.transport.options.maxIterations;
    run.wallSeconds = wallSeconds;
    return run;
}

namespace {
std::atomic<std::uint64_t> g_imagePixelLimit{ReadOptions{}.maxPixels};
}  // namespace

void setImagePixelLimit(std::uint64_t pixels) { g_imagePixelLimit.store(pixels); }

QString unusableImagePath(const QString& path)
{
    return QString::fromStdString(unusableInputReason(path.toStdString()));
}

void removeTemporaryFilesOnSignals() { removeTemporariesOnSignals(); }
std::uint64_t imagePixelLimit() { return g_imagePixelLimit.load(); }

quint64 newImageId() { return g_nextImageId.fetch_add(1); }

LoadedImage loadImageFile(const QString& path)
{
    LoadedImage loaded;
    ReadOptions options;
    options.maxPixels = imagePixelLimit();
    loaded.image = std::make_shared<const Image>(readImage(path.toStdString(), options));
    loaded.id = newImageId();
    loaded.path = path;
    loaded.profile = QString::fromStdString(describeEmbeddedProfile(path.toStdString()));
    return loaded;
}

QImage toQImage(const Image& image)
{
    if (image.empty()) return {};
    const int w = image.width, h = image.height, c = image.channels;
    if (image.depth == 8) {
        const QImage::Format format = c == 1 ? QImage::Format_Grayscale8
                                     : c == 3 ? QImage::Format_RGB888
                                              : QImage::Format_RGBA8888;
        QImage out(w, h, format);
        const std::size_t rowBytes = std::size_t(w) * c;
        for (int y = 0; y < h; ++y) std::memcpy(out.scanLine(y), image.samples8() + y * rowBytes, rowBytes);
        return out;
    }
    // 16 bit: to 64-bit RGBA (or 16-bit gray), which QPainter draws directly.
    if (c == 1) {
        QImage out(w, h, QImage::Format_Grayscale16);
        for (int y = 0; y < h; ++y)
            std::memcpy(out.scanLine(y), image.samples16() + std::size_t(y) * w, std::size_t(w) * 2);
        return out;
    }
    QImage out(w, h, QImage::Format_RGBA64);
    for (int y = 0; y < h; ++y) {
        auto* dst = reinterpret_cast<quint16*>(out.scanLine(y));
        const std::uint16_t* src = image.samples16() + std::size_t(y) * w * c;
        for (int x = 0; x < w; ++x) {
            dst[4 * x + 0] = src[c * x + 0];
            dst[4 * x + 1] = src[c * x + 1];
            dst[4 * x + 2] = src[c * x + 2];
            dst[4 * x + 3] = c == 4 ? src[c * x + 3] : 65535;
        }
    }
    return out;
}

void useSessionImages(PipelineSession& session, const LoadedImage& source, const LoadedImage& reference)
{
    if (!source.image || !reference.image)
        throw uot::Error(ErrorCode::InvalidArgument, "Open a source and a reference image first.");
    if (session.sourceId != source.id) {
        session.sourceId = 0;
        session.pipeline.setSource(*source.image);
        session.sourceId = source.id;
    }
    if (session.referenceId != reference.id) {
        session.referenceId = 0;
        session.pipeline.setReference(*reference.image);
        session.referenceId = reference.id;
    }
}

QString gpuNotice(const PipelineStats& stats)
{
    if (stats.gpuNote.empty()) return {};
    const QString note = QString::fromStdString(stats.gpuNote);
    if (!stats.solvedOnGpu) return QObject::tr("The GPU could not be used: %1.").arg(note);
    return QObject::tr("Solved on the GPU, mapped on the %1 (%2).")
        .arg(stats.mappedOnGpu ? QObject::tr("GPU") : QObject::tr("CPU"), note);
}

JobFunction makeRecolorJob(std::shared_ptr<PipelineSession> session, LoadedImage source, LoadedImage reference,
                           const StudioParameters& parameters)
{
    return [session, source, reference, parameters](JobContext& context) {
        auto output = std::make_shared<RecolorOutput>();
        RecolorPipeline& pipeline = session->pipeline;
        useSessionImages(*session, source, reference);
        RecolorSettings settings = recolorSettingsFor(parameters);
        pipeline.setSettings(settings);
        pipeline.resetTimings();
        auto lastStage = std::make_shared<PipelineStage>(PipelineStage::Decode);
        RunCounters counters;
        PipelineControl control = controlFor(context, 0, lastStage);
        bool announced = false;
        std::function<void()> announce;
        control.onProgress = [&](const PipelineProgress& p) {
            if (p.solve) {
                if (!announced) {
                    announce();  // only when a solve really runs (a cached plan sends no checks)
                    announced = true;
                }
                context.report(0, *p.solve, counters.snapshot());
            }
            if (p.stage != *lastStage) {
                *lastStage = p.stage;
                context.phase(stageText(p.stage));
            }
        };
        announce = [&] {
            RunInfo info;
            info.variant = resolvedVariantName(QString::fromStdString(settings.transport.solver));
            info.label = runLabel(info.variant);
            info.rows = pipeline.stats().sourcePaletteSize;
            info.cols = pipeline.stats().referencePaletteSize;
            info.precision = settings.transport.options.precision;
            info.eps = settings.transport.eps;
            context.beginRun(info);
        };
        QElapsedTimer timer;
        Image result;
        try {
            pipeline.preparePalettes(control);
            counters.start();
            timer.start();
            // A GPU that is unavailable or fails is handled by the pipeline, which
            // solves and maps on the CPU instead and says why (stats().gpuNote).
            pipeline.solve(control);
            const double solveWall = timer.nsecsElapsed() * 1e-9;
            if (!pipeline.stats().planFromCache) output->solve = outcomeOf(pipeline.stats(), settings, solveWall);
            else {
                output->remapped = true;
                context.phase(QObject::tr("Mapping colors (the plan is reused)..."));
            }
            result = pipeline.render(control);
            const PhaseTimings timings = pipeline.stats().timings;  // of this run's stages (reset above)
            output->timings = timingsText(timings);
            output->notice = gpuNotice(pipeline.stats());
            if (!output->notice.isEmpty()) context.phase(output->notice);
        } catch (const Cancelled&) {
            output->cancelled = true;
            return output;
        }
        output->image = toQImage(result);
        output->pixels = std::make_shared<const Image>(std::move(result));
        return output;
    };
}

JobFunction makeComparisonJob(LoadedImage source, LoadedImage reference, const StudioParameters& parameters,
                              const QString& variantA, const QString& variantB, bool concurrent, ComparisonLook look)
{
    return [=](JobContext& context) {
        auto output = std::make_shared<ComparisonOutput>();
        if (!source.image || !reference.image)
            throw uot::Error(ErrorCode::InvalidArgument, "Open a source and a reference image first.");
        // One pipeline per side; the second reuses the first one's palettes.
        RecolorSettings base = recolorSettingsFor(parameters);
        const bool bothCpu = !runsOnGpu(variantA.toStdString()) && !runsOnGpu(variantB.toStdString());
        if (concurrent && bothCpu) {
            const int all = base.transport.options.threads > 0
                                ? base.transport.options.threads
                                : int(std::max(2u, std::thread::hardware_concurrency()));
            base.transport.options.threads = std::max(1, all / 2);
        }
        RecolorPipeline first(base), second(base);
        RecolorSettings settingsA = base, settingsB = base;
        settingsA.transport.solver = variantA.toStdString();
        settingsB.transport.solver = variantB.toStdString();
        first.setSettings(settingsA);
        second.setSettings(settingsB);
        first.setSource(*source.image);
        first.setReference(*reference.image);
        context.phase(QObject::tr("Building palettes..."));
        PipelineControl plain;
        plain.cancel = context.cancelFlag();
        try {
            const std::shared_ptr<const Mask> mask = look ? look(context, first) : nullptr;
            first.preparePalettes(plain);
            second.setSource(*source.image);
            second.setReferencePalette(first.referencePalette());
            if (look) second.setSourcePalette(first.sourcePalette());
            second.preparePalettes(plain);
            context.phase(QObject::tr("Comparing %1 and %2...").arg(runLabel(variantA), runLabel(variantB)));
            for (int k = 0; k < 2; ++k) {
                RunInfo info;
                info.channel = k;
                info.variant = resolvedVariantName(k == 0 ? variantA : variantB);
                info.label = runLabel(info.variant);
                info.rows = first.stats().sourcePaletteSize;
                info.cols = first.stats().referencePaletteSize;
                info.precision = base.transport.options.precision;
                context.beginRun(info);
            }
            auto stageA = std::make_shared<PipelineStage>(PipelineStage::Palette);
            auto stageB = std::make_shared<PipelineStage>(PipelineStage::Palette);
            PipelineControl controlA = controlFor(context, 0, stageA), controlB = controlFor(context, 1, stageB);
            controlB.onProgress = [&context](const PipelineProgress& p) {
                if (p.solve) context.report(1, *p.solve);  // phases come from side A only
            };
            double wallA = 0, wallB = 0;
            auto timed = [](RecolorPipeline& pipeline, const PipelineControl& control, double& wall) {
                QElapsedTimer timer;
                timer.start();
                pipeline.solve(control);
                wall = timer.nsecsElapsed() * 1e-9;
            };
            if (concurrent) {
                runSideBySide([&] { timed(first, controlA, wallA); }, [&] { timed(second, controlB, wallB); });
            } else {
                timed(first, controlA, wallA);
                timed(second, controlB, wallB);
            }
            RunOutcome a = outcomeOf(first.stats(), settingsA, wallA), b = outcomeOf(second.stats(), settingsB, wallB);
            context.phase(QObject::tr("Mapping colors..."));
            Image imageA = first.render(plain), imageB = second.render(plain);
            if (mask && base.mapping.strength != 0.0)
                for (Image* image : {&imageA, &imageB}) blendMasked(*source.image, *mask, *image, base.threads);
            a.image = toQImage(imageA);
            b.image = toQImage(imageB);
            // Both plans live on the same palettes: compare them entrywise.
            const auto problem = first.transportProblem();
            if (problem && a.result.logU.size() == b.result.logU.size())
                output->planMaxRelDiff = planMaxRelativeDifference(*problem, a.result, b.result);
            output->imageMaxRelDiff = imageMaxRelativeDifference(imageA, imageB);
            output->runs = {a, b};
        } catch (const Cancelled&) {
            output->cancelled = true;
        }
        return output;
    };
}

JobFunction makeBatchJob(const QString& referencePath, const QStringList& inputs, const BatchSettings& settings)
{
    return [=](JobContext& context) {
        auto output = std::make_shared<BatchOutput>();
        std::vector<std::string> paths;
        for (const QString& input : inputs) paths.push_back(input.toStdString());
        paths = collectBatchInputs(paths);
        BatchControl control;
        control.cancel = context.cancelFlag();
        control.onProgress = [&context](const BatchProgress& p) {
            if (p.stage && p.stage->solve) context.report(int(p.index), *p.stage->solve);
            if (p.finished || !p.stage)
                context.step(int(p.index + (p.finished ? 1 : 0)), int(p.total), QString::fromStdString(p.input));
        };
        const BatchSummary summary = runBatch(referencePath.toStdString(), paths, settings, control);
        for (const BatchItemResult& item : summary.items) {
            switch (item.status) {
            case BatchItemStatus::Done: output->written << QString::fromStdString(item.output); break;
            case BatchItemStatus::Skipped: ++output->skipped; break;
            case BatchItemStatus::Failed: {
                // Read and write errors already name the file: name it once.
                const QString input = QString::fromStdString(item.input), why = QString::fromStdString(item.message);
                output->failures << (why.contains(input) ? why : QStringLiteral("%1: %2").arg(input, why));
                break;
            }
            case BatchItemStatus::Cancelled: output->cancelled = true; break;
            }
        }
        output->timings = QObject::tr("%1 files in %2 s").arg(summary.items.size()).arg(summary.seconds, 0, 'f', 2);
        return output;
    };
}

}  // namespace uot::ui
