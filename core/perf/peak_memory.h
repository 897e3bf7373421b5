#pragma once
// Resident memory of the current process, for "peak memory of a solve".

#include <cstdint>

namespace uot::perf {

// Current resident set size in bytes (VmRSS of /proc/self/status); 0 when unknown.
std::uint64_t currentRssBytes();

// Peak resident set size in bytes since the process started or since the last
// successful resetPeakRss() (VmHWM of /proc/self/status, else getrusage's ru_maxrss).
std::uint64_t peakRssBytes();

// Resets the peak to the current resident size (writes "5" to /proc/self/clear_refs,
// Linux >= 4.0). Returns false when the kernel does not allow it; peakRssBytes()
// then keeps counting from the process start.
bool resetPeakRss();

}  // namespace uot::perf
