#pragma once
// A set of files written into one folder as a unit (`uot solve`'s u.npy, v.npy,
// logu.npy, logv.npy and plan.npy), so that a consumer can tell a complete set
// from a mixed or partial one (a run killed between two files, next to an
// earlier run's files). The folder's manifest, kManifestName, is removed
// before the first file of the set is written and written last (atomically,
// through writeFileAtomically), listing each file with its size:
//
//   uot output set 1
//   <size in bytes> <file name>
//   ...
//
// A folder without the manifest, or whose files differ from it, does not hold a
// complete set. No Qt, no OpenCV.

#include <cstdint>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

namespace uot {

class OutputSet {
public:
    static constexpr const char* kManifestName = "uot-manifest.txt";

    // Removes the folder's manifest (durably: the folder is fsync'd) so that
    // whatever set it held no longer reads as complete. Throws uot::Error(Io).
    explicit OutputSet(std::filesystem::path folder);

    // Records `fileName`, just written into the folder, with its current size.
    void add(const std::string& fileName);

    // Writes the manifest listing every recorded file. Throws uot::Error(Io).
    void commit() const;

private:
    std::filesystem::path m_folder;
    std::vector<std::pair<std::string, std::uintmax_t>> m_files;
};

// The files of the complete set in `folder`, as its manifest lists them.
// Throws uot::Error(Io) naming the folder when there is no manifest (no
// complete set: an unfinished or interrupted run), or a listed file is missing
// or has another size.
std::vector<std::string> readOutputSet(const std::filesystem::path& folder);

}  // namespace uot
