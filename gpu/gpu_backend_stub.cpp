// The GPU backend when the project is built without CUDA: same interface,
// every entry point says plainly that there is no GPU support in this build.

#include "core/transport/uot_error.h"
#include "gpu/batched_solver.h"
#include "gpu/gpu_backend.h"
#include "gpu/gpu_plan_evaluation.h"

namespace uot::gpu {

namespace {
const char* kNoCuda =
    "this build has no GPU support (CUDA was not found or UOT_CUDA=OFF at configure time); "
    "use a CPU solver, or rebuild with the CUDA Toolkit installed";
}

bool builtWithCuda() { return false; }
std::vector<DeviceInfo> listDevices() { return {}; }
std::string unavailableReason() { return kNoCuda; }
std::unique_ptr<UotSolver> createSolver(const std::string&)
{
    throw Error(ErrorCode::Unavailable, kNoCuda);
}

std::unique_ptr<UotSolver> createSolver(const std::string&, const Tuning&)
{
    throw Error(ErrorCode::Unavailable, kNoCuda);
}

std::unique_ptr<UotSolver> createMapReduceSolver(const MapReduceConfig&) { throw Error(ErrorCode::Unavailable, kNoCuda); }
std::unique_ptr<BatchedUotSolver> createBatchedSolver() { throw Error(ErrorCode::Unavailable, kNoCuda); }
double measureExp2Throughput(int) { throw Error(ErrorCode::Unavailable, kNoCuda); }

BandwidthMeasurement measureBandwidth(int, std::size_t) { throw Error(ErrorCode::Unavailable, kNoCuda); }

namespace {
Tuning g_defaultTuning;
}
void setDefaultTuning(const Tuning& tuning) { g_defaultTuning = tuning; }
Tuning defaultTuning() { return g_defaultTuning; }

Tuning tuneMapUot(int, std::size_t, std::size_t, std::vector<TuningTrial>*)
{
    throw Error(ErrorCode::Unavailable, kNoCuda);
}

DeviceMemory deviceMemory(int) { throw Error(ErrorCode::Unavailable, kNoCuda); }

DeviceContextStats deviceContextStats() { return {}; }
void releaseDeviceContexts() {}
std::vector<double> pointCloudCostOnDevice(const PointCloudCost&, int) { throw Error(ErrorCode::Unavailable, kNoCuda); }

namespace detail {
PlanEvaluation evaluatePlanOnDevice(const UotProblem&, std::span<const double>, std::span<const double>, int)
{
    throw Error(ErrorCode::Unavailable, kNoCuda);
}
}  // namespace detail

}  // namespace uot::gpu
