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
#include "app/cli/solver_flags.h"
#include "core/io/atomic_file.h"
#include "core/pipeline/region_recolor.h"
#include "core/transport/uot_error.h"

namespace uot::cli {

namespace {

std::string number(double v)
{
    if (std::isinf(v)) return "inf";
    std::ostringstream o;
    o << v;
    return o.str();
}

// The defaults shown and used are the pipeline's (RecolorSettings), shared with the studio.
SolverFlagConfig recolorSolverConfig()
{
    const RecolorSettings d;
    SolverFlagConfig c;
    c.defaultEps = number(d.transport.eps);
    c.defaultTau = "1";
    c.defaultTauA = number(d.transport.sourceAdherence);
    c.defaultTauB = number(d.transport.adherence);
    // Solved to tolerance by default (the accelerated iteration of --solver auto takes
    // tens to a few hundred passes); the cap is a safety net, reported when hit.
    c.defaultMaxIter = "5000";
    c.defaultTol = "1e-5";
    c.tauBHelp =
        "adherence to the reference palette (tau on the reference side): larger = the result uses the reference's "
        "colors in their proportions, smaller = reference colors the source has no use for may be dropped; inf = exact";
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
    if (parser.has("depth")) {
        write.depth = parser.integer("depth");
        if (write.depth != 8 && write.depth != 16) throw UsageError("option '--depth' must be 8 or 16");
    }
    const std::string color = parser.value("output-color");
    if (color == "auto") write.color = OutputColor::Auto;
    else if (color == "color") write.color = OutputColor::Color;
    else if (color == "gray") write.color = OutputColor::Gray;
    else throw UsageError("option '--output-color' must be auto, color or gray");
    write.profile = asUsage("output-profile", [&] { return parseOutputProfile(parser.value("output-profile")); });
    write.jpegQuality = parser.integer("jpeg-quality");
    if (write.jpegQuality < 1 || write.jpegQuality > 100) throw UsageError("option '--jpeg-quality' must be 1..100");
}

}  // namespace

void addRecolorOptions(ArgParser& parser, RecolorOptionSet set)
{
    const bool output = set == RecolorOptionSet::Full;  // the output file's options
    const RecolorSettings d;
    parser.addOption("space", "lab|oklab|linear-rgb", "working color space of palettes, costs and displacements", "lab");
    parser.addOption("palette-size", "N",
                     "maximum colors per palette (1.." + std::to_string(kMaxPaletteSize) +
                         "; palettes whose matrix would not fit in memory are solved matrix-free)",
                     std::to_string(d.palette.size));
    parser.addOption("palette-method", "histogram|kmeans",
                     "histogram: adaptive 3-D histogram (fast, deterministic); kmeans: weighted k-means on it (slower)",
                     "histogram");
    parser.addOption("palette-bins", "N", "bins per axis of the finest histogram (power of two, 8..256)",
                     std::to_string(d.palette.finestBins));
    parser.addOption("seed", "N", "seed of pixel sampling and k-means (same seed, same output)", "1");
    parser.addOption("sample-limit", "N", "pixels read to build a palette (regular stride), 0 = all",
                     std::to_string(d.palette.sampleLimit));
    parser.addOption("fade", "X", "how much of the look is applied: 0 = the source unchanged, 1 = the full look (up to 2 "
                     "extrapolates)", "1");
    parser.addOption("strength", "X", "the same as --fade (its former name)");
    parser.addOption("luminance", "PERCENT",
                     "luminance intensity, 0..200: how far the result's lightness moves to the transferred lightness "
                     "(0 = the source's lightness, 100 = the transfer's)", "100");
    parser.addOption("color-intensity", "PERCENT", "color intensity, 0..200: scales the result's chroma (0 = grey)",
                     "100");
    parser.addFlag("neutralize", "remove the reference's overall color cast before the transfer");
    parser.addOption("protect-skin", "PERCENT",
                     "0..100: keep skin-toned source pixels' hue close to the source's (soft falloff)", "0");
    parser.addOption("protect-neutrals", "PERCENT",
                     "0..100: keep grey and near-grey source pixels close to the source's color (soft falloff)", "0");
    parser.addFlag("preserve-luminance", "keep the source's lightness; transfer only the color");
    parser.addOption("gamut", "clip|compress", "out-of-gamut colors: clip channels, or desaturate toward equal luminance",
                     "compress");
    parser.addOption("lut-size", "N", "nodes per axis of the color-space map (9..129)", std::to_string(d.mapping.lutSize));
    parser.addOption("residual-match", "X",
                     "0..1: move the result's chroma toward the reference's per-channel distributions, through "
                     "the smoothed field (not in --no-smooth renders)",
                     number(d.mapping.residualMatch));
    parser.addOption("residual-lightness", "X",
                     "0..1: move the result's lightness toward the reference's distribution, as --residual-match",
                     number(d.mapping.residualLightness));
    parser.addFlag("no-smooth", "do not smooth the displacement field (guided filter) over the image");
    parser.addOption("smooth-guide", "lightness|color|split",
                     "what the smoothing follows: the source's lightness, its color (3x3 guided filter), or "
                     "split (lightness for the lightness shift, color for the chroma shift)",
                     toString(d.mapping.smoothGuide));
    parser.addOption("smooth-radius", "X", "guided-filter radius as a fraction of the longer side",
                     number(d.mapping.smoothRadius));
    parser.addOption("smooth-eps", "X", "guided-filter edge threshold, in (guide/range)^2 units",
                     number(d.mapping.smoothEps));
    parser.addOption("smooth-chroma-eps", "X",
                     "edge threshold on the color guide's chroma axes (Lab/Oklab): chroma variations smaller than "
                     "its square root (JPEG blocks, noise) keep the source's contrast",
                     number(d.mapping.smoothChromaEps));
    parser.addOption("smooth-min-slope", "X|none",
                     "smallest local slope of result lightness over source lightness the smoothing allows",
                     std::isfinite(d.mapping.smoothMinSlope) ? number(d.mapping.smoothMinSlope) : std::string("none"));
    addSolverOptions(parser, recolorSolverConfig());
    parser.addFlag("no-multiscale", "solve cold instead of warm-starting from a solve between reduced palettes");
    if (output) {
        parser.addOption("depth", "8|16", "output bits per channel (default: the source's; JPEG/WebP/BMP are 8-bit)");
        parser.addOption("output-color", "auto|color|gray", "gray writes the luminance only", "auto");
        parser.addOption("output-profile", outputProfileChoices(),
                         "color profile of the output: the sRGB result is converted into it (relative colorimetric, "
                         "black-point compensation) and it is embedded in PNG/JPEG/TIFF (WebP/BMP stay sRGB); source = the source's "
                         "own embedded profile (sRGB when it has none)",
                         "srgb");
        parser.addOption("jpeg-quality", "N", "JPEG quality 1..100", "95");
    }
    parser.addOption("max-pixels", "N", "refuse images with more pixels, or more bytes than N 8-bit RGB pixels (0 = no limit)",
                     "200000000");
    parser.addFlag("ignore-exif-orientation", "do not rotate JPEGs by their EXIF orientation tag");
    if (output) parser.addFlag("overwrite-source", "allow the output to replace the source file");
    parser.addFlag("json", "print phase timings and solver statistics as JSON on stdout");
    parser.addFlag("quiet", "no progress on stderr");
}

static LookControls readLookControls(const ArgParser& parser)
{
    LookControls look;
    auto percent = [&](const char* option, const char* control) {
        const double value = parser.number(option) / 100.0;
        const std::string problem = lookControlProblem(control, value);
        if (!problem.empty()) throw UsageError("option '--" + std::string(option) + "': " + problem);
        return value;
    };
    look.luminance = percent("luminance", "luminance");
    look.colorIntensity = percent("color-intensity", "color-intensity");
    look.neutralize = parser.flag("neutralize");
    look.protectSkin = percent("protect-skin", "protect-skin");
    look.protectNeutrals = percent("protect-neutrals", "protect-neutrals");
    return look;
}

RecolorCliSettings readRecolorOptions(const ArgParser& parser, RecolorOptionSet set)
{
    const bool output = set == RecolorOptionSet::Full;
    RecolorCliSettings out;
    RecolorSettings& s = out.recolor;
    s.space = asUsage("space", [&] { return parseWorkingSpace(parser.value("space")); });
    s.palette.size = parser.integer("palette-size");
    s.palette.method = asUsage("palette-method", [&] { return parsePaletteMethod(parser.value("palette-method")); });
    s.palette.finestBins = parser.integer("palette-bins");
    const double seed = parser.number("seed");
    if (seed < 0 || seed != std::floor(seed)) throw UsageError("option '--seed' must be a whole number >= 0");
    s.palette.seed = static_cast<std::uint64_t>(seed);
    const double limit = parser.number("sample-limit");
    if (limit < 0) throw UsageError("option '--sample-limit' must be >= 0");
    s.palette.sampleLimit = static_cast<std::size_t>(limit);
    s.mapping.strength = parser.number("fade");
    if (parser.has("strength")) {
        const double strength = parser.number("strength");
        if (parser.has("fade") && !(strength == s.mapping.strength))
            throw UsageError("options '--fade' and '--strength' (the same setting) disagree");
        s.mapping.strength = strength;
    }
    s.mapping.look = readLookControls(parser);
    s.mapping.preserveLuminance = parser.flag("preserve-luminance");
    s.mapping.gamut = asUsage("gamut", [&] { return parseGamutMode(parser.value("gamut")); });
    s.mapping.lutSize = parser.integer("lut-size");
    s.mapping.residualMatch = parser.number("residual-match");
    s.mapping.residualLightness = parser.number("residual-lightness");
    s.mapping.smooth = !parser.flag("no-smooth");
    s.mapping.smoothGuide = asUsage("smooth-guide", [&] { return parseSmoothingGuide(parser.value("smooth-guide")); });
    s.mapping.smoothRadius = parser.number("smooth-radius");
    s.mapping.smoothEps = parser.number("smooth-eps");
    s.mapping.smoothChromaEps = parser.number("smooth-chroma-eps");
    s.mapping.smoothMinSlope = parser.value("smooth-min-slope") == "none" ? -std::numeric_limits<double>::infinity()
                                                                           : parser.number("smooth-min-slope");

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
    s.transport.multiscale = !parser.flag("no-multiscale");
    s.threads = solver.options.threads;
    try {
        validateSettings(s);
    } catch (const Error& e) {
        throw UsageError(e.what());
    }

    if (output) readImageOutputOptions(parser, out.write);
    const double maxPixels = parser.number("max-pixels");
    if (maxPixels < 0) throw UsageError("option '--max-pixels' must be >= 0");
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
