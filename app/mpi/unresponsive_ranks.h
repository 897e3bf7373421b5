#pragma once
// What uot-mpi does when a collective call makes no progress for --timeout
// seconds (a rank stopped, hung or died without MPI noticing): every live rank
// finds out which ranks do not answer (a point-to-point "alive" message to and
// from every other rank, with a grace period), prints one line saying so on its
// own stderr (kept by keepErrorStream before the non-zero ranks are silenced),
// and the job is stopped with MPI_Abort and exit code kExitNoAnswer
// (docs/COMMAND_LINE.md, "Distributed solve over MPI").

#include <mpi.h>

namespace uot::mpi {

// uot-mpi's exit code when a rank did not answer within --timeout.
inline constexpr int kExitNoAnswer = 7;

// Keeps a copy of this process's stderr for the report above; call once at
// start-up, before stderr is redirected.
void keepErrorStream();

// Reports the ranks of `comm` that do not answer within a grace period and
// stops the job (MPI_Abort). `seconds` is the timeout that expired.
[[noreturn]] void abortOnUnresponsiveRanks(MPI_Comm comm, double seconds);

// Test only: with UOT_MPI_TEST_STOP=RANK:PLACE in the environment, rank RANK of
// comm stops itself (SIGSTOP) when it reaches `place`, so that a test can stop a
// rank at a point an outside signal seldom hits (tests/mpi/mpi_solve_test.py).
void stopHereForTest(MPI_Comm comm, const char* place);

}  // namespace uot::mpi
