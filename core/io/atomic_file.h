#pragma once
// Writing a file atomically and safely (no Qt, no OpenCV). The bytes go to a
// new temporary file in the destination folder, which is then moved into place,
// so a reader never sees a half-written file and a failed write leaves the old
// file as it was:
//  - the temporary file has a random name starting with kTemporaryPrefix and is
//    created with O_CREAT|O_EXCL|O_NOFOLLOW (mode 0600): a file or link planted
//    under that name is never opened, let alone written through;
//  - the data is written through that descriptor and fsync'd, the final mode is
//    set on the descriptor, and the folder is fsync'd after the move;
//  - without overwrite the move refuses an existing destination atomically
//    (renameat2 RENAME_NOREPLACE, or link()+unlink() where the filesystem lacks
//    it), so a file that appears while this one is written is never replaced;
//  - with overwrite the old file's permission bits (and owner and group, where
//    permitted) are kept; a destination that is a symbolic link is refused.
// A temporary file survives only a kill at the wrong moment; it can be told by
// its name (kTemporaryPrefix) and deleted.

#include <cstddef>
#include <string>
#include <vector>

namespace uot {

// Every temporary file this module creates has a name of this prefix followed
// by 10 random characters (about 19 bytes whatever the destination's name, so
// any legal destination name works).
inline constexpr const char* kTemporaryPrefix = ".uot-tmp-";

struct AtomicWriteOptions {
    bool overwrite = true;  // false: an existing destination is an error
    // Files that must never be replaced (e.g. the source image), compared as
    // filesystem entries; writing to one is an error.
    std::vector<std::string> protectedPaths;
    // Appended to the message when a protected file would be replaced (what the
    // caller's user can do about it, e.g. "pass --overwrite-source").
    std::string protectedHint = "choose another output";
};

// One piece of a file's contents (the pieces are written one after the other).
struct ByteRange {
    const void* data = nullptr;
    std::size_t size = 0;
};

// Checks that `path` may be written under `options` (not a protected file, not
// an existing file without overwrite, not a folder, not a symbolic link, its
// folder exists and is writable, its name is not longer than the folder's file
// system allows), without writing anything. Throws
// uot::Error(Io) naming the file and what is wrong.
void checkWritableDestination(const std::string& path, const AtomicWriteOptions& options = {});

// checkWritableDestination, then writes the pieces atomically as described
// above. Throws uot::Error(Io) naming the file; no temporary file is left
// behind on failure.
void writeFileAtomically(const std::string& path, const std::vector<ByteRange>& pieces,
                         const AtomicWriteOptions& options = {});
void writeFileAtomically(const std::string& path, const void* data, std::size_t size,
                         const AtomicWriteOptions& options = {});

// A file written in pieces over time (a video encoded frame by frame) that must
// appear only when complete: the same temporary file, modes, move and refusals
// as writeFileAtomically. The constructor checks the destination
// (checkWritableDestination) and creates the temporary file in its folder,
// registered with PendingTemporary (a Ctrl-C removes it); write through
// descriptor() or by temporaryPath(); commit() moves the finished file into
// place; destroyed without commit(), the temporary file is removed. Throws
// uot::Error(Io) naming the destination.
class StreamedAtomicFile {
public:
    StreamedAtomicFile(const std::string& path, const AtomicWriteOptions& options = {});
    ~StreamedAtomicFile();
    StreamedAtomicFile(const StreamedAtomicFile&) = delete;
    StreamedAtomicFile& operator=(const StreamedAtomicFile&) = delete;

    int descriptor() const { return m_fd; }
    const std::string& temporaryPath() const { return m_temporaryPath; }
    // Sets the final mode, fsyncs, closes and moves the file into place.
    void commit();

private:
    struct Pending;
    std::string m_path;
    AtomicWriteOptions m_options;
    std::string m_folder, m_temporaryName, m_temporaryPath;
    int m_folderFd = -1;
    int m_fd = -1;
    bool m_committed = false;
    Pending* m_pending = nullptr;
};

// The creation primitive: creates the new, empty file `name` in the folder open
// as `folderFd`, for writing, mode 0600, close-on-exec. Never follows or reuses
// an existing entry of that name (a file, or a link, even a dangling one): then
// it returns -1 with errno EEXIST. Returns the descriptor, or -1 and errno.
int createExclusiveFile(int folderFd, const std::string& name);

}  // namespace uot
