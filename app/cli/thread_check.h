#pragma once
// Whether --threads N can run here, asked before any work: a process limit (ulimit -u,
// ulimit -v, a container's pids limit) can refuse threads that the value's range allows,
// and OpenMP then ends the process with its own message and no advice.

namespace uot::cli {

// Starts threads - 1 threads that wait until all have started, then joins them. Throws
// uot::Error (exit 1) naming how many started and what to pass instead (0, one a core)
// when the system refuses one. threads <= 1 (0 is one a core, which the system has) checks nothing.
void requireThreadsCanStart(int threads);

}  // namespace uot::cli
