#pragma once
// Temporary files that a signal must not leave behind (no Qt, no OpenCV).
//
// An atomic write (atomic_file.h) has its temporary file on disk from its
// creation until the rename. A Ctrl-C, SIGTERM or SIGHUP in between used to leave
// a complete hidden `.uot-tmp-*` file for ever. Each such file is registered here
// while it exists; removeTemporariesOnSignals() installs handlers (where the
// signal still has its default action) that delete the registered files and then
// end the process as the signal would have (exit 128 + N seen by the shell).
// An image sequence's frames wait in a hidden folder, registered the same way.
// SIGKILL cannot be caught: a file left by it is named with kTemporaryPrefix.

#include <string>

namespace uot {

// What a registered path is: a file, or a folder holding only files (an image
// sequence's frames before they are moved into place), removed with its files.
enum class PendingKind { File, FolderOfFiles };

// Registers `path` (absolute, or relative to the working folder that stays
// unchanged) for the lifetime of the object. At most 64 paths at a time are
// tracked; beyond that a path is simply not cleaned up on a signal.
class PendingTemporary {
public:
    explicit PendingTemporary(const std::string& path, PendingKind kind = PendingKind::File);
    ~PendingTemporary();
    PendingTemporary(const PendingTemporary&) = delete;
    PendingTemporary& operator=(const PendingTemporary&) = delete;

private:
    int m_slot = -1;
};

// Installs the handlers for SIGINT, SIGTERM and SIGHUP (each only where it has
// its default action). Call once at the start of a program that writes outputs.
void removeTemporariesOnSignals();

}  // namespace uot
