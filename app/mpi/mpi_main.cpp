// `uot-mpi`: the commands that run as MPI ranks (mpirun -np P uot-mpi solve ...).
// A separate executable so that `uot` itself never loads MPI. Rank 0 speaks for
// all: the other ranks' stdout and stderr go to /dev/null (every error is agreed
// on before it is reported, so rank 0 prints it; mpirun itself reports a rank
// that dies).

#include <mpi.h>

#include <cstdio>

#include "app/cli/command_line.h"
#include "app/mpi/distributed_solve_command.h"
#include "app/mpi/unresponsive_ranks.h"

namespace {

const uot::cli::Command kCommands[] = {
    {"solve", "solve a UOT problem distributed by rows over the MPI ranks", uot::mpi::runDistributedSolve},
};

}  // namespace

int main(int argc, char** argv)
{
    int provided = 0;
    // Only the main thread calls MPI; OpenMP threads inside a rank do not.
    MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
    int rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    uot::mpi::keepErrorStream();  // every live rank reports a rank that does not answer (--timeout)
    if (rank != 0) {
        if (!std::freopen("/dev/null", "w", stdout) || !std::freopen("/dev/null", "w", stderr)) {
            // Keep the streams as they are: duplicated messages are better than none.
        }
    }
    const int code = uot::cli::runCommandLine(argc, argv, kCommands, "uot-mpi");
    std::fflush(stdout);
    std::fflush(stderr);
    MPI_Finalize();
    return code;
}
