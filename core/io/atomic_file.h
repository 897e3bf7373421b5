#pragma once
// Writing a file atomically (no Qt, no OpenCV): the bytes go to a temporary file
// in the destination folder, which is then renamed over the destination, so a
// reader never sees a half-written file and a failed write leaves the old file
// as it was. Used for every output of the project (images, .cube LUTs).

#include <cstddef>
#include <functional>
#include <string>
#include <vector>

namespace uot {

struct AtomicWriteOptions {
    bool overwrite = true;  // false: an existing destination is an error
    // Files that must never be replaced (e.g. the source image), compared as
    // filesystem entries; writing to one is an error.
    std::vector<std::string> protectedPaths;
    // Appended to the message when a protected file would be replaced (what the
    // caller's user can do about it, e.g. "pass --overwrite-source").
    std::string protectedHint = "choose another output";
    // Called with the temporary file's path after the bytes are written and
    // before the rename (e.g. to add metadata in place). When it throws, the
    // temporary file is removed and the exception propagates.
    std::function<void(const std::string& temporaryPath)> finishTemporary;
};

// Checks that `path` may be written under `options` (not a protected file, not
// an existing file without overwrite, not a folder, its folder exists), without
// writing anything. Throws uot::Error(Io) naming the file and what is wrong.
void checkWritableDestination(const std::string& path, const AtomicWriteOptions& options = {});

// checkWritableDestination, then writes `size` bytes atomically (temporary file
// + rename). Throws uot::Error(Io) naming the file; no temporary file is left
// behind on failure.
void writeFileAtomically(const std::string& path, const void* data, std::size_t size,
                         const AtomicWriteOptions& options = {});

}  // namespace uot
