#include "app/mpi/mpi_row_reduction.h"

#include <climits>
#include <ctime>
#include <string>

#include "app/mpi/unresponsive_ranks.h"
#include "core/transport/uot_error.h"

namespace uot::mpi {

void MpiRowReduction::allreduce(std::span<double> values, MPI_Op op)
{
    if (values.size() > static_cast<std::size_t>(INT_MAX))
        throw Error(ErrorCode::InvalidArgument, "a reduction of " + std::to_string(values.size()) +
                                                    " values is larger than one MPI message can carry");
    const double start = MPI_Wtime();
    if (m_sleepMicroseconds > 0 || m_timeoutSeconds > 0) {
        MPI_Request request;
        MPI_Iallreduce(MPI_IN_PLACE, values.data(), static_cast<int>(values.size()), MPI_DOUBLE, op, m_comm,
                       &request);
        int done = 0;
        MPI_Test(&request, &done, MPI_STATUS_IGNORE);
        const timespec pause{0, 1000L * m_sleepMicroseconds};
        for (unsigned polls = 1; !done; ++polls) {
            if (m_sleepMicroseconds > 0) nanosleep(&pause, nullptr);
            MPI_Test(&request, &done, MPI_STATUS_IGNORE);
            // The clock is read every 1024 busy polls (every poll when napping).
            if (!done && m_timeoutSeconds > 0 && (m_sleepMicroseconds > 0 || polls % 1024 == 0) &&
                MPI_Wtime() - start > m_timeoutSeconds)
                abortOnUnresponsiveRanks(m_comm, m_timeoutSeconds);
        }
    } else {
        MPI_Allreduce(MPI_IN_PLACE, values.data(), static_cast<int>(values.size()), MPI_DOUBLE, op, m_comm);
    }
    m_seconds += MPI_Wtime() - start;
    ++m_calls;
}

}  // namespace uot::mpi
