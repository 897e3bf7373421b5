#include "app/mpi/unresponsive_ranks.h"

#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <string>
#include <vector>

namespace uot::mpi {

namespace {

int g_errorStream = STDERR_FILENO;
constexpr int kAliveTag = 0x7a11;

}  // namespace

void keepErrorStream()
{
    const int copy = ::dup(STDERR_FILENO);
    if (copy >= 0) g_errorStream = copy;
}

void abortOnUnresponsiveRanks(MPI_Comm comm, double seconds)
{
    int rank = 0, size = 1;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    // Every live rank reaches this point within about one timeout of the others
    // (they all wait in the same collective call), so a grace period of half the
    // timeout (1 to 10 s) tells a silent rank from a late one.
    const double grace = std::clamp(seconds / 2, 1.0, 10.0);
    std::vector<MPI_Request> receives(static_cast<std::size_t>(size), MPI_REQUEST_NULL);
    std::vector<MPI_Request> sends(static_cast<std::size_t>(size), MPI_REQUEST_NULL);
    std::vector<int> inbox(static_cast<std::size_t>(size), -1);
    int self = rank;
    for (int other = 0; other < size; ++other) {
        if (other == rank) continue;
        MPI_Irecv(&inbox[static_cast<std::size_t>(other)], 1, MPI_INT, other, kAliveTag, comm,
                  &receives[static_cast<std::size_t>(other)]);
        MPI_Isend(&self, 1, MPI_INT, other, kAliveTag, comm, &sends[static_cast<std::size_t>(other)]);
    }
    std::vector<char> answered(static_cast<std::size_t>(size), 0);
    answered[static_cast<std::size_t>(rank)] = 1;
    const double start = MPI_Wtime();
    const timespec pause{0, 1000000L};  // 1 ms
    while (MPI_Wtime() - start < grace) {
        bool all = true;
        for (int other = 0; other < size; ++other) {
            char& done = answered[static_cast<std::size_t>(other)];
            if (done) continue;
            int flag = 0;
            MPI_Test(&receives[static_cast<std::size_t>(other)], &flag, MPI_STATUS_IGNORE);
            done = flag != 0 ? 1 : 0;
            all = all && done;
        }
        if (all) break;
        nanosleep(&pause, nullptr);
    }
    std::string silent;
    for (int other = 0; other < size; ++other)
        if (!answered[static_cast<std::size_t>(other)]) silent += (silent.empty() ? "" : ", ") + std::to_string(other);
    char secondsText[32];
    std::snprintf(secondsText, sizeof secondsText, "%g s", seconds);
    std::string line = "uot-mpi solve: rank " + std::to_string(rank) + ": ";
    if (silent.empty())
        line += std::string("a collective call made no progress for ") + secondsText +
                " (--timeout), yet every rank answers now; stopping every rank";
    else
        line += "no answer from rank" + std::string(silent.find(',') == std::string::npos ? " " : "s ") + silent +
                " for " + secondsText + " (--timeout): stopped, hung or far too slow; stopping every rank";
    line += " (exit " + std::to_string(kExitNoAnswer) + ")\n";
    [[maybe_unused]] const ssize_t written = ::write(g_errorStream, line.data(), line.size());
    MPI_Abort(comm, kExitNoAnswer);
    std::_Exit(kExitNoAnswer);  // MPI_Abort does not return; in case it does
}

void stopHereForTest(MPI_Comm comm, const char* place)
{
    const char* test = std::getenv("UOT_MPI_TEST_STOP");
    if (test == nullptr) return;
    int rank = 0;
    MPI_Comm_rank(comm, &rank);
    const std::string wanted(test), here = std::to_string(rank) + ":" + place;
    if (wanted == here) std::raise(SIGSTOP);
}

}  // namespace uot::mpi
