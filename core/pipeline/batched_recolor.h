#pragma once
// Recolors a batch of images with one reference palette, the palette problems
// of many images solved together by a batched solver (core/registry/
// batched_solver_registry.h: "gpu-batched" on the GPU) instead of image by
// image. OpenCV-free: images come from and go to callbacks (the batch engine
// decodes and encodes files there; benches hand over decoded buffers).
//
// A producer/consumer pipeline, so that the device never waits for the disk:
//   workers (CPU threads): load (decode) -> palette -> the problem is queued;
//   the calling thread: takes the queued problems in groups and solves each
//     group in one batched call, while the workers go on loading the next images;
//   workers: map with the solved plan (RecolorPipeline::render, on the GPU when
//     the solver runs there) -> store (encode, write).
// At most `maxInFlight` images are held between load and store.

#include <atomic>
#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/color/image.h"
#include "core/color/palette.h"
#include "core/pipeline/recolor_pipeline.h"

namespace uot {

struct BatchedRecolorJob {
    std::size_t count = 0;  // images, indexed 0..count-1
    // Decodes image k. Called on worker threads, for different k at once; an
    // exception fails that image only (its message is reported).
    std::function<Image(std::size_t k)> load;
    // Writes the result of image k. Called on worker threads, as load.
    std::function<void(std::size_t k, const Image& result)> store;
    // Optional: why image k is left out when its turn comes (its output exists),
    // empty to do it. Called on worker threads, before load.
    std::function<std::string(std::size_t k)> skip;
};

struct BatchedRecolorOptions {
    std::string batchedSolver;      // registry name of the batched solver (e.g. "gpu-batched")
    int workers = 0;                // CPU worker threads, 0 = the settings' threads (else all) but one
    std::size_t groupSize = 16;     // problems per batched call (at most)
    std::size_t maxInFlight = 0;    // images held at once, 0 = 2 x groupSize + workers
};

enum class BatchedItemStatus { Done, Skipped, Failed, Cancelled };

struct BatchedItemOutcome {
    BatchedItemStatus status = BatchedItemStatus::Failed;
    std::string message;       // why it failed or was skipped; a note when it was solved alone (fallback)
    PhaseTimings timings;      // decode = load, encode = store; solve = its group's solve / group size
};

struct BatchedRecolorReport {
    std::vector<BatchedItemOutcome> items;
    std::size_t groups = 0;          // batched calls made
    double solveSeconds = 0;         // wall time of the batched calls
    double seconds = 0;              // wall time of the whole batch
};

struct BatchedRecolorControl {
    // Called on the calling thread when image k is finished (any status).
    std::function<void(std::size_t k, const BatchedItemOutcome& outcome)> onFinished;
    const std::atomic<bool>* cancel = nullptr;  // the images not finished are Cancelled
    // Optional: whether this process does image k, asked once for each k in
    // increasing order as the images' turns come (on worker threads, one call at
    // a time). The images it is not given are another process's (uot-mpi batch):
    // they are not loaded, and onFinished is not called for them.
    std::function<bool(std::size_t k)> claim;
};

// Runs the batch. `settings.transport.solver` is the per-image variant (e.g.
// "gpu-fused"): it decides where the mapping runs, and solves an image alone
// when the batched call fails (noted in its message). Throws uot::Error for
// invalid settings or an unknown / unavailable batched solver.
BatchedRecolorReport runBatchedRecolor(std::shared_ptr<const Palette> referencePalette, const RecolorSettings& settings,
                                       const BatchedRecolorJob& job, const BatchedRecolorOptions& options,
                                       const BatchedRecolorControl& control = {});

}  // namespace uot
