#include "app/mpi/mpi_row_reduction.h"

#include <algorithm>
#include <climits>
#include <ctime>
#include <stdexcept>
#include <string>

#include "app/mpi/unresponsive_ranks.h"
#include "core/transport/uot_error.h"

namespace uot::mpi {

namespace {

// The user-defined operation of a packed RowTotals. The buffer travels as one
// element of a contiguous type of its length, so MPI never splits it into
// segments: every call sees a whole buffer, counts first.
void combinePackedTotals(void* in, void* inout, int* count, MPI_Datatype* type)
{
    int bytes = 0;
    MPI_Type_size(*type, &bytes);
    const auto stride = static_cast<std::size_t>(bytes) / sizeof(double);
    for (int k = 0; k < *count; ++k)
        RowTotals::combinePacked(static_cast<const double*>(in) + k * stride, static_cast<double*>(inout) + k * stride);
}

void checkLength(std::size_t size)
{
    if (size > static_cast<std::size_t>(INT_MAX))
        throw Error(ErrorCode::InvalidArgument,
                    "a reduction of " + std::to_string(size) + " values is larger than one MPI message can carry");
}

}  // namespace

MpiRowReduction::MpiRowReduction(MPI_Comm comm, long sleepMicroseconds, double timeoutSeconds)
    : m_comm(comm), m_sleepMicroseconds(sleepMicroseconds), m_timeoutSeconds(timeoutSeconds)
{
    MPI_Op_create(&combinePackedTotals, 1, &m_combine);
}

MpiRowReduction::~MpiRowReduction()
{
    for (Pending& p : m_pending) {
        MPI_Wait(&p.request, MPI_STATUS_IGNORE);
        MPI_Type_free(&p.type);
    }
    MPI_Op_free(&m_combine);
}

void MpiRowReduction::wait(MPI_Request& request, double start)
{
    if (m_sleepMicroseconds == 0 && m_timeoutSeconds == 0) {
        MPI_Wait(&request, MPI_STATUS_IGNORE);
        return;
    }
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
}

void MpiRowReduction::waitFor(MPI_Request& request)
{
    const double start = MPI_Wtime();
    wait(request, start);
    countWait(start);
}

void MpiRowReduction::allreduce(std::span<double> values, MPI_Op op)
{
    checkLength(values.size());
    const double start = MPI_Wtime();
    if (m_sleepMicroseconds > 0 || m_timeoutSeconds > 0) {
        MPI_Request request;
        MPI_Iallreduce(MPI_IN_PLACE, values.data(), static_cast<int>(values.size()), MPI_DOUBLE, op, m_comm, &request);
        wait(request, start);
    } else {
        MPI_Allreduce(MPI_IN_PLACE, values.data(), static_cast<int>(values.size()), MPI_DOUBLE, op, m_comm);
    }
    countWait(start);
    ++m_calls;
}

void MpiRowReduction::startCombine(RowTotals& totals)
{
    const std::span<double> packed = totals.packed();
    checkLength(packed.size());
    for (const Pending& p : m_pending)
        if (p.buffer == packed.data())
            throw std::logic_error("a packed reduction was started on a buffer already in flight");
    const double start = MPI_Wtime();
    Pending p;
    p.buffer = packed.data();
    p.start = start;
    MPI_Type_contiguous(static_cast<int>(packed.size()), MPI_DOUBLE, &p.type);
    MPI_Type_commit(&p.type);
    MPI_Iallreduce(MPI_IN_PLACE, packed.data(), 1, p.type, m_combine, m_comm, &p.request);
    m_pending.push_back(p);
    // The time to start it counts; the time until finishCombine is the caller's work.
    countWait(start);
    ++m_calls;
}

void MpiRowReduction::finishCombine(RowTotals& totals)
{
    // Reduced in place: the request knows the buffer, which names the combination.
    const double* buffer = totals.packed().data();
    auto found = std::find_if(m_pending.begin(), m_pending.end(), [&](const Pending& p) { return p.buffer == buffer; });
    if (found == m_pending.end()) throw std::logic_error("finishCombine without a packed reduction in flight");
    const double start = MPI_Wtime();
    wait(found->request, found->start);
    MPI_Type_free(&found->type);
    m_pending.erase(found);
    countWait(start);
}

}  // namespace uot::mpi
