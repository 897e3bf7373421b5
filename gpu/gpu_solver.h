#pragma once
// Internal to gpu/: the solver class behind gpu::createSolver. No CUDA types.

#include <cstdint>
#include <memory>
#include <string>

#include "core/transport/uot_solver.h"
#include "gpu/gpu_backend.h"

namespace uot::gpu::detail {

enum class Variant { PotStyle, MapUot, Fused, Log };

// Matrix bytes one iteration of a variant moves (docs/ALGORITHMS.md section 3).
std::uint64_t bytesPerIterationFor(Variant variant, std::size_t rows, std::size_t cols, std::size_t elementBytes);

class EngineBase;

// One GPU variant. Keeps its device buffers between solves of the same size
// (and the same precision and device); frees them when destroyed.
class GpuSolver final : public UotSolver {
public:
    GpuSolver(Variant variant, std::string name, const Tuning& tuning);
    ~GpuSolver() override;
    std::string name() const override;
    std::uint64_t bytesPerIteration(std::size_t rows, std::size_t cols, Precision precision) const override;
    SolveResult solve(const UotProblem& problem, const SolveOptions& options, const SolveControl& control) override;

private:
    Variant m_variant;
    std::string m_name;
    Tuning m_tuning;
    std::unique_ptr<EngineBase> m_engine;
    Precision m_enginePrecision = Precision::Fp32;
    int m_engineDevice = -1;
};

}  // namespace uot::gpu::detail
