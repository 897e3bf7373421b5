#include "app/cli/recolor_options.h"

// GCC 12 reports a false -Wrestrict inside std::string assignment (GCC bug 105329).
#if defined(__GNUC__) && !defined(__clang__) && __GNUC__ == 12
#pragma GCC diagnostic ignored "-Wrestrict"
#endif

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstdio>
#include <filesystem>
#include <limits>
#include <sstream>

#include "app/cli/json_text.h"
#include "app/cli/parameter_flags.h"
#include "app/cli/solver_flags.h"
#include "core/params/parameter_schema.h"
#include "core/io/atomic_file.h"
#include "core/pipeline/region_recolor.h"
#include "core/transport/uot_error.h"

namespace uot::cli {

namespace {

// The solver flags of recolor, batch and lut: the parameter table's, with the
// pipeline's defaults and ranges, shared with the studio.
SolverFlagConfig recolorSolverConfig()
{
    SolverFlagConfig c;
    c.problems = params::Problems::Colors;
    return c;
}

template <typename F>
auto asUsage(const std::string& option, F&& f) -> decltype(f())
{
    try {
        return f();
    } catch (const Error& e) {
        throw UsageError("option '--" + option + "': " + e.what());
    }
}

void readImageOutputOptions(const ArgParser& parser, WriteOptions& write)
{
    const auto text = [&parser](const char* name) { return parameterText(parser, params::parameter(name)); };
    const int quality = static_cast<int>(parameterNumber(parser, params::parameter("jpeg-quality")));
    asUsage("output-profile",
            [&] { setOutputChoices(write, text("depth"), text("output-color"), text("output-profile"), quality); });
}

}  // namespace

void addRecolorOptions(ArgParser& parser, RecolorOptionSet set)
{
    const bool output = set == RecolorOptionSet::Full;  // the output file's options
    addParameterOptions(parser, params::CliGroup::Recolor);
    addSolverOptions(parser, recolorSolverConfig());
    if (output) addParameterOptions(parser, params::CliGroup::Output);
    addParameterOptions(parser, params::CliGroup::Input);
    parser.addFlag("ignore-exif-orientation", "do not rotate JPEGs by their EXIF orientation tag");
    if (output) parser.addFlag("overwrite-source", "allow the output to replace the source file");
    parser.addFlag("json", "print phase timings and solver statistics as JSON on stdout");
    parser.addFlag("quiet", "no progress on stderr");
}

RecolorCliSettings readRecolorOptions(const ArgParser& parser, RecolorOptionSet set)
{
    const bool output = set == RecolorOptionSet::Full;
    RecolorCliSettings out;
    RecolorSettings& s = out.recolor;
    readParameterOptions(parser, params::CliGroup::Recolor, s);

    const SolverSettings solver = readSolverOptions(parser, recolorSolverConfig());
    requireUsableDevice(solver);  // --device gpu without a GPU: exit 4 before any work
    out.deviceAuto = solver.deviceAuto;
    out.deviceNote = solver.deviceNote;
    s.transport.solver = solver.solver;
    s.transport.eps = solver.eps;
    s.transport.sourceAdherence = solver.tauA;
    s.transport.adherence = solver.tauB;
    s.transport.reference = solver.reference;
    s.transport.options = solver.options;
    s.threads = solver.options.threads;
    try {
        validateSettings(s);
    } catch (const Error& e) {
        throw UsageError(e.what());
    }

    if (output) readImageOutputOptions(parser, out.write);
    const double maxPixels = parameterNumber(parser, params::parameter("max-pixels"));
    out.read.maxPixels = static_cast<std::uint64_t>(maxPixels);
    out.read.applyExifOrientation = !parser.flag("ignore-exif-orientation");
    out.json = parser.flag("json");
    out.quiet = parser.flag("quiet");
    return out;
}

void addRegionOptions(ArgParser& parser, MaskOption mask)
{
    if (mask == MaskOption::File)
        parser.addOption("mask", "MASK.png",
                         "recolor only where the mask is white (black keeps the source exactly, grey blends); gray, "
                         "RGB (mean of R, G, B) or RGBA (times alpha), 8/16-bit, resized to the source (box filter "
                         "when shrinking, bilinear when enlarging); the source palette is taken under the mask");
    if (mask == MaskOption::File)
        parser.addOption("region", "MASK=REFERENCE",
                         "up to " + std::to_string(kMaxRegions) + " times, without REFERENCE arguments: a region "
                         "recolored from its own reference through its mask (as --mask), each its own transport "
                         "problem; later regions over earlier ones, pixels under none keep the source",
                         "", true);
    if (mask == MaskOption::Pattern)
        parser.addOption("mask-pattern", "TEXT",
                         "one mask per input, as --mask: {name} = input name without extension, {ext} = its "
                         "extension, {dir} = its folder (e.g. masks/{name}.png); an input without its mask fails");
    if (mask != MaskOption::None)
        parser.addOption("mask-feather", "R",
                         "soften the mask's edges along the source's color edges (guided filter of radius R "
                         "pixels); 0 = the mask as given",
                         "0");
    parser.addOption("reference-weights", "W1,W2,...",
                     "with several references: the share of each in the pooled reference palette (numbers > 0; "
                     "default equal, whatever the images' sizes)");
}

RegionCliSettings readRegionOptions(const ArgParser& parser, MaskOption mask, std::size_t references)
{
    RegionCliSettings out;
    if (mask == MaskOption::File && parser.has("mask")) out.mask = parser.value("mask");
    if (mask == MaskOption::Pattern && parser.has("mask-pattern")) out.maskPattern = parser.value("mask-pattern");
    if (mask != MaskOption::None) {
        out.maskFeather = parser.integer("mask-feather");
        if (out.maskFeather < 0 || out.maskFeather > 1000)
            throw UsageError("option '--mask-feather' needs a whole number of pixels from 0 to 1000, got " +
                             parser.value("mask-feather"));
    }
    if (mask == MaskOption::File && parser.has("region")) {
        for (const std::string& item : parser.values("region")) {
            const std::size_t eq = item.find('=');
            if (eq == std::string::npos || eq == 0 || eq + 1 == item.size())
                throw UsageError("option '--region' needs MASK=REFERENCE, got '" + item + "'");
            out.regions.push_back({item.substr(0, eq), item.substr(eq + 1)});
        }
        if (out.regions.size() > static_cast<std::size_t>(kMaxRegions))
            throw UsageError("option '--region' given " + std::to_string(out.regions.size()) + " times: at most " +
                             std::to_string(kMaxRegions) + " regions");
    }
    if (parser.has("reference-weights")) {
        for (const std::string& item : splitList(parser.value("reference-weights"))) {
            char* end = nullptr;
            const double w = std::strtod(item.c_str(), &end);
            if (end == item.c_str() || *end != '\0' || !std::isfinite(w) || !(w > 0))
                throw UsageError("option '--reference-weights' needs numbers > 0, got '" + item + "'");
            out.referenceWeights.push_back(w);
        }
        if (out.referenceWeights.size() != references)
            throw UsageError("option '--reference-weights' has " + std::to_string(out.referenceWeights.size()) +
                             " weights for " + std::to_string(references) + " reference images");
    }
    return out;
}

void setReferences(RecolorPipeline& pipeline, std::vector<Image> references, const RegionCliSettings& regions)
{
    if (references.size() == 1) {
        pipeline.setReference(std::move(references.front()));
        return;
    }
    std::vector<const Image*> images;
    for (const Image& image : references) images.push_back(&image);
    const RecolorSettings& s = pipeline.settings();
    pipeline.setReferencePalette(std::make_shared<const Palette>(
        buildPooledPalette(images, regions.referenceWeights, s.space, s.palette, s.threads)));
}

namespace {

// Whether two paths name one file: the same place once normalised, or (both
// existing) one file under two names (links).
bool sameFile(const std::string& a, const std::string& b)
{
    std::error_code ec;
    if (std::filesystem::absolute(a, ec).lexically_normal() == std::filesystem::absolute(b, ec).lexically_normal())
        return true;
    return std::filesystem::exists(a, ec) && std::filesystem::exists(b, ec) && std::filesystem::equivalent(a, b, ec);
}

}  // namespace

void checkImageOutput(const std::string& output, const std::string& source, const std::string& reference,
                      bool overwrite, bool overwriteSource)
{
    if (!isSupportedImageExtension(output))
        throw UsageError(output + ": cannot write this kind of file; the output name must end in .jpg, .png, .tif, "
                                  ".webp or .bmp");
    if (sameFile(output, reference))
        throw Error(ErrorCode::Io, output + ": refusing to overwrite the reference image (choose another output)");
    if (!overwriteSource && sameFile(output, source))
        throw Error(ErrorCode::Io, output + ": refusing to overwrite the source image (choose another output, or "
                                            "pass --overwrite-source)");
    AtomicWriteOptions destination;
    destination.overwrite = overwrite;
    checkWritableDestination(output, destination);
}

std::vector<std::string> expandShortOutput(const std::vector<std::string>& args)
{
    std::vector<std::string> out;
    for (const std::string& a : args) out.push_back(a == "-o" ? "--output" : a);
    return out;
}

StderrProgress::StderrProgress(bool enabled)
    : m_enabled(enabled), m_start(std::chrono::steady_clock::now()), m_last(m_start)
{
}

StderrProgress::~StderrProgress() { finish(); }

void StderrProgress::update(const std::string& label, const PipelineProgress& p)
{
    if (!m_enabled) return;
    const auto now = std::chrono::steady_clock::now();
    if (now - m_start < std::chrono::seconds(1)) return;
    if (m_printed && now - m_last < std::chrono::milliseconds(200) && p.fraction < 1.0) return;
    m_last = now;
    m_printed = true;
    if (p.solve)
        std::fprintf(stderr, "\r%s%-7s %3.0f%%  iteration %d  error %.2e      ", label.c_str(), toString(p.stage).c_str(),
                     100 * p.fraction, p.solve->iteration, p.solve->error);
    else
        std::fprintf(stderr, "\r%s%-7s %3.0f%%                                   ", label.c_str(),
                     toString(p.stage).c_str(), 100 * p.fraction);
    std::fflush(stderr);
}

void StderrProgress::finish()
{
    if (m_printed) std::fprintf(stderr, "\n");
    m_printed = false;
}

std::string timingsJson(const PhaseTimings& t)
{
    std::ostringstream o;
    o.precision(6);
    o << "{\"decode\": " << t.decode << ", \"palette\": " << t.palette << ", \"cost\": " << t.cost
      << ", \"solve\": " << t.solve << ", \"map\": " << t.map << ", \"encode\": " << t.encode
      << ", \"total\": " << t.total() << "}";
    return o.str();
}

std::string deviceNote(const RecolorCliSettings& cli, const PipelineStats& stats)
{
    std::string note = cli.deviceNote;
    if (!stats.gpuNote.empty()) note += (note.empty() ? "" : "; ") + stats.gpuNote;
    return note;
}

std::string deviceJson(const RecolorCliSettings& cli, const PipelineStats& stats)
{
    return "\"device\": " + jsonString(stats.solvedOnGpu ? "gpu" : "cpu") +
           ", \"device_note\": " + jsonString(deviceNote(cli, stats));
}

}  // namespace uot::cli
