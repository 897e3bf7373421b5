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
    const std::size_t nameBytes = fs::path(path).filename().string().size();
    const long nameMax = ::pathconf(dir.c_str(), _PC_NAME_MAX);
    if (nameMax > 0 && nameBytes > static_cast<std::size_t>(nameMax))
        ioError(path, "the file name is " + std::to_string(nameBytes) + " bytes long, above the " +
                          std::to_string(nameMax) + " that the folder '" + dir.string() + "' allows (choose a shorter name)");
}

struct StreamedAtomicFile::Pending {
    explicit Pending(const std::string& path) : registration(path) {}
    PendingTemporary registration;  // removed on a signal
    struct stat old{};
    bool replacing = false;
    mode_t mode = 0;
};

StreamedAtomicFile::StreamedAtomicFile(const std::string& path, const AtomicWriteOptions& options)
    : m_path(path), m_options(options)
{
    checkWritableDestination(path, options);
    const fs::path target(path);
    const fs::path dir = folderOf(target);
    m_folder = dir.string();
    m_folderFd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (m_folderFd < 0) ioError(path, "cannot open the folder '" + m_folder + "' (" + errnoText(errno) + ")");

    // The final mode: the old file's under overwrite, else what a plain create gives.
    struct stat old{};
    const std::string name = target.filename().string();
    const bool replacing = options.overwrite && ::fstatat(m_folderFd, name.c_str(), &old, AT_SYMLINK_NOFOLLOW) == 0 &&
                           S_ISREG(old.st_mode);
    for (int attempt = 0; attempt < 100 && m_fd < 0; ++attempt) {
        m_temporaryName = randomTemporaryName();
        m_fd = createExclusiveFile(m_folderFd, m_temporaryName);
        if (m_fd < 0 && errno != EEXIST) break;
    }
    if (m_fd < 0) {
        const int error = errno;
        ::close(m_folderFd);
        ioError(path, "cannot create a file in '" + m_folder + "' (" + errnoText(error) + ")");
    }
    std::error_code absoluteError;
    m_temporaryPath = fs::absolute(dir / m_temporaryName, absoluteError).string();
    m_pending = new Pending(m_temporaryPath);
    m_pending->old = old;
    m_pending->replacing = replacing;
    m_pending->mode = replacing ? (old.st_mode & 0777) : (0666 & ~currentUmask());
}

StreamedAtomicFile::~StreamedAtomicFile()
{
    if (m_fd >= 0) ::close(m_fd);
    if (!m_committed) ::unlinkat(m_folderFd, m_temporaryName.c_str(), 0);
    ::close(m_folderFd);
    delete m_pending;
}

void StreamedAtomicFile::commit()
{
    const auto fail = [&](const std::string& what) {
        if (m_fd >= 0) ::close(m_fd);
        m_fd = -1;
        ioError(m_path, what);  // the destructor removes the temporary file
    };
    const struct stat& old = m_pending->old;
    if (m_pending->replacing && (old.st_uid != ::geteuid() || old.st_gid != ::getegid())) {
        // Keep the owner where permitted (root), else at least the group (a member may).
        if (::fchown(m_fd, old.st_uid, old.st_gid) != 0) (void)!::fchown(m_fd, static_cast<uid_t>(-1), old.st_gid);
    }
    if (::fchmod(m_fd, m_pending->mode) != 0) fail("cannot set the file's permissions (" + errnoText(errno) + ")");
    if (::fsync(m_fd) != 0) fail("writing failed (" + errnoText(errno) + ")");
    const int closed = ::close(m_fd);
    m_fd = -1;
    if (closed != 0) fail("writing failed (" + errnoText(errno) + ")");

    const std::string name = fs::path(m_path).filename().string();
    if (m_options.overwrite) {
        if (::renameat(m_folderFd, m_temporaryName.c_str(), m_folderFd, name.c_str()) != 0)
            fail("cannot move the finished file into place (" + errnoText(errno) + ")");
    } else if (const int error = moveWithoutReplacing(m_folderFd, m_temporaryName, name); error != 0) {
        fail(error == EEXIST ? "the file exists (it appeared while this one was written; pass --overwrite to "
                               "replace it)"
                             : "cannot move the finished file into place (" + errnoText(error) + ")");
    }
    m_committed = true;
    ::fsync(m_folderFd);  // the new name is durable too (best effort: some filesystems refuse)
}

void writeFileAtomically(const std::string& path, const std::vector<ByteRange>& pieces,
                         const AtomicWriteOptions& options)
{
    StreamedAtomicFile file(path, options);
    for (const ByteRange& piece : pieces)
        if (!writeAll(file.descriptor(), piece)) ioError(path, "writing failed (" + errnoText(errno) + ")");
    file.commit();
}

void writeFileAtomically(const std::string& path, const void* data, std::size_t size, const AtomicWriteOptions& options)
{
    writeFileAtomically(path, std::vector<ByteRange>{ByteRange{data, size}}, options);
}

}  // namespace uot
