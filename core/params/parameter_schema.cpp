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
#include "core/video/clip_look.h"
#include "core/video/clip_writer.h"

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
Parameter entry(Kind kind, std::string name, std::string label, std::string description)
{
    Parameter p;
    p.name = std::move(name);
    p.kind = kind;
    p.label = std::move(label);
    p.description = std::move(description);
    return p;
}

Parameter real(std::string name, std::string label, double lo, double hi, std::string description)
{
    Parameter p = entry(Kind::Real, std::move(name), std::move(label), std::move(description));
    p.min = lo;
    p.max = hi;
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
    Parameter p = entry(Kind::Flag, std::move(name), std::move(label), std::move(description));
    p.min = 0;
    p.max = 1;
    return p;
}

Parameter choice(std::string name, std::string label, std::vector<std::string> choices, std::string description)
{
    Parameter p = entry(Kind::Choice, std::move(name), std::move(label), std::move(description));
    p.choices = std::move(choices);
    p.valueName = joined(p.choices, "|");
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

// A number >= lo with no upper bound, or inf.
Parameter unbounded(std::string name, std::string label, double lo, std::string description)
{
    Parameter p = real(std::move(name), std::move(label), lo, kInfinity, std::move(description));
    p.infinityText = "inf";
    p.valueName = "X|inf";
    return p;
}

// A penalty: a number > 0, or inf.
Parameter penalty(std::string name, std::string label, std::string description)
{
    Parameter p = unbounded(std::move(name), std::move(label), 0, std::move(description));
    p.minExclusive = true;
    return p;
}

// Free text, checked where it is read.
Parameter text(std::string name, std::string valueName, std::string description)
{
    Parameter p = entry(Kind::Text, name, name, std::move(description));
    p.valueName = std::move(valueName);
    return p;
}

std::vector<Parameter> buildTable(Problems problems)
{
    const bool raw = problems == Problems::Raw;
    std::vector<Parameter> t;
    auto add = [&t](Parameter p, Stage stage, std::string cliFlag, std::string settingsKey) -> Parameter& {
        p.stage = stage;
        p.cliFlag = std::move(cliFlag);
        p.settingsKey = std::move(settingsKey);
        t.push_back(std::move(p));
        return t.back();
    };
    // The flags every solving command takes (app/cli/solver_flags.cpp).
    auto addSolver = [&add](Parameter p, std::string cliFlag, std::string settingsKey) -> Parameter& {
        Parameter& added = add(std::move(p), Stage::Solve, std::move(cliFlag), std::move(settingsKey));
        added.cliGroup = CliGroup::Solver;
        return added;
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
        Parameter& p = addSolver(choice("solver", "solver", {},
                                        "solver variant; auto picks the fastest exact one. Naming a variant forces it: "
                                        "it stops with status 'underflow' instead of switching to the log-domain solver "
                                        "when eps is too small"),
                                 "solver", "solver");
        p.listChoices = solverChoices;
        p.valueName = "NAME";
        p.defaultText = RecolorSettings{}.transport.solver;
        p.setText = [](RecolorSettings& s, const std::string& text) { s.transport.solver = text; };
    }
    {
        Parameter& p = addSolver(real("eps", "eps", 1e-5, 10,
                                      "entropic regularisation relative to the cost scale (Lab: 0.01 blurs colors over "
                                      "about 10 units); larger is softer and faster, smaller maps more sharply"),
                                 "eps", "eps");
        bindNumber(p, [](RecolorSettings& s) -> double& { return s.transport.eps; });
        p.title = "Smoothness (eps)";
        if (raw) {  // costs in their own units: any eps > 0, the problem's default
            p.description = "entropic regularisation, > 0 (in cost units)";
            p.min = 0;
            p.minExclusive = true;
            p.max = kInfinity;
            p.defaultValue = UotProblem{}.eps;
        }
    }
    {
        Parameter& p = addSolver(penalty("tau", "tau", "marginal penalty on both sides (tau_a = tau_b); inf = balanced"),
                                 "tau", "");
        p.defaultValue = UotProblem{}.tauA;
    }
    {
        Parameter& p = addSolver(penalty("tau-a", "tau_a", "marginal penalty on the source side (overrides --tau)"),
                                 "tau-a", "");
        bindNumber(p, [](RecolorSettings& s) -> double& { return s.transport.sourceAdherence; });
        p.cliDefaultFromContext = raw;  // raw problems: --tau
    }
    {
        Parameter& p = addSolver(penalty("tau-b", "tau_b",
                                         "adherence to the reference palette (tau on the reference side): larger = the "
                                         "result uses the reference's colors in their proportions, smaller = reference "
                                         "colors the source has no use for may be dropped; inf = exact"),
                                 "tau-b", "");
        bindNumber(p, [](RecolorSettings& s) -> double& { return s.transport.adherence; });
        if (raw) {
            p.description = "marginal penalty on the target side (overrides --tau)";
            p.cliDefaultFromContext = true;
        }
    }
    {
        // The studio's form of tau-b: a finite adherence, and "balanced" for inf.
        Parameter& p = add(real("adherence", "tau", 1e-3, 1e3,
                                "adherence to the reference palette when not balanced: how strongly the result must use "
                                "the reference's colors in their proportions (--tau-b)"),
                           Stage::Solve, "", "tau");
        p.defaultValue = 1.0;
        p.title = "Adherence (tau)";
        p.set = [](RecolorSettings& s, double v) { s.transport.adherence = v; };
    }
    {
        Parameter& p = add(flag("balanced", "balanced", "infinite adherence: the result uses the reference's colors in "
                                                       "exactly their proportions"),
                           Stage::Solve, "", "balanced");
        p.description += " (--tau-b inf)";
        p.defaultValue = RecolorSettings{}.transport.adherence == kInfinity ? 1 : 0;
        p.set = [](RecolorSettings& s, double v) {  // after "adherence": balanced overrides it
            if (v != 0) s.transport.adherence = kInfinity;
        };
    }
    {
        Parameter& p = addSolver(choice("reference-measure", "reference measure",
                                        spellings({ReferenceMeasure::Ones, ReferenceMeasure::Product}),
                                        "entropy reference R: all-ones (POT reg_type='entropy') or a b^T (reg_type='kl')"),
                                 "reference-measure", "referenceMeasure");
        bindChoice(p, [](RecolorSettings& s) -> ReferenceMeasure& { return s.transport.reference; }, parseReferenceMeasure);
    }
    {
        Parameter& p = addSolver(integer("max-iter", "maximum iterations", 1, std::numeric_limits<int>::max(),
                                         "maximum number of iterations (a safety net: the default solve converges in "
                                         "tens to a few hundred)"),
                                 "max-iter", "maxIterations");
        bindNumber(p, [](RecolorSettings& s) -> int& { return s.transport.options.maxIterations; });
        p.title = "Max iterations";
        if (raw) {
            p.description = "maximum number of iterations";
            p.defaultValue = SolveOptions{}.maxIterations;
        }
    }
    {
        Parameter& p = addSolver(real("tol", "tolerance", 0, 1,
                                      "stopping tolerance of the --stop rule: by default the largest relative change of "
                                      "the plan in log units and the violation of both marginal conditions"),
                                 "tol", "tolerance");
        bindNumber(p, [](RecolorSettings& s) -> double& { return s.transport.options.tolerance; });
        if (raw) {  // any tolerance > 0 (0 is --fixed-iterations)
            p.min = 0;
            p.minExclusive = true;
            p.max = kInfinity;
            p.defaultValue = SolveOptions{}.tolerance;
        }
    }
    {
        Parameter& p = addSolver(choice("precision", "precision", spellings({Precision::Fp32, Precision::Fp64}),
                                        "storage and arithmetic of the kernel matrix"),
                                 "precision", "precision");
        bindChoice(p, [](RecolorSettings& s) -> Precision& { return s.transport.options.precision; }, parsePrecision);
    }
    {
        Parameter& p = addSolver(choice("stop", "stopping rule", spellings({StoppingRule::Potentials, StoppingRule::Pot}),
                                        "stopping rule: potentials (the default, computed on log u, log v: never fooled "
                                        "by scalings that underflow) or pot (POT's rule every --check-every iterations, "
                                        "for iteration-for-iteration comparisons with POT; not with --accel relax/auto)"),
                                 "stop", "");
        bindChoice(p, [](RecolorSettings& s) -> StoppingRule& { return s.transport.options.stopping; }, parseStoppingRule);
        p.valueName = "potentials|pot";
    }
    addSolver(flag("fixed-iterations", "fixed iterations",
                   "run exactly --max-iter iterations, with no stopping test (for comparisons iteration for "
                   "iteration); --tol is then ignored"),
              "fixed-iterations", "");
    {
        Parameter& p = addSolver(choice("mode", "iteration mode", {"auto", "plain", "ti", "translation-invariant"},
                                        "iteration mode: plain (POT's sinkhorn_unbalanced) or ti, the "
                                        "translation-invariant iteration (the same solution in 2-5x fewer passes when "
                                        "tau_a and tau_b are both finite); auto = ti with --solver auto, plain for a "
                                        "named variant"),
                                 "mode", "");
        p.defaultText = "auto";
        p.valueName = "auto|plain|ti";
        p.setText = [](RecolorSettings& s, const std::string& text) {  // "auto": by the solver as asked for
            s.transport.options.mode = resolveIterationMode(text, s.transport.solver);
        };
    }
    {
        Parameter& p = addSolver(choice("acceleration", "acceleration",
                                        spellings({Acceleration::None, Acceleration::Relax, Acceleration::Auto}),
                                        "over-relaxation of each half-step with a safeguard (never diverges): relax = "
                                        "fixed --omega, auto = omega from the observed rate; default: auto with "
                                        "--solver auto, none for a named variant; a variant without it (reference) "
                                        "refuses it"),
                                 "accel", "acceleration");
        bindChoice(p, [](RecolorSettings& s) -> Acceleration& { return s.transport.options.acceleration; }, parseAcceleration);
        p.cliDefaultFromContext = true;
    }
    {
        Parameter& p = addSolver(real("omega", "omega", 1, 2, "relaxation factor for --accel relax (1 = no relaxation)"),
                                 "omega", "");
        p.maxExclusive = true;
        p.valueName = "W";
        bindNumber(p, [](RecolorSettings& s) -> double& { return s.transport.options.omega; });
        if (raw) p.defaultValue = SolveOptions{}.omega;
    }
    {
        Parameter& p = addSolver(real("eps-scaling", "eps scaling start", 0, 10000,
                                      "eps-scaling: the first stage's eps as a multiple of --eps, then stages "
                                      "--eps-scaling-factor times smaller down to --eps, each warm-started from the "
                                      "last, then --eps to --tol (the answer is exact at --eps); up to 1 = off"),
                                 "eps-scaling", "epsScalingRatio");
        p.valueName = "RATIO";
        p.defaultValue = 0;
        p.title = "eps scaling";
        p.set = [](RecolorSettings& s, double v) {  // after eps; the factor follows
            EpsSchedule& schedule = s.transport.options.epsSchedule;
            schedule.start = epsScheduleFor(v, schedule.factor, s.transport.eps).start;
        };
    }
    {
        Parameter& p = addSolver(real("eps-scaling-factor", "eps scaling factor", 0.05, 0.95,
                                      "eps-scaling: the factor from one stage's eps to the next"),
                                 "eps-scaling-factor", "epsScalingFactor");
        bindNumber(p, [](RecolorSettings& s) -> double& { return s.transport.options.epsSchedule.factor; });
        p.title = "eps scaling";  // one row with the ratio
    }
    {
        Parameter& p = addSolver(integer("check-every", "check interval", 1, std::numeric_limits<int>::max(),
                                         "iterations between convergence checks and progress reports"),
                                 "check-every", "");
        bindNumber(p, [](RecolorSettings& s) -> int& { return s.transport.options.checkEvery; });
        if (raw) p.defaultValue = SolveOptions{}.checkEvery;
    }
    {
        Parameter p = entry(Kind::Device, "device", "device", "");
        p.description = "where the solve runs: cpu or gpu:N. On the command line also gpu (= gpu:0, a variant X "
                        "becomes gpu-X, auto gpu-fused; exits 4 when no GPU is usable), gpu:all (one fused solve "
                        "split over every GPU: gpu-nccl, NCCL builds) and auto (gpu when a GPU is usable, else cpu; "
                        "the report says which)";
        p.defaultText = "cpu";
        p.max = 63;
        p.cliSpellings = {"gpu", "gpu:all", "auto"};
        p.valueName = "cpu|gpu|gpu:N|gpu:all|auto";
        // After the solver: a GPU runs the GPU form of the variant (the registry's), and reads
        // its hardware counters for the studio's statistics.
        p.setText = [](RecolorSettings& s, const std::string& text) {
            const bool gpu = text.rfind("gpu:", 0) == 0;
            s.transport.options.device = gpu ? std::atoi(text.c_str() + 4) : 0;
            s.transport.options.sampleHardwareCounters = gpu;
            if (!gpu && s.transport.solver == "auto") return;
            const std::optional<std::string> onDevice =
                solverOnDevice(s.transport.solver, gpu ? DeviceKind::Gpu : DeviceKind::Cpu);
            if (onDevice) s.transport.solver = *onDevice;
        };
        addSolver(std::move(p), "device", "device");
    }
    addSolver(text("devices", "N,M,...",
                   "split one fused solve over these GPUs (gpu-nccl: rows split, column sums all-reduced by NCCL)"),
              "devices", "");
    addSolver(text("warm-u", "U.npy", "warm start: scalings u of a previous solve (float64, M entries)"), "warm-u", "");
    addSolver(text("warm-v", "V.npy", "warm start: scalings v of a previous solve (float64, N entries)"), "warm-v", "");
    {
        Parameter& p = addSolver(integer("threads", "threads", 0, kMaxThreads, "CPU threads, 0 = all cores"), "threads",
                                 "threads");
        bindNumber(p, [](RecolorSettings& s) -> int& { return s.transport.options.threads; });
        p.set = [](RecolorSettings& s, double v) { s.threads = s.transport.options.threads = static_cast<int>(v); };
        p.title = "CPU threads";
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
        p.title = "Luminance";
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
        Parameter& p = add(unbounded("color-range", "color range", 0,
                                     "how far the look's color may drift between the lightness levels of one source "
                                     "color that meet at an edge (Lab units per a*, b* axis; levels that never meet "
                                     "are free): lower keeps a lightness edge from becoming a color edge "
                                     "(portraits, products), higher or inf lets the color follow the reference's "
                                     "lightness (split toning, paintings)"),
                           Stage::Map, "color-range", "colorRange");
        bindNumber(p, [](RecolorSettings& s) -> double& { return s.mapping.bounds.chromaLightnessRange; });
    }
    {
        Parameter& p = add(real("color-edges", "color edges", 0, 100,
                                "the share of the picture (per cent, seen whole at 128 px) where a lightness edge may "
                                "still become a color edge beyond --color-range, on the source colors least on "
                                "edges: 0 holds the range on every edge"),
                           Stage::Map, "color-edges", "colorEdges");
        bindNumber(p, [](RecolorSettings& s) -> double& { return s.mapping.bounds.chromaRangeExempt; });
    }
    {
        Parameter& p = add(real("lightness-transfer", "lightness transfer", 0, 1,
                                "how far the picture's light and dark tones move toward the reference's spread of "
                                "lightness, used only where that brings the colors nearer the reference's (local "
                                "contrast grows at most 3x): 1 = all the way, 0 = the transport's own lightness. "
                                "Lower it when the reference's brightness should not be copied, e.g. a night "
                                "reference for a daylight photo when only its colors are wanted"),
                           Stage::Map, "lightness-transfer", "lightnessTransfer");
        bindNumber(p, [](RecolorSettings& s) -> double& { return s.mapping.bounds.lightnessTransfer; });
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
        p.set = [](RecolorSettings& s, double v) {
            s.mapping.smooth = v > 0;
            if (v > 0) s.mapping.smoothRadius = MappingSettings{}.smoothRadius * v;
        };
    }
    add(flag("auto-run", "auto-run", "solve again shortly after every change"), Stage::None, "", "autoRun").title =
        "Auto-run after changes";

    // The output image of recolor and batch (core/imageio: WriteOptions; the
    // spellings are parseOutputDepth's, parseOutputColor's and parseOutputProfile's,
    // checked against them in test_parameter_table) and of the studio's Save
    // Options (ui/studio_save_options.h: saved under "save/" with these keys).
    auto addOutput = [&add](Parameter p, std::string cliFlag, std::string settingsKey) -> Parameter& {
        Parameter& added = add(std::move(p), Stage::None, std::move(cliFlag), std::move(settingsKey));
        added.cliGroup = CliGroup::Output;
        return added;
    };
    {
        Parameter& p = addOutput(choice("depth", "bit depth", {"source", "8", "16"},
                                        "output bits per channel: source = the source's (JPEG/WebP/BMP are 8-bit)"),
                                 "depth", "depth");
        p.defaultText = "source";
        p.title = "Bit depth";
    }
    {
        Parameter& p = addOutput(choice("output-color", "output color", {"auto", "color", "gray"},
                                        "gray writes the luminance only; color writes three channels even for a grey "
                                        "result; auto keeps the result's"),
                                 "output-color", "outputColor");
        p.defaultText = "auto";
        p.title = "Color";
    }
    {
        Parameter& p = addOutput(choice("output-profile", "output profile", {"srgb", "source", "display-p3", "adobe-rgb"},
                                        "color profile of the output: the sRGB result is converted into it (relative "
                                        "colorimetric, black-point compensation) and it is embedded in PNG/JPEG/TIFF "
                                        "(WebP/BMP stay sRGB); source = the source's own embedded profile (sRGB when it "
                                        "has none)"),
                                 "output-profile", "profile");
        p.defaultText = "srgb";
        p.title = "Color profile";
    }
    {
        Parameter& p = addOutput(integer("jpeg-quality", "JPEG quality", 1, 100,
                                         "JPEG and WebP quality (larger is better and bigger)"),
                                 "jpeg-quality", "quality");
        p.defaultValue = 95;
        p.title = "Quality";
    }

    // The files of `uot solve` and `uot-mpi solve` and what they print
    // (app/cli/solve_report.cpp); the two commands declare the same ones, but
    // for --plan and --counters (`uot solve` alone).
    auto addSolveIo = [&add](Parameter p) -> Parameter& {
        const std::string flagName = p.name;
        Parameter& added = add(std::move(p), Stage::None, flagName, "");
        added.cliGroup = CliGroup::SolveIo;
        return added;
    };
    addSolveIo(text("cost", "C.npy", "cost matrix, M x N, entries finite and >= 0"));
    addSolveIo(text("a", "a.npy", "source weights, M entries > 0"));
    addSolveIo(text("b", "b.npy", "target weights, N entries > 0"));
    addSolveIo(text("x", "X.npy",
                    "source points, M x d, instead of --cost (--solver mapreduce never stores C; uot-mpi: each rank "
                    "reads its rows)"));
    addSolveIo(text("y", "Y.npy", "target points, N x d (same d as --x)"));
    {
        Parameter& p = addSolveIo(real("cost-scale", "cost scale", 0, kInfinity,
                                       "with --x/--y: C_ij = S |x_i - y_j|^2 (default: 1 / max_ij |x_i - y_j|^2, so "
                                       "costs are in [0, 1])"));
        p.minExclusive = true;
        p.valueName = "S";
        p.cliDefaultFromContext = true;  // from the points
    }
    addSolveIo(text("out-dir", "DIR", "output directory (created if missing)"));
    addSolveIo(flag("plan", "plan",
                    "also write the plan P (M x N, float64) to DIR/plan.npy, when it fits in half of the available "
                    "memory (otherwise a message says why it was not written)"));
    addSolveIo(flag("counters", "counters",
                    "GPU variants: read DRAM bytes and L2/L1 hit rates per iteration with CUPTI over a few extra, "
                    "untimed iterations, and report them next to the traffic model's bytes"));
    addSolveIo(flag("json", "JSON summary", "print one JSON object instead of the human summary"));
    addSolveIo(flag("allow-unconverged", "allow unconverged",
                    "exit 0 even when the solve stopped on underflow (exit 5) or at --max-iter before --tol (exit 6)"));

    // How images are read: the command line's recolor, lut and batch, and uot-studio's --max-pixels.
    {
        Parameter& p = add(real("max-pixels", "max pixels", 0, kInfinity,
                                "refuse images with more pixels, or more bytes than N 8-bit RGB pixels (0 = no limit)"),
                           Stage::None, "max-pixels", "");
        p.cliGroup = CliGroup::Input;
        p.valueName = "N";
        p.defaultValue = 200000000;
    }

    // uot-mpi's own flags (app/mpi).
    auto addMpi = [&add](Parameter p, std::string cliFlag) -> Parameter& {
        Parameter& added = add(std::move(p), Stage::None, std::move(cliFlag), "");
        added.cliGroup = CliGroup::Mpi;
        return added;
    };
    addMpi(text("random", "MxN",
                "instead of --cost/--a/--b: the bench problem of M x N random points in the unit square, C = squared "
                "distances, each rank generating its own rows (the same problem for every P)"),
           "random");
    // The random problem's seed: uot-mpi's --random and `uot bench` (app/cli/bench_command.cpp).
    addMpi(integer("random-seed", "seed", 0, 2147483647,
                   "seed of the random problem (uot-mpi: --random; uot bench): the same seed, the same problem"),
           "seed")
        .defaultValue = 1;
    {
        Parameter& p = addMpi(choice("mpi-wait", "MPI wait", {"spin", "sleep"},
                                     "how a rank waits for the others in each reduction: spin (MPI's busy polling: "
                                     "lowest latency on dedicated cores) or sleep (20 us naps between tests of a "
                                     "non-blocking MPI_Iallreduce: for machines shared with other work, or more ranks "
                                     "than cores)"),
                              "mpi-wait");
        p.defaultText = "spin";
    }
    {
        Parameter& p = addMpi(real("timeout", "timeout", 0, kInfinity,
                                   "seconds a rank may go without answering (stopped, hung or lost) before the job "
                                   "stops and every live rank says which rank did not answer; 0 = wait for ever"),
                              "timeout");
        p.valueName = "SECONDS";
        p.defaultValue = 60;
    }
    addMpi(flag("balance", "balance rows",
                "rows in proportion to each rank's measured speed instead of M / P each: a few passes on the even "
                "split are timed (without the waits), then each rank's rows are set up again, so that ranks on "
                "slower or shared cores do not hold the others up in every reduction (same iterates)"),
           "balance");
    {
        Parameter& p = addMpi(choice("rebalance", "rebalance", {"auto", "always", "off"},
                                     "with --balance, rows move again during the solve (fused and auto solvers): at "
                                     "each check the ranks' compute times over the last interval give a new split, "
                                     "taken when the time it saves beats the time to set up the rows that move "
                                     "(auto), at every check (always: for tests), or never (off: the first balance "
                                     "only); same iterates"),
                              "rebalance");
        p.defaultText = "auto";
    }
    addMpi(flag("row-chunks", "row chunks",
                "ranks on one machine share their rows' kernel (MPI-3 shared memory, built once) and take each "
                "pass's rows in chunks as they get free, so that a rank slowed down for a while does fewer rows "
                "instead of holding the others up (fused and auto solvers; not with --balance; same iterates)"),
           "row-chunks");

    // Clips (docs/VIDEO.md; app/cli/video_options.cpp): how the look is computed, and
    // the encoder's options (`uot lut` takes the look's only). Defaults: core/video's.
    auto addClip = [&add](Parameter p) -> Parameter& {
        const std::string flagName = p.name;
        Parameter& added = add(std::move(p), Stage::None, flagName, "");
        added.cliGroup = CliGroup::Clip;
        return added;
    };
    addClip(integer("look-frames", "look frames", 1, 1000,
                    "clips: the look is computed once from a palette pooled over N frames spread evenly over the clip "
                    "(or over each shot with --per-shot)"))
        .defaultValue = ClipLookOptions{}.sampleFrames;
    {
        Parameter& p = addClip(integer("look-frame", "look frame", 0, 2147483647,
                                       "clips: compute the look from frame N alone (0-based) instead"));
        p.cliDefaultFromContext = true;  // none: --look-frames
        p.defaultValue = ClipLookOptions{}.lookFrame;
    }
    addClip(flag("per-shot", "per shot",
                 "clips: detect cuts (color histogram of consecutive frames) and compute one look per shot, "
                 "cross-faded at each cut"));
    {
        Parameter& p = addClip(integer("cross-fade", "cross-fade", 0, 240,
                                       "clips with --per-shot: frames over which two shots' looks blend at a cut (0: "
                                       "switch at the cut)"));
        p.valueName = "FRAMES";
        p.defaultValue = ClipLookOptions{}.crossFadeFrames;
    }
    addClip(choice("video-preset", "video preset", encoderPresets(),
                   "clips written as video: the encoder's speed preset (libx264; libvpx-vp9 for .webm follows it)"))
        .defaultText = ClipWriteOptions{}.preset;
    addClip(integer("crf", "CRF", 0, 51,
                    "clips written as video: the encoder's constant quality (x264 scale; lower is better)"))
        .defaultValue = ClipWriteOptions{}.crf;
    return t;
}

}  // namespace

