#pragma once
// Functions of a solution that do not depend on which variant produced it:
// POT's stopping criterion, the plan itself, and its quality figures.

#include <cstddef>
#include <functional>
#include <span>
#include <vector>

#include "core/transport/uot_problem.h"

namespace uot {

// POT's criterion (docs/ALGORITHMS.md section 1) between two iterates, all in
// multiplicative form, host memory:
//   0.5 * ( max|u - uPrev| / max(max|u|, max|uPrev|, 1) + same for v )
double stoppingError(std::span<const double> u, std::span<const double> uPrev,
                     std::span<const double> v, std::span<const double> vPrev);

// One vector's half of stoppingError as its two maxima, so that a solve
// distributed by rows can take them over all processes before dividing:
// diff = max|x - xPrev|, scale = max(max|x|, max|xPrev|, 1); the half is diff / scale.
struct RelativeChange {
    double diff = 0;
    double scale = 1;
};
RelativeChange relativeChangeOf(std::span<const double> x, std::span<const double> xPrev);

// Same criterion from log-scalings (for log-domain variants).
double stoppingErrorFromLogs(std::span<const double> logU, std::span<const double> logUPrev,
                             std::span<const double> logV, std::span<const double> logVPrev);

struct PlanEvaluation {
    double mass = 0;            // sum_ij P_ij
    double marginalErrorA = 0;  // |P 1 - a|_1
    double marginalErrorB = 0;  // |P^T 1 - b|_1
    double objective = 0;       // <P,C> + eps KL(P|R) + tauA KL(P1|a) + tauB KL(P^T1|b) (generalised KL;
                                // an infinite tau contributes 0 when its marginal is met, else +inf)
    double flushedMass = 0;     // sum of P_ij over the entries a multiplicative solve held as 0
                                // (planSums' storageFloor); 0 when not measured
};

// Calls fn(i, row) for every row of the plan P_ij = exp(logU_i + logV_j - C_ij/eps) R_ij,
// computed in float64. row points to cols values valid during the call. Calls
// may come from several threads at once (distinct i). threads: 0 = all.
void forEachPlanRow(const UotProblem& problem, std::span<const double> logU, std::span<const double> logV,
                    const std::function<void(std::size_t i, const double* row)>& fn, int threads = 0);

// Writes the whole plan (rows x cols, row-major, host memory).
void computePlan(const UotProblem& problem, std::span<const double> logU, std::span<const double> logV,
                 double* out, int threads = 0);

// The plan's row sums P 1, column sums P^T 1 and sum_ij P_ij (logU_i + logV_j),
// in one float64 pass (what evaluationFromSums needs).
//
// storageFloor > 0 (the smallest normal number of a multiplicative solve's
// storage precision: FLT_MIN for fp32, DBL_MIN for fp64) also sums, in the same
// pass, flushedMass: the plan's mass on the entries that such a solve held as 0,
// i.e. where log P_ij < log(storageFloor) + max(log u_i, 0) + max(log v_j, 0).
// That covers the stored kernel (K_ij = exp(-C_ij/eps) R_ij < floor is stored as
// 0: P_ij < floor u_i v_j) and the passes' products that flush-to-zero drops
// (K_ij v_j < floor: P_ij < floor u_i; u_i K_ij < floor: P_ij < floor v_j). The
// test is P_ij < floor max(u_i, 1) max(v_j, 1), the union of the three plus the
// entries below the floor themselves (at most rows * cols * floor in all), taken
// in logs so that no threshold overflows. One add and one compare per entry.
struct PlanSums {
    std::vector<double> rowSums;
    std::vector<double> colSums;
    double scaledLogSum = 0;
    double flushedMass = 0;  // 0 unless storageFloor > 0
};
PlanSums planSums(const UotProblem& problem, std::span<const double> logU, std::span<const double> logV,
                  int threads = 0, double storageFloor = 0);

// One float64 pass over the plan: evaluationFromSums of planSums (flushedMass
// measured when storageFloor > 0, as in planSums).
PlanEvaluation evaluatePlan(const UotProblem& problem, std::span<const double> logU,
                            std::span<const double> logV, int threads = 0, double storageFloor = 0);

// The evaluation from the plan's row sums P 1 (size rows), column sums P^T 1
// (size cols) and scaledLogSum = sum_ij P_ij (logU_i + logV_j), however they
// were computed (evaluatePlan on the host; the GPU solvers on the device).
// <P,C> + eps KL(P|R) = sum P (C + eps log(P/R)) - eps sum P + eps sum R, and
// C + eps log(P/R) = eps (logU_i + logV_j).
PlanEvaluation evaluationFromSums(const UotProblem& problem, std::span<const double> rowSums,
                                  std::span<const double> colSums, double scaledLogSum);

}  // namespace uot
