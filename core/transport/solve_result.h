#pragma once
// What a solve returns. The plan is represented by its log-scalings, which
// every variant (multiplicative or log-domain) can express without overflow:
//
//   P_ij = exp(logU_i + logV_j) * K_ij,   K_ij = exp(-C_ij / eps) * R_ij
//
// computePlan() / forEachPlanRow() in plan_evaluation.h materialise it on request.

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

namespace uot {

enum class NumericalStatus {
    Ok,
    SwitchedToLogDomain,  // multiplicative form would underflow; the log-domain solver finished the job
    Underflow,            // the forced multiplicative variant would underflow; stopped, last good iterate kept
    NotFinite             // a non-finite value appeared and could not be recovered; last good iterate kept
};

struct SolveTimings {
    double setupSeconds = 0;     // building K, allocations, uploads
    double iterateSeconds = 0;   // the iteration loop only
    double evaluateSeconds = 0;  // final plan evaluation
    double msPerIteration = 0;   // iterateSeconds / iterations, in milliseconds
};

// One stage of an eps-scaling schedule (the last one is the target eps).
struct SolveStage {
    double eps = 0;
    int iterations = 0;
    std::uint64_t passes = 0;
    double error = 0;
    bool converged = false;
};

// Hardware counters read over a few sampled iterations (SolveOptions::
// sampleHardwareCounters). Per-iteration figures; NaN where not measured.
struct HardwareCounters {
    bool sampled = false;          // the counters below were read
    std::string source;            // e.g. "CUPTI range profiler"
    std::string note;              // why nothing was read, or caveats; empty otherwise
    int sampledIterations = 0;     // iterations inside the profiled range (per replay pass)
    int passes = 0;                // replay passes the metrics needed
    double dramReadBytesPerIteration = std::numeric_limits<double>::quiet_NaN();
    double dramWriteBytesPerIteration = std::numeric_limits<double>::quiet_NaN();
    double l2HitRate = std::numeric_limits<double>::quiet_NaN();  // 0..1
    double l1HitRate = std::numeric_limits<double>::quiet_NaN();  // 0..1
};

struct SolveResult {
    std::string solver;      // variant that produced the result (after any automatic switch)
    std::vector<double> logU;  // size rows
    std::vector<double> logV;  // size cols
    int iterations = 0;
    // Passes over K (or over the point clouds, for matrix-free variants) that the
    // solve made, all stages included; a pass that reads K twice counts as 2.
    std::uint64_t passes = 0;
    std::string mode = "plain";  // the iteration mode that ran (toString(IterationMode))
    std::string acceleration = "none";  // toString(Acceleration) of what ran
    double omega = 1;                   // the relaxation factor at the end (1 = none)
    int rejectedSteps = 0;              // steps the safeguard undid (each cost one pass)
    // The log-domain variant (log_solver.h): how often it absorbed the potentials
    // into its stored kernel, and how many passes ran in exact log-sum-exp form
    // (the others ran on the absorbed kernel). 0 for the other variants.
    int absorptions = 0;
    int exactPasses = 0;
    std::vector<SolveStage> stages;     // eps-scaling stages; empty without a schedule
    double error = 0;          // stopping criterion at the last check
    bool converged = false;
    bool cancelled = false;
    NumericalStatus status = NumericalStatus::Ok;
    std::string message;       // human-readable note on the status, empty when Ok
    // Evaluated on the final plan when SolveOptions::evaluateFinalPlan (else NaN).
    double mass = 0;
    double marginalErrorA = 0;
    double marginalErrorB = 0;
    double objective = 0;
    std::uint64_t bytesPerIteration = 0;
    std::uint64_t peakDeviceBytes = 0;  // GPU variants: peak device memory the solve allocated (0 on CPU)
    SolveTimings timings;
    HardwareCounters counters;  // when SolveOptions::sampleHardwareCounters

    std::vector<double> u() const;  // exp(logU); may overflow to inf for log-domain results
    std::vector<double> v() const;
};

std::string toString(NumericalStatus status);

}  // namespace uot
