#pragma once
// `uot-mpi solve --balance` during the solve: at each check of the iteration loop
// (scaling_loop.h's moveRows) every rank's compute time over the last interval
// (its time less its waits in the loop's reductions) is gathered, the rows are
// split again in proportion to the speeds (row_split.h), and the new split is
// taken when the predicted saving over as many iterations again as have run (at
// most the ones left) beats the time to set up the rows that move
// (moveGainSeconds), or always (--rebalance always: a row moves at every check
// even when the speeds agree, for the tests). The rows' cost comes from the
// command (generated again for --random, read again from the files).

#include <mpi.h>

#include <cstddef>
#include <functional>
#include <vector>

#include "app/mpi/mpi_row_reduction.h"
#include "core/transport/fused_solver.h"

namespace uot::mpi {

class RowRebalancer final : public RowBlockMover {
public:
    enum class Mode { Auto, Always };
    using RowSource = std::function<UotProblem(std::size_t firstRow, std::size_t rowCount)>;

    // bounds: the split the solve starts on; loop: the reduction whose waits are
    // left out of the compute times, and through which this class's own collective
    // calls are waited for (its --mpi-wait and --timeout, not counted in its
    // seconds); secondsPerRow: this rank's time to set up one
    // row (measured at the start; each move measures it again).
    RowRebalancer(MPI_Comm comm, std::vector<std::size_t> bounds, Mode mode, MpiRowReduction& loop,
                  RowSource source, double secondsPerRow, int maxIterations);

    Move plan(int iteration) override;
    UotProblem rows(std::size_t firstRow, std::size_t rowCount) override;
    void moved(double seconds) override;

    int moves() const { return m_moves; }
    std::size_t rowsMoved() const { return m_rowsMoved; }  // rows set up on a new rank, over all moves
    double moveSeconds() const { return m_moveSeconds; }   // this rank's time in the moves
    const std::vector<std::size_t>& bounds() const { return m_bounds; }

private:
    void restartInterval(int iteration);
    // Waits for one of this class's collective requests through m_loop, untimed.
    void wait(MPI_Request& request);

    MPI_Comm m_comm;
    int m_rank = 0;
    std::vector<std::size_t> m_bounds;
    Mode m_mode;
    MpiRowReduction& m_loop;
    RowSource m_source;
    double m_secondsPerRow;
    int m_maxIterations;
    double m_intervalStart = 0, m_waitAtStart = 0;
    int m_iterationAtStart = 0;
    std::size_t m_gained = 0;  // rows this rank sets up in the move under way
    int m_moves = 0;
    std::size_t m_rowsMoved = 0;
    double m_moveSeconds = 0;
};

}  // namespace uot::mpi
