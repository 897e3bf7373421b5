#pragma once
// Internal to gpu/: hardware counters of a piece of GPU work through CUPTI's
// range profiler (CUDA 12.6+ API). libcupti is loaded on first use, so the
// backend runs where it is missing; every failure (no library, profiling not
// permitted for this user, unsupported chip) comes back as a note, never as an
// exception, because counters are an optional extra of a solve.

#include <functional>

#include "core/transport/solve_result.h"

namespace uot::gpu::detail {

// Runs `workload` (which enqueues work on `device` and waits for it) inside one
// profiled range, replaying it as often as the metrics need, and returns DRAM
// bytes read and written, L2 and L1 hit rates per `iterationsPerRun`.
// `workload` must leave the device in a state where running it again is valid.
HardwareCounters profileWorkload(int device, int iterationsPerRun, const std::function<void()>& workload);

}  // namespace uot::gpu::detail
