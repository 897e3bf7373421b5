#include "tests/conformance/newton_oracle.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

namespace uot::conformance {

namespace {

struct Stage {
    const OracleProblem& p;
    std::size_t m, n;
    std::vector<double> logK;
    double ra, rb;

    Stage(const OracleProblem& problem, double eps)
        : p(problem), m(problem.a.size()), n(problem.b.size()), logK(m * n),
          ra(std::isinf(problem.tauA) ? 0.0 : eps / problem.tauA), rb(std::isinf(problem.tauB) ? 0.0 : eps / problem.tauB)
    {
        for (std::size_t i = 0; i < m; ++i)
            for (std::size_t j = 0; j < n; ++j)
                logK[i * n + j] = -p.cost[i * n + j] / eps +
                                  (p.productReference ? std::log(p.a[i]) + std::log(p.b[j]) : 0.0);
    }

    static double psi(double w, double r, double x) { return r == 0 ? w * x : -(w / r) * std::expm1(-r * x); }

    double dual(const std::vector<double>& x, const std::vector<double>& y) const
    {
        double value = 0;
        for (std::size_t i = 0; i < m; ++i) {
            value += psi(p.a[i], ra, x[i]);
            for (std::size_t j = 0; j < n; ++j) {
                const double z = x[i] + y[j] + logK[i * n + j];
                if (z > 700) return -std::numeric_limits<double>::infinity();
                value -= std::exp(z);
            }
        }
        for (std::size_t j = 0; j < n; ++j) value += psi(p.b[j], rb, y[j]);
        return value;
    }

    // Newton steps until the gradient is below 1e-14 of the weights.
    void solve(std::vector<double>& x, std::vector<double>& y) const
    {
        const std::size_t k = m + n;
        double scale = 0;
        for (double w : p.a) scale += w;
        for (double w : p.b) scale = std::max(scale, w);
        std::vector<double> plan(m * n), grad(k), h(k * k), step(k), nx(m), ny(n);
        for (int iteration = 0; iteration < 500; ++iteration) {
            std::vector<double> rowSum(m, 0.0), colSum(n, 0.0);
            for (std::size_t i = 0; i < m; ++i)
                for (std::size_t j = 0; j < n; ++j) {
                    const double v = std::exp(x[i] + y[j] + logK[i * n + j]);
                    plan[i * n + j] = v;
                    rowSum[i] += v;
                    colSum[j] += v;
                }
            double worst = 0;
            std::fill(h.begin(), h.end(), 0.0);
            for (std::size_t i = 0; i < m; ++i) {
                const double t = p.a[i] * std::exp(-ra * x[i]);
                grad[i] = t - rowSum[i];
                h[i * k + i] = ra * t + rowSum[i];
                worst = std::max(worst, std::abs(grad[i]));
            }
            for (std::size_t j = 0; j < n; ++j) {
                const double t = p.b[j] * std::exp(-rb * y[j]);
                grad[m + j] = t - colSum[j];
                h[(m + j) * k + m + j] = rb * t + colSum[j];
                worst = std::max(worst, std::abs(grad[m + j]));
            }
            if (worst <= 1e-14 * scale) return;
            double trace = 0;
            for (std::size_t i = 0; i < m; ++i)
                for (std::size_t j = 0; j < n; ++j) h[i * k + m + j] = h[(m + j) * k + i] = plan[i * n + j];
            for (std::size_t q = 0; q < k; ++q) trace += h[q * k + q];
            for (std::size_t q = 0; q < k; ++q) h[q * k + q] += 1e-13 * trace / double(k);  // balanced: (x + c, y - c)
            // Cholesky of the (positive definite) negative Hessian, then two triangular solves.
            for (std::size_t c = 0; c < k; ++c) {
                double d = h[c * k + c];
                for (std::size_t q = 0; q < c; ++q) d -= h[c * k + q] * h[c * k + q];
                if (!(d > 0)) throw std::runtime_error("newton oracle: Hessian not positive definite");
                d = std::sqrt(d);
                h[c * k + c] = d;
                for (std::size_t r = c + 1; r < k; ++r) {
                    double s = h[r * k + c];
                    for (std::size_t q = 0; q < c; ++q) s -= h[r * k + q] * h[c * k + q];
                    h[r * k + c] = s / d;
                }
            }
            for (std::size_t r = 0; r < k; ++r) {
                double s = grad[r];
                for (std::size_t q = 0; q < r; ++q) s -= h[r * k + q] * step[q];
                step[r] = s / h[r * k + r];
            }
            for (std::size_t r = k; r-- > 0;) {
                double s = step[r];
                for (std::size_t q = r + 1; q < k; ++q) s -= h[q * k + r] * step[q];
                step[r] = s / h[r * k + r];
            }
            double slope = 0;
            for (std::size_t q = 0; q < k; ++q) slope += grad[q] * step[q];
            const double base = dual(x, y);
            double t = 1.0;
            for (; t > 1e-12; t *= 0.5) {
                for (std::size_t i = 0; i < m; ++i) nx[i] = x[i] + t * step[i];
                for (std::size_t j = 0; j < n; ++j) ny[j] = y[j] + t * step[m + j];
                if (dual(nx, ny) >= base + 1e-4 * t * slope - 1e-15 * std::abs(base)) break;
            }
            x = nx;
            y = ny;
        }
    }
};

}  // namespace

std::vector<double> oraclePlan(const OracleProblem& p)
{
    const std::size_t m = p.a.size(), n = p.b.size();
    double start = p.eps;
    for (double c : p.cost) start = std::max(start, c);
    std::vector<double> stages{start};
    while (stages.back() * 0.5 > p.eps) stages.push_back(stages.back() * 0.5);
    stages.push_back(p.eps);
    std::vector<double> f(m, 0.0), g(n, 0.0), x(m), y(n);
    for (double eps : stages) {
        const Stage stage(p, eps);
        for (std::size_t i = 0; i < m; ++i) x[i] = f[i] / eps;
        for (std::size_t j = 0; j < n; ++j) y[j] = g[j] / eps;
        stage.solve(x, y);
        for (std::size_t i = 0; i < m; ++i) f[i] = eps * x[i];
        for (std::size_t j = 0; j < n; ++j) g[j] = eps * y[j];
    }
    const Stage last(p, p.eps);
    std::vector<double> plan(m * n);
    for (std::size_t i = 0; i < m; ++i)
        for (std::size_t j = 0; j < n; ++j) plan[i * n + j] = std::exp(x[i] + y[j] + last.logK[i * n + j]);
    return plan;
}

}  // namespace uot::conformance
