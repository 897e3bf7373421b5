#include "app/cli/solver_flags.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <optional>
#include <tuple>

#include "app/cli/parameter_flags.h"
#include "app/cli/thread_check.h"
#include "core/registry/device_registry.h"
#include "core/registry/multi_gpu.h"
#include "core/registry/solver_registry.h"
#include "core/transport/uot_error.h"

namespace uot::cli {

namespace {

bool startsWith(const std::string& text, const std::string& prefix) { return text.rfind(prefix, 0) == 0; }

// The ordinal of a --device value the table accepted: cpu and auto (decided by
// readSolverOptions) are 0, gpu and gpu:all too.
int deviceOrdinal(const std::string& text, bool& gpu)
{
    gpu = startsWith(text, "gpu");
    return startsWith(text, "gpu:") && text != "gpu:all" ? std::atoi(text.c_str() + 4) : 0;
}

const std::vector<std::string>& iterationLimitFlags()
{
    static const std::vector<std::string> names{"max-iter", "tol", "stop", "fixed-iterations"};
    return names;
}

bool declaredFor(const params::Parameter& p, const SolverFlagConfig& config)
{
    const auto& limits = iterationLimitFlags();
    if (!config.iterationLimits && std::find(limits.begin(), limits.end(), p.name) != limits.end()) return false;
    if (!config.warmStart && (p.name == "warm-u" || p.name == "warm-v")) return false;
    return true;
}

}  // namespace

void addSolverOptions(ArgParser& parser, const SolverFlagConfig& config)
{
    const bool lists = config.allowPrecisionAndThreadLists;
    for (const params::Parameter& p : params::parameters(config.problems)) {
        if (p.cliFlag.empty() || p.cliGroup != params::CliGroup::Solver || !declaredFor(p, config)) continue;
        ParameterFlagStyle style;
        if (p.name == "solver") {
            style.valueName = config.allowSolverList ? "NAME[,NAME...]" : "NAME";
            style.defaultValue = config.defaultSolver;
            style.helpSuffix = " (" + solverNamesForHelp() + ")";
        } else if (p.name == "threads") {
            style.defaultValue = config.defaultThreads;
        } else if (p.name == "device" && !config.deviceAuto) {
            style.valueName = "cpu|gpu|gpu:N|gpu:all";
            style.helpSuffix = "; not auto here";
        }
        if (lists && (p.name == "precision" || p.name == "threads")) {
            style.valueName = (p.name == "precision" ? "fp32|fp64" : "N") + std::string("[,...]");
            style.helpSuffix = " (a list: one case each)";
        }
        addParameterOption(parser, p, style);
        if (p.name == "eps-scaling-factor")
            parser.addOption("eps-schedule", "START,FACTOR|none",
                             "the former spelling of eps-scaling: the first stage's eps START (as --eps, not a "
                             "multiple of it) and the factor; e.g. 0.1,0.5");
    }
}

// The multi-GPU variant for `name` (auto, or any variant of the fused algorithm).
static std::string multiGpuSolverFor(const std::string& name)
{
    const std::string variant = multiGpuVariant();
    if (variant.empty()) throw UsageError("this build has no multi-GPU solver (--devices, --device gpu:all)");
    if (name == "auto" || name == variant) return variant;
    const std::optional<SolverCapabilities> caps = solverCapabilities(name);
    if (caps && caps->algorithm == "fused") return variant;
    throw UsageError("solver '" + name + "' does not run over several GPUs: only the fused solver does (" + variant +
                     "); drop --devices / gpu:all or use --solver auto");
}

std::string solverForDevice(const std::string& name, bool gpu)
{
    const DeviceKind device = gpu ? DeviceKind::Gpu : DeviceKind::Cpu;
    if (name == "auto") return gpu ? defaultSolver(device) : name;
    const std::optional<SolverCapabilities> caps = solverCapabilities(name);
    if (!caps || caps->device == device) return name;  // unknown names: createSolver lists the choices
    if (const std::optional<std::string> mapped = solverOnDevice(name, device)) {
        if (gpu) return *mapped;
        throw UsageError("solver '" + name + "' runs on the GPU: add --device gpu (or choose its CPU version '" +
                         *mapped + "')");
    }
    if (gpu) throw UsageError("solver '" + name + "' has no GPU version");
    throw UsageError("solver '" + name + "' runs on the GPU only: add --device gpu");
}

void requireUsableDevice(const SolverSettings& settings)
{
    if (!settings.gpu || settings.deviceAuto) return;
    const std::string reason = gpuUnavailableReason();
    if (!reason.empty())
        throw Error(ErrorCode::Unavailable,
                    "--device " +
                        (settings.options.device > 0 ? "gpu:" + std::to_string(settings.options.device) : "gpu") +
                        ": " + reason + " (or pass --device auto to fall back to the CPU)");
    if (const DeviceBackend* gpu = findDeviceBackend(DeviceKind::Gpu)) {
        const std::vector<DeviceDescription> devices = gpu->listDevices();
        const bool found = std::any_of(devices.begin(), devices.end(), [&](const DeviceDescription& d) {
            return d.ordinal == settings.options.device;
        });
        if (!found)
            throw Error(ErrorCode::Unavailable, "there is no GPU " + std::to_string(settings.options.device) + " (" +
                                                    std::to_string(devices.size()) + " usable; `uot devices` lists them)");
    }
}

SolverSettings readSolverOptions(const ArgParser& parser, const SolverFlagConfig& config)
{
    const auto entry = [&config](const char* name) -> const params::Parameter& {
        return params::parameter(name, config.problems);
    };
    SolverSettings s;
    const std::string deviceText = parameterText(parser, entry("device"));
    if (deviceText == "auto" && !config.deviceAuto)
        throw UsageError("option '--device auto' is not offered here: choose cpu or gpu[:N]");
    const int device = deviceOrdinal(deviceText, s.gpu);
    if (deviceText == "auto") {
        s.deviceAuto = true;
        const std::string reason = gpuUnavailableReason();
        s.gpu = reason.empty();
        if (!s.gpu) s.deviceNote = "--device auto chose the CPU: " + reason;
    }

    const params::Parameter& solverEntry = entry("solver");
    const std::string solverText = parser.value("solver");
    std::vector<std::string> names = config.allowSolverList ? splitList(solverText) : std::vector{solverText};
    if (names.empty() || (names.size() == 1 && names[0].empty()))
        throw UsageError("option '--solver' needs a name: " + solverNamesForHelp());
    if (!config.allowSolverList && solverText.find(',') != std::string::npos)
        throw UsageError("option '--solver' takes one name here, got '" + solverText + "'");
    for (const std::string& name : names)  // the table's CPU names, or a GPU variant of the registry
        if (!params::isValidText(solverEntry, name) && !solverCapabilities(name))
            throw refusedValue("solver", solverEntry, name);
    // Several GPUs: --devices LIST or --device gpu:all (core/registry/multi_gpu.h).
    const bool multi = parser.has("devices") || deviceText == "gpu:all";
    if (multi) {
        try {
            setMultiGpuDevices(parser.has("devices") ? parseDeviceList(parser.value("devices")) : std::vector<int>{});
        } catch (const Error& e) {
            throw UsageError(std::string("option '--devices': ") + e.what());
        }
        s.gpu = true;
    }
    std::string mapped;
    for (const std::string& name : names) {
        if (!mapped.empty()) mapped += ',';
        mapped += multi ? multiGpuSolverFor(name) : solverForDevice(name, s.gpu);
    }
    s.solver = mapped;
    s.solverForced = parser.has("solver") && solverText != "auto";

    s.eps = parameterNumber(parser, entry("eps"));
    const double tau = parameterNumber(parser, entry("tau"));
    const bool tauGiven = parser.has("tau");
    const auto side = [&](const char* name) {
        const params::Parameter& p = entry(name);
        return parser.has(name) || (!tauGiven && !p.cliDefaultFromContext) ? parameterNumber(parser, p) : tau;
    };
    s.tauA = side("tau-a");
    s.tauB = side("tau-b");
    s.reference = parseReferenceMeasure(parameterText(parser, entry("reference-measure")));
    s.options.precision = parsePrecision(parameterText(parser, entry("precision")));
    s.options.threads = static_cast<int>(parameterNumber(parser, entry("threads")));
    requireThreadsCanStart(s.options.threads);
    if (config.iterationLimits) {
        s.options.maxIterations = static_cast<int>(parameterNumber(parser, entry("max-iter")));
        const std::string tolText = parser.value("tol");
        char* end = nullptr;
        const bool zero = std::strtod(tolText.c_str(), &end) == 0 && end != tolText.c_str() && *end == '\0';
        if (zero && !params::accepts(entry("tol"), tolText))  // raw problems: 0 is the next flag's job
            throw UsageError("option '--tol': " + entry("tol").problem() + ", got '" + tolText +
                             "' (to run exactly --max-iter iterations, pass --fixed-iterations)");
        s.options.tolerance = parameterNumber(parser, entry("tol"));
        if (parameterNumber(parser, entry("fixed-iterations")) != 0) s.options.tolerance = 0;  // no stopping test
        s.options.stopping = parseStoppingRule(parameterText(parser, entry("stop")));
    }
    s.options.mode = resolveIterationMode(parameterText(parser, entry("mode")), solverText);
    const std::string accel = parameterText(parser, entry("acceleration"));
    s.options.acceleration = resolveAcceleration(accel, solverText);
    if (parser.has("accel") && s.options.acceleration != Acceleration::None) {
        // A named variant without over-relaxation would silently run the plain step.
        for (const std::string& name : splitList(s.solver)) {
            const std::optional<SolverCapabilities> caps = solverCapabilities(name);
            if (caps && !caps->overRelaxation)
                throw UsageError("option '--accel " + accel + "': solver '" + name +
                                 "' has no over-relaxation; drop --accel (or pass --accel none), or choose a "
                                 "variant that has it (--solver auto)");
        }
    }
    if (s.options.stopping == StoppingRule::Pot && s.options.acceleration != Acceleration::None)
        throw UsageError("option '--stop pot' runs the plain or TI iteration of POT: drop --accel (or pass --accel "
                         "none; a named --solver has none by default)");
    s.options.omega = parameterNumber(parser, entry("omega"));

    // eps-scaling: --eps-scaling RATIO --eps-scaling-factor F, or the former --eps-schedule START,FACTOR.
    const params::Parameter& factorEntry = entry("eps-scaling-factor");
    double ratio = parameterNumber(parser, entry("eps-scaling"));
    double factor = parameterNumber(parser, factorEntry);
    if (parser.has("eps-schedule")) {
        if (parser.has("eps-scaling") || parser.has("eps-scaling-factor"))
            throw UsageError("option '--eps-schedule' is the former spelling of --eps-scaling and "
                             "--eps-scaling-factor: give one or the other");
        try {
            std::tie(ratio, factor) = params::epsScalingFromSchedule(parser.value("eps-schedule"), s.eps);
        } catch (const Error& e) {
            throw UsageError(std::string("option '--eps-schedule': ") + e.what());
        }
        if (ratio > 0) checkParameterValue(factorEntry, params::shownNumber(factorEntry, factor), "eps-schedule");
    }
    s.options.epsSchedule = params::epsScheduleFor(ratio, factor, s.eps);
    try {
        if (s.options.epsSchedule.enabled()) validateEpsSchedule(s.options.epsSchedule, s.eps);
    } catch (const Error& e) {
        throw UsageError(std::string("option '--eps-scaling': ") + e.what());
    }
    s.options.checkEvery = static_cast<int>(parameterNumber(parser, entry("check-every")));
    s.options.device = device;
    s.options.allowStabilizedFallback = !s.solverForced;

    if (config.warmStart) {
        s.warmUPath = parser.value("warm-u");
        s.warmVPath = parser.value("warm-v");
        if (s.warmUPath.empty() != s.warmVPath.empty())
            throw UsageError("warm start needs both --warm-u and --warm-v");
    }
    return s;
}

void applyProblemParameters(const SolverSettings& settings, UotProblem& problem)
{
    problem.eps = settings.eps;
    problem.tauA = settings.tauA;
    problem.tauB = settings.tauB;
    problem.reference = settings.reference;
}

}  // namespace uot::cli
