#include "core/params/parameter_schema.h"

// GCC 12 reports a false -Wrestrict inside std::string concatenation (GCC bug 105329).
#if defined(__GNUC__) && !defined(__clang__) && __GNUC__ == 12
#pragma GCC diagnostic ignored "-Wrestrict"
#endif

#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <sstream>
#include <stdexcept>
#include <type_traits>
#include <utility>

#include "core/registry/solver_registry.h"

namespace uot::params {

std::string toString(Stage stage)
{
    switch (stage) {
    case Stage::Palette: return "palette";
    case Stage::Solve: return "solve";
    case Stage::Map: return "map";
    case Stage::None: return "none";
    }
    return "?";
}

namespace {

std::string number(double v)
{
    if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
    std::ostringstream o;
    o << v;
    return o.str();
}

std::string joined(const std::vector<std::string>& items, const std::string& separator)
{
    std::string out;
    for (const std::string& item : items) out += (out.empty() ? "" : separator) + item;
    return out;
}

// The spellings of an enum, from the core's own toString.
template <typename Enum>
std::vector<std::string> spellings(std::initializer_list<Enum> values)
{
    std::vector<std::string> out;
    for (Enum v : values) out.push_back(toString(v));
    return out;
}

// "auto" and the CPU variants of the solver registry (a device setting picks the GPU form).
std::vector<std::string> solverChoices()
{
    std::vector<std::string> names{"auto"};
    for (const SolverInfo& info : listSolvers())
        if (info.caps.device != DeviceKind::Gpu) names.push_back(info.name);
    return names;
}

// Builders for the entries.
Parameter real(std::string name, std::string label, double lo, double hi, std::string description)
{
    Parameter p;
    p.name = std::move(name);
    p.kind = Kind::Real;
    p.label = std::move(label);
    p.min = lo;
    p.max = hi;
    p.description = std::move(description);
    p.valueName = "X";
    return p;
}

Parameter integer(std::string name, std::string label, double lo, double hi, std::string description)
{
    Parameter p = real(std::move(name), std::move(label), lo, hi, std::move(description));
    p.kind = Kind::Integer;
    p.valueName = "N";
    return p;
}

// A fraction the user sees, types and saves in percent.
Parameter percent(std::string name, std::string label, double hi, std::string description)
{
    Parameter p = real(std::move(name), std::move(label), 0, hi, std::move(description));
    p.unit = "%";
    p.valueName = "PERCENT";
    return p;
}

Parameter flag(std::string name, std::string label, std::string description)
{
    Parameter p;
    p.name = std::move(name);
    p.kind = Kind::Flag;
    p.label = std::move(label);
    p.description = std::move(description);
    p.min = 0;
    p.max = 1;
    return p;
}

Parameter choice(std::string name, std::string label, std::vector<std::string> choices, std::string description)
{
    Parameter p;
    p.name = std::move(name);
    p.kind = Kind::Choice;
    p.label = std::move(label);
    p.choices = std::move(choices);
    p.valueName = joined(p.choices, "|");
    p.description = std::move(description);
    return p;
}

// Binds a number to the settings through an accessor of the member.
template <typename Member>
void bindNumber(Parameter& p, Member member)
{
    using T = std::remove_reference_t<decltype(member(std::declval<RecolorSettings&>()))>;
    p.get = [member](const RecolorSettings& s) { return static_cast<double>(member(const_cast<RecolorSettings&>(s))); };
    p.set = [member](RecolorSettings& s, double v) { member(s) = static_cast<T>(v); };
    p.defaultValue = p.get(RecolorSettings{});
}

// Binds a choice to an enum member of the settings; `parse` is the core's parser of its spellings.
template <typename Member, typename Parse>
void bindChoice(Parameter& p, Member member, Parse parse)
{
    p.getText = [member](const RecolorSettings& s) { return toString(member(const_cast<RecolorSettings&>(s))); };
    p.setText = [member, parse](RecolorSettings& s, const std::string& text) { member(s) = parse(text); };
    p.defaultText = p.getText(RecolorSettings{});
}

std::vector<Parameter> buildTable()
{
    std::vector<Parameter> t;
    auto add = [&t](Parameter p, Stage stage, std::string cliFlag, std::string settingsKey) -> Parameter& {
        p.stage = stage;
        p.cliFlag = std::move(cliFlag);
        p.settingsKey = std::move(settingsKey);
        t.push_back(std::move(p));
        return t.back();
    };

    // Palettes.
    {
        Parameter& p = add(choice("space", "working space", spellings({WorkingSpace::Lab, WorkingSpace::LinearRgb, WorkingSpace::Oklab}),
                                  "working color space of palettes, costs and displacements"),
                           Stage::Palette, "space", "colorSpace");
        bindChoice(p, [](RecolorSettings& s) -> WorkingSpace& { return s.space; }, parseWorkingSpace);
    }
    {
        Parameter& p = add(integer("palette-size", "palette size", 1, kMaxPaletteSize,
                                   "maximum colors per palette (palettes whose matrix would not fit in memory are "
                                   "solved matrix-free)"),
                           Stage::Palette, "palette-size", "paletteSize");
        bindNumber(p, [](RecolorSettings& s) -> int& { return s.palette.size; });
    }
    {
        Parameter& p = add(choice("palette-method", "palette method", spellings({PaletteMethod::Histogram, PaletteMethod::KMeans}),
                                  "histogram: adaptive 3-D histogram (fast, deterministic); kmeans: weighted k-means on it "
                                  "(slower)"),
                           Stage::Palette, "palette-method", "");
        bindChoice(p, [](RecolorSettings& s) -> PaletteMethod& { return s.palette.method; }, parsePaletteMethod);
    }
    {
        Parameter& p = add(integer("palette-bins", "palette bins", 8, 256,
                                   "bins per axis of the finest histogram (a power of two)"),
                           Stage::Palette, "palette-bins", "");
        bindNumber(p, [](RecolorSettings& s) -> int& { return s.palette.finestBins; });
    }
    {
        Parameter& p = add(integer("seed", "seed", 0, 2147483647, "seed of pixel sampling and k-means (same seed, same output)"),
                           Stage::Palette, "seed", "");
        bindNumber(p, [](RecolorSettings& s) -> std::uint64_t& { return s.palette.seed; });
    }
    {
        Parameter& p = add(integer("sample-limit", "sample limit", 0, 1e12,
                                   "pixels read to build a palette (regular stride), 0 = all"),
                           Stage::Palette, "sample-limit", "");
        bindNumber(p, [](RecolorSettings& s) -> std::size_t& { return s.palette.sampleLimit; });
    }

    // The transport problem and its solve.
    {
        Parameter& p = add(real("eps", "eps", 1e-5, 10,
                                "entropic regularisation relative to the cost scale (Lab: 0.01 blurs colors over about "
                                "10 units); larger is softer and faster, smaller maps more sharply"),
                           Stage::Solve, "eps", "eps");
        bindNumber(p, [](RecolorSettings& s) -> double& { return s.transport.eps; });
    }
    {
        // `uot solve` and `bench` on raw problems: eps in the cost's own units (the flag is
        // declared with the solver flags, app/cli/solver_flags.cpp).
        Parameter& p = add(real("problem-eps", "eps", std::numeric_limits<double>::min(), kInfinity,
                                "entropic regularisation, > 0 (in cost units)"),
                           Stage::Solve, "", "");
        p.defaultValue = UotProblem{}.eps;
    }
    {
        Parameter& p = add(real("tau", "tau", 1e-3, 1e3,
                                "adherence to the reference palette when not balanced: how strongly the result must use "
                                "the reference's colors in their proportions"),
                           Stage::Solve, "", "tau");
        p.defaultValue = 1.0;
    }
    {
        Parameter& p = add(flag("balanced", "balanced", "infinite adherence: the result uses the reference's colors in "
                                                       "exactly their proportions"),
                           Stage::Solve, "", "balanced");
        p.defaultValue = RecolorSettings{}.transport.adherence == kInfinity ? 1 : 0;
    }
    {
        Parameter& p = add(choice("reference-measure", "reference measure", spellings({ReferenceMeasure::Ones, ReferenceMeasure::Product}),
                                  "entropy reference R: all-ones (POT reg_type='entropy') or a b^T (reg_type='kl')"),
                           Stage::Solve, "reference-measure", "referenceMeasure");
        bindChoice(p, [](RecolorSettings& s) -> ReferenceMeasure& { return s.transport.reference; }, parseReferenceMeasure);
    }
    {
        Parameter& p = add(integer("max-iter", "maximum iterations", 1, std::numeric_limits<int>::max(),
                                   "maximum number of iterations (a safety net: the default solve converges in tens to "
                                   "a few hundred)"),
                           Stage::Solve, "max-iter", "maxIterations");
        bindNumber(p, [](RecolorSettings& s) -> int& { return s.transport.options.maxIterations; });
    }
    {
        Parameter& p = add(real("tol", "tolerance", 0, 1,
                                "stopping tolerance of the --stop rule: by default the largest relative change of the "
                                "plan in log units and the violation of both marginal conditions"),
                           Stage::Solve, "tol", "tolerance");
        bindNumber(p, [](RecolorSettings& s) -> double& { return s.transport.options.tolerance; });
    }
    {
        Parameter& p = add(choice("precision", "precision", spellings({Precision::Fp32, Precision::Fp64}),
                                  "storage and arithmetic of the kernel matrix"),
                           Stage::Solve, "precision", "precision");
        bindChoice(p, [](RecolorSettings& s) -> Precision& { return s.transport.options.precision; }, parsePrecision);
    }
    {
        Parameter& p = add(choice("acceleration", "acceleration", spellings({Acceleration::None, Acceleration::Relax, Acceleration::Auto}),
                                  "over-relaxation of each half-step with a safeguard (--accel)"),
                           Stage::Solve, "", "acceleration");
        bindChoice(p, [](RecolorSettings& s) -> Acceleration& { return s.transport.options.acceleration; }, parseAcceleration);
    }
    {
        Parameter& p = add(integer("eps-scaling-ratio", "eps scaling start", 0, 10000,
                                   "eps-scaling: the first stage's eps as a multiple of eps; 0 = off"),
                           Stage::Solve, "", "epsScalingRatio");
        p.defaultValue = 0;
    }
    {
        Parameter& p = add(real("eps-scaling-factor", "eps scaling factor", 0.05, 0.95,
                                "eps-scaling: the factor from one stage's eps to the next"),
                           Stage::Solve, "", "epsScalingFactor");
        p.defaultValue = EpsSchedule{}.factor;
    }
    {
        Parameter& p = add(choice("solver", "solver", {}, "solver variant; auto picks the fastest exact one"),
                           Stage::Solve, "", "solver");
        p.listChoices = solverChoices;
        p.defaultText = RecolorSettings{}.transport.solver;
    }
    {
        Parameter p;
        p.name = "device";
        p.kind = Kind::Device;
        p.label = "device";
        p.description = "where the solve runs: cpu or gpu:N";
        p.defaultText = "cpu";
        p.max = 63;
        add(std::move(p), Stage::Solve, "", "device");
    }
    {
        Parameter& p = add(integer("threads", "threads", 0, kMaxThreads, "CPU threads, 0 = all cores"), Stage::Solve, "", "threads");
        bindNumber(p, [](RecolorSettings& s) -> int& { return s.transport.options.threads; });
    }
    {
        Parameter& p = add(flag("multiscale", "multiscale warm start",
                                "solve cold instead of warm-starting from a solve between reduced palettes"),
                           Stage::Solve, "no-multiscale", "");
        p.cliNegated = true;
        bindNumber(p, [](RecolorSettings& s) -> bool& { return s.transport.multiscale; });
    }

    // The mapping of the pixels.
    {
        Parameter& p = add(real("fade", "fade", 0, 2,
                                "how much of the look is applied: 0 = the source unchanged, 1 = the full look (up to 2 "
                                "extrapolates)"),
                           Stage::Map, "fade", "strength");
        p.cliAlias = "strength";
        bindNumber(p, [](RecolorSettings& s) -> double& { return s.mapping.strength; });
    }
    {
        Parameter& p = add(percent("luminance", "luminance intensity", kMaxLookIntensity,
                                "how far the result's lightness moves to the transferred lightness (0 = the source's "
                                "lightness, 100 = the transfer's)"),
                           Stage::Map, "luminance", "luminanceIntensity");
        bindNumber(p, [](RecolorSettings& s) -> double& { return s.mapping.look.luminance; });
    }
    {
        Parameter& p = add(percent("color-intensity", "color intensity", kMaxLookIntensity,
                                "scales the result's chroma (0 = grey)"),
                           Stage::Map, "color-intensity", "colorIntensity");
        bindNumber(p, [](RecolorSettings& s) -> double& { return s.mapping.look.colorIntensity; });
    }
    {
        Parameter& p = add(flag("neutralize", "neutralize", "remove the reference's overall color cast before the transfer"),
                           Stage::Map, "neutralize", "neutralize");
        bindNumber(p, [](RecolorSettings& s) -> bool& { return s.mapping.look.neutralize; });
    }
    {
        Parameter& p = add(percent("protect-skin", "protect skin tones", kMaxLookProtection,
                                "keep skin-toned source pixels' hue close to the source's (soft falloff)"),
                           Stage::Map, "protect-skin", "protectSkin");
        bindNumber(p, [](RecolorSettings& s) -> double& { return s.mapping.look.protectSkin; });
    }
    {
        Parameter& p = add(percent("protect-neutrals", "protect neutrals", kMaxLookProtection,
                                "keep grey and near-grey source pixels close to the source's color (soft falloff)"),
                           Stage::Map, "protect-neutrals", "protectNeutrals");
        bindNumber(p, [](RecolorSettings& s) -> double& { return s.mapping.look.protectNeutrals; });
    }
    {
        Parameter& p = add(flag("preserve-luminance", "preserve luminance", "keep the source's lightness; transfer only the color"),
                           Stage::Map, "preserve-luminance", "preserveLuminance");
        bindNumber(p, [](RecolorSettings& s) -> bool& { return s.mapping.preserveLuminance; });
    }
    {
        Parameter& p = add(choice("gamut", "gamut", spellings({GamutMode::Clip, GamutMode::Compress}),
                                  "out-of-gamut colors: clip channels, or desaturate toward equal luminance"),
                           Stage::Map, "gamut", "");
        bindChoice(p, [](RecolorSettings& s) -> GamutMode& { return s.mapping.gamut; }, parseGamutMode);
    }
    {
        Parameter& p = add(integer("lut-size", "LUT size", 9, 129, "nodes per axis of the color-space map"), Stage::Map,
                           "lut-size", "");
        bindNumber(p, [](RecolorSettings& s) -> int& { return s.mapping.lutSize; });
    }
    {
        Parameter& p = add(real("residual-match", "palette match", 0, 1,
                                "move the result's chroma toward the reference's per-channel distributions, through "
                                "the smoothed field (not in --no-smooth renders)"),
                           Stage::Map, "residual-match", "paletteMatch");
        bindNumber(p, [](RecolorSettings& s) -> double& { return s.mapping.residualMatch; });
    }
    {
        Parameter& p = add(real("residual-lightness", "lightness match", 0, 1,
                                "move the result's lightness toward the reference's distribution, as --residual-match"),
                           Stage::Map, "residual-lightness", "");
        bindNumber(p, [](RecolorSettings& s) -> double& { return s.mapping.residualLightness; });
    }
    {
        Parameter& p = add(flag("smooth", "smoothing", "do not smooth the displacement field (guided filter) over the image"),
                           Stage::Map, "no-smooth", "");
        p.cliNegated = true;
        bindNumber(p, [](RecolorSettings& s) -> bool& { return s.mapping.smooth; });
    }
    {
        Parameter& p = add(choice("smooth-guide", "smoothing guide",
                                  spellings({SmoothingGuide::Lightness, SmoothingGuide::Color, SmoothingGuide::Split}),
                                  "what the smoothing follows: the source's lightness, its color (3x3 guided filter), "
                                  "or split (lightness for the lightness shift, color for the chroma shift)"),
                           Stage::Map, "smooth-guide", "");
        bindChoice(p, [](RecolorSettings& s) -> SmoothingGuide& { return s.mapping.smoothGuide; }, parseSmoothingGuide);
    }
    {
        Parameter& p = add(real("smooth-radius", "smoothing radius", 0, 0.5,
                                "guided-filter radius as a fraction of the longer side"),
                           Stage::Map, "smooth-radius", "");
        bindNumber(p, [](RecolorSettings& s) -> double& { return s.mapping.smoothRadius; });
    }
    {
        Parameter& p = add(real("smooth-eps", "smoothing eps", 1e-12, 1e6,
                                "guided-filter edge threshold, in (guide/range)^2 units"),
                           Stage::Map, "smooth-eps", "");
        bindNumber(p, [](RecolorSettings& s) -> double& { return s.mapping.smoothEps; });
    }
    {
        Parameter& p = add(real("smooth-chroma-eps", "smoothing chroma eps", 1e-12, 1e6,
                                "edge threshold on the color guide's chroma axes (Lab/Oklab): chroma variations smaller "
                                "than its square root (JPEG blocks, noise) keep the source's contrast"),
                           Stage::Map, "smooth-chroma-eps", "");
        bindNumber(p, [](RecolorSettings& s) -> double& { return s.mapping.smoothChromaEps; });
    }
    {
        Parameter& p = add(real("smooth-min-slope", "smoothing slope floor", -10, 1,
                                "smallest local slope of result lightness over source lightness the smoothing allows"),
                           Stage::Map, "smooth-min-slope", "");
        p.noneText = "none";
        p.valueName = "X|none";
        bindNumber(p, [](RecolorSettings& s) -> double& { return s.mapping.smoothMinSlope; });
    }
    {
        Parameter& p = add(real("smoothing", "structure smoothing", 0, 4,
                                "edge-aware smoothing as a multiple of the default radius (--smooth-radius); 0 = off"),
                           Stage::Map, "", "smoothingScale");
        p.defaultValue = 1.0;
    }
    add(flag("auto-run", "auto-run", "solve again shortly after every change"), Stage::None, "", "autoRun");
    return t;
}

}  // namespace

const std::vector<Parameter>& parameters()
{
    static const std::vector<Parameter> table = buildTable();
    return table;
}

const Parameter& parameter(const std::string& name)
{
    for (const Parameter& p : parameters())
        if (p.name == name) return p;
    throw std::out_of_range("no parameter '" + name + "' in the parameter table");
}

const Parameter* parameterWithKey(const std::string& key)
{
    for (const Parameter& p : parameters())
        if (!p.settingsKey.empty() && p.settingsKey == key) return &p;
    return nullptr;
}

std::string shownNumber(const Parameter& p, double value)
{
    if (p.kind == Kind::Flag) return value != 0 ? "true" : "false";
    if (p.kind == Kind::Integer) return std::to_string(std::llround(value));
    if (!p.noneText.empty() && value == -kInfinity) return p.noneText;
    return number(value * p.scale());
}

std::string Parameter::defaultShown() const
{
    return kind == Kind::Choice || kind == Kind::Device ? defaultText : shownNumber(*this, defaultValue);
}

std::string Parameter::allowed() const
{
    switch (kind) {
    case Kind::Real:
        return "a number from " + shownNumber(*this, min) + " to " + shownNumber(*this, max) +
               (noneText.empty() ? "" : " or " + noneText);
    case Kind::Integer: return "a whole number from " + shownNumber(*this, min) + " to " + shownNumber(*this, max);
    case Kind::Flag: return "true or false";
    case Kind::Choice: return "one of " + joined(choiceList(), ", ");
    case Kind::Device: return "cpu or gpu:N with N from 0 to " + number(max);
    }
    return {};
}

std::string Parameter::problem() const
{
    // Percentages read as the colourist's controls always have (core/color/look_controls.h).
    if (unit == "%") return label + " must be between " + number(min * 100) + " % and " + number(max * 100) + " %";
    return label + " takes " + allowed();
}

std::optional<double> parseNumber(const Parameter& p, const std::string& shown)
{
    std::string t = shown;
    while (!t.empty() && std::isspace(static_cast<unsigned char>(t.front()))) t.erase(t.begin());
    while (!t.empty() && std::isspace(static_cast<unsigned char>(t.back()))) t.pop_back();
    if (p.kind == Kind::Flag) {
        if (t == "true" || t == "1") return 1.0;
        if (t == "false" || t == "0") return 0.0;
        return std::nullopt;
    }
    if (t.empty()) return std::nullopt;
    if (!p.noneText.empty() && t == p.noneText) return -kInfinity;
    char* end = nullptr;
    double v = 0;
    if (p.kind == Kind::Integer) {
        errno = 0;
        const long long whole = std::strtoll(t.c_str(), &end, 10);
        if (errno == ERANGE) return std::nullopt;
        v = static_cast<double>(whole);
    } else {
        v = std::strtod(t.c_str(), &end) / p.scale();
    }
    if (end != t.c_str() + t.size() || !std::isfinite(v) || v < p.min || v > p.max) return std::nullopt;
    return v;
}

bool isValidText(const Parameter& p, const std::string& text)
{
    if (p.kind == Kind::Choice) {
        for (const std::string& c : p.choiceList())
            if (c == text) return true;
        return false;
    }
    if (p.kind != Kind::Device) return false;
    if (text == "cpu") return true;
    if (text.rfind("gpu:", 0) != 0 || text.size() < 5 || text.size() > 8) return false;
    for (std::size_t k = 4; k < text.size(); ++k)
        if (!std::isdigit(static_cast<unsigned char>(text[k]))) return false;
    return std::atoi(text.c_str() + 4) <= p.max;
}

}  // namespace uot::params
