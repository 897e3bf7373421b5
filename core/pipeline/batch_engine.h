#pragma once
// Recolors many files with one reference: the reference palette is computed once,
// each input goes through a RecolorPipeline; a failing file is reported and
// skipped while the others are done. Needs image I/O (OpenCV).

#include <atomic>
#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/imageio/image_io.h"
#include "core/pipeline/recolor_pipeline.h"

namespace uot {

struct BatchSettings {
    RecolorSettings recolor;
    std::string outDir;                               // created when missing
    // {name} = input stem, {ext} = input extension, {dir} = the name of the input's
    // folder. May name a path outside outDir (an absolute pattern, or one with ..):
    // the user's choice, documented in docs/COMMAND_LINE.md.
    std::string pattern = "{name}_recolored.{ext}";
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
    // One mask per input (docs/REGIONS.md): the file named by this pattern ({name},
    // {ext}, {dir} as in `pattern`; relative to the working folder, not outDir),
    // read by readMaskFor (core/pipeline/region_mask_file.h) with maskFeather, and
    // the input recolored through it (recolorMasked). An input whose mask is
    // missing or unusable fails with the reason. Empty: no masks. Masked batches
    // run image by image (no batched GPU solve).
    std::string maskPattern;
    int maskFeather = 0;
    // Further references (after runBatch's referencePath): the reference palette
    // is then the pooled palette of all of them (buildPooledPalette, as `uot
    // recolor` with several references), each image's share given by
    // referenceWeights (one per reference, referencePath first; empty = equal).
    // Every reference is protected as referencePath is.
    std::vector<std::string> extraReferences;
    std::vector<double> referenceWeights;
};

enum class BatchItemStatus { Done, Skipped, Failed, Cancelled };
std::string toString(BatchItemStatus status);

struct BatchItemResult {
    std::string input;
    std::string output;
    BatchItemStatus status = BatchItemStatus::Failed;
    std::string message;   // why it failed or was skipped
    std::string note;      // e.g. the pipeline's GPU fallback note (stats().gpuNote)
    PhaseTimings timings;
};

struct BatchSummary {
    std::vector<BatchItemResult> items;
    std::size_t done = 0, skipped = 0, failed = 0, cancelled = 0;
    PhaseTimings referenceTimings;  // decode + palette of the reference
    // The reference palette the batch computed (null when it read no reference),
    // for more work with the same references (the clips of `uot batch`).
    std::shared_ptr<const Palette> referencePalette;
    double seconds = 0;             // wall time of the whole batch
};

// Appends `item` to summary.items and counts it by its status.
void addItem(BatchSummary& summary, BatchItemResult item);

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
    // Optional: whether this process does item `index` (of the batch's items, in
    // order), asked once for each index in increasing order as the items' turns
    // come, one call at a time (on the calling thread, or on a worker in the
    // batched GPU path). The items it is not given are another process's (uot-mpi
    // batch shares a batch's items out this way): they are neither reported nor in
    // the summary. Not asked: the items the plan finished before any work (they are
    // reported as without claim), and any item after a cancellation.
    std::function<bool(std::size_t index)> claim;
};

// One input of a batch: a path named by the user, or found in a folder.
struct BatchInput {
    std::string path;
    bool fromFolder = false;
};

// What a scan of the command line's paths found: the inputs, and the folder
// entries with an image extension that cannot be read (symbolic link loops,
// dangling links, folders, devices), as Skipped items with the reason, so that
// the report lists them.
struct BatchInputs {
    std::vector<BatchInput> files;
    std::vector<BatchItemResult> skipped;
};

// Expands files and folders (non-recursive; supported extensions only; hidden
// names ignored; sorted by name) into input files. Paths named directly are kept
// as they are (a missing one is reported by the batch).
BatchInputs scanBatchInputs(const std::vector<std::string>& paths);

// scanBatchInputs(paths).files as plain paths (the skipped entries dropped).
std::vector<std::string> collectBatchInputs(const std::vector<std::string>& paths);

// `pattern` with {name}, {ext} and {dir} of `input` replaced.
std::string expandInputPattern(const std::string& pattern, const std::string& input);

// The output path of one input under settings (outDir / pattern).
std::string batchOutputPath(const std::string& input, const BatchSettings& settings);

// Runs the batch. Before any work (no image is read) it refuses, with
// uot::Error(InvalidArgument):
// - two inputs that map to the same output path (after normalisation);
// - an output that would replace the reference or another input of the batch
//   (never allowed, --overwrite or not);
// - an output extension that cannot be written;
// and with uot::Error(Io) an output folder that cannot be created or written.
// A folder-scanned input that is the output of another input under the pattern
// (an earlier run's result, when --out-dir is an input folder) is skipped with
// that reason, not recolored again. Otherwise throws only for problems with the
// reference or the backend (Unavailable: no GPU); per-file problems are in the
// summary, where inputs.skipped come first.
BatchSummary runBatch(const std::string& referencePath, const BatchInputs& inputs, const BatchSettings& settings,
                      const BatchControl& control = {});

// The same for plain paths (each treated as named by the user).
BatchSummary runBatch(const std::string& referencePath, const std::vector<std::string>& inputs,
                      const BatchSettings& settings, const BatchControl& control = {});

}  // namespace uot
