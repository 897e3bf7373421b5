#include "core/io/atomic_file.h"

#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>

#include "core/transport/uot_error.h"

namespace uot {

namespace fs = std::filesystem;

namespace {

[[noreturn]] void ioError(const std::string& path, const std::string& what)
{
    throw Error(ErrorCode::Io, path + ": " + what);
}

// A name in the destination's folder that no other writer (thread or process) uses.
fs::path temporaryPathFor(const fs::path& target, const fs::path& dir)
{
    static std::atomic<unsigned> counter{0};
    std::string name = ".";
    name += target.filename().string();
    name += ".tmp-" + std::to_string(::getpid()) + "-" + std::to_string(counter.fetch_add(1));
    return dir / name;
}

fs::path folderOf(const fs::path& target) { return target.has_parent_path() ? target.parent_path() : fs::path("."); }

}  // namespace

void checkWritableDestination(const std::string& path, const AtomicWriteOptions& options)
{
    if (path.empty()) throw Error(ErrorCode::Io, "no output file name given");
    std::error_code ec;
    if (fs::exists(path, ec)) {
        for (const std::string& p : options.protectedPaths) {
            std::error_code ec2;
            if (fs::exists(p, ec2) && fs::equivalent(path, p, ec2))
                ioError(path, "refusing to overwrite the source image (" + options.protectedHint + ")");
        }
        if (fs::is_directory(path, ec)) ioError(path, "is a folder");
        if (!options.overwrite) ioError(path, "the file exists (pass --overwrite to replace it)");
    }
    const fs::path dir = folderOf(fs::path(path));
    if (!fs::is_directory(dir, ec)) ioError(path, "the folder '" + dir.string() + "' does not exist");
    if (::access(dir.c_str(), W_OK) != 0)
        ioError(path, "no permission to write in the folder '" + dir.string() + "' (choose another folder)");
}

void writeFileAtomically(const std::string& path, const void* data, std::size_t size, const AtomicWriteOptions& options)
{
    checkWritableDestination(path, options);
    const fs::path target(path);
    const fs::path dir = folderOf(target);
    const fs::path temp = temporaryPathFor(target, dir);
    std::error_code ec;
    {
        std::ofstream out(temp, std::ios::binary | std::ios::trunc);
        if (!out) ioError(path, "cannot create a file in '" + dir.string() + "' (permissions? disk full?)");
        out.write(static_cast<const char*>(data), static_cast<std::streamsize>(size));
        out.flush();
        if (!out) {
            out.close();
            fs::remove(temp, ec);
            ioError(path, "writing failed (disk full?)");
        }
    }
    if (options.finishTemporary) {
        try {
            options.finishTemporary(temp.string());
        } catch (...) {
            fs::remove(temp, ec);
            throw;
        }
    }
    fs::rename(temp, target, ec);
    if (ec) {
        std::error_code ec2;
        fs::remove(temp, ec2);
        ioError(path, "cannot move the finished file into place (" + ec.message() + ")");
    }
}

}  // namespace uot
