#include "core/pipeline/batch_engine.h"

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <system_error>

#include "core/pipeline/batch_plan.h"
#include "core/pipeline/batched_recolor.h"
#include "core/pipeline/input_paths.h"
#include "core/pipeline/region_mask_file.h"
#include "core/pipeline/region_recolor.h"
#include "core/registry/batched_solver_registry.h"
#include "core/transport/uot_error.h"

namespace fs = std::filesystem;

namespace uot {

std::string toString(BatchItemStatus status)
{
    switch (status) {
    case BatchItemStatus::Done: return "done";
    case BatchItemStatus::Skipped: return "skipped";
    case BatchItemStatus::Failed: return "failed";
    case BatchItemStatus::Cancelled: return "cancelled";
    }
    return "?";
}

void addItem(BatchSummary& summary, BatchItemResult item)
{
    switch (item.status) {
    case BatchItemStatus::Done: ++summary.done; break;
    case BatchItemStatus::Skipped: ++summary.skipped; break;
    case BatchItemStatus::Failed: ++summary.failed; break;
    case BatchItemStatus::Cancelled: ++summary.cancelled; break;
    }
    summary.items.push_back(std::move(item));
}

namespace {
using Clock = std::chrono::steady_clock;
double secondsSince(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

// Why an item is skipped by the existence policy when its turn comes (empty: it is done).
std::string skipReason(const BatchItemResult& item, const BatchSettings& settings)
{
    std::error_code ec;
    if (fs::exists(item.output, ec) && fs::exists(item.input, ec) && fs::equivalent(item.output, item.input, ec) &&
        !settings.overwriteSource)
        return "the output would replace the input (pass --overwrite-source to allow it)";
    if (fs::exists(item.output, ec) && !settings.overwrite &&
        !(settings.overwriteSource && fs::equivalent(item.output, item.input, ec)))
        return "output exists (pass --overwrite to replace it)";
    return {};
}

WriteOptions writeOptionsFor(const BatchItemResult& item, const std::string& referencePath, const BatchSettings& settings)
{
    WriteOptions wo = settings.write;
    wo.overwrite = true;  // the existence policy was applied before
    wo.protectedPaths.push_back(referencePath);  // never, --overwrite-source or not
    for (const std::string& extra : settings.extraReferences) wo.protectedPaths.push_back(extra);
    if (!settings.overwriteSource) wo.protectedPaths.push_back(item.input);
    wo.metadataFrom = item.input;  // EXIF/XMP/IPTC of each photo travel with it
    if (wo.profile == OutputProfile::None) wo.profile = OutputProfile::Srgb;  // the pixels are sRGB
    return wo;
}

// Reports a stage of item `index` (stage set) or its end (finished set).
void notifyProgress(const BatchControl& control, std::size_t index, std::size_t total, const std::string& input,
                    const PipelineProgress* stage, const BatchItemResult* finished)
{
    if (!control.onProgress) return;
    BatchProgress bp;
    bp.index = index;
    bp.total = total;
    bp.input = input;
    bp.stage = stage;
    bp.finished = finished;
    control.onProgress(bp);
}

void notifyFinished(const BatchControl& control, std::size_t index, std::size_t total, const BatchItemResult& item)
{
    notifyProgress(control, index, total, item.input, nullptr, &item);
}

// The GPU path: every palette problem solved in batched calls (core/pipeline/
// batched_recolor.h), decoding and encoding on worker threads.
void runBatchedOnGpu(const std::string& batchedSolver, const std::shared_ptr<const Palette>& referencePalette,
                     const std::string& referencePath, BatchPlan& plan, const BatchSettings& settings,
                     const BatchControl& control, BatchSummary& summary)
{
    std::vector<BatchItemResult>& items = plan.items;
    const std::size_t total = items.size();
    std::vector<std::size_t> todo;  // item index of each image of the batched job
    for (std::size_t index = 0; index < total; ++index)
        if (plan.pending[index]) todo.push_back(index);
    std::vector<bool> claimed(total, !control.claim);  // the items this process does
    BatchedRecolorJob job;
    job.count = todo.size();
    job.skip = [&](std::size_t k) { return skipReason(items[todo[k]], settings); };
    job.load = [&](std::size_t k) {
        checkInputPath(items[todo[k]].input);
        return readImage(items[todo[k]].input, settings.read);
    };
    job.store = [&](std::size_t k, const Image& result) {
        const BatchItemResult& item = items[todo[k]];
        writeImage(item.output, result, writeOptionsFor(item, referencePath, settings));
    };
    BatchedRecolorOptions options;
    options.batchedSolver = batchedSolver;
    options.groupSize = settings.gpuBatchSize;
    BatchedRecolorControl batchedControl;
    batchedControl.cancel = control.cancel;
    if (control.claim)
        batchedControl.claim = [&](std::size_t k) {
            return claimed[todo[k]] = !(control.cancel && control.cancel->load()) && control.claim(todo[k]);
        };
    batchedControl.onFinished = [&](std::size_t k, const BatchedItemOutcome& outcome) {
        BatchItemResult& item = items[todo[k]];
        switch (outcome.status) {
        case BatchedItemStatus::Done: item.status = BatchItemStatus::Done; break;
        case BatchedItemStatus::Skipped: item.status = BatchItemStatus::Skipped; break;
        case BatchedItemStatus::Failed: item.status = BatchItemStatus::Failed; break;
        case BatchedItemStatus::Cancelled: item.status = BatchItemStatus::Cancelled; break;
        }
        item.message = outcome.message;
        item.timings = outcome.timings;
        notifyFinished(control, todo[k], total, item);
    };
    runBatchedRecolor(referencePalette, settings.recolor, job, options, batchedControl);
    for (std::size_t index = 0; index < total; ++index)
        if (claimed[index] || !plan.pending[index]) addItem(summary, items[index]);
}

// Why a folder entry with an image extension is not an input (empty: it is one).
std::string folderEntryProblem(const fs::directory_entry& entry)
{
    std::error_code ec;
    if (entry.is_regular_file(ec)) return {};
    const std::string reason = unusableInputReason(entry.path().string());
    return reason.empty() ? "not a regular file" : reason;
}
}  // namespace

BatchInputs scanBatchInputs(const std::vector<std::string>& paths)
{
    BatchInputs out;
    for (const std::string& p : paths) {
        std::error_code ec;
        if (fs::is_directory(p, ec)) {
            std::vector<fs::directory_entry> found;
            for (const auto& entry : fs::directory_iterator(p, ec)) {
                const std::string name = entry.path().filename().string();
                if (!name.empty() && name[0] == '.') continue;  // hidden and our own temporary files
                if (isSupportedImageExtension(name)) found.push_back(entry);
            }
            std::sort(found.begin(), found.end(),
                      [](const fs::directory_entry& a, const fs::directory_entry& b) { return a.path() < b.path(); });
            for (const fs::directory_entry& entry : found) {
                if (const std::string why = folderEntryProblem(entry); !why.empty()) {
                    BatchItemResult skipped;
                    skipped.input = entry.path().string();
                    skipped.status = BatchItemStatus::Skipped;
                    skipped.message = "not an image file: " + why;
                    out.skipped.push_back(skipped);
                } else {
                    out.files.push_back({entry.path().string(), true});
                }
            }
        } else {
            out.files.push_back({p, false});
        }
    }
    return out;
}

std::vector<std::string> collectBatchInputs(const std::vector<std::string>& paths)
{
    std::vector<std::string> out;
    for (const BatchInput& input : scanBatchInputs(paths).files) out.push_back(input.path);
    return out;
}

std::string expandInputPattern(const std::string& pattern, const std::string& input)
{
    const fs::path in(input);
    std::string ext = in.extension().string();
    if (!ext.empty() && ext[0] == '.') ext.erase(0, 1);
    std::string name = pattern;
    const auto replaceAll = [&name](const std::string& key, const std::string& value) {
        for (std::size_t pos = name.find(key); pos != std::string::npos; pos = name.find(key, pos + value.size()))
            name.replace(pos, key.size(), value);
    };
    replaceAll("{name}", in.stem().string());
    replaceAll("{ext}", ext);
    replaceAll("{dir}", fs::absolute(in).lexically_normal().parent_path().filename().string());
    return name;
}

std::string batchOutputPath(const std::string& input, const BatchSettings& settings)
{
    return (fs::path(settings.outDir) / expandInputPattern(settings.pattern, input)).string();
}

BatchSummary runBatch(const std::string& referencePath, const std::vector<std::string>& inputs,
                      const BatchSettings& settings, const BatchControl& control)
{
    BatchInputs named;
    for (const std::string& path : inputs) named.files.push_back({path, false});
    return runBatch(referencePath, named, settings, control);
}

BatchSummary runBatch(const std::string& referencePath, const BatchInputs& inputs, const BatchSettings& settings,
                      const BatchControl& control)
{
    const auto batchStart = Clock::now();
    BatchSummary summary;
    BatchPlan plan = prepareBatch(referencePath, inputs, settings);
    const std::size_t total = plan.items.size();

    // The reference palette, once (several references: pooled).
    auto start = Clock::now();
    std::vector<Image> references;
    references.push_back(readImage(referencePath, settings.read));
    for (const std::string& extra : settings.extraReferences) {
        checkInputPath(extra);
        references.push_back(readImage(extra, settings.read));
    }
    summary.referenceTimings.decode = secondsSince(start);
    start = Clock::now();
    std::shared_ptr<const Palette> referencePalette;
    if (references.size() == 1) {
        PipelineControl refControl;
        refControl.cancel = control.cancel;
        referencePalette = computePalette(references.front(), settings.recolor, refControl);
    } else {
        std::vector<const Image*> images;
        for (const Image& image : references) images.push_back(&image);
        const RecolorSettings& s = settings.recolor;
        referencePalette = std::make_shared<const Palette>(
            buildPooledPalette(images, settings.referenceWeights, s.space, s.palette, s.threads));
    }
    summary.referenceTimings.palette = secondsSince(start);
    summary.referencePalette = referencePalette;
    for (std::size_t index = 0; index < total; ++index)
        if (!plan.pending[index]) notifyFinished(control, index, total, plan.items[index]);

    // A GPU solve with a batched solver at hand: the palette problems go to it in groups.
    if (runsOnGpu(settings.recolor.transport.solver) && settings.gpuBatchSize > 1 && settings.maskPattern.empty()) {
        if (const std::optional<std::string> batched = batchedSolverFor(DeviceKind::Gpu)) {
            runBatchedOnGpu(*batched, referencePalette, referencePath, plan, settings, control, summary);
            summary.seconds = secondsSince(batchStart);
            return summary;
        }
    }

    RecolorPipeline pipeline(settings.recolor);
    bool cancelled = false;
    for (std::size_t index = 0; index < total; ++index) {
        BatchItemResult item = plan.items[index];
        if (!plan.pending[index]) {
            addItem(summary, item);
            continue;
        }
        if (!cancelled && control.cancel && control.cancel->load()) cancelled = true;
        if (control.claim && (cancelled || !control.claim(index))) continue;  // another process's item
        const auto notifyStage = [&](const PipelineProgress& p) {
            notifyProgress(control, index, total, item.input, &p, nullptr);
        };
        if (cancelled) {
            item.status = BatchItemStatus::Cancelled;
            item.message = "cancelled before it started";
        } else if (const std::string why = skipReason(item, settings); !why.empty()) {
            item.status = BatchItemStatus::Skipped;
            item.message = why;
        } else {
            try {
                auto t0 = Clock::now();
                checkInputPath(item.input);
                Image source = readImage(item.input, settings.read);
                std::string maskPath;
                Mask mask;
                if (!settings.maskPattern.empty()) {
                    maskPath = expandInputPattern(settings.maskPattern, item.input);
                    std::error_code ec;
                    if (!fs::exists(maskPath, ec)) throw Error(ErrorCode::Io, "no mask " + maskPath);
                    mask = readMaskFor(maskPath, source, settings.maskFeather, settings.recolor.space, settings.read,
                                       settings.recolor.threads);
                }
                item.timings.decode = secondsSince(t0);
                pipeline.setSource(std::move(source));
                pipeline.setReferencePalette(referencePalette);
                PipelineControl pc;
                pc.cancel = control.cancel;
                pc.onProgress = notifyStage;
                Image result = mask.empty() ? pipeline.run(pc) : recolorMasked(pipeline, mask, pc);
                const PhaseTimings& pt = pipeline.stats().timings;
                item.note = pipeline.stats().gpuNote;
                item.timings.palette = pt.palette;
                item.timings.cost = pt.cost;
                item.timings.solve = pt.solve;
                item.timings.map = pt.map;
                t0 = Clock::now();
                WriteOptions write = writeOptionsFor(item, referencePath, settings);
                if (!maskPath.empty()) write.protectedPaths.push_back(maskPath);  // never replaced
                writeImage(item.output, result, write);
                item.timings.encode = secondsSince(t0);
                item.status = BatchItemStatus::Done;
            } catch (const Error& e) {
                if (e.code() == ErrorCode::Unavailable) throw;  // the same for every file: stop the batch
                item.status = BatchItemStatus::Failed;
                item.message = e.what();
            } catch (const Cancelled&) {
                item.status = BatchItemStatus::Cancelled;
                item.message = "cancelled";
                cancelled = true;
            } catch (const std::exception& e) {
                item.status = BatchItemStatus::Failed;
                item.message = e.what();
            }
        }
        addItem(summary, item);
        notifyFinished(control, index, total, summary.items.back());
    }
    summary.seconds = secondsSince(batchStart);
    return summary;
}

}  // namespace uot
