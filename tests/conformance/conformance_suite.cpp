// The conformance suite of the iteration: every registered variant of a device
// (from the registry, never a hand-kept list), as its capabilities allow, crossed
// with precision, dense cost or point clouds, iteration mode, acceleration, eps in
// {0.05, 1e-3, 1e-4}, tau in {0.5, 1, inf, asymmetric (0.5 | 2)} and both reference
// measures, plus "auto" (with its fallback). Each solve must either end
// "converged" with a plan within 1e-9 (fp64) / 1e-4 (fp32; 1e-2 for a kernel stored
// in bfloat16) relative L1 of the float64 oracle (newton_oracle.h), or end not
// converged, or with an underflow / not-finite status: never "converged" on a wrong
// plan. A variant that refuses a case with uot::Error is counted apart ("refused").
// On the GPU, the multi-GPU variant (gpu-nccl) runs on one GPU and, where several
// are visible, on all of them; the batched solver runs groups of 1, 7 and 64
// problems in every mode, acceleration and precision its capabilities declare, each
// result checked as a single solve.
//
//   uot_conformance [--device cpu|gpu] [--verbose]
//
// Qt-free, so that the GPU machine builds and runs it (--device gpu: the GPU
// variants; exit 77, a CTest skip, when none is available). Exit 0 when every case
// passes, 1 otherwise.

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <exception>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "core/registry/batched_solver_registry.h"
#include "core/registry/device_registry.h"
#include "core/registry/multi_gpu.h"
#include "core/registry/solver_registry.h"
#include "core/transport/uot_error.h"
#include "tests/conformance/newton_oracle.h"

using namespace uot;

