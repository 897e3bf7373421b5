#pragma once
// Internal to gpu/ (CUDA types allowed): error checking that throws uot::Error
// with CUDA's own message, and RAII owners for every device resource so that
// nothing leaks on any error path.

#include <cuda_runtime.h>

#include <cstddef>
#include <map>
#include <string>
#include <utility>

#include "core/transport/uot_error.h"

namespace uot::gpu::detail {

// Maps a CUDA error to the project's error code: out of memory, no usable
// device/driver (Unavailable), anything else (Device).
inline ErrorCode errorCodeFor(cudaError_t status)
{
    switch (status) {
    case cudaErrorMemoryAllocation: return ErrorCode::OutOfMemory;
    case cudaErrorNoDevice:
    case cudaErrorInsufficientDriver:
    case cudaErrorInvalidDevice:
    case cudaErrorDevicesUnavailable:
    case cudaErrorSystemDriverMismatch:
    case cudaErrorCompatNotSupportedOnDevice: return ErrorCode::Unavailable;
    default: return ErrorCode::Device;
    }
}

// Throws uot::Error for a failed CUDA call; `what` names the operation.
[[noreturn]] void throwCudaError(cudaError_t status, const char* what, const char* file, int line);

}  // namespace uot::gpu::detail

// Checks a CUDA runtime call; throws uot::Error (Device / OutOfMemory / Unavailable)
// whose message carries CUDA's error string and the failing call.
#define UOT_CUDA_CHECK(call)                                                              \
    do {                                                                                  \
        const cudaError_t uot_cuda_status = (call);                                       \
        if (uot_cuda_status != cudaSuccess)                                               \
            ::uot::gpu::detail::throwCudaError(uot_cuda_status, #call, __FILE__, __LINE__); \
    } while (0)

// Checks the last kernel launch (launch configuration errors, not asynchronous faults).
#define UOT_CUDA_CHECK_LAUNCH() UOT_CUDA_CHECK(cudaGetLastError())

namespace uot::gpu::detail {

// Counts the device bytes a solver holds and the peak since the last reset.
class AllocationTracker {
public:
    void add(std::size_t bytes)
    {
        m_current += bytes;
        if (m_current > m_peak) m_peak = m_current;
    }
    void remove(std::size_t bytes) { m_current -= bytes; }
    void resetPeak() { m_peak = m_current; }
    std::size_t current() const { return m_current; }
    std::size_t peak() const { return m_peak; }

private:
    std::size_t m_current = 0;
    std::size_t m_peak = 0;
};

// An owned device allocation of `count` elements of T (device memory). Moves, never copies.
template <typename T>
class DeviceBuffer {
public:
    DeviceBuffer() = default;
    DeviceBuffer(std::size_t count, AllocationTracker* tracker = nullptr) { allocate(count, tracker); }
    ~DeviceBuffer() { release(); }
    DeviceBuffer(const DeviceBuffer&) = delete;
    DeviceBuffer& operator=(const DeviceBuffer&) = delete;
    DeviceBuffer(DeviceBuffer&& other) noexcept { swap(other); }
    DeviceBuffer& operator=(DeviceBuffer&& other) noexcept
    {
        if (this != &other) {
            release();
            swap(other);
        }
        return *this;
    }

    // Frees the old allocation and allocates `count` elements (contents undefined).
    void allocate(std::size_t count, AllocationTracker* tracker = nullptr)
    {
        release();
        if (count == 0) return;
        void* p = nullptr;
        const cudaError_t status = cudaMalloc(&p, count * sizeof(T));
        if (status != cudaSuccess) {
            (void)cudaGetLastError();  // clear the sticky-free error state
            throwCudaError(status, ("cudaMalloc of " + std::to_string(count * sizeof(T)) + " bytes").c_str(),
                           __FILE__, __LINE__);
        }
        m_data = static_cast<T*>(p);
        m_count = count;
        m_tracker = tracker;
        if (m_tracker) m_tracker->add(bytes());
    }
    // Keeps the allocation when it already has exactly `count` elements.
    void ensure(std::size_t count, AllocationTracker* tracker = nullptr)
    {
        if (m_count != count) allocate(count, tracker);
    }
    void release() noexcept
    {
        if (m_data) {
            cudaFree(m_data);
            if (m_tracker) m_tracker->remove(bytes());
        }
        m_data = nullptr;
        m_count = 0;
        m_tracker = nullptr;
    }
    T* get() const { return m_data; }
    std::size_t size() const { return m_count; }
    std::size_t bytes() const { return m_count * sizeof(T); }

private:
    void swap(DeviceBuffer& other) noexcept
    {
        std::swap(m_data, other.m_data);
        std::swap(m_count, other.m_count);
        std::swap(m_tracker, other.m_tracker);
    }
    T* m_data = nullptr;
    std::size_t m_count = 0;
    AllocationTracker* m_tracker = nullptr;
};

// Page-locked host memory for small read-backs.
template <typename T>
class PinnedBuffer {
public:
    PinnedBuffer() = default;
    explicit PinnedBuffer(std::size_t count) { allocate(count); }
    ~PinnedBuffer()
    {
        if (m_data) cudaFreeHost(m_data);
    }
    PinnedBuffer(const PinnedBuffer&) = delete;
    PinnedBuffer& operator=(const PinnedBuffer&) = delete;
    void allocate(std::size_t count)
    {
        if (m_data) cudaFreeHost(m_data);
        m_data = nullptr;
        void* p = nullptr;
        UOT_CUDA_CHECK(cudaMallocHost(&p, count * sizeof(T)));
        m_data = static_cast<T*>(p);
    }
    T* get() const { return m_data; }

private:
    T* m_data = nullptr;
};

// The highest scheduling priority a stream can have on the current device
// (CUDA: the lower number; streams are created at the lowest, 0, by default).
inline int highestStreamPriority()
{
    int least = 0, greatest = 0;
    UOT_CUDA_CHECK(cudaDeviceGetStreamPriorityRange(&least, &greatest));
    return greatest;
}

class Stream {
public:
    Stream() { UOT_CUDA_CHECK(cudaStreamCreateWithFlags(&m_stream, cudaStreamNonBlocking)); }
    // A stream whose pending blocks the device schedules before those of
    // lower-priority streams (see highestStreamPriority).
    explicit Stream(int priority)
    {
        UOT_CUDA_CHECK(cudaStreamCreateWithPriority(&m_stream, cudaStreamNonBlocking, priority));
    }
    ~Stream()
    {
        if (m_stream) cudaStreamDestroy(m_stream);
    }
    Stream(const Stream&) = delete;
    Stream& operator=(const Stream&) = delete;
    cudaStream_t get() const { return m_stream; }

private:
    cudaStream_t m_stream = nullptr;
};

class Event {
public:
    // blocking: a host thread waiting on the event (cudaEventSynchronize) sleeps
    // instead of spinning on its core until the device reaches it.
    explicit Event(bool timing = true, bool blocking = false)
    {
        const unsigned flags = (timing ? cudaEventDefault : cudaEventDisableTiming) | (blocking ? cudaEventBlockingSync : 0u);
        UOT_CUDA_CHECK(cudaEventCreateWithFlags(&m_event, flags));
    }
    ~Event()
    {
        if (m_event) cudaEventDestroy(m_event);
    }
    Event(const Event&) = delete;
    Event& operator=(const Event&) = delete;
    cudaEvent_t get() const { return m_event; }

private:
    cudaEvent_t m_event = nullptr;
};

class GraphExec {
public:
    GraphExec() = default;
    explicit GraphExec(cudaGraphExec_t exec) : m_exec(exec) {}
    ~GraphExec()
    {
        if (m_exec) cudaGraphExecDestroy(m_exec);
    }
    GraphExec(const GraphExec&) = delete;
    GraphExec& operator=(const GraphExec&) = delete;
    GraphExec(GraphExec&& o) noexcept : m_exec(std::exchange(o.m_exec, nullptr)) {}
    GraphExec& operator=(GraphExec&& o) noexcept
    {
        if (this != &o) {
            if (m_exec) cudaGraphExecDestroy(m_exec);
            m_exec = std::exchange(o.m_exec, nullptr);
        }
        return *this;
    }
    cudaGraphExec_t get() const { return m_exec; }

private:
    cudaGraphExec_t m_exec = nullptr;
};

// Runs `count` iterations of a solver loop as one CUDA graph per count, captured
// on first use and replayed afterwards. When capture or instantiation fails once,
// the iterations are enqueued directly from then on.
class IterationGraphs {
public:
    template <typename EnqueueOne>
    void launch(int count, cudaStream_t stream, EnqueueOne&& enqueueOne)
    {
        if (count <= 0) return;
        if (m_working) {
            auto found = m_graphs.find(count);
            if (found == m_graphs.end()) found = capture(count, stream, enqueueOne);
            if (m_working) {
                UOT_CUDA_CHECK(cudaGraphLaunch(found->second.get(), stream));
                return;
            }
        }
        for (int k = 0; k < count; ++k) enqueueOne();
    }
    // Drops the captured graphs (the buffers they refer to are about to change).
    void clear() { m_graphs.clear(); }

private:
    template <typename EnqueueOne>
    std::map<int, GraphExec>::iterator capture(int count, cudaStream_t stream, EnqueueOne& enqueueOne)
    {
        cudaGraph_t graph = nullptr;
        bool captured = false;
        UOT_CUDA_CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
        try {
            for (int k = 0; k < count; ++k) enqueueOne();
            captured = true;
        } catch (const Error&) {
            captured = false;
        }
        const cudaError_t end = cudaStreamEndCapture(stream, &graph);
        cudaGraphExec_t exec = nullptr;
        auto found = m_graphs.end();
        if (captured && end == cudaSuccess && graph && cudaGraphInstantiate(&exec, graph, 0) == cudaSuccess) {
            found = m_graphs.emplace(count, GraphExec(exec)).first;
        } else {
            (void)cudaGetLastError();
            m_working = false;  // run without graphs from now on
        }
        if (graph) cudaGraphDestroy(graph);
        return found;
    }

    std::map<int, GraphExec> m_graphs;
    bool m_working = true;
};

// Makes `device` current for the lifetime of the guard, restoring the previous one.
class DeviceGuard {
public:
    explicit DeviceGuard(int device)
    {
        UOT_CUDA_CHECK(cudaGetDevice(&m_previous));
        if (device != m_previous) UOT_CUDA_CHECK(cudaSetDevice(device));
    }
    ~DeviceGuard() { cudaSetDevice(m_previous); }
    DeviceGuard(const DeviceGuard&) = delete;
    DeviceGuard& operator=(const DeviceGuard&) = delete;

private:
    int m_previous = 0;
};

}  // namespace uot::gpu::detail
