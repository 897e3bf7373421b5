#include "app/mpi/mpi_row_reduction.h"

#include <climits>
#include <ctime>
#include <string>

#include "core/transport/uot_error.h"

namespace uot::mpi {

void MpiRowReduction::allreduce(std::span<double> values, MPI_Op op)
{
    if (values.size() > static_cast<std::size_t>(INT_MAX))
        throw Error(ErrorCode::InvalidArgument, "a reduction of " + std::to_string(values.size()) +
                                                    " values is larger than one MPI message can carry");
    const double start = MPI_Wtime();
    if (m_sleepMicroseconds > 0) {
        MPI_Request request;
        MPI_Iallreduce(MPI_IN_PLACE, values.data(), static_cast<int>(values.size()), MPI_DOUBLE, op, m_comm,
                       &request);
        int done = 0;
        MPI_Test(&request, &done, MPI_STATUS_IGNORE);
        const timespec pause{0, 1000L * m_sleepMicroseconds};
        while (!done) {
            nanosleep(&pause, nullptr);
            MPI_Test(&request, &done, MPI_STATUS_IGNORE);
        }
    } else {
        MPI_Allreduce(MPI_IN_PLACE, values.data(), static_cast<int>(values.size()), MPI_DOUBLE, op, m_comm);
    }
    m_seconds += MPI_Wtime() - start;
    ++m_calls;
}

}  // namespace uot::mpi