namespace {

constexpr std::size_t kRows = 30, kCols = 20, kDim = 2;

struct Fixture {
    std::vector<double> x, y, cost, a, b;
};

// Points in the unit square, C = |x - y|^2 (in [0, 2]); weights in [0.5, 1.5] / size,
// b scaled to mass 1.3 (unbalanced) or to |a| (balanced, for tau = inf on both sides).
Fixture makeFixture(bool balanced)
{
    std::mt19937_64 rng(2024);
    std::uniform_real_distribution<double> unit(0.0, 1.0);
    Fixture f;
    for (std::size_t k = 0; k < kRows * kDim; ++k) f.x.push_back(unit(rng));
    for (std::size_t k = 0; k < kCols * kDim; ++k) f.y.push_back(unit(rng));
    for (std::size_t i = 0; i < kRows; ++i)
        for (std::size_t j = 0; j < kCols; ++j) {
            double c = 0;
            for (std::size_t d = 0; d < kDim; ++d) c += (f.x[i * kDim + d] - f.y[j * kDim + d]) * (f.x[i * kDim + d] - f.y[j * kDim + d]);
            f.cost.push_back(c);
        }
    double sa = 0, sb = 0;
    for (std::size_t i = 0; i < kRows; ++i) sa += f.a.emplace_back((0.5 + unit(rng)) / kRows);
    for (std::size_t j = 0; j < kCols; ++j) sb += f.b.emplace_back((0.5 + unit(rng)) / kCols);
    const double targetB = balanced ? sa : 1.3;
    for (double& w : f.b) w *= targetB / sb;
    return f;
}

struct Tau {
    const char* name;
    double a, b;
};

struct Counts {
    int cases = 0, converged = 0, refused = 0, failures = 0;
};

// The oracle's plan of a case (computed once per eps, tau and reference measure).
const std::vector<double>& oracleFor(const Fixture& f, double eps, const Tau& tau, bool productReference)
{
    static std::vector<std::pair<std::string, std::vector<double>>> cache;
    char key[64];
    std::snprintf(key, sizeof key, "%g %s %d", eps, tau.name, static_cast<int>(productReference));
    for (const auto& [k, plan] : cache)
        if (k == key) return plan;
    conformance::OracleProblem op;
    op.cost = f.cost;
    op.a = f.a;
    op.b = f.b;
    op.eps = eps;
    op.tauA = tau.a;
    op.tauB = tau.b;
    op.productReference = productReference;
    cache.emplace_back(key, conformance::oraclePlan(op));
    return cache.back().second;
}

// Relative L1 distance of the plan of a result to the oracle's.
double planDistance(const Fixture& f, const SolveResult& r, double eps, const Tau& tau, bool productReference)
{
    const std::vector<double>& expected = oracleFor(f, eps, tau, productReference);
    double diff = 0, mass = 0;
    for (std::size_t i = 0; i < kRows; ++i)
        for (std::size_t j = 0; j < kCols; ++j) {
            const double logR = productReference ? std::log(f.a[i]) + std::log(f.b[j]) : 0.0;
            const double p = std::exp(r.logU[i] + r.logV[j] - f.cost[i * kCols + j] / eps + logR);
            diff += std::abs(p - expected[i * kCols + j]);
            mass += expected[i * kCols + j];
        }
    return diff / mass;
}

// Whether a result says "converged" (a converged flag with a bad status is a failure too).
bool claimsConverged(const SolveResult& r)
{
    return r.converged && !r.cancelled &&
           (r.status == NumericalStatus::Ok || r.status == NumericalStatus::SwitchedToLogDomain);
}

const Tau kTaus[] = {{"0.5", 0.5, 0.5}, {"1", 1, 1}, {"inf", kInfinity, kInfinity}, {"0.5|2", 0.5, 2}};
const double kEpsList[] = {0.05, 1e-3, 1e-4};

// The batched solver of the GPU (registry), on groups of 1, 7 and 64 point-cloud
// problems cycling through eps, tau and the reference measures, in every iteration
// mode, acceleration and precision its capabilities declare: each result is checked
// as a single solve's (1e-9 of the oracle in fp64, 1e-4 in fp32, or not converged).
void runBatchedGroups(const Fixture& unbalanced, const Fixture& balanced, bool verbose, Counts& counts)
{
    std::string why;
    const std::optional<std::string> name = batchedSolverFor(DeviceKind::Gpu, &why);
    if (!name) {
        std::printf("batched: no batched GPU solver (%s)\n", why.c_str());
        return;
    }
    const BatchedSolverCapabilities caps = batchedSolverCapabilities(*name).value();
    auto solver = createBatchedSolver(*name);
    struct Case {
        double eps;
        const Tau* tau;
        bool product;
    };
    std::vector<Case> cycle;
    for (const double eps : kEpsList)
        for (const Tau& tau : kTaus)
            for (const bool product : {false, true}) cycle.push_back({eps, &tau, product});
    std::vector<IterationMode> modes{IterationMode::Plain};
    if (caps.translationInvariant) modes.push_back(IterationMode::TranslationInvariant);
    std::vector<Acceleration> accelerations{Acceleration::None};
    if (caps.overRelaxation) accelerations.insert(accelerations.end(), {Acceleration::Relax, Acceleration::Auto});
    std::vector<Precision> precisions{Precision::Fp32};
    if (caps.fp64) precisions.push_back(Precision::Fp64);
    for (const IterationMode mode : modes)
        for (const Acceleration acceleration : accelerations)
            for (const Precision precision : precisions)
                for (const std::size_t group : {std::size_t(1), std::size_t(7), std::size_t(64)}) {
                    std::vector<UotProblem> problems;
                    std::vector<Case> cases;
                    for (std::size_t k = 0; k < group; ++k) {
                        const Case c = cycle[(k * 5 + group) % cycle.size()];  // each group starts elsewhere
                        const Fixture& f = std::isinf(c.tau->a) && std::isinf(c.tau->b) ? balanced : unbalanced;
                        UotProblem problem;
                        problem.cost = PointCloudCost{f.x.data(), f.y.data(), kRows, kCols, kDim, 1.0};
                        problem.a = f.a;
                        problem.b = f.b;
                        problem.eps = c.eps;
                        problem.tauA = c.tau->a;
                        problem.tauB = c.tau->b;
                        problem.reference = c.product ? ReferenceMeasure::Product : ReferenceMeasure::Ones;
                        problems.push_back(std::move(problem));
                        cases.push_back(c);
                    }
                    const bool fp64 = precision == Precision::Fp64;
                    SolveOptions options;
                    options.precision = precision;
                    options.mode = mode;
                    options.acceleration = acceleration;
                    options.tolerance = fp64 ? 1e-12 : 1e-6;
                    options.maxIterations = 5000;
                    std::vector<SolveResult> results;
                    counts.cases += static_cast<int>(group);
                    try {
                        results = solver->solveBatch(problems, options);
                    } catch (const Error& e) {
                        counts.refused += static_cast<int>(group);
                        if (verbose) std::printf("%s group of %zu: refused: %s\n", name->c_str(), group, e.what());
                        continue;
                    }
                    for (std::size_t k = 0; k < group; ++k) {
                        const Case& c = cases[k];
                        const SolveResult& r = results[k];
                        const Fixture& f = std::isinf(c.tau->a) && std::isinf(c.tau->b) ? balanced : unbalanced;
                        char what[200];
                        std::snprintf(what, sizeof what, "%s group of %zu #%zu %s %s accel %s clouds eps %g tau %s %s",
                                      name->c_str(), group, k, toString(precision).c_str(), toString(mode).c_str(),
                                      toString(acceleration).c_str(), c.eps, c.tau->name,
                                      c.product ? "product" : "ones");
                        if (r.converged && !claimsConverged(r)) {
                            ++counts.failures;
                            std::printf("FAIL: %s: converged with status %s\n", what, toString(r.status).c_str());
                            continue;
                        }
                        if (!claimsConverged(r)) {
                            if (verbose)
                                std::printf("%s: not converged (%s, error %.3g after %d%s%s)\n", what,
                                            toString(r.status).c_str(), r.error, r.iterations,
                                            r.message.empty() ? "" : ": ", r.message.c_str());
                            continue;
                        }
                        ++counts.converged;
                        const double limit = fp64 ? 1e-9 : 1e-4;
                        const double distance = planDistance(f, r, c.eps, *c.tau, c.product);
                        if (!(distance <= limit)) {
                            ++counts.failures;
                            std::printf("FAIL: %s: converged after %d iterations (error %.3g) with a plan %.3g from "
                                        "the oracle (> %g)\n",
                                        what, r.iterations, r.error, distance, limit);
                        } else if (verbose) {
                            std::printf("%s: converged after %d, plan %.3g from the oracle\n", what, r.iterations,
                                        distance);
                        }
                    }
                }
}

// A case that must converge (a defect's regression, not a "converged or not" case):
// 2 x 6 points in the unit cube, costs scaled into [0, 1] (`uot solve`'s default
// --cost-scale), eps 1e-4, tau 1, fp64. The matrix-free variant stopped "not-finite"
// at iteration 1 there: the maximum its log-sum-exp shifts by was overstated, so
// every term of the sum underflowed (log 0). Every matrix-free variant of the device
// in each of its iterations, and "auto", must end converged within 1e-9 of the oracle.
void runSmallEpsMatrixFree(const std::vector<SolverInfo>& variants, bool verbose, Counts& counts)
{
    constexpr std::size_t rows = 2, cols = 6, dim = 3;
    std::mt19937_64 rng(246);
    std::uniform_real_distribution<double> unit(0.0, 1.0);
    std::vector<double> x(rows * dim), y(cols * dim), cost(rows * cols), a(rows), b(cols, 1.0 / cols);
    for (double& c : x) c = unit(rng);
    for (double& c : y) c = unit(rng);
    for (double& w : a) w = (0.5 + unit(rng)) / rows;
    double largest = 0;
    for (std::size_t i = 0; i < rows; ++i)
        for (std::size_t j = 0; j < cols; ++j) {
            double c = 0;
            for (std::size_t d = 0; d < dim; ++d) c += (x[i * dim + d] - y[j * dim + d]) * (x[i * dim + d] - y[j * dim + d]);
            cost[i * cols + j] = c;
            largest = std::max(largest, c);
        }
    const double scale = 1.0 / largest;
    for (double& c : cost) c *= scale;
    conformance::OracleProblem op;
    op.cost = cost;
    op.a = a;
    op.b = b;
    op.eps = 1e-4;
    const std::vector<double> expected = conformance::oraclePlan(op);
    for (const SolverInfo& variant : variants) {
        const bool isAuto = variant.name == "auto";
        if (!isAuto && !(variant.caps.pointClouds && !variant.caps.storesMatrix && variant.caps.fp64)) continue;
        auto solver = createSolver(variant.name);
        for (const IterationMode mode : {IterationMode::Plain, IterationMode::TranslationInvariant}) {
            if (mode == IterationMode::TranslationInvariant && !variant.caps.translationInvariant) continue;
            for (const Acceleration acceleration : {Acceleration::None, Acceleration::Auto}) {
                if (acceleration != Acceleration::None && !variant.caps.overRelaxation) continue;
                UotProblem problem;
                problem.cost = PointCloudCost{x.data(), y.data(), rows, cols, dim, scale};
                problem.a = a;
                problem.b = b;
                problem.eps = op.eps;
                SolveOptions options;
                options.precision = Precision::Fp64;
                options.mode = mode;
                options.acceleration = acceleration;
                options.tolerance = 1e-11;
                options.maxIterations = 400000;
                options.threads = 1;
                options.allowStabilizedFallback = isAuto;
                char what[160];
                std::snprintf(what, sizeof what, "%s fp64 clouds 2x6 %s accel %s eps 1e-4 costs in [0, 1] (must converge)",
                              variant.name.c_str(), toString(mode).c_str(), toString(acceleration).c_str());
                ++counts.cases;
                const SolveResult r = solver->solve(problem, options);
                if (!claimsConverged(r)) {
                    ++counts.failures;
                    std::printf("FAIL: %s: ended %s (%s) after %d iterations\n", what, toString(r.status).c_str(),
                                r.message.c_str(), r.iterations);
                    continue;
                }
                ++counts.converged;
                double diff = 0, mass = 0;
                for (std::size_t i = 0; i < rows; ++i)
                    for (std::size_t j = 0; j < cols; ++j) {
                        const double p = std::exp(r.logU[i] + r.logV[j] - cost[i * cols + j] / op.eps);
                        diff += std::abs(p - expected[i * cols + j]);
                        mass += expected[i * cols + j];
                    }
                if (!(diff / mass <= 1e-9)) {
                    ++counts.failures;
                    std::printf("FAIL: %s: converged with a plan %.3g from the oracle (> 1e-9)\n", what, diff / mass);
                } else if (verbose) {
                    std::printf("%s: converged after %d, plan %.3g from the oracle\n", what, r.iterations, diff / mass);
                }
            }
        }
    }
}

}  // namespace

