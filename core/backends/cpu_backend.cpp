// The CPU backend: registers the CPU variants of core/transport with the solver
// registry (static initialisation; linked whole through uot::solvers).

#include "core/registry/solver_registry.h"
#include "core/transport/fused_solver.h"
#include "core/transport/log_solver.h"
#include "core/transport/mapreduce_solver.h"
#include "core/transport/mapuot_solver.h"
#include "core/transport/pot_style_solver.h"
#include "core/transport/reference_solver.h"

namespace uot {
namespace {

template <typename Solver>
void registerCpu(std::string name, std::string description, SolverCapabilities caps)
{
    caps.device = DeviceKind::Cpu;
    registerSolver({std::move(name), std::move(description), std::move(caps),
                    [] { return std::unique_ptr<UotSolver>(std::make_unique<Solver>()); }, {}});
}

bool registerCpuBackend()
{
    SolverCapabilities reference;
    reference.fp32 = false;  // always float64 (the oracle)
    reference.matrixSweepsPerIteration = 2;
    reference.storedEntryBytes = 8;
    reference.stabilizedFallback = "log";
    registerCpu<ReferenceSolver>("reference", "plain float64 two-pass loop, single thread: the test oracle", reference);

    SolverCapabilities potStyle;
    potStyle.algorithm = "pot-style";
    potStyle.matrixSweepsPerIteration = 2;
    potStyle.overRelaxation = true;
    potStyle.stabilizedFallback = "log";
    registerCpu<PotStyleSolver>(
        "pot-style", "two parallel SIMD matrix-vector passes per iteration (K v, then K^T u), as POT: the baseline",
        potStyle);

    SolverCapabilities mapuot;
    mapuot.matrixSweepsPerIteration = 2;
    mapuot.readOnlyMatrix = false;
    mapuot.overRelaxation = true;  // a rejected step is undone inside its next pass (pending factors)
    mapuot.stabilizedFallback = "log";
    registerCpu<MapUotSolver>(
        "mapuot", "MAP-UOT's fused double loop rescaling the matrix in place (exact UOT form): 1 read + 1 write", mapuot);

    SolverCapabilities fused;
    fused.overRelaxation = true;
    fused.stabilizedFallback = "log";
    fused.deviceDefault = true;
    registerCpu<FusedSolver>("fused", "one read-only SIMD pass over K per iteration (K never written): the fastest exact variant",
                             fused);

    SolverCapabilities log;
    log.logDomain = true;
    log.overRelaxation = true;
    // Its passes run on the kernel with the potentials absorbed (no exp per entry);
    // the occasional absorption and exact log-sum-exp pass are not in the model.
    log.transcendentalsPerEntry = 0;
    registerCpu<LogDomainSolver>("log",
                                 "log domain on the kernel with the potentials absorbed (one read, no exp per entry; "
                                 "exact log-sum-exp passes where needed): stable for any eps (used automatically on "
                                 "underflow)",
                                 log);

    SolverCapabilities mapreduce;
    mapreduce.denseCost = false;  // point clouds only
    mapreduce.storesMatrix = false;
    mapreduce.logDomain = true;
    mapreduce.matrixSweepsPerIteration = 0;  // matrix-free: a row and a column pass over the clouds
    mapreduce.transcendentalsPerEntry = 2;
    mapreduce.overRelaxation = true;  // through the shared loop's relaxed step (scaling_loop.h)
    registerCpu<MapReduceSolver>("mapreduce",
                                 "matrix-free log-domain passes over two point clouds (costs recomputed, K never "
                                 "stored): O(M + N) memory, any eps",
                                 mapreduce);
    return true;
}

const bool registered = registerCpuBackend();

}  // namespace
}  // namespace uot
