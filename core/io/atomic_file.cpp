#include "core/io/atomic_file.h"

#include <fcntl.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "core/io/pending_temporaries.h"
#include "core/transport/uot_error.h"

namespace uot {

namespace fs = std::filesystem;

namespace {

[[noreturn]] void ioError(const std::string& path, const std::string& what)
{
    throw Error(ErrorCode::Io, path + ": " + what);
}

std::string errnoText(int error) { return std::strerror(error); }

fs::path folderOf(const fs::path& target) { return target.has_parent_path() ? target.parent_path() : fs::path("."); }

// kTemporaryPrefix + 10 characters from the kernel's random source.
std::string randomTemporaryName()
{
    static const char kAlphabet[] = "abcdefghijklmnopqrstuvwxyz0123456789";
    unsigned char random[10];
    std::size_t got = 0;
    while (got < sizeof random) {
        const ssize_t n = ::getrandom(random + got, sizeof random - got, 0);
        if (n < 0) {
            if (errno == EINTR) continue;
            throw Error(ErrorCode::Io, "cannot get random bytes for a temporary file name (" + errnoText(errno) + ")");
        }
        got += static_cast<std::size_t>(n);
    }
    std::string name = kTemporaryPrefix;
    for (unsigned char r : random) name.push_back(kAlphabet[r % 36]);
    return name;
}

// The process's umask, read without changing it (umask() would race with other threads).
mode_t currentUmask()
{
    std::ifstream status("/proc/self/status");
    std::string line;
    while (std::getline(status, line))
        if (line.rfind("Umask:", 0) == 0) return static_cast<mode_t>(std::stoul(line.substr(6), nullptr, 8) & 0777);
    return 022;
}

// A descriptor closed on scope exit.
class Descriptor {
public:
    explicit Descriptor(int fd) : m_fd(fd) {}
    ~Descriptor()
    {
        if (m_fd >= 0) ::close(m_fd);
    }
    Descriptor(const Descriptor&) = delete;
    Descriptor& operator=(const Descriptor&) = delete;
    int get() const { return m_fd; }
    // Closes now and reports close()'s error (a delayed write error on some filesystems).
    int close()
    {
        const int rc = ::close(m_fd);
        m_fd = -1;
        return rc;
    }

private:
    int m_fd;
};

bool writeAll(int fd, const ByteRange& piece)
{
    const char* p = static_cast<const char*>(piece.data);
    std::size_t left = piece.size;
    while (left > 0) {
        const ssize_t n = ::write(fd, p, left);
        if (n < 0) {
            if (errno == EINTR) continue;
            return false;
        }
        p += n;
        left -= static_cast<std::size_t>(n);
    }
    return true;
}

// Moves `from` to `to` in one folder without ever replacing an existing `to`.
// Returns 0 or an errno value (EEXIST when `to` exists).
int moveWithoutReplacing(int folderFd, const std::string& from, const std::string& to)
{
    if (::renameat2(folderFd, from.c_str(), folderFd, to.c_str(), RENAME_NOREPLACE) == 0) return 0;
    if (errno != EINVAL && errno != ENOSYS && errno != ENOTSUP) return errno;
    // The filesystem lacks RENAME_NOREPLACE: link() refuses an existing name too.
    if (::linkat(folderFd, from.c_str(), folderFd, to.c_str(), 0) != 0) return errno;
    ::unlinkat(folderFd, from.c_str(), 0);
    return 0;
}

}  // namespace

int createExclusiveFile(int folderFd, const std::string& name)
{
    return ::openat(folderFd, name.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
}

void checkWritableDestination(const std::string& path, const AtomicWriteOptions& options)
{
    if (path.empty()) throw Error(ErrorCode::Io, "no output file name given");
    std::error_code ec;
    const fs::file_status entry = fs::symlink_status(path, ec);
    if (fs::exists(entry)) {
        for (const std::string& p : options.protectedPaths) {
            std::error_code ec2;
            if (fs::exists(p, ec2) && fs::equivalent(path, p, ec2))
                ioError(path, "refusing to overwrite the source image (" + options.protectedHint + ")");
        }
        if (fs::is_directory(path, ec)) ioError(path, "is a folder");
        if (!options.overwrite) ioError(path, "the file exists (pass --overwrite to replace it)");
        if (fs::is_symlink(entry)) {
            const fs::path target = fs::read_symlink(path, ec);
            ioError(path, "is a symbolic link (to '" + target.string() +
                              "'); links are neither replaced nor written through: write to its target instead");
        }
    }
    const fs::path dir = folderOf(fs::path(path));
    if (!fs::is_directory(dir, ec)) ioError(path, "the folder '" + dir.string() + "' does not exist");
    if (::access(dir.c_str(), W_OK) != 0)
        ioError(path, "no permission to write in the folder '" + dir.string() + "' (choose another folder)");
}

void writeFileAtomically(const std::string& path, const std::vector<ByteRange>& pieces,
                         const AtomicWriteOptions& options)
{
    checkWritableDestination(path, options);
    const fs::path target(path);
    const fs::path dir = folderOf(target);
    const std::string name = target.filename().string();
    Descriptor folder(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (folder.get() < 0) ioError(path, "cannot open the folder '" + dir.string() + "' (" + errnoText(errno) + ")");

    // The final mode: the old file's under overwrite, else what a plain create gives.
    struct stat old{};
    const bool replacing = options.overwrite && ::fstatat(folder.get(), name.c_str(), &old, AT_SYMLINK_NOFOLLOW) == 0 &&
                           S_ISREG(old.st_mode);
    const mode_t mode = replacing ? (old.st_mode & 0777) : (0666 & ~currentUmask());

    std::string temporary;
    int fd = -1;
    for (int attempt = 0; attempt < 100 && fd < 0; ++attempt) {
        temporary = randomTemporaryName();
        fd = createExclusiveFile(folder.get(), temporary);
        if (fd < 0 && errno != EEXIST) break;
    }
    if (fd < 0)
        ioError(path, "cannot create a file in '" + dir.string() + "' (" + errnoText(errno) + ")");
    Descriptor file(fd);
    std::error_code absoluteError;
    const PendingTemporary pending(fs::absolute(dir / temporary, absoluteError).string());  // removed on a signal
    const auto failAndRemove = [&](const std::string& what) {
        ::unlinkat(folder.get(), temporary.c_str(), 0);
        ioError(path, what);
    };
    for (const ByteRange& piece : pieces)
        if (!writeAll(file.get(), piece)) failAndRemove("writing failed (" + errnoText(errno) + ")");
    if (replacing && (old.st_uid != ::geteuid() || old.st_gid != ::getegid())) {
        // Keep the owner where permitted (root), else at least the group (a member may).
        if (::fchown(file.get(), old.st_uid, old.st_gid) != 0) (void)!::fchown(file.get(), static_cast<uid_t>(-1), old.st_gid);
    }
    if (::fchmod(file.get(), mode) != 0) failAndRemove("cannot set the file's permissions (" + errnoText(errno) + ")");
    if (::fsync(file.get()) != 0) failAndRemove("writing failed (" + errnoText(errno) + ")");
    if (file.close() != 0) failAndRemove("writing failed (" + errnoText(errno) + ")");

    if (options.overwrite) {
        if (::renameat(folder.get(), temporary.c_str(), folder.get(), name.c_str()) != 0)
            failAndRemove("cannot move the finished file into place (" + errnoText(errno) + ")");
    } else if (const int error = moveWithoutReplacing(folder.get(), temporary, name); error != 0) {
        failAndRemove(error == EEXIST ? "the file exists (it appeared while this one was written; pass --overwrite to "
                                        "replace it)"
                                      : "cannot move the finished file into place (" + errnoText(error) + ")");
    }
    ::fsync(folder.get());  // the new name is durable too (best effort: some filesystems refuse)
}

void writeFileAtomically(const std::string& path, const void* data, std::size_t size, const AtomicWriteOptions& options)
{
    writeFileAtomically(path, std::vector<ByteRange>{ByteRange{data, size}}, options);
}

}  // namespace uot
