#include "core/io/output_set.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include "core/io/atomic_file.h"
#include "core/transport/uot_error.h"

namespace uot {

namespace fs = std::filesystem;

namespace {

constexpr const char* kFirstLine = "uot output set 1";

[[noreturn]] void setError(const fs::path& folder, const std::string& what)
{
    throw Error(ErrorCode::Io, folder.string() + ": " + what);
}

}  // namespace

OutputSet::OutputSet(fs::path folder) : m_folder(std::move(folder))
{
    const fs::path manifest = m_folder / kManifestName;
    if (::unlink(manifest.c_str()) != 0 && errno != ENOENT)
        setError(m_folder, std::string("cannot remove the old ") + kManifestName + " (" + std::strerror(errno) + ")");
    // The removal must reach the disk before any file of the new set does.
    if (const int fd = ::open(m_folder.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC); fd >= 0) {
        ::fsync(fd);
        ::close(fd);
    }
}

void OutputSet::add(const std::string& fileName)
{
    std::error_code ec;
    const std::uintmax_t size = fs::file_size(m_folder / fileName, ec);
    if (ec) setError(m_folder, "cannot read the size of " + fileName + " (" + ec.message() + ")");
    m_files.emplace_back(fileName, size);
}

void OutputSet::commit() const
{
    std::string text = std::string(kFirstLine) + "\n";
    for (const auto& [name, size] : m_files) text += std::to_string(size) + " " + name + "\n";
    writeFileAtomically((m_folder / kManifestName).string(), text.data(), text.size());
}

std::vector<std::string> readOutputSet(const fs::path& folder)
{
    std::ifstream in(folder / OutputSet::kManifestName);
    if (!in)
        setError(folder, std::string("no ") + OutputSet::kManifestName +
                             ": the folder holds no complete set of outputs (an unfinished or interrupted run)");
    std::string line;
    if (!std::getline(in, line) || line != kFirstLine)
        setError(folder, std::string(OutputSet::kManifestName) + " is not a uot manifest");
    std::vector<std::string> names;
    while (std::getline(in, line)) {
        std::istringstream fields(line);
        std::uintmax_t size = 0;
        std::string name;
        if (!(fields >> size) || !std::getline(fields >> std::ws, name) || name.empty())
            setError(folder, std::string(OutputSet::kManifestName) + " has a malformed line: " + line);
        std::error_code ec;
        const std::uintmax_t actual = fs::file_size(folder / name, ec);
        if (ec) setError(folder, name + " is listed in " + OutputSet::kManifestName + " but missing");
        if (actual != size)
            setError(folder, name + " has " + std::to_string(actual) + " bytes, not the " + std::to_string(size) +
                                 " the manifest lists: it is not from the same run");
        names.push_back(name);
    }
    return names;
}

}  // namespace uot
