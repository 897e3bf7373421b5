#include "app/cli/solver_flags.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <optional>

#include "core/params/parameter_schema.h"
#include "core/registry/device_registry.h"
#include "core/registry/multi_gpu.h"
#include "core/registry/solver_registry.h"
#include "core/transport/uot_error.h"

namespace uot::cli {

namespace {

bool startsWith(const std::string& text, const std::string& prefix) { return text.rfind(prefix, 0) == 0; }

double readPenalty(const ArgParser& parser, const std::string& name)
{
    const std::string text = parser.value(name);
    try {
        return parsePenalty(text);
    } catch (const Error&) {
        throw UsageError("option '--" + name + "' needs a number > 0 or 'inf', got '" + text + "'");
    }
}

int readDevice(const std::string& text, bool& gpu, bool autoAllowed)
{
    if (text == "cpu" || (text == "auto" && autoAllowed)) {  // auto: readSolverOptions decides
        gpu = false;
        return 0;
    }
    if (text == "gpu" || text == "gpu:all") {  // gpu:all: readSolverOptions spreads the solve over every GPU
        gpu = true;
        return 0;
    }
    if (startsWith(text, "gpu:")) {
        const std::string ordinal = text.substr(4);
        char* end = nullptr;
        const long value = std::strtol(ordinal.c_str(), &end, 10);
        if (!ordinal.empty() && end == ordinal.c_str() + ordinal.size() && value >= 0 && value < 1024) {
            gpu = true;
            return static_cast<int>(value);
        }
    }
    throw UsageError(std::string("option '--device' needs cpu, gpu, gpu:N (N = GPU ordinal)") +
                     (autoAllowed ? ", gpu:all or auto" : " or gpu:all") + ", got '" + text + "'");
}

}  // namespace

std::string rawProblemEps() { return params::parameter("problem-eps").defaultShown(); }

void addSolverOptions(ArgParser& parser, const SolverFlagConfig& config)
{
    parser.addOption("solver", config.allowSolverList ? "NAME[,NAME...]" : "NAME",
                     "solver variant: " + solverNamesForHelp() +
                         ". Naming a variant forces it: it stops with status 'underflow' instead of switching "
                         "to the log-domain solver when eps is too small",
                     config.defaultSolver);
    parser.addOption("eps", "X", params::parameter("problem-eps").description, config.defaultEps);
    parser.addOption("tau", "X|inf", "marginal penalty on both sides (tau_a = tau_b); inf = balanced", config.defaultTau);
    parser.addOption("tau-a", "X|inf", "marginal penalty on the source side (overrides --tau)", config.defaultTauA);
    parser.addOption("tau-b", "X|inf",
                     config.tauBHelp.empty() ? "marginal penalty on the target side (overrides --tau)" : config.tauBHelp,
                     config.defaultTauB);
    parser.addOption("reference-measure", "ones|product",
                     "entropy reference R: all-ones (POT reg_type='entropy') or a b^T (reg_type='kl')", "ones");
    const bool lists = config.allowPrecisionAndThreadLists;
    parser.addOption("precision", lists ? "fp32|fp64[,...]" : "fp32|fp64",
                     std::string("storage and arithmetic of the kernel matrix") + (lists ? " (a list: one case each)" : ""),
                     config.defaultPrecision);
    parser.addOption("threads", lists ? "N[,N...]" : "N",
                     "CPU threads, 0 = all cores, at most " + std::to_string(params::kMaxThreads) +
                         (lists ? " (a list: one case each)" : ""),
                     config.defaultThreads);
    if (config.iterationLimits) {
        parser.addOption("max-iter", "N", "maximum number of iterations (>= 1)", config.defaultMaxIter);
        parser.addOption("tol", "X",
                         "stopping tolerance, > 0, of the --stop rule: by default the largest relative change of the "
                         "plan in log units and the violation of both marginal conditions (docs/TIME_TO_SOLUTION.md)",
                         config.defaultTol);
        parser.addOption("stop", "potentials|pot",
                         "stopping rule: potentials (the default, computed on log u, log v: never fooled by "
                         "scalings that underflow) or pot (POT's rule every --check-every iterations, for "
                         "iteration-for-iteration comparisons with POT; not with --accel relax/auto)",
                         "potentials");
        parser.addFlag("fixed-iterations", "run exactly --max-iter iterations, with no stopping test (for comparisons "
                                           "iteration for iteration); --tol is then ignored");
    }
    parser.addOption("mode", "auto|plain|ti",
                     "iteration mode: plain (POT's sinkhorn_unbalanced) or ti, the translation-invariant iteration "
                     "(the same solution in 2-5x fewer passes when tau_a and tau_b are both finite); auto = ti "
                     "with --solver auto, plain for a named variant",
                     "auto");
    parser.addOption("accel", "none|relax|auto",
                     "over-relaxation of each half-step with a safeguard (never diverges): relax = fixed --omega, "
                     "auto = omega from the observed rate; default: auto with --solver auto, none for a named "
                     "variant; a variant without it (reference) refuses it");
    parser.addOption("omega", "W", "relaxation factor for --accel relax, in [1, 2)", "1.5");
    parser.addOption("eps-schedule", "START,FACTOR|none",
                     "eps-scaling: stages at eps = START, START*FACTOR, ... down to --eps, each warm-started from the "
                     "last, then --eps to --tol (the answer is exact at --eps); e.g. 0.1,0.5",
                     "none");
    parser.addOption("check-every", "N", "iterations between convergence checks and progress reports", "10");
    parser.addOption("device", config.deviceAuto ? "cpu|gpu|gpu:N|gpu:all|auto" : "cpu|gpu|gpu:N|gpu:all",
                     std::string("where to solve; gpu maps a variant X to gpu-X (auto to gpu-fused) and exits 4 when no "
                                 "GPU is usable; gpu:all splits one fused solve over every GPU (gpu-nccl, NCCL builds)") +
                         (config.deviceAuto ? "; auto = gpu when a GPU is usable, else cpu (the report says which)" : ""),
                     "cpu");
    parser.addOption("devices", "N,M,...",
                     "split one fused solve over these GPUs (gpu-nccl: rows split, column sums all-reduced by NCCL)");
    if (config.warmStart) {
        parser.addOption("warm-u", "U.npy", "warm start: scalings u of a previous solve (float64, M entries)");
        parser.addOption("warm-v", "V.npy", "warm start: scalings v of a previous solve (float64, N entries)");
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

int readThreadCount(const std::string& text, const std::string& option)
{
    char* end = nullptr;
    errno = 0;
    const long value = std::strtol(text.c_str(), &end, 10);
    if (text.empty() || end != text.c_str() + text.size() || errno == ERANGE || value < 0 || value > params::kMaxThreads)
        throw UsageError("option '--" + option + "' needs a whole number from 0 (all cores) to " +
                         std::to_string(params::kMaxThreads) + ", got '" + text + "'");
    return static_cast<int>(value);
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
    SolverSettings s;
    const int device = readDevice(parser.value("device"), s.gpu, config.deviceAuto);
    if (config.deviceAuto && parser.value("device") == "auto") {
        s.deviceAuto = true;
        const std::string reason = gpuUnavailableReason();
        s.gpu = reason.empty();
        if (!s.gpu) s.deviceNote = "--device auto chose the CPU: " + reason;
    }

    const std::string solverText = parser.value("solver");
    std::vector<std::string> names = config.allowSolverList ? splitList(solverText) : std::vector{solverText};
    if (names.empty() || (names.size() == 1 && names[0].empty()))
        throw UsageError("option '--solver' needs a name: " + solverNamesForHelp());
    if (!config.allowSolverList && solverText.find(',') != std::string::npos)
        throw UsageError("option '--solver' takes one name here, got '" + solverText + "'");
    // Several GPUs: --devices LIST or --device gpu:all (core/registry/multi_gpu.h).
    const bool multi = parser.has("devices") || parser.value("device") == "gpu:all";
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

    s.eps = parser.number("eps");
    if (!std::isfinite(s.eps) || s.eps <= 0)
        throw UsageError("option '--eps' must be a finite number > 0, got '" + parser.value("eps") + "'");
    const double tau = readPenalty(parser, "tau");
    const bool tauGiven = parser.has("tau");
    s.tauA = parser.has("tau-a") || (!tauGiven && !config.defaultTauA.empty()) ? readPenalty(parser, "tau-a") : tau;
    s.tauB = parser.has("tau-b") || (!tauGiven && !config.defaultTauB.empty()) ? readPenalty(parser, "tau-b") : tau;

    try {
        s.reference = parseReferenceMeasure(parser.value("reference-measure"));
    } catch (const Error& e) {
        throw UsageError(std::string("option '--reference-measure': ") + e.what());
    }
    try {
        s.options.precision = parsePrecision(parser.value("precision"));
    } catch (const Error& e) {
        throw UsageError(std::string("option '--precision': ") + e.what());
    }

    s.options.threads = readThreadCount(parser.value("threads"));
    if (config.iterationLimits) {
        s.options.maxIterations = parser.integer("max-iter");
        if (s.options.maxIterations < 1)
            throw UsageError("option '--max-iter' must be >= 1, got '" + parser.value("max-iter") + "'");
        s.options.tolerance = parser.number("tol");
        if (!(s.options.tolerance > 0) || !std::isfinite(s.options.tolerance))
            throw UsageError("option '--tol' must be a finite number > 0, got '" + parser.value("tol") +
                             "' (to run exactly --max-iter iterations, pass --fixed-iterations)");
        if (parser.flag("fixed-iterations")) s.options.tolerance = 0;  // the solvers' "no stopping test"
        try {
            s.options.stopping = parseStoppingRule(parser.value("stop"));
        } catch (const Error& e) {
            throw UsageError(std::string("option '--stop': ") + e.what());
        }
    }
    try {
        s.options.mode = resolveIterationMode(parser.value("mode"), solverText);
    } catch (const Error& e) {
        throw UsageError(std::string("option '--mode': ") + e.what());
    }
    try {
        s.options.acceleration = resolveAcceleration(parser.value("accel"), solverText);
    } catch (const Error& e) {
        throw UsageError(std::string("option '--accel': ") + e.what());
    }
    if (parser.has("accel") && s.options.acceleration != Acceleration::None) {
        // A named variant without over-relaxation would silently run the plain step.
        for (const std::string& name : splitList(s.solver)) {
            const std::optional<SolverCapabilities> caps = solverCapabilities(name);
            if (caps && !caps->overRelaxation)
                throw UsageError("option '--accel " + parser.value("accel") + "': solver '" + name +
                                 "' has no over-relaxation; drop --accel (or pass --accel none), or choose a "
                                 "variant that has it (--solver auto)");
        }
    }
    if (s.options.stopping == StoppingRule::Pot && s.options.acceleration != Acceleration::None)
        throw UsageError("option '--stop pot' runs the plain or TI iteration of POT: drop --accel (or pass --accel "
                         "none; a named --solver has none by default)");
    s.options.omega = parser.number("omega");
    if (!(s.options.omega >= 1.0 && s.options.omega < 2.0))
        throw UsageError("option '--omega' must be in [1, 2) (1 = no relaxation), got '" + parser.value("omega") + "'");
    try {
        s.options.epsSchedule = parseEpsSchedule(parser.value("eps-schedule"));
        if (s.options.epsSchedule.enabled()) validateEpsSchedule(s.options.epsSchedule, s.eps);
    } catch (const Error& e) {
        throw UsageError(std::string("option '--eps-schedule': ") + e.what());
    }
    s.options.checkEvery = parser.integer("check-every");
    if (s.options.checkEvery < 1) throw UsageError("option '--check-every' must be >= 1");
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
