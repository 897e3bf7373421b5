#include "core/registry/batched_solver_registry.h"

#include <stdexcept>
#include <variant>
#include <vector>

#include "core/transport/uot_error.h"

namespace uot {

namespace {

std::vector<BatchedSolverRegistration>& batchedEntries()
{
    static std::vector<BatchedSolverRegistration> all;
    return all;
}

const BatchedSolverRegistration* findBatched(const std::string& name)
{
    for (const BatchedSolverRegistration& r : batchedEntries())
        if (r.name == name) return &r;
    return nullptr;
}

std::string reasonOf(const BatchedSolverRegistration& r) { return r.unavailableReason ? r.unavailableReason() : std::string(); }

}  // namespace

bool registerBatchedSolver(BatchedSolverRegistration registration)
{
    if (registration.name.empty() || !registration.create)
        throw std::logic_error("registerBatchedSolver: a batched solver needs a name and a factory");
    if (findBatched(registration.name))
        throw std::logic_error("registerBatchedSolver: '" + registration.name + "' registered twice");
    batchedEntries().push_back(std::move(registration));
    return true;
}

std::optional<std::string> batchedSolverFor(DeviceKind device, std::string* why)
{
    std::string reasons;
    for (const BatchedSolverRegistration& r : batchedEntries()) {
        if (r.caps.device != device) continue;
        const std::string reason = reasonOf(r);
        if (reason.empty()) return r.name;
        reasons += (reasons.empty() ? "" : "; ") + r.name + ": " + reason;
    }
    if (why) *why = reasons.empty() ? "this build has no batched " + toString(device) + " solver" : reasons;
    return std::nullopt;
}

std::optional<BatchedSolverCapabilities> batchedSolverCapabilities(const std::string& name)
{
    const BatchedSolverRegistration* r = findBatched(name);
    if (!r) return std::nullopt;
    return r->caps;
}

bool batchedSolverAccepts(const std::string& name, const UotProblem& problem)
{
    const BatchedSolverRegistration* r = findBatched(name);
    if (!r) return false;
    if (problem.reference == ReferenceMeasure::Product && !r->caps.productReference) return false;
    if (const auto* cloud = std::get_if<PointCloudCost>(&problem.cost))
        return r->caps.pointClouds && cloud->dim >= 1 && cloud->dim <= static_cast<std::size_t>(r->caps.maxDim);
    return r->caps.denseCost;
}

std::unique_ptr<BatchedUotSolver> createBatchedSolver(const std::string& name)
{
    const BatchedSolverRegistration* r = findBatched(name);
    if (!r) throw Error(ErrorCode::InvalidArgument, "unknown batched solver '" + name + "'");
    const std::string reason = reasonOf(*r);
    if (!reason.empty()) throw Error(ErrorCode::Unavailable, reason);
    return r->create();
}

}  // namespace uot
