#pragma once
// Internal to gpu/: the final float64 evaluation of a plan on the device, for
// problems whose cost is a point cloud (the pipeline's palettes). No CUDA types.

#include <span>

#include "core/transport/plan_evaluation.h"
#include "core/transport/uot_problem.h"

namespace uot::gpu::detail {

// What evaluatePlan(problem, logU, logV) computes on the host, computed on
// CUDA device `device`: every P_ij = exp(logU_i + logV_j - C_ij / eps) R_ij in
// float64 with C_ij recomputed from the points (never stored), its row and
// column sums and sum_ij P_ij (logU_i + logV_j), then evaluationFromSums().
// Same values as the host pass up to the order of the float64 sums. logU and
// logV are host memory. Requires a PointCloudCost (throws
// uot::Error(InvalidArgument) otherwise); throws uot::Error (Device,
// OutOfMemory) on CUDA failures.
PlanEvaluation evaluatePlanOnDevice(const UotProblem& problem, std::span<const double> logU,
                                    std::span<const double> logV, int device);

}  // namespace uot::gpu::detail
