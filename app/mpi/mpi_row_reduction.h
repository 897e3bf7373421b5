#pragma once
// RowBlockReduction (core/transport/row_block_reduction.h) over MPI: one
// all-reduce of float64 values per call, on a communicator of the ranks that
// share a solve (MPI_Allreduce, or MPI_Iallreduce tested in a loop, with naps
// for --mpi-wait sleep). Counts the calls and the seconds spent in them (the
// seconds include waiting for the slowest rank: an allreduce is also a barrier).
// With a timeout, a call that makes no progress for that long stops the job
// (unresponsive_ranks.h: the live ranks say which rank did not answer).

#include <mpi.h>

#include <cstdint>

#include "core/transport/row_block_reduction.h"

namespace uot::mpi {

class MpiRowReduction final : public RowBlockReduction {
public:
    // sleepMicroseconds > 0: wait for each reduction by sleeping that long between
    // tests of a non-blocking MPI_Iallreduce instead of MPI's busy polling.
    // timeoutSeconds > 0: a reduction not finished after that long aborts the job.
    explicit MpiRowReduction(MPI_Comm comm, long sleepMicroseconds = 0, double timeoutSeconds = 0)
        : m_comm(comm), m_sleepMicroseconds(sleepMicroseconds), m_timeoutSeconds(timeoutSeconds)
    {
    }

    using RowBlockReduction::max;
    using RowBlockReduction::sum;
    void sum(std::span<double> values) override { allreduce(values, MPI_SUM); }
    void max(std::span<double> values) override { allreduce(values, MPI_MAX); }

    double seconds() const { return m_seconds; }
    std::uint64_t calls() const { return m_calls; }

private:
    void allreduce(std::span<double> values, MPI_Op op);

    MPI_Comm m_comm;
    long m_sleepMicroseconds = 0;
    double m_timeoutSeconds = 0;
    double m_seconds = 0;
    std::uint64_t m_calls = 0;
};

}  // namespace uot::mpi
