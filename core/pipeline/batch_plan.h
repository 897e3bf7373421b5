#pragma once
// The plan of a batch, made before any image is read (batch_engine.cpp): each
// input's output path, and the refusals and skips that need no decoding: two
// inputs with one output, an output that would replace the reference or another
// input, an extension that cannot be written, a destination folder that cannot
// be written, an earlier run's result found in an input folder.

#include <string>
#include <vector>

#include "core/pipeline/batch_engine.h"

namespace uot {

struct BatchPlan {
    // The scan's skipped entries first, then one item per input, in order, each
    // with its output path.
    std::vector<BatchItemResult> items;
    // False for an item finished already (skipped or failed before the work).
    std::vector<bool> pending;
};

// Throws uot::Error(InvalidArgument) for a batch that must not start (the list
// in runBatch's comment).
BatchPlan planBatch(const std::string& referencePath, const BatchInputs& inputs, const BatchSettings& settings);

// What runBatch does before any image is read: checks the settings, creates the
// output folder (uot::Error(Io) when it cannot be created or written), checks
// the reference's path, then planBatch. A distributed batch (uot-mpi batch)
// plans the whole batch with it once, then runs runBatch on each rank's share.
BatchPlan prepareBatch(const std::string& referencePath, const BatchInputs& inputs, const BatchSettings& settings);

}  // namespace uot
