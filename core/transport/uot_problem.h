#pragma once
// The unbalanced optimal-transport problem every solver in the project solves
// (docs/ALGORITHMS.md section 1):
//
//   minimize_P  <P, C> + eps KL(P | R) + tauA KL(P 1 | a) + tauB KL(P^T 1 | b)
//
// The problem is a set of non-owning views: the caller keeps the cost (or the
// point sets) and the weights alive for as long as a solver uses them.

#include <cstddef>
#include <limits>
#include <span>
#include <string>
#include <variant>

namespace uot {

enum class Precision { Fp32, Fp64 };
enum class ReferenceMeasure {
    Ones,    // R_ij = 1 (POT reg_type="entropy"); the default
    Product  // R_ij = a_i b_j (POT >= 0.9 reg_type="kl")
};

inline constexpr double kInfinity = std::numeric_limits<double>::infinity();

// A dense cost matrix in host memory, row-major, rows x cols. Exactly one of
// f32 / f64 is set.
struct DenseCost {
    const float* f32 = nullptr;
    const double* f64 = nullptr;
    std::size_t rows = 0;
    std::size_t cols = 0;
};

// A cost defined by two point sets in host memory:
//   C_ij = scale * |x_i - y_j|^2
// x is rows x dim and y is cols x dim, both row-major. The matrix is never
// stored; solvers compute rows of it on the fly.
struct PointCloudCost {
    const double* x = nullptr;
    const double* y = nullptr;
    std::size_t rows = 0;
    std::size_t cols = 0;
    std::size_t dim = 0;
    double scale = 1.0;
};

using CostSource = std::variant<DenseCost, PointCloudCost>;

struct UotProblem {
    CostSource cost;
    std::span<const double> a;  // source weights, size rows, all > 0
    std::span<const double> b;  // target weights, size cols, all > 0
    double eps = 0.05;          // entropic regularisation, > 0
    double tauA = 1.0;          // marginal penalty on the source side, > 0 or kInfinity
    double tauB = 1.0;          // marginal penalty on the target side, > 0 or kInfinity
    ReferenceMeasure reference = ReferenceMeasure::Ones;

    std::size_t rows() const;
    std::size_t cols() const;

    // Exponents of the scaling updates: f = tau / (tau + eps), 1 when tau is infinite.
    double exponentA() const;
    double exponentB() const;
};

// Checks sizes, weights and parameters (not the cost entries, which solvers
// check while they build the kernel). Throws uot::Error (InvalidArgument) with
// a message that names the offending input.
void validateProblem(const UotProblem& problem);

std::string toString(Precision precision);
std::string toString(ReferenceMeasure reference);
Precision parsePrecision(const std::string& text);           // "fp32" | "fp64"
ReferenceMeasure parseReferenceMeasure(const std::string& text);  // "ones" | "product"
double parsePenalty(const std::string& text);                // a number > 0 or "inf"

}  // namespace uot
