#include "core/transport/cpu_solvers.h"

#include "core/transport/fused_solver.h"
#include "core/transport/log_solver.h"
#include "core/transport/mapreduce_solver.h"
#include "core/transport/mapuot_solver.h"
#include "core/transport/pot_style_solver.h"
#include "core/transport/reference_solver.h"

namespace uot {

std::vector<std::pair<std::string, std::string>> cpuSolverCatalog()
{
    return {
        {"reference", "plain float64 two-pass loop, single thread: the test oracle"},
        {"pot-style", "two parallel SIMD matrix-vector passes per iteration (K v, then K^T u), as POT: the baseline"},
        {"mapuot", "MAP-UOT's fused double loop rescaling the matrix in place (exact UOT form): 1 read + 1 write"},
        {"fused", "one read-only SIMD pass over K per iteration (K never written): the fastest exact variant"},
        {"log", "log-domain single pass with online max: stable for any eps (used automatically on underflow)"},
        {"mapreduce", "matrix-free log-domain passes over two point clouds (costs recomputed, K never stored): "
                      "O(M + N) memory, any eps"},
    };
}

std::unique_ptr<UotSolver> createCpuSolver(const std::string& name)
{
    if (name == "reference") return std::make_unique<ReferenceSolver>();
    if (name == "pot-style") return std::make_unique<PotStyleSolver>();
    if (name == "mapuot") return std::make_unique<MapUotSolver>();
    if (name == "fused") return std::make_unique<FusedSolver>();
    if (name == "log") return std::make_unique<LogDomainSolver>();
    if (name == "mapreduce") return std::make_unique<MapReduceSolver>();
    return nullptr;
}

}  // namespace uot