const std::vector<Parameter>& parameters(Problems problems)
{
    static const std::vector<Parameter> colors = buildTable(Problems::Colors);
    static const std::vector<Parameter> raw = buildTable(Problems::Raw);
    return problems == Problems::Raw ? raw : colors;
}

const Parameter& parameter(const std::string& name, Problems problems)
{
    for (const Parameter& p : parameters(problems))
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
    if (!p.infinityText.empty() && value == kInfinity) return p.infinityText;
    return number(value * p.scale());
}

std::string Parameter::studioTitle() const
{
    if (!title.empty()) return title;
    std::string t = label;
    if (!t.empty()) t[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(t[0])));
    return t;
}

std::string Parameter::defaultShown() const
{
    return kind == Kind::Choice || kind == Kind::Device || kind == Kind::Text ? defaultText
                                                                                : shownNumber(*this, defaultValue);
}

std::string Parameter::allowed() const
{
    switch (kind) {
    case Kind::Real: {
        std::string range;
        if (max == kInfinity) range = "a finite number " + std::string(minExclusive ? "> " : ">= ") + shownNumber(*this, min);
        else if (minExclusive || maxExclusive)
            range = "a number in " + std::string(minExclusive ? "(" : "[") + shownNumber(*this, min) + ", " +
                    shownNumber(*this, max) + (maxExclusive ? ")" : "]");
        else range = "a number from " + shownNumber(*this, min) + " to " + shownNumber(*this, max);
        for (const std::string* word : {&noneText, &infinityText})
            if (!word->empty()) range += " or " + *word;
        return range;
    }
    case Kind::Integer: return "a whole number from " + shownNumber(*this, min) + " to " + shownNumber(*this, max);
    case Kind::Flag: return "true or false";
    case Kind::Choice: return "one of " + joined(choiceList(), ", ");
    case Kind::Device:
        return "cpu or gpu:N with N from 0 to " + number(max) +
               (cliSpellings.empty() ? "" : " (on the command line also " + joined(cliSpellings, ", ") + ")");
    case Kind::Text: return valueName;
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
    if (!p.infinityText.empty() && t == p.infinityText) return kInfinity;
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
    if ((p.minExclusive && v == p.min) || (p.maxExclusive && v == p.max)) return std::nullopt;
    return v;
}

bool isValidText(const Parameter& p, const std::string& text, bool commandLine)
{
    if (p.kind == Kind::Text) return true;
    if (commandLine)
        for (const std::string& word : p.cliSpellings)
            if (word == text) return true;
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

bool accepts(const Parameter& p, const std::string& text, bool commandLine)
{
    if (p.kind == Kind::Choice || p.kind == Kind::Device || p.kind == Kind::Text)
        return isValidText(p, text, commandLine);
    return parseNumber(p, text).has_value();
}

RecolorSettings settingsFrom(const std::function<std::optional<Value>(const Parameter&)>& valueOf)
{
    RecolorSettings s;
    for (const Parameter& p : parameters()) {
        const std::optional<Value> value = valueOf(p);  // else the default: derived entries (mode) apply it
        if (!value && !p.set && !p.setText) continue;
        const Value v = value ? *value : Value{p.defaultValue, p.defaultText};
        if (p.setText && (p.kind == Kind::Choice || p.kind == Kind::Device)) p.setText(s, v.text);
        else if (p.set) p.set(s, v.number);
    }
    return s;
}

EpsSchedule epsScheduleFor(double ratio, double factor, double eps)
{
    if (!(ratio > 1)) return {};
    return EpsSchedule{ratio * eps, factor};
}

std::pair<double, double> epsScalingFromSchedule(const std::string& text, double eps)
{
    const EpsSchedule schedule = parseEpsSchedule(text);
    if (!schedule.enabled()) return {0.0, schedule.factor};
    validateEpsSchedule(schedule, eps);  // the former spelling's own checks (start at or above eps...)
    return {schedule.start / eps, schedule.factor};
}

}  // namespace uot::params
