#pragma once
// Runs a piece of work in a forked child process and returns the text it
// produced. Used by `uot bench` so that every case starts from a small,
// clean process: its peak RSS is that case's alone, and one case's buffers,
// allocator state or OpenMP pool cannot affect the next.
//
// The calling process must not have started OpenMP threads (libgomp does not
// survive fork) nor initialised CUDA: keep the parent a pure coordinator.

#include <functional>
#include <string>

namespace uot::perf {

struct IsolatedOutcome {
    bool ok = false;       // the child ran `work` to completion and exited 0
    std::string output;    // what `work` returned (when ok) or its error message
    std::string failure;   // when !ok: why (exception text, signal, exit status), for a person
};

// Forks; the child runs work() and sends its return value back through a pipe.
// An exception in the child becomes ok == false with its message in failure.
// Never throws for the child's failures; throws uot::Error(Unavailable) when
// fork or pipe fail.
IsolatedOutcome runIsolated(const std::function<std::string()>& work);

}  // namespace uot::perf
