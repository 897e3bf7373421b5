// `uot-mpi`: the commands that run as MPI ranks (mpirun -np P uot-mpi solve ...).
// A separate executable so that `uot` itself never loads MPI. Rank 0 speaks for
// all: the other ranks' stdout and stderr go to /dev/null (every error is agreed
// on before it is reported, so rank 0 prints it; mpirun itself reports a rank
// that dies).

#include <mpi.h>

#include <cstdio>
#include <string>
#include <vector>

#include "app/cli/command_line.h"
#include "app/cli/commands.h"
#include "app/mpi/distributed_solve_command.h"
#include "app/mpi/unresponsive_ranks.h"

#if UOT_MPI_BATCH
#include "app/mpi/distributed_batch_command.h"
#endif

namespace {

#if !UOT_MPI_BATCH
// A build without OpenCV (the GPU machine's solve-only build) has no image I/O.
int runBatchUnavailable(const std::vector<std::string>&)
{
    std::fprintf(stderr, "uot-mpi batch: not built in (this uot-mpi was built without OpenCV: UOT_WITH_OPENCV=OFF)\n");
    return uot::cli::kExitUnavailable;
}
#endif

const uot::cli::Command kCommands[] = {
    {"solve", "solve a UOT problem distributed by rows over the MPI ranks", uot::mpi::runDistributedSolve},
#if UOT_MPI_BATCH
    {"batch", "recolor many images, the inputs split over the MPI ranks (as `uot batch`)", uot::mpi::runDistributedBatch},
#else
    {"batch", "recolor many images over the MPI ranks (not built in: needs OpenCV)", runBatchUnavailable},
#endif
};

}  // namespace

int main(int argc, char** argv)
{
    int provided = 0;
    // One thread calls MPI at a time: the main thread, (uot-mpi batch, while the
    // main thread recolors a clip) a helper that keeps the messages going, or
    // (uot-mpi solve --row-chunks) a rank's OpenMP threads taking chunks, one at a
    // time inside a critical section.
    MPI_Init_thread(&argc, &argv, MPI_THREAD_SERIALIZED, &provided);
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