int main(int argc, char** argv)
{
    DeviceKind device = DeviceKind::Cpu;
    bool verbose = false;
    for (int k = 1; k < argc; ++k) {
        if (!std::strcmp(argv[k], "--device") && k + 1 < argc) {
            device = std::string(argv[++k]) == "gpu" ? DeviceKind::Gpu : DeviceKind::Cpu;
        } else if (!std::strcmp(argv[k], "--verbose")) {
            verbose = true;
        } else {
            std::fprintf(stderr, "usage: uot_conformance [--device cpu|gpu] [--verbose]\n");
            return 2;
        }
    }
    std::vector<SolverInfo> variants;
    for (const SolverInfo& info : listSolvers())
        if (info.caps.device == device && info.available) variants.push_back(info);
    if (variants.empty()) {
        std::printf("SKIP: no available %s variant\n", toString(device).c_str());
        return 77;
    }
    // "auto": the device default with its fallback to the log domain.
    SolverInfo automatic = variants.front();
    for (const SolverInfo& info : variants)
        if (info.caps.deviceDefault) automatic = info;
    automatic.name = device == DeviceKind::Cpu ? "auto" : "";
    if (!automatic.name.empty()) variants.push_back(automatic);

    const Fixture unbalanced = makeFixture(false), balanced = makeFixture(true);
    Counts counts;
    // A variant that spreads one solve over several GPUs (gpu-nccl: its algorithm's
    // "-nccl") runs on GPU 0 alone and, where more are visible, on all of them.
    struct Run {
        SolverInfo info;
        std::vector<int> gpus;  // multi_gpu.h's choice; empty: every visible GPU
        std::string label;
    };
    std::vector<Run> runs;
    const DeviceBackend* backend = device == DeviceKind::Gpu ? findDeviceBackend(DeviceKind::Gpu) : nullptr;
    const std::size_t gpuCount = backend && backend->listDevices ? backend->listDevices().size() : 0;
    for (const SolverInfo& info : variants) {
        const std::string& algorithm = info.caps.algorithm;
        const bool multiGpu = algorithm.size() >= 5 && algorithm.compare(algorithm.size() - 5, 5, "-nccl") == 0;
        if (!multiGpu) {
            runs.push_back({info, {}, info.name});
            continue;
        }
        runs.push_back({info, {0}, info.name + "[1 GPU]"});
        if (gpuCount > 1) runs.push_back({info, {}, info.name + "[" + std::to_string(gpuCount) + " GPUs]"});
    }
    for (const Run& run : runs) {
        const SolverInfo& variant = run.info;
        const SolverCapabilities& caps = variant.caps;
        const bool isAuto = variant.name == "auto";
        setMultiGpuDevices(run.gpus);
        auto solver = createSolver(variant.name);
        for (const Precision precision : {Precision::Fp64, Precision::Fp32}) {
            if (precision == Precision::Fp64 ? !caps.fp64 : !caps.fp32) continue;
            for (const bool clouds : {false, true}) {
                if (clouds ? !caps.pointClouds : !caps.denseCost) continue;
                for (const IterationMode mode : {IterationMode::Plain, IterationMode::TranslationInvariant}) {
                    if (mode == IterationMode::TranslationInvariant && !caps.translationInvariant) continue;
                    for (const Acceleration acceleration : {Acceleration::None, Acceleration::Auto}) {
                        if (acceleration != Acceleration::None && !caps.overRelaxation) continue;
                        for (const double eps : kEpsList)
                            for (const Tau& tau : kTaus)
                                for (const ReferenceMeasure reference :
                                     {ReferenceMeasure::Ones, ReferenceMeasure::Product}) {
                                    const Fixture& f = std::isinf(tau.a) && std::isinf(tau.b) ? balanced : unbalanced;
                                    UotProblem problem;
                                    if (clouds) {
                                        problem.cost = PointCloudCost{f.x.data(), f.y.data(), kRows, kCols, kDim, 1.0};
                                    } else {
                                        DenseCost dense;
                                        dense.f64 = f.cost.data();
                                        dense.rows = kRows;
                                        dense.cols = kCols;
                                        problem.cost = dense;
                                    }
                                    problem.a = f.a;
                                    problem.b = f.b;
                                    problem.eps = eps;
                                    problem.tauA = tau.a;
                                    problem.tauB = tau.b;
                                    problem.reference = reference;
                                    const bool fp64 = precision == Precision::Fp64;
                                    SolveOptions options;
                                    options.precision = precision;
                                    options.mode = mode;
                                    options.acceleration = acceleration;
                                    options.tolerance = fp64 ? 1e-11 : 1e-6;
                                    // A GPU iteration of a 30 x 20 problem costs its launches.
                                    options.maxIterations = device == DeviceKind::Gpu ? 5000 : 20000;
                                    options.threads = 1;
                                    options.allowStabilizedFallback = isAuto;
                                    char what[256];
                                    std::snprintf(what, sizeof what, "%s %s %s %s accel %s eps %g tau %s %s",
                                                  run.label.c_str(), fp64 ? "fp64" : "fp32",
                                                  clouds ? "clouds" : "dense", toString(mode).c_str(),
                                                  toString(acceleration).c_str(), eps, tau.name,
                                                  reference == ReferenceMeasure::Product ? "product" : "ones");
                                    ++counts.cases;
                                    SolveResult r;
                                    try {
                                        r = solver->solve(problem, options);
                                    } catch (const Error& e) {
                                        // A refusal with a reason is not a wrong answer.
                                        ++counts.refused;
                                        if (verbose) std::printf("%s: refused: %s\n", what, e.what());
                                        continue;
                                    }
                                    if (r.converged && !claimsConverged(r)) {
                                        ++counts.failures;
                                        std::printf("FAIL: %s: converged with status %s\n", what,
                                                    toString(r.status).c_str());
                                        continue;
                                    }
                                    if (!claimsConverged(r)) {
                                        if (verbose)
                                            std::printf("%s: not converged (%s, error %.3g after %d)\n", what,
                                                        toString(r.status).c_str(), r.error, r.iterations);
                                        continue;
                                    }
                                    ++counts.converged;
                                    const double distance = planDistance(
                                        f, r, eps, tau, reference == ReferenceMeasure::Product);
                                    // A kernel stored in bfloat16 (2-byte entries) is exact only to its
                                    // 8-bit mantissa: its plan is the one of the rounded kernel.
                                    const double allowed = fp64 ? 1e-9 : (caps.storedEntryBytes == 2 ? 1e-2 : 1e-4);
                                    if (!(distance <= allowed)) {
                                        ++counts.failures;
                                        std::printf("FAIL: %s: converged after %d iterations (error %.3g) with a "
                                                    "plan %.3g from the oracle (> %g)\n",
                                                    what, r.iterations, r.error, distance, allowed);
                                    } else if (verbose) {
                                        std::printf("%s: converged after %d, plan %.3g from the oracle\n", what,
                                                    r.iterations, distance);
                                    }
                                }
                    }
                }
            }
        }
    }
    setMultiGpuDevices({});
    if (device == DeviceKind::Gpu) runBatchedGroups(unbalanced, balanced, verbose, counts);
    // The CPU engines' regression (the GPU's matrix-free variant is a separate engine).
    if (device == DeviceKind::Cpu) runSmallEpsMatrixFree(variants, verbose, counts);
    std::printf("%s: %d cases over %zu variants (and device sets): %d converged to the oracle, %d not converged, %d refused, "
                "%d failed\n",
                counts.failures ? "FAIL" : "PASS", counts.cases, runs.size(), counts.converged - counts.failures,
                counts.cases - counts.converged - counts.refused, counts.refused, counts.failures);
    return counts.failures ? 1 : 0;
}
