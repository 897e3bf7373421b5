#pragma once
// RowBlockReduction (core/transport/row_block_reduction.h) over MPI, on a
// communicator of the ranks that share a solve: one all-reduce of float64 values
// per sum / max call (MPI_Allreduce, or MPI_Iallreduce tested in a loop, with
// naps for --mpi-wait sleep), and one MPI_Iallreduce per packed RowTotals (all
// its sums, maxima and log-sum-exps in one message, combined by one user-defined
// operation), started by startCombine and waited for by finishCombine, so that
// the caller's work in between overlaps it (several may be in flight: the
// driver's deferred check travels during the next pass and its reductions). Counts the calls and the seconds
// spent waiting in them (the seconds include waiting for the slowest rank: an
// all-reduce is also a barrier; the overlapped part is not counted). With a
// timeout, a call that makes no progress for that long stops the job
// (unresponsive_ranks.h: the live ranks say which rank did not answer).

#include <mpi.h>

#include <cstdint>
#include <vector>

#include "core/transport/row_block_reduction.h"

namespace uot::mpi {

class MpiRowReduction final : public RowBlockReduction {
public:
    // sleepMicroseconds > 0: wait for each reduction by sleeping that long between
    // tests of a non-blocking MPI_Iallreduce instead of MPI's busy polling.
    // timeoutSeconds > 0: a reduction not finished after that long aborts the job.
    explicit MpiRowReduction(MPI_Comm comm, long sleepMicroseconds = 0, double timeoutSeconds = 0);
    ~MpiRowReduction() override;
    MpiRowReduction(const MpiRowReduction&) = delete;
    MpiRowReduction& operator=(const MpiRowReduction&) = delete;

    using RowBlockReduction::max;
    using RowBlockReduction::sum;
    void sum(std::span<double> values) override { allreduce(values, MPI_SUM); }
    void max(std::span<double> values) override { allreduce(values, MPI_MAX); }
    void startCombine(RowTotals& totals) override;
    void finishCombine(RowTotals& totals) override;
    void pauseWaitTiming() override { ++m_paused; }
    void resumeWaitTiming() override { --m_paused; }

    // Waits for another collective request of the same ranks (a node's barrier,
    // shared_row_chunks.h) as for a reduction: naps and timeout alike, its time
    // counted in seconds() (not in calls()).
    void waitFor(MPI_Request& request);

    double seconds() const { return m_seconds; }
    std::uint64_t calls() const { return m_calls; }

private:
    void allreduce(std::span<double> values, MPI_Op op);
    // Waits for `request`, begun at `start` (MPI_Wtime), by polling (with naps
    // or a timeout) or MPI_Wait.
    void wait(MPI_Request& request, double start);
    // Adds the time since `start` to seconds(), unless timing is paused.
    void countWait(double start)
    {
        if (m_paused == 0) m_seconds += MPI_Wtime() - start;
    }

    MPI_Comm m_comm;
    long m_sleepMicroseconds = 0;
    double m_timeoutSeconds = 0;
    double m_seconds = 0;
    int m_paused = 0;  // > 0: waits are not added to m_seconds (pauseWaitTiming)
    std::uint64_t m_calls = 0;
    MPI_Op m_combine = MPI_OP_NULL;  // RowTotals::combinePacked over one packed buffer
    // The packed combinations in flight (at most two: the driver's deferred check
    // and a pass's own), each known by its buffer.
    struct Pending {
        const double* buffer = nullptr;
        MPI_Datatype type = MPI_DATATYPE_NULL;
        MPI_Request request = MPI_REQUEST_NULL;
        double start = 0;
    };
    std::vector<Pending> m_pending;
};

}  // namespace uot::mpi
