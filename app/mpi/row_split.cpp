#include "app/mpi/row_split.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace uot::mpi {

std::vector<std::size_t> evenRowSplit(std::size_t rows, int ranks)
{
    const auto p = static_cast<std::size_t>(std::max(1, ranks));
    std::vector<std::size_t> bounds(p + 1);
    for (std::size_t r = 0; r <= p; ++r) bounds[r] = rows * r / p;
    return bounds;
}

std::vector<double> rankSpeeds(const std::vector<std::size_t>& rowsNow, const std::vector<double>& seconds)
{
    const std::size_t p = rowsNow.size();
    std::vector<double> speed(p, 0.0);
    double known = 0;
    std::size_t knownCount = 0;
    for (std::size_t r = 0; r < p && r < seconds.size(); ++r)
        if (rowsNow[r] > 0 && seconds[r] > 0 && std::isfinite(seconds[r])) {
            speed[r] = static_cast<double>(rowsNow[r]) / seconds[r];
            known += speed[r];
            ++knownCount;
        }
    if (knownCount == 0) return speed;
    for (double& s : speed)
        if (s == 0) s = known / static_cast<double>(knownCount);
    return speed;
}

std::vector<std::size_t> balancedRowSplit(const std::vector<std::size_t>& rowsNow, const std::vector<double>& seconds,
                                          std::size_t rows)
{
    const std::size_t p = rowsNow.size();
    const std::vector<double> speed = rankSpeeds(rowsNow, seconds);
    if (std::all_of(speed.begin(), speed.end(), [](double s) { return s == 0; }))
        return evenRowSplit(rows, static_cast<int>(p));
    const double total = std::accumulate(speed.begin(), speed.end(), 0.0);
    // Whole rows of each share, then the rows left over to the largest remainders.
    std::vector<std::size_t> count(p);
    std::vector<double> remainder(p);
    std::size_t given = 0;
    for (std::size_t r = 0; r < p; ++r) {
        const double share = static_cast<double>(rows) * speed[r] / total;
        count[r] = std::min(rows, static_cast<std::size_t>(std::floor(share)));
        remainder[r] = share - static_cast<double>(count[r]);
        given += count[r];
    }
    std::vector<std::size_t> order(p);
    std::iota(order.begin(), order.end(), std::size_t{0});
    std::stable_sort(order.begin(), order.end(),
                     [&](std::size_t x, std::size_t y) { return remainder[x] > remainder[y]; });
    for (std::size_t k = 0; given < rows; k = (k + 1) % p, ++given) ++count[order[k]];
    while (given > rows)  // rounding can only overshoot by a row or so: take it from the largest
        --count[*std::max_element(order.begin(), order.end(),
                                  [&](std::size_t x, std::size_t y) { return count[x] < count[y]; })],
            --given;
    std::vector<std::size_t> bounds(p + 1, 0);
    for (std::size_t r = 0; r < p; ++r) bounds[r + 1] = bounds[r] + count[r];
    return bounds;
}

double moveGainSeconds(const std::vector<std::size_t>& bounds, const std::vector<std::size_t>& next,
                       const std::vector<double>& seconds, int iterationsTimed, double iterationsAhead,
                       const std::vector<double>& secondsPerRow)
{
    const std::size_t p = bounds.size() - 1;
    std::vector<std::size_t> rowsNow(p);
    for (std::size_t r = 0; r < p; ++r) rowsNow[r] = bounds[r + 1] - bounds[r];
    const std::vector<double> speed = rankSpeeds(rowsNow, seconds);
    double before = 0, after = 0, move = 0;
    for (std::size_t r = 0; r < p; ++r) {
        before = std::max(before, r < seconds.size() && std::isfinite(seconds[r]) ? seconds[r] : 0.0);
        const std::size_t count = next[r + 1] - next[r];
        if (speed[r] > 0) after = std::max(after, static_cast<double>(count) / speed[r]);
        // The rows of the new range that the rank does not hold now.
        const std::size_t kept = std::min(next[r + 1], bounds[r + 1]) > std::max(next[r], bounds[r])
                                     ? std::min(next[r + 1], bounds[r + 1]) - std::max(next[r], bounds[r])
                                     : 0;
        const double perRow = r < secondsPerRow.size() ? secondsPerRow[r] : 0.0;
        move = std::max(move, static_cast<double>(count - kept) * perRow);
    }
    const double perIteration = (before - after) / std::max(1, iterationsTimed);
    return perIteration * iterationsAhead - move;
}

}  // namespace uot::mpi
