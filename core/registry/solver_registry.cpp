#include "core/registry/solver_registry.h"

#include <sstream>

#include "core/transport/cpu_solvers.h"
#include "core/transport/eps_scaling.h"
#include "core/transport/uot_error.h"
#include "gpu/gpu_backend.h"

namespace uot {

namespace {

bool isGpuName(const std::string& name) { return name.rfind("gpu-", 0) == 0; }

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
        if (!m_stabilized) m_stabilized = isGpuName(m_stabilizedName) ? gpu::createSolver(m_stabilizedName)
                                                                      : createCpuSolver(m_stabilizedName);
        SolveOptions rest = options;
        rest.maxIterations = options.maxIterations - first.iterations;
        // Continue from the last good iterate, in log form (its exponentials may
        // leave the floating-point range, which is why the switch happens).
        if (first.iterations > 0) {
            rest.warmU = {};
            rest.warmV = {};
            rest.warmLogU = first.logU;
            rest.warmLogV = first.logV;
        }
        SolveResult second = m_stabilized->solve(problem, rest, control);
        second.iterations += first.iterations;
        second.passes += first.passes;
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
// as stages of the wrapped solver (core/transport/eps_scaling.h).
class ScheduledSolver final : public UotSolver {
public:
    explicit ScheduledSolver(std::unique_ptr<UotSolver> inner) : m_inner(std::move(inner)) {}

    std::string name() const override { return m_inner->name(); }

    std::uint64_t bytesPerIteration(std::size_t rows, std::size_t cols, Precision precision) const override
    {
        return m_inner->bytesPerIteration(rows, cols, precision);
    }

    SolveResult solve(const UotProblem& problem, const SolveOptions& options, const SolveControl& control) override
    {
        if (!options.epsSchedule.enabled()) return m_inner->solve(problem, options, control);
        return solveWithEpsSchedule(*m_inner, problem, options, control);
    }

private:
    std::unique_ptr<UotSolver> m_inner;
};

std::unique_ptr<UotSolver> createUnscheduledSolver(const std::string& requested);

}  // namespace

std::unique_ptr<UotSolver> createSolver(const std::string& requested)
{
    return std::make_unique<ScheduledSolver>(createUnscheduledSolver(requested));
}

std::vector<SolverInfo> listSolvers()
{
    std::vector<SolverInfo> infos;
    for (const auto& [name, description] : cpuSolverCatalog()) infos.push_back({name, description, false, true, {}});
    const std::string gpuReason = gpu::unavailableReason();
    for (const std::string& name : gpu::solverNames())
        infos.push_back({name, "GPU variant (CUDA)", true, gpuReason.empty(), gpuReason});
    return infos;
}

std::string solverNamesForHelp()
{
    std::ostringstream out;
    out << "auto";
    for (const SolverInfo& info : listSolvers()) out << ", " << info.name;
    return out.str();
}

namespace {
std::unique_ptr<UotSolver> createUnscheduledSolver(const std::string& requested)
{
    const std::string name = requested == "auto" ? "fused" : requested;
    if (isGpuName(name)) {
        std::unique_ptr<UotSolver> solver = gpu::createSolver(name);
        if (name == "gpu-log") return solver;
        return std::make_unique<StabilizingSolver>(std::move(solver), "gpu-log");
    }
    std::unique_ptr<UotSolver> solver = createCpuSolver(name);
    if (!solver) {
        throw Error(ErrorCode::InvalidArgument,
                    "unknown solver '" + requested + "': choose one of " + solverNamesForHelp());
    }
    if (name == "log" || !createCpuSolver("log")) return solver;
    return std::make_unique<StabilizingSolver>(std::move(solver), "log");
}

}  // namespace

}  // namespace uot
