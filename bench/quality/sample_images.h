#pragma once
// The sample images a bench runs over: the .jpg and .png files of a folder (or of
// several, comma-separated), sorted by path (every ordered pair of them is a case).

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

namespace uot::bench {

inline std::vector<std::string> sampleImages(const std::string& folders)
{
    std::vector<std::string> files;
    std::size_t start = 0;
    while (start <= folders.size()) {
        const std::size_t end = std::min(folders.find(',', start), folders.size());
        for (const auto& entry : std::filesystem::directory_iterator(folders.substr(start, end - start)))
            if (entry.path().extension() == ".jpg" || entry.path().extension() == ".png")
                files.push_back(entry.path().string());
        start = end + 1;
    }
    std::sort(files.begin(), files.end());
    return files;
}

}  // namespace uot::bench
