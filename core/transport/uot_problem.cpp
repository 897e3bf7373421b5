#include "core/transport/uot_problem.h"

#include <cmath>
#include <cstdlib>
#include <sstream>

#include "core/transport/uot_error.h"

namespace uot {

namespace {


[[noreturn]] void fail(const std::string& message)
{
    throw Error(ErrorCode::InvalidArgument, message);
}

void validateWeights(std::span<const double> w, const char* name)
{
    double total = 0;
    for (std::size_t i = 0; i < w.size(); ++i) {
        if (!std::isfinite(w[i]) || w[i] <= 0) {
            std::ostringstream msg;
            msg << "weight " << name << "[" << i << "] is " << w[i]
                << ": weights must be finite and > 0 (drop empty bins instead of giving them zero weight)";
            fail(msg.str());
        }
        total += w[i];
    }
    if (!(total > 0) || !std::isfinite(total)) fail(std::string("weights ") + name + " have no finite positive mass");
}

double exponentFor(double tau, double eps)
{
    return std::isinf(tau) ? 1.0 : tau / (tau + eps);
}

}  // namespace

std::size_t UotProblem::rows() const
{
    return std::visit([](const auto& c) { return c.rows; }, cost);
}

std::size_t UotProblem::cols() const
{
    return std::visit([](const auto& c) { return c.cols; }, cost);
}

double UotProblem::exponentA() const { return exponentFor(tauA, eps); }
double UotProblem::exponentB() const { return exponentFor(tauB, eps); }

void validateProblem(const UotProblem& problem)
{
    const std::size_t m = problem.rows();
    const std::size_t n = problem.cols();
    if (m == 0 || n == 0) fail("the cost matrix is empty: it needs at least one row and one column");
    if (const auto* dense = std::get_if<DenseCost>(&problem.cost)) {
        if ((dense->f32 == nullptr) == (dense->f64 == nullptr))
            fail("the dense cost must have exactly one of float32 or float64 data");
    } else {
        const auto& cloud = std::get<PointCloudCost>(problem.cost);
        if (!cloud.x || !cloud.y || cloud.dim == 0) fail("the point-cloud cost has no points or zero dimension");
        if (!std::isfinite(cloud.scale) || cloud.scale <= 0) fail("the point-cloud cost scale must be finite and > 0");
    }
    if (problem.a.size() != m) {
        std::ostringstream msg;
        msg << "size mismatch: a has " << problem.a.size() << " entries but the cost has " << m << " rows";
        fail(msg.str());
    }
    if (problem.b.size() != n) {
        std::ostringstream msg;
        msg << "size mismatch: b has " << problem.b.size() << " entries but the cost has " << n << " columns";
        fail(msg.str());
    }
    validateWeights(problem.a, "a");
    validateWeights(problem.b, "b");
    if (!std::isfinite(problem.eps) || problem.eps <= 0) {
        std::ostringstream msg;
        msg << "eps is " << problem.eps << ": the entropic regularisation must be finite and > 0";
        fail(msg.str());
    }
    for (auto [tau, name] : {std::pair{problem.tauA, "tau_a"}, std::pair{problem.tauB, "tau_b"}}) {
        if (std::isnan(tau) || tau <= 0 || (std::isinf(tau) && tau < 0)) {
            std::ostringstream msg;
            msg << name << " is " << tau << ": marginal penalties must be > 0 (or inf for a hard constraint)";
            fail(msg.str());
        }
    }
}

std::string toString(Precision precision) { return precision == Precision::Fp32 ? "fp32" : "fp64"; }

std::string toString(ReferenceMeasure reference)
{
    return reference == ReferenceMeasure::Ones ? "ones" : "product";
}

Precision parsePrecision(const std::string& text)
{
    if (text == "fp32" || text == "float32") return Precision::Fp32;
    if (text == "fp64" || text == "float64") return Precision::Fp64;
    fail("unknown precision '" + text + "': use fp32 or fp64");
}

ReferenceMeasure parseReferenceMeasure(const std::string& text)
{
    if (text == "ones") return ReferenceMeasure::Ones;
    if (text == "product") return ReferenceMeasure::Product;
    fail("unknown reference measure '" + text + "': use ones or product");
}

double parsePenalty(const std::string& text)
{
    if (text == "inf" || text == "infinity" || text == "balanced") return kInfinity;
    char* end = nullptr;
    const double value = std::strtod(text.c_str(), &end);
    if (text.empty() || end != text.c_str() + text.size() || !std::isfinite(value) || value <= 0)
        fail("marginal penalty '" + text + "' is not valid: give a number > 0 or inf");
    return value;
}

}  // namespace uot
