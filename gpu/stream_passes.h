#pragma once
// Internal to gpu/ (CUDA types allowed): the DevicePasses (device_loop.h) of an
// engine that runs on one stream and keeps its iterate in two device vectors
// (rows, columns) with a previous and a last good copy of each. The engine adds
// its iterations (launch) and its check kernels (enqueueCheck); the copies, the
// slices, the timing and the read-backs are here.

#include <array>
#include <cstddef>
#include <vector>

#include "gpu/cuda_support.h"
#include "gpu/device_loop.h"
#include "gpu/gpu_kernels.h"

namespace uot::gpu::detail {

// Where an engine's iterate lives. Elements are double or float; logDomain: they
// are log u, log v, else u, v.
struct IterateBuffers {
    std::array<void*, 2> current{}, previous{}, good{};
    std::array<std::size_t, 2> length{};  // rows, columns
    std::size_t elementBytes = sizeof(double);
    bool logDomain = false;
};

class StreamPasses : public DevicePasses {
public:
    // check: the device CheckValues the engine's check kernels fill; host: pinned.
    StreamPasses(cudaStream_t stream, const IterateBuffers& iterate, CheckValues* check, CheckValues* host);

    void startChunk() override;
    void markSlice(int slot) override;
    void waitSlice(int slot) override;
    void snapshot() override;
    DeviceCheck check(bool marginals) override;
    void keepGood() override;
    void restoreGood() override;
    void readLogPotentials(std::vector<double>& logU, std::vector<double>& logUPrev, std::vector<double>& logV,
                           std::vector<double>& logVPrev) override;

protected:
    // Queues the comparison of current with previous into the device CheckValues
    // (launchCheck), and the plan's marginal errors when `marginals`.
    virtual void enqueueCheck(bool marginals) = 0;

private:
    void copyAll(const std::array<void*, 2>& dst, const std::array<void*, 2>& src);
    void readLog(const void* src, std::size_t n, std::vector<double>& out);

    cudaStream_t m_stream;
    IterateBuffers m_iterate;
    CheckValues* m_check;
    CheckValues* m_host;
    Event m_chunkStart, m_chunkEnd, m_sliceDone[2] = {Event(false), Event(false)};
};

}  // namespace uot::gpu::detail
