#pragma once
// Internal to gpu/: the solver class behind gpu::createSolver. No CUDA types.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "core/transport/traffic_model.h"
#include "core/transport/uot_solver.h"
#include "gpu/fused_limits.h"
#include "gpu/gpu_backend.h"

namespace uot::gpu::detail {

enum class Variant { PotStyle, MapUot, Fused, Log };

// How K is stored on the device: in the solve's precision (Native), or as
// bfloat16 with float arithmetic (Bf16: gpu-fused-bf16, fp32 solves only).
enum class Storage { Native, Bf16 };

// Bytes per stored entry of K: 2 for bf16, else the precision's 4 or 8.
inline std::size_t storedElementBytes(Storage storage, std::size_t precisionBytes)
{
    return storage == Storage::Bf16 ? 2 : precisionBytes;
}

// Sweeps over K per iteration of a variant (core/transport/traffic_model.h), for
// what actually runs: gpu-fused is one read where its one-pass kernel takes the
// rows (onePass: fusedOnePass), else the two-pass cuBLAS path; gpu-pot-style and
// gpu-log read K twice (rows, then columns); gpu-mapuot's two kernels each read
// and write its matrix.
inline double sweepsFor(Variant variant, bool onePass = true)
{
    switch (variant) {
    case Variant::Fused: return onePass ? sweeps::kOneRead : sweeps::kTwoReads;
    case Variant::PotStyle: return sweeps::kTwoReads;
    case Variant::MapUot: return sweeps::kTwoReadWrites;
    case Variant::Log: return sweeps::kTwoReads;
    }
    return sweeps::kTwoReads;
}

// Matrix bytes one iteration of a variant moves on a device with sharedOptinBytes
// of opt-in shared memory per block (which decides gpu-fused's one or two passes
// for rows of `cols` elements). Host code; the default is the H100's 227 KiB.
inline std::uint64_t bytesPerIterationFor(Variant variant, std::size_t rows, std::size_t cols,
                                          std::size_t elementBytes,
                                          std::size_t sharedOptinBytes = kH100SharedOptinBytes)
{
    return matrixTrafficBytes(sweepsFor(variant, fusedOnePass(cols, elementBytes, sharedOptinBytes)), elementBytes,
                              rows, cols);
}

class EngineBase;

// The key of an engine in the backend's cache (gpu/engine_cache.h). Two solvers share
// an engine only when everything that decides what it runs is equal: name, variant,
// storage, precision, device and every field of the tuning, the iteration path of
// the accelerated solves (one cluster launch per chunk, the step inside the column
// kernel, or the step kernels) spelled out first.
std::string engineKey(const std::string& name, Variant variant, Storage storage, Precision precision, int device,
                      const Tuning& tuning);

// One GPU variant. Keeps its device buffers between solves of the same size
// (and the same precision and device); when destroyed, hands them to the
// backend's cache (gpu/engine_cache.h) for the next solver of the same kind.
class GpuSolver final : public UotSolver {
public:
    GpuSolver(Variant variant, std::string name, const Tuning& tuning, Storage storage = Storage::Native);
    ~GpuSolver() override;
    std::string name() const override;
    std::uint64_t bytesPerIteration(std::size_t rows, std::size_t cols, Precision precision) const override;
    SolveResult solve(const UotProblem& problem, const SolveOptions& options, const SolveControl& control) override;

private:
    Variant m_variant;
    std::string m_name;
    Tuning m_tuning;
    Storage m_storage;
    std::unique_ptr<EngineBase> m_engine;
    std::string m_engineKey;
    int m_engineDevice = -1;
};

}  // namespace uot::gpu::detail
