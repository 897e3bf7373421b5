#include "app/cli/lut_export.h"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>

#include "core/color/hald_clut.h"
#include "core/io/atomic_file.h"
#include "core/pipeline/lut_file.h"

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

int readHaldLevel(const ArgParser& parser, const std::string& option)
{
    const double v = parser.number(option);
    if (!(v >= kMinHaldLevel && v <= kMaxHaldLevel) || v != std::floor(v))
        throw UsageError("option '--" + option + "' must be a whole number from " + std::to_string(kMinHaldLevel) +
                         " to " + std::to_string(kMaxHaldLevel) + " (a Hald CLUT of level L has L^2 nodes per axis; got " +
                         parser.value(option) + ")");
    return static_cast<int>(v);
}

namespace {

std::string lowerExtension(const std::string& path)
{
    std::string ext = fs::path(path).extension().string();
    std::transform(ext.begin(), ext.end(), ext.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return ext;
}

}  // namespace

bool isHaldOutput(const std::string& path) { return lutFileFormat(path) == LutFileFormat::Hald; }

int readLutNodes(const ArgParser& parser, const std::string& path, const std::string& sizeOption,
                 const std::string& haldOption)
{
    const bool hald = isHaldOutput(path);
    if (hald && parser.has(sizeOption))
        throw UsageError("option '--" + sizeOption + "' sets the nodes per axis of a .cube LUT; '" + path +
                         "' is a Hald CLUT (.png), " +
                         (haldOption.empty() ? "written at level " + std::to_string(kDefaultHaldLevel)
                                             : "sized by --" + haldOption));
    if (!hald && !haldOption.empty() && parser.has(haldOption))
        throw UsageError("option '--" + haldOption + "' applies to a Hald CLUT (a .png name); a .cube LUT is sized by --" +
                         sizeOption);
    if (!hald) return readLutSize(parser, sizeOption);
    return haldCubeSize(haldOption.empty() ? kDefaultHaldLevel : readHaldLevel(parser, haldOption));
}

void checkLutOutput(const std::string& path, const std::vector<std::string>& inputs)
{
    const std::string ext = lowerExtension(path);
    if (ext != ".cube" && ext != ".png")
        throw UsageError("the LUT file must end in .cube, or .png for a Hald CLUT (got '" + path + "')");
    for (const std::string& input : inputs) {
        std::error_code ec;
        const bool same = fs::exists(path, ec) && fs::exists(input, ec) && fs::equivalent(path, input, ec);
        if (same || fs::path(path).lexically_normal() == fs::path(input).lexically_normal())
            throw UsageError("the LUT file '" + path + "' is one of this command's images (" + input +
                             "); choose another name");
    }
}

LutExportReport exportLookLut(RecolorPipeline& pipeline, const std::string& path, int nodesPerAxis,
                              const std::string& title, bool overwrite, const std::vector<std::string>& inputs,
                              LookLutSource source, const Image* rendered)
{
    AtomicWriteOptions options;
    options.overwrite = overwrite;
    options.protectedPaths = inputs;
    checkWritableDestination(path, options);  // before the work, so a bad path fails at once
    const auto start = std::chrono::steady_clock::now();
    const LookLut look = exportPipelineLook(pipeline, nodesPerAxis, title, source, {}, rendered);
    writeEncodedLut(encodeLut(look.lut, lutFileFormat(path)), path, options);
    LutExportReport report;
    report.nodesPerAxis = nodesPerAxis;
    report.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    report.psnr = look.psnr;
    report.globalMapPsnr = look.globalMapPsnr;
    return report;
}

std::string describeLutExport(const std::string& path, const LutExportReport& report, LookLutSource source)
{
    char line[512];
    if (source == LookLutSource::GlobalMap)
        std::snprintf(line, sizeof line,
                      "%s: the global color map (%d^3); against the rendered result with these settings: %.1f dB PSNR",
                      path.c_str(), report.nodesPerAxis, report.psnr);
    else
        std::snprintf(line, sizeof line,
                      "%s: fitted to the rendered result (%d^3, tetrahedral): %.1f dB PSNR against it (the global map "
                      "alone: %.1f dB)",
                      path.c_str(), report.nodesPerAxis, report.psnr, report.globalMapPsnr);
    return line;
}

std::string lookTitle(const std::string& sourcePath, const std::string& referencePath)
{
    return fs::path(sourcePath).stem().string() + "_to_" + fs::path(referencePath).stem().string();
}

}  // namespace uot::cli
