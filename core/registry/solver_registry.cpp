#include "core/registry/solver_registry.h"

#include <algorithm>
#include <sstream>
#include <stdexcept>

#include "core/transport/eps_scaling.h"
#include "core/transport/traffic_model.h"
#include "core/transport/uot_error.h"

namespace uot {

namespace {

struct Entry {
    SolverRegistration registration;
};

std::vector<Entry>& entries()
{
    static std::vector<Entry> all;
    return all;
}

const Entry* findEntry(const std::string& name)
{
    const std::string wanted = name == "auto" ? defaultSolver(DeviceKind::Cpu) : name;
    for (const Entry& e : entries())
        if (e.registration.name == wanted) return &e;
    return nullptr;
}

SolverInfo infoOf(const Entry& e)
{
    const SolverRegistration& r = e.registration;
    SolverInfo info{r.name, r.description, r.caps, true, {}};
    if (r.unavailableReason) info.unavailableReason = r.unavailableReason();
    info.available = info.unavailableReason.empty();
    return info;
}

// Wraps a multiplicative variant: when it stops on underflow and the caller
// allows it, the stabilised variant of the same backend continues from the
// last good iterate.
class StabilizingSolver final : public UotSolver {
public:
    StabilizingSolver(std::unique_ptr<UotSolver> primary, std::string stabilizedName)
        : m_primary(std::move(primary)), m_stabilizedName(std::move(stabilizedName))
    {
    }

    std::string name() const override { return m_primary->name(); }

    std::uint64_t bytesPerIteration(std::size_t rows, std::size_t cols, Precision precision) const override
    {
        return m_primary->bytesPerIteration(rows, cols, precision);
    }

    SolveResult solve(const UotProblem& problem, const SolveOptions& options, const SolveControl& control) override
    {
        SolveResult first = m_primary->solve(problem, options, control);
        if (first.status != NumericalStatus::Underflow || !options.allowStabilizedFallback || first.cancelled)
            return first;
        if (!m_stabilized) m_stabilized = createSolver(m_stabilizedName);
        SolveOptions rest = options;
        rest.maxIterations = options.maxIterations - first.iterations;
        // Continue from the last good iterate, in log form (its exponentials may
        // leave the floating-point range, which is why the switch happens).
        if (first.iterations > 0) {
            rest.warmU = {};
            rest.warmV = {};
            rest.warmLogU = first.logU;
            rest.warmLogV = first.logV;
            // Auto over-relaxation goes on with the omega the primary reached
            // instead of measuring the rate again (as eps-scaling stages do).
            if (options.acceleration == Acceleration::Auto && first.omega > 1.0) rest.autoInitialOmega = first.omega;
        }
        // Its progress counts on from the primary's iterations (one convergence curve).
        const SolveControl continued =
            continuedControl(control, first.iterations, first.timings.iterateSeconds,
                             first.bytesPerIteration * static_cast<std::uint64_t>(first.iterations));
        SolveResult second = m_stabilized->solve(problem, rest, continued);
        // No iterations were left (the primary used them all, e.g. when the final
        // evaluation found mass on flushed entries): the last check's error is the primary's.
        if (second.iterations == 0) second.error = first.error;
        second.iterations += first.iterations;
        second.passes += first.passes;
        if (!second.counters.sampled && first.counters.sampled) second.counters = first.counters;
        second.timings.setupSeconds += first.timings.setupSeconds;
        second.timings.iterateSeconds += first.timings.iterateSeconds;
        second.timings.msPerIteration =
            second.iterations > 0 ? 1e3 * second.timings.iterateSeconds / second.iterations : 0.0;
        if (second.status == NumericalStatus::Ok) {
            second.status = NumericalStatus::SwitchedToLogDomain;
            second.message = m_primary->name() + " would underflow (" + first.message +
                             "); switched to " + m_stabilizedName;
        }
        return second;
    }

private:
    std::unique_ptr<UotSolver> m_primary;
    std::string m_stabilizedName;
    std::unique_ptr<UotSolver> m_stabilized;
};

// Wraps every solver of the registry: runs SolveOptions::epsSchedule, when set,
// as stages of the wrapped solver (core/transport/eps_scaling.h). automatic (the
// request "auto"): without a schedule, a warm start or fixed iterations, runs
// automaticEpsSchedule's when eps is small against the costs.
class ScheduledSolver final : public UotSolver {
public:
    ScheduledSolver(std::unique_ptr<UotSolver> inner, bool automatic)
        : m_inner(std::move(inner)), m_automatic(automatic)
    {
    }

