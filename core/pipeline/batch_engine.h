#pragma once
// Recolors many files with one reference: the reference palette is computed once,
// each input goes through a RecolorPipeline; a failing file is reported and
// skipped while the others are done. Needs image I/O (OpenCV).

#include <atomic>
#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include "core/imageio/image_io.h"
#include "core/pipeline/recolor_pipeline.h"

namespace uot {

struct BatchSettings {
    RecolorSettings recolor;
    std::string outDir;                               // created when missing
    std::string pattern = "{name}_recolored.{ext}";   // {name} = input stem, {ext} = input extension
    bool overwrite = false;        // replace existing outputs (else they are skipped)
    bool overwriteSource = false;  // allow an output to replace its own input
    ReadOptions read;
    WriteOptions write;            // overwrite/protectedPaths are set per file by the engine
    // With a GPU solver (recolor.transport.solver runs on the GPU) and a batched
    // GPU solver in the build: the palette problems of up to this many images are
    // solved in one batched call, decoding, palettes, mapping and encoding running
    // on worker threads meanwhile (core/pipeline/batched_recolor.h). 1 = image by
    // image, as on the CPU.
    std::size_t gpuBatchSize = 16;
};

enum class BatchItemStatus { Done, Skipped, Failed, Cancelled };
std::string toString(BatchItemStatus status);

struct BatchItemResult {
    std::string input;
    std::string output;
    BatchItemStatus status = BatchItemStatus::Failed;
    std::string message;   // why it failed or was skipped
    PhaseTimings timings;
};

struct BatchSummary {
    std::vector<BatchItemResult> items;
    std::size_t done = 0, skipped = 0, failed = 0, cancelled = 0;
    PhaseTimings referenceTimings;  // decode + palette of the reference
    double seconds = 0;             // wall time of the whole batch
};

struct BatchProgress {
    std::size_t index = 0;           // of the current file, 0-based
    std::size_t total = 0;
    std::string input;
    const BatchItemResult* finished = nullptr;   // set once when a file is finished
    const PipelineProgress* stage = nullptr;     // set while a file is being worked on
};

struct BatchControl {
    std::function<void(const BatchProgress&)> onProgress;  // called on the calling thread
    const std::atomic<bool>* cancel = nullptr;             // stops after the current stage; the rest are Cancelled
};

// Expands files and folders (non-recursive; supported extensions only; sorted by
// name) into input files. Missing paths are kept so that the batch reports them.
std::vector<std::string> collectBatchInputs(const std::vector<std::string>& paths);

// The output path of one input under settings (outDir / pattern).
std::string batchOutputPath(const std::string& input, const BatchSettings& settings);

// Runs the batch. Throws uot::Error only for problems with the reference, the
// settings or the backend (Unavailable: no GPU), where nothing could be done;
// per-file problems are in the summary.
BatchSummary runBatch(const std::string& referencePath, const std::vector<std::string>& inputs,
                      const BatchSettings& settings, const BatchControl& control = {});

}  // namespace uot
