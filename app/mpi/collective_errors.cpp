#include "app/mpi/collective_errors.h"

#include <exception>
#include <stdexcept>
#include <string>
#include <vector>

#include "app/cli/arg_parser.h"
#include "core/transport/uot_error.h"

namespace uot::mpi {

namespace {

// How a failure travels: its kind, then its message.
enum class Kind : int { Error = 0, Usage = 1, Other = 2 };

// Waits for `request` through `wait`, or MPI_Wait when it is empty.
void waitForRequest(MPI_Request& request, const RequestWait& wait)
{
    if (wait)
        wait(request);
    else
        MPI_Wait(&request, MPI_STATUS_IGNORE);
}

}  // namespace

void runCollectively(MPI_Comm comm, const std::function<void()>& step, const RequestWait& wait)
{
    int rank = 0, size = 1;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    bool failed = true;
    Kind kind = Kind::Other;
    int code = 0;
    std::string message;
    try {
        step();
        failed = false;
    } catch (const cli::UsageError& e) {
        kind = Kind::Usage;
        message = e.what();
    } catch (const Error& e) {
        kind = Kind::Error;
        code = static_cast<int>(e.code());
        message = e.what();
    } catch (const std::exception& e) {
        message = e.what();
    }
    int firstFailing = failed ? rank : size;
    MPI_Request request;
    MPI_Iallreduce(MPI_IN_PLACE, &firstFailing, 1, MPI_INT, MPI_MIN, comm, &request);
    waitForRequest(request, wait);
    if (firstFailing == size) return;

    int header[3] = {static_cast<int>(kind), code, static_cast<int>(message.size())};
    MPI_Ibcast(header, 3, MPI_INT, firstFailing, comm, &request);
    waitForRequest(request, wait);
    std::vector<char> text(static_cast<std::size_t>(header[2]) + 1, '\0');
    if (rank == firstFailing) message.copy(text.data(), message.size());
    MPI_Ibcast(text.data(), header[2], MPI_CHAR, firstFailing, comm, &request);
    waitForRequest(request, wait);
    const std::string agreed = (size > 1 ? "rank " + std::to_string(firstFailing) + ": " : std::string()) +
                               std::string(text.data(), static_cast<std::size_t>(header[2]));
    switch (static_cast<Kind>(header[0])) {
    case Kind::Usage:
        throw cli::UsageError(agreed);
    case Kind::Error:
        throw Error(static_cast<ErrorCode>(header[1]), agreed);
    case Kind::Other:
        break;
    }
    throw std::runtime_error(agreed);
}

}  // namespace uot::mpi
