#include "core/video/clip_paths.h"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <regex>

namespace uot {

namespace {

std::string lowerExtension(const std::string& path)
{
    std::string ext = std::filesystem::path(path).extension().string();
    std::transform(ext.begin(), ext.end(), ext.begin(), [](unsigned char c) { return char(std::tolower(c)); });
    return ext;
}

const std::regex& numberField()
{
    static const std::regex field("%0?[1-9]?d");
    return field;
}

}  // namespace

bool isVideoFile(const std::string& path)
{
    const std::string ext = lowerExtension(path);
    return ext == ".mp4" || ext == ".mov" || ext == ".mkv" || ext == ".webm";
}

bool isImageSequencePattern(const std::string& path)
{
    const std::string name = std::filesystem::path(path).filename().string();
    const auto begin = std::sregex_iterator(name.begin(), name.end(), numberField());
    if (std::distance(begin, std::sregex_iterator()) != 1) return false;
    if (std::count(name.begin(), name.end(), '%') != 1) return false;
    const std::string ext = lowerExtension(path);
    return ext == ".png" || ext == ".jpg" || ext == ".jpeg" || ext == ".tif" || ext == ".tiff" || ext == ".bmp" ||
           ext == ".webp";
}

std::string sequenceFramePath(const std::string& pattern, long long number)
{
    const std::filesystem::path p(pattern);
    const std::string name = p.filename().string();
    std::smatch m;
    std::regex_search(name, m, numberField());
    const std::string field = m.str(0);
    // "%d" has no width, "%5d" pads with spaces, "%05d" with zeros (as printf).
    const std::size_t width = field.size() > 2 ? std::size_t(field[field.size() - 2] - '0') : 0;
    const char pad = field.size() > 3 ? '0' : ' ';
    std::string digits = std::to_string(number);
    if (digits.size() < width) digits.insert(0, width - digits.size(), pad);
    return (p.parent_path() / (m.prefix().str() + digits + m.suffix().str())).string();
}

}  // namespace uot
