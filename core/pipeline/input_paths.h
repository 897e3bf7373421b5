#pragma once
// Why an input path cannot be read as an image file, told precisely before any
// decoding: a symbolic link loop ("too many levels of symbolic links"), a
// dangling symbolic link, a folder, something that is not a regular file. Used
// by the image commands on their SOURCE/REFERENCE and by the batch's folder scan,
// which lists such entries in its report instead of dropping them silently.

#include <string>

namespace uot {

// Empty when `path` names a regular file (or a link to one) or does not exist at
// all (the reader then says "no such file"); otherwise the reason, e.g.
// "too many levels of symbolic links (a symbolic link loop)".
std::string unusableInputReason(const std::string& path);

// Throws uot::Error(Io) "PATH: REASON" when unusableInputReason is not empty.
void checkInputPath(const std::string& path);

}  // namespace uot