    std::string name() const override { return m_inner->name(); }

    std::uint64_t bytesPerIteration(std::size_t rows, std::size_t cols, Precision precision) const override
    {
        return m_inner->bytesPerIteration(rows, cols, precision);
    }

    SolveResult solve(const UotProblem& problem, const SolveOptions& options, const SolveControl& control) override
    {
        if (options.epsSchedule.enabled()) return solveWithEpsSchedule(*m_inner, problem, options, control);
        // A warm start (the studio's next solve, a fallback's continuation) is already near.
        const bool warm = !options.warmU.empty() || !options.warmLogU.empty();
        // Fixed iterations (tolerance 0) are for comparisons iteration for iteration: no stages.
        if (m_automatic && !warm && options.tolerance > 0 && problem.rows() > 0 && problem.cols() > 0) {
            SolveOptions scheduled = options;
            scheduled.epsSchedule = automaticEpsSchedule(problem);
            if (scheduled.epsSchedule.enabled()) return solveWithEpsSchedule(*m_inner, problem, scheduled, control);
        }
        return m_inner->solve(problem, options, control);
    }

private:
    std::unique_ptr<UotSolver> m_inner;
    bool m_automatic;
};

std::unique_ptr<UotSolver> createUnscheduledSolver(const std::string& requested);

}  // namespace

std::string toString(DeviceKind device) { return device == DeviceKind::Gpu ? "gpu" : "cpu"; }

bool registerSolver(SolverRegistration registration)
{
    if (registration.name.empty() || registration.name == "auto" || !registration.create)
        throw std::logic_error("registerSolver: a variant needs a name (not 'auto') and a factory");
    for (const Entry& e : entries())
        if (e.registration.name == registration.name)
            throw std::logic_error("registerSolver: variant '" + registration.name + "' registered twice");
    if (registration.caps.algorithm.empty()) registration.caps.algorithm = registration.name;
    // CPU variants first, each backend in its registration order.
    auto& all = entries();
    const auto position =
        registration.caps.device == DeviceKind::Cpu
            ? std::find_if(all.begin(), all.end(),
                           [](const Entry& e) { return e.registration.caps.device != DeviceKind::Cpu; })
            : all.end();
    all.insert(position, Entry{std::move(registration)});
    return true;
}

std::unique_ptr<UotSolver> createSolver(const std::string& requested)
{
    return std::make_unique<ScheduledSolver>(createUnscheduledSolver(requested), requested == "auto");
}

std::vector<SolverInfo> listSolvers()
{
    std::vector<SolverInfo> infos;
    for (const Entry& e : entries()) infos.push_back(infoOf(e));
    return infos;
}

std::optional<SolverInfo> findSolver(const std::string& name)
{
    const Entry* e = findEntry(name);
    if (!e) return std::nullopt;
    return infoOf(*e);
}

std::optional<SolverCapabilities> solverCapabilities(const std::string& name)
{
    const Entry* e = findEntry(name);
    if (!e) return std::nullopt;
    return e->registration.caps;
}

std::string defaultSolver(DeviceKind device)
{
    for (const Entry& e : entries())
        if (e.registration.caps.device == device && e.registration.caps.deviceDefault) return e.registration.name;
    throw Error(ErrorCode::Unavailable, "this build has no " + toString(device) + " solver backend");
}

std::optional<std::string> solverOnDevice(const std::string& name, DeviceKind device)
{
    if (name == "auto") return defaultSolver(device);
    const Entry* from = findEntry(name);
    if (!from) return std::nullopt;
    if (from->registration.caps.device == device) return from->registration.name;
    for (const Entry& e : entries())
        if (e.registration.caps.device == device && e.registration.caps.algorithm == from->registration.caps.algorithm)
            return e.registration.name;
    return std::nullopt;
}

std::optional<std::string> matrixFreeSolver(DeviceKind device)
{
    for (const Entry& e : entries()) {
        const SolverCapabilities& caps = e.registration.caps;
        if (caps.device == device && caps.pointClouds && !caps.storesMatrix) return e.registration.name;
    }
    return std::nullopt;
}

std::optional<std::string> matrixFreeInstead(const std::string& solver, std::size_t rows, std::size_t cols,
                                             Precision precision, std::uint64_t memoryBytes)
{
    const Entry* from = findEntry(solver);
    if (!from || !from->registration.caps.storesMatrix) return std::nullopt;
    const SolverCapabilities& caps = from->registration.caps;
    const std::optional<std::string> matrixFree = matrixFreeSolver(caps.device);
    if (!matrixFree) return std::nullopt;
    const double entries = double(rows) * double(cols);
    const double entryBytes = double(entryBytesFor(precision, caps.storedEntryBytes));
    if (memoryBytes > 0 && entries * entryBytes > double(memoryBytes)) return matrixFree;
    const std::uint64_t crossover = findEntry(*matrixFree)->registration.caps.fasterFromEntries;
    if (caps.deviceDefault && crossover > 0 && entries >= double(crossover)) return matrixFree;
    return std::nullopt;
}

bool runsOnGpu(const std::string& name)
{
    const Entry* e = findEntry(name);
    return e && e->registration.caps.device == DeviceKind::Gpu;
}

std::uint64_t bytesPerIteration(const std::string& name, std::size_t rows, std::size_t cols, Precision precision)
{
    const Entry* e = findEntry(name);
    if (!e) return 0;
    // The engine's own figure (traffic_model.h), which knows what actually runs for
    // this shape (e.g. gpu-fused's two passes for rows too wide); the capabilities'
    // sweeps where the engine cannot be created here.
    if (e->registration.create) {
        try {
            if (const auto solver = e->registration.create()) return solver->bytesPerIteration(rows, cols, precision);
        } catch (const Error&) {
            // not creatable in this build or process: the declared model below
        }
    }
    const SolverCapabilities& caps = e->registration.caps;
    return matrixTrafficBytes(caps.matrixSweepsPerIteration, entryBytesFor(precision, caps.storedEntryBytes), rows,
                              cols);
}

std::string solverNamesForHelp()
{
    std::ostringstream out;
    out << "auto";
    for (const Entry& e : entries()) out << ", " << e.registration.name;
    return out.str();
}

namespace {
std::unique_ptr<UotSolver> createUnscheduledSolver(const std::string& requested)
{
    const Entry* e = findEntry(requested);
    if (!e) {
        throw Error(ErrorCode::InvalidArgument,
                    "unknown solver '" + requested + "': choose one of " + solverNamesForHelp());
    }
    const SolverRegistration& r = e->registration;
    if (r.unavailableReason) {
        const std::string reason = r.unavailableReason();
        if (!reason.empty()) throw Error(ErrorCode::Unavailable, reason);
    }
    std::unique_ptr<UotSolver> solver = r.create();
    const std::string& fallback = r.caps.stabilizedFallback;
    if (fallback.empty() || fallback == r.name || !findEntry(fallback)) return solver;
    return std::make_unique<StabilizingSolver>(std::move(solver), fallback);
}

}  // namespace

}  // namespace uot
