#pragma once
// Internal to gpu/ (no CUDA types): the device contexts a GPU variant solves
// with (its engine: device buffers, streams, iteration graphs, staging) and the
// backend's small cache of them. A solver hands its engine to the cache when it
// is destroyed after a clean solve; the next solver of the same variant,
// precision, device and tuning takes it back, so the studio's repeated solves
// of one size allocate nothing and keep their graphs. An engine is parked only
// when its last solve ended without an exception (a failed or faulted engine
// is freed, never reused). A parked engine frees its matrix itself when the
// next solve has another size; releaseDeviceContexts() and the end of the
// process free them all.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "core/transport/uot_solver.h"
#include "gpu/gpu_backend.h"

namespace uot::gpu::detail {

class EngineBase {
public:
    virtual ~EngineBase() = default;
    virtual SolveResult solve(const UotProblem& problem, const SolveOptions& options, const SolveControl& control) = 0;
    // Device bytes the engine holds now.
    virtual std::size_t deviceBytes() const = 0;
};

class EngineCache {
public:
    // The process's cache (freed at exit, before the CUDA runtime unloads:
    // it is first used after the runtime has started).
    static EngineCache& instance();

    // The parked engine with this key (removed from the cache), or null.
    std::unique_ptr<EngineBase> take(const std::string& key);
    // Parks an engine whose last solve ended cleanly. Keeps at most kCapacity
    // engines: the one parked longest ago is freed first.
    void park(const std::string& key, std::unique_ptr<EngineBase> engine);
    void noteCreated();
    void noteDiscarded();
    // Frees every parked engine.
    void clear();
    DeviceContextStats stats() const;

    static constexpr std::size_t kCapacity = 2;

    ~EngineCache();

private:
    EngineCache() = default;
    mutable std::mutex m_mutex;
    std::vector<std::pair<std::string, std::unique_ptr<EngineBase>>> m_parked;  // oldest first
    DeviceContextStats m_stats;
};

}  // namespace uot::gpu::detail
