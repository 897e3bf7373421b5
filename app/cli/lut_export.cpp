#include "app/cli/lut_export.h"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <filesystem>

#include "core/io/atomic_file.h"
#include "core/pipeline/look_export.h"

namespace uot::cli {

namespace fs = std::filesystem;

int readLutSize(const ArgParser& parser, const std::string& option)
{
    const double v = parser.number(option);
    if (v != 17 && v != 33 && v != 65)
        throw UsageError("option '--" + option + "' must be 17, 33 or 65 (nodes per axis of the LUT; got " +
                         parser.value(option) + ")");
    return static_cast<int>(v);
}

void checkLutOutput(const std::string& path, const std::vector<std::string>& inputs)
{
    std::string ext = fs::path(path).extension().string();
    std::transform(ext.begin(), ext.end(), ext.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    if (ext != ".cube") throw UsageError("the LUT file must end in .cube (got '" + path + "')");
    for (const std::string& input : inputs) {
        std::error_code ec;
        const bool same = fs::exists(path, ec) && fs::exists(input, ec) && fs::equivalent(path, input, ec);
        if (same || fs::path(path).lexically_normal() == fs::path(input).lexically_normal())
            throw UsageError("the LUT file '" + path + "' is one of this command's images (" + input +
                             "); choose another name");
    }
}

double exportLookLut(RecolorPipeline& pipeline, const std::string& path, int size, const std::string& title,
                     bool overwrite, const std::vector<std::string>& inputs)
{
    AtomicWriteOptions options;
    options.overwrite = overwrite;
    options.protectedPaths = inputs;
    checkWritableDestination(path, options);  // before the work, so a bad path fails at once
    const auto start = std::chrono::steady_clock::now();
    const CubeLut lut = bakePipelineLook(pipeline, size, title);
    writeCubeFile(path, lut, options);
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

std::string lookTitle(const std::string& sourcePath, const std::string& referencePath)
{
    return fs::path(sourcePath).stem().string() + "_to_" + fs::path(referencePath).stem().string();
}

}  // namespace uot::cli
