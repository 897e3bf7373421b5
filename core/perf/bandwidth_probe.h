#pragma once
// Measures the host's sustainable memory bandwidth the way the solvers use it:
// a streaming read (sum over a buffer much larger than the last-level cache)
// and a streaming read+write (scale a buffer in place, the MAP-UOT access
// pattern), with OpenMP threads and SIMD, each both as one sequential stream
// per thread and as 4 interleaved streams per thread; the better form's median
// is reported. Used as the "peak" that benchmark figures are a share of
// (docs/notes/benchmark-history.md, "Method").

#include <cstddef>

namespace uot::perf {

struct BandwidthOptions {
    std::size_t bytes = std::size_t(512) << 20;  // buffer size in bytes (rounded down to whole floats)
    int threads = 0;                             // OpenMP threads, 0 = all available
    int warmups = 2;                             // untimed passes after the first touch
    int repetitions = 7;                         // timed passes of each kind; the median is reported
};

struct BandwidthResult {
    double readGBps = 0;       // streaming read: bytes read per second / 1e9 (median of repetitions)
    double readWriteGBps = 0;  // in-place scale: (bytes read + bytes written) per second / 1e9 (median)
    double readBestGBps = 0;   // fastest repetition of the read, for a sense of the spread
    double readWorstGBps = 0;  // slowest repetition of the read
    double readWriteBestGBps = 0;  // fastest repetition of the read+write
    std::size_t bytes = 0;     // buffer size actually used
    int threads = 0;           // threads actually used
};

// Measures both bandwidths. Allocates `bytes` with mmap and releases it before
// returning (the process's peak RSS does rise by that much). Throws
// uot::Error(InvalidArgument) for a zero-sized buffer or repetitions < 1, and
// uot::Error(OutOfMemory) when the buffer cannot be allocated.
BandwidthResult measureHostBandwidth(const BandwidthOptions& options = {});

// The measurement for `threads` (0 = all available), taken on the first call
// for that thread count with default options and reused afterwards (thread-safe).
// For the app, which shows "% of peak" without re-measuring every solve.
const BandwidthResult& cachedHostBandwidth(int threads = 0);

}  // namespace uot::perf
