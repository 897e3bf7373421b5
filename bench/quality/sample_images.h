#pragma once
// The sample images a bench runs over: the .jpg and .png files of a folder,
// sorted by path (every ordered pair of them is a case).

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

namespace uot::bench {

inline std::vector<std::string> sampleImages(const std::string& folder)
{
    std::vector<std::string> files;
    for (const auto& entry : std::filesystem::directory_iterator(folder))
        if (entry.path().extension() == ".jpg" || entry.path().extension() == ".png")
            files.push_back(entry.path().string());
    std::sort(files.begin(), files.end());
    return files;
}

}  // namespace uot::bench
