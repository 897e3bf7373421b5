#include "app/mpi/row_rebalancer.h"

#include <algorithm>
#include <utility>

#include "app/mpi/collective_errors.h"
#include "app/mpi/row_split.h"
#include "app/mpi/unresponsive_ranks.h"

namespace uot::mpi {

namespace {

// Rows of [next[r], next[r + 1]) outside [bounds[r], bounds[r + 1]).
std::size_t rowsGained(const std::vector<std::size_t>& bounds, const std::vector<std::size_t>& next, std::size_t r)
{
    const std::size_t lo = std::max(next[r], bounds[r]), hi = std::min(next[r + 1], bounds[r + 1]);
    return next[r + 1] - next[r] - (hi > lo ? hi - lo : 0);
}

// `next` with one row moved across the first boundary that can move (the split
// is unchanged otherwise): --rebalance always moves a row at every check.
void moveOneRow(std::vector<std::size_t>& next)
{
    const std::size_t p = next.size() - 1;
    for (std::size_t k = 1; k < p; ++k)
        if (next[k] > next[k - 1]) {
            --next[k];
            return;
        }
    if (p > 1 && next[p - 1] < next[p]) ++next[p - 1];
}

}  // namespace

RowRebalancer::RowRebalancer(MPI_Comm comm, std::vector<std::size_t> bounds, Mode mode, MpiRowReduction& loop,
                             RowSource source, double secondsPerRow, int maxIterations)
    : m_comm(comm), m_bounds(std::move(bounds)), m_mode(mode), m_loop(loop), m_source(std::move(source)),
      m_secondsPerRow(secondsPerRow), m_maxIterations(maxIterations)
{
    MPI_Comm_rank(comm, &m_rank);
    restartInterval(0);
}

void RowRebalancer::restartInterval(int iteration)
{
    m_intervalStart = MPI_Wtime();
    m_waitAtStart = m_loop.seconds();
    m_iterationAtStart = iteration;
}

void RowRebalancer::wait(MPI_Request& request)
{
    const UntimedWaits untimed(&m_loop);
    m_loop.waitFor(request);
}

RowBlockMover::Move RowRebalancer::plan(int iteration)
{
    const std::size_t p = m_bounds.size() - 1, r = static_cast<std::size_t>(m_rank);
    const double compute =
        std::max(0.0, MPI_Wtime() - m_intervalStart - (m_loop.seconds() - m_waitAtStart));
    const double mine[2] = {compute, m_secondsPerRow};
    std::vector<double> all(2 * p);
    stopHereForTest(m_comm, "rebalance");
    MPI_Request request;
    MPI_Iallgather(mine, 2, MPI_DOUBLE, all.data(), 2, MPI_DOUBLE, m_comm, &request);
    wait(request);
    std::vector<std::size_t> rowsNow(p);
    std::vector<double> seconds(p), perRow(p);
    for (std::size_t k = 0; k < p; ++k) {
        rowsNow[k] = m_bounds[k + 1] - m_bounds[k];
        seconds[k] = all[2 * k];
        perRow[k] = all[2 * k + 1];
    }
    std::vector<std::size_t> next = balancedRowSplit(rowsNow, seconds, m_bounds.back());
    bool take = false;
    if (m_mode == Mode::Always) {
        if (next == m_bounds) moveOneRow(next);
        take = next != m_bounds;
    } else {
        const int timed = iteration - m_iterationAtStart;
        const double ahead = std::min(iteration, m_maxIterations - iteration);
        take = next != m_bounds && moveGainSeconds(m_bounds, next, seconds, timed, ahead, perRow) > 0;
    }
    restartInterval(iteration);
    if (!take) return {};
    m_gained = rowsGained(m_bounds, next, r);
    for (std::size_t k = 0; k < p; ++k) m_rowsMoved += rowsGained(m_bounds, next, k);
    m_bounds = std::move(next);
    ++m_moves;
    return {true, m_bounds[r], m_bounds[r + 1] - m_bounds[r]};
}

UotProblem RowRebalancer::rows(std::size_t firstRow, std::size_t rowCount)
{
    UotProblem block;
    runCollectively(m_comm, [&] { block = m_source(firstRow, rowCount); }, [this](MPI_Request& r) { wait(r); });
    return block;
}

void RowRebalancer::moved(double seconds)
{
    m_moveSeconds += seconds;
    if (m_gained > 0) m_secondsPerRow = seconds / static_cast<double>(m_gained);
    // The move is not compute of the next interval.
    m_intervalStart = MPI_Wtime();
    m_waitAtStart = m_loop.seconds();
}

}  // namespace uot::mpi
