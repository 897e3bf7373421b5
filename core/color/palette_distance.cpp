#include "core/color/palette_distance.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <numeric>
#include <utility>

#include "core/transport/uot_error.h"

namespace uot {

namespace {

// The 1-D W2^2 between two weighted point sets: the integral over the levels t in
// [0, 1] of the squared difference of their quantile functions (sorted merge).
double wasserstein1dSquared(std::vector<std::pair<double, double>> a, std::vector<std::pair<double, double>> b)
{
    std::sort(a.begin(), a.end());
    std::sort(b.begin(), b.end());
    std::size_t i = 0, j = 0;
    double leftA = a[0].second, leftB = b[0].second, sum = 0;
    while (i < a.size() && j < b.size()) {
        const double mass = std::min(leftA, leftB), d = a[i].first - b[j].first;
        sum += mass * d * d;
        leftA -= mass, leftB -= mass;
        if (leftA <= 1e-15 && ++i < a.size()) leftA = a[i].second;
        if (leftB <= 1e-15 && ++j < b.size()) leftB = b[j].second;
    }
    return sum;
}

std::vector<std::pair<double, double>> projected(const std::vector<double>& x, const std::vector<double>& w, double total,
                                                 const std::array<double, 3>& u)
{
    std::vector<std::pair<double, double>> out;
    out.reserve(w.size());
    for (std::size_t k = 0; k < w.size(); ++k)
        if (w[k] > 0) out.emplace_back(u[0] * x[3 * k] + u[1] * x[3 * k + 1] + u[2] * x[3 * k + 2], w[k] / total);
    return out;
}

}  // namespace

double slicedPaletteDistance(const std::vector<double>& a, const std::vector<double>& aWeights,
                             const std::vector<double>& b, const std::vector<double>& bWeights)
{
    if (a.size() != 3 * aWeights.size() || b.size() != 3 * bWeights.size())
        throw Error(ErrorCode::InvalidArgument, "slicedPaletteDistance: need 3 coordinates per weight");
    const auto positiveTotal = [](const std::vector<double>& w) {
        return std::accumulate(w.begin(), w.end(), 0.0, [](double s, double x) { return s + std::max(x, 0.0); });
    };
    const double ta = positiveTotal(aWeights), tb = positiveTotal(bWeights);
    if (!(ta > 0) || !(tb > 0)) return 0;
    const double r2 = 1 / std::sqrt(2.0), r3 = 1 / std::sqrt(3.0);
    static const std::array<std::array<double, 3>, 13> directions = {{{1, 0, 0}, {0, 1, 0}, {0, 0, 1},
                                                                      {r2, r2, 0}, {r2, -r2, 0}, {r2, 0, r2}, {r2, 0, -r2}, {0, r2, r2}, {0, r2, -r2},
                                                                      {r3, r3, r3}, {r3, r3, -r3}, {r3, -r3, r3}, {-r3, r3, r3}}};
    // The axes, the face and the body diagonals have mean u u^T = I / 3 each; weighted
    // by their counts (3, 6, 4) the mean over all 13 is I / 3 too.
    double sum = 0;
    for (const std::array<double, 3>& u : directions)
        sum += wasserstein1dSquared(projected(a, aWeights, ta, u), projected(b, bWeights, tb, u));
    return std::sqrt(sum / static_cast<double>(directions.size()));
}

}  // namespace uot
