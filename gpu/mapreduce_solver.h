#pragma once
// Internal to gpu/: gpu-mapreduce, the matrix-free log-domain GPU solver for
// point-cloud costs (gpu/mapreduce_kernels.h has the kernels and the
// arithmetic). Memory O(M + N): the cost and the kernel are never stored.
// fp32 arithmetic (potentials kept in float64 between passes); same options and
// result fields as the other GPU variants. No CUDA types here.

#include <cstdint>
#include <memory>
#include <string>

#include "core/transport/uot_solver.h"
#include "gpu/mapreduce_config.h"

namespace uot::gpu::detail {

class MapReduceSolver final : public UotSolver {
public:
    // config: the compiled variant of the fast pass (gpu/mapreduce_config.h);
    // throws InvalidArgument for an unsupported one.
    explicit MapReduceSolver(const MapReduceConfig& config = {});
    ~MapReduceSolver() override;
    std::string name() const override;
    // Matrix-free: no matrix traffic.
    std::uint64_t bytesPerIteration(std::size_t rows, std::size_t cols, Precision precision) const override;
    SolveResult solve(const UotProblem& problem, const SolveOptions& options, const SolveControl& control) override;

    // The device state kept between solves (defined in mapreduce_solver.cu, where
    // the engine's side of the check loop also uses it).
    struct State;

private:
    MapReduceConfig m_config;
    std::unique_ptr<State> m_state;
};

}  // namespace uot::gpu::detail
