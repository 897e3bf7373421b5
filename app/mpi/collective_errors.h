#pragma once
// Errors in a program that runs as several MPI ranks: a step that may fail on
// some ranks only (a file one rank reads, a NaN in one rank's rows) must stop
// every rank with the same error, or the others would wait forever in the next
// collective call. runCollectively() runs the step on every rank, then agrees
// (one allreduce and one broadcast): if it threw anywhere, every rank throws the
// error of the lowest failing rank, its message prefixed with that rank.

#include <mpi.h>

#include <functional>

namespace uot::mpi {

// How a caller waits for a collective request: MPI_Wait when empty, or a wait
// with naps and a timeout (MpiRowReduction::waitFor) during a solve.
using RequestWait = std::function<void(MPI_Request&)>;

// Throws on every rank when `step` threw on any rank: uot::Error with the
// failing rank's code, cli::UsageError for a usage error, std::runtime_error
// otherwise. Collective; its calls are waited for through `wait`.
void runCollectively(MPI_Comm comm, const std::function<void()>& step, const RequestWait& wait = {});

}  // namespace uot::mpi
