#include "core/pipeline/batch_plan.h"

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <map>
#include <optional>
#include <system_error>
#include <utility>

#include "core/imageio/image_io.h"
#include "core/io/atomic_file.h"
#include "core/pipeline/input_paths.h"
#include "core/transport/uot_error.h"

namespace fs = std::filesystem;

namespace uot {

namespace {

// A path as one string per filesystem place: absolute, symbolic links of the
// existing part resolved, "." and ".." folded.
std::string pathKey(const std::string& path)
{
    std::error_code ec;
    fs::path key = fs::weakly_canonical(fs::absolute(path, ec), ec);
    if (ec) key = fs::absolute(path, ec).lexically_normal();
    return key.string();
}

// The identity of an existing file (device, inode), so that hard links compare equal.
std::optional<std::pair<dev_t, ino_t>> fileIdentity(const std::string& path)
{
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0) return std::nullopt;
    return std::make_pair(st.st_dev, st.st_ino);
}

}  // namespace

BatchPlan planBatch(const std::string& referencePath, const BatchInputs& inputs, const BatchSettings& settings)
{
    BatchPlan plan;
    for (const BatchItemResult& entry : inputs.skipped) {
        plan.items.push_back(entry);
        plan.pending.push_back(false);
    }
    // Inputs named directly must exist before output names are planned from them
    // (a missing "dir/" has no name to plan from).
    for (const BatchInput& input : inputs.files) {
        if (input.fromFolder) continue;
        checkInputPath(input.path);
        std::error_code ec;
        if (!std::filesystem::exists(input.path, ec)) throw Error(ErrorCode::Io, input.path + ": no such file or folder");
    }
    const std::size_t n = inputs.files.size();
    std::vector<std::string> outputs(n), outputKeys(n), inputKeys(n);
    std::map<std::string, std::size_t> byOutput;
    for (std::size_t i = 0; i < n; ++i) {
        outputs[i] = batchOutputPath(inputs.files[i].path, settings);
        outputKeys[i] = pathKey(outputs[i]);
        inputKeys[i] = pathKey(inputs.files[i].path);
        byOutput.emplace(outputKeys[i], i);
    }
    // An earlier run's results in an input folder (--out-dir = that folder): a
    // scanned file that is another input's output is not an input.
    std::vector<bool> earlierOutput(n, false);
    for (std::size_t i = 0; i < n; ++i) {
        if (!inputs.files[i].fromFolder) continue;
        const auto found = byOutput.find(inputKeys[i]);
        if (found != byOutput.end() && found->second != i) earlierOutput[i] = true;
    }
    // Files that must never be replaced: the reference and every input.
    std::map<std::pair<dev_t, ino_t>, std::string> protectedFiles;
    for (std::size_t i = 0; i < n; ++i)
        if (!earlierOutput[i])
            if (const auto id = fileIdentity(inputs.files[i].path)) protectedFiles.emplace(*id, inputs.files[i].path);
    std::vector<std::string> references{referencePath};
    references.insert(references.end(), settings.extraReferences.begin(), settings.extraReferences.end());
    std::vector<std::string> referenceKeys;
    std::vector<std::optional<std::pair<dev_t, ino_t>>> referenceIds;
    for (const std::string& reference : references) {
        referenceKeys.push_back(pathKey(reference));
        referenceIds.push_back(fileIdentity(reference));
    }

    std::map<std::string, std::size_t> claimed;  // output key -> the input that writes it
    for (std::size_t i = 0; i < n; ++i) {
        BatchItemResult item;
        item.input = inputs.files[i].path;
        item.output = outputs[i];
        if (earlierOutput[i]) {
            item.status = BatchItemStatus::Skipped;
            item.message = "the output of '" + inputs.files[byOutput.at(inputKeys[i])].path +
                           "' under the pattern (an earlier run's result): not recolored again";
            plan.items.push_back(item);
            plan.pending.push_back(false);
            continue;
        }
        if (const auto [at, added] = claimed.emplace(outputKeys[i], i); !added)
            throw Error(ErrorCode::InvalidArgument,
                        "'" + inputs.files[at->second].path + "' and '" + item.input + "' would both be written to '" +
                            item.output + "': use a --pattern that tells them apart ({dir} = the input's folder "
                            "name, {ext} = its extension), or run them as separate batches");
        if (!isSupportedImageExtension(item.output))
            throw Error(ErrorCode::InvalidArgument,
                        item.output + ": cannot write this kind of file (the name comes from --pattern '" +
                            settings.pattern + "'); use .jpg, .png, .tif, .webp or .bmp");
        const auto outputId = fileIdentity(item.output);
        bool replacesReference = false;
        for (std::size_t r = 0; r < references.size(); ++r)
            replacesReference = replacesReference || outputKeys[i] == referenceKeys[r] ||
                                (outputId && referenceIds[r] && *outputId == *referenceIds[r]);
        if (replacesReference)
            throw Error(ErrorCode::InvalidArgument,
                        "the output of '" + item.input + "' would be '" + item.output +
                            "', the reference image, which is never replaced: choose another --out-dir or --pattern");
        if (outputId) {
            const auto found = protectedFiles.find(*outputId);
            if (found != protectedFiles.end() && !(fileIdentity(item.input) == outputId))
                throw Error(ErrorCode::InvalidArgument,
                            "the output of '" + item.input + "' would replace '" + found->second +
                                "', an input of this batch: choose another --out-dir or --pattern");
        }
        // The destination's folder (exists, writable) and not a folder itself, before any work.
        bool pending = true;
        try {
            AtomicWriteOptions destination;
            destination.overwrite = true;  // the existence policy is applied when the item's turn comes
            checkWritableDestination(item.output, destination);
        } catch (const Error& e) {
            item.status = BatchItemStatus::Failed;
            item.message = e.what();
            pending = false;
        }
        plan.items.push_back(item);
        plan.pending.push_back(pending);
    }
    return plan;
}


BatchPlan prepareBatch(const std::string& referencePath, const BatchInputs& inputs, const BatchSettings& settings)
{
    validateSettings(settings.recolor);
    if (settings.outDir.empty()) throw Error(ErrorCode::InvalidArgument, "no output folder given");
    if (settings.pattern.find("{name}") == std::string::npos)
        throw Error(ErrorCode::InvalidArgument, "the output pattern must contain {name} (got '" + settings.pattern + "')");
    std::error_code ec;
    fs::create_directories(settings.outDir, ec);
    if (!fs::is_directory(settings.outDir))
        throw Error(ErrorCode::Io, settings.outDir + ": cannot create the output folder" +
                                       (ec ? " (" + ec.message() + ")" : std::string()));
    if (::access(settings.outDir.c_str(), W_OK) != 0)
        throw Error(ErrorCode::Io, settings.outDir + ": no permission to write in the output folder");
    checkInputPath(referencePath);
    return planBatch(referencePath, inputs, settings);
}

}  // namespace uot
