#include "core/pipeline/input_paths.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstring>

#include "core/transport/uot_error.h"

namespace uot {

std::string unusableInputReason(const std::string& path)
{
    struct stat target {};
    if (::stat(path.c_str(), &target) == 0) {
        if (S_ISDIR(target.st_mode)) return "is a folder, not an image file";
        if (!S_ISREG(target.st_mode)) return "is not a regular file (a device, pipe or socket)";
        return {};
    }
    const int error = errno;
    if (error == ELOOP) return "too many levels of symbolic links (a symbolic link loop)";
    struct stat link {};
    if (error == ENOENT && ::lstat(path.c_str(), &link) == 0 && S_ISLNK(link.st_mode))
        return "a dangling symbolic link (its target does not exist)";
    if (error == ENOENT) return {};  // the reader reports a missing file itself
    return std::strerror(error);
}

void checkInputPath(const std::string& path)
{
    if (const std::string reason = unusableInputReason(path); !reason.empty())
        throw Error(ErrorCode::Io, path + ": " + reason);
}

}  // namespace uot
