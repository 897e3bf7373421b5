#pragma once
// Internal to gpu/ (CUDA types allowed): the over-relaxed iteration (--accel
// relax|auto, relaxed_kernels.h) of an engine, as the shared loop sees it. It
// holds the step kernel's state and scratch on one device, sets its parameters
// from the problem and the options, queues the step after an engine's relaxed
// pass (enqueueStep) and reads the state back at checks. RelaxedPasses is the
// DevicePasses (device_loop.h) of such an engine: its step kernel decides on the
// device, so the loop only launches chunks and reads the state.

#include <functional>
#include <string>

#include "core/transport/solve_options.h"
#include "core/transport/uot_problem.h"
#include "gpu/cuda_support.h"
#include "gpu/device_loop.h"
#include "gpu/relaxed_kernels.h"
#include "gpu/translation_kernels.h"

namespace uot::gpu::detail {

// The loop's view of a RelaxedStop (relaxed_kernels.h).
DeviceStop deviceStopOf(int relaxedStop);

// The loop's view of a step kernel's state read back to the host (iterations, passes,
// error, marginals and the stop; chunkSeconds is the caller's).
DeviceCheck checkOfRelaxedState(const RelaxedState& state);

// Resets `host` (pinned) to the starting state (omega from the options), copies it
// to `device` on `stream` and waits for the copy.
void uploadStartingRelaxedState(RelaxedState& host, RelaxedState* device, const SolveOptions& options,
                                cudaStream_t stream);

class RelaxedDevice {
public:
    // Allocates the state on the current device and sets the step's parameters.
    // translate: the TI shifts are part of the step; logDomain: the scalings are
    // log u, log v; sweeps: passes over the matrix (or the points) per iteration.
    void configure(const UotProblem& problem, const SolveOptions& options, const TranslationParams& translation,
                   bool translate, bool logDomain, bool fp32, int sweeps, AllocationTracker* tracker);
    // The starting state (omega from the options); waits for the upload.
    void start(const SolveOptions& options, cudaStream_t stream);
    // Device pointer of the omega the next relaxed pass reads.
    const double* omega() const;
    // Queues the step after a relaxed pass (relaxed_kernels.h, launchRelaxedStep).
    template <typename V>
    void enqueueStep(V* u, V* v, V* uSaved, V* vSaved, std::size_t rows, std::size_t cols, const double* a,
                     const double* b, const double* logA, const double* logB, cudaStream_t stream);
    // Copies the state to the host (waits) and returns the loop's view of it.
    DeviceCheck read(cudaStream_t stream);
    const RelaxedState& hostState() const { return *m_host.get(); }
    // What the captured iteration graphs bake in (their cache key).
    std::string graphKey() const;

private:
    RelaxedParams m_params;
    DeviceBuffer<RelaxedState> m_state;
    DeviceBuffer<double> m_work;
    PinnedBuffer<RelaxedState> m_host{1};
};

class RelaxedPasses final : public DeviceDecidedPasses {
public:
    // stream: where the step runs (on `device`); launch queues `count` iterations.
    RelaxedPasses(RelaxedDevice& relaxed, int device, cudaStream_t stream, std::function<void(int)> launch);
    void startChunk() override;
    void launch(int count) override { m_launch(count); }
    DeviceCheck check(bool marginals) override;

private:
    RelaxedDevice& m_relaxed;
    int m_device;
    cudaStream_t m_stream;
    std::function<void(int)> m_launch;
    Event m_chunkStart, m_chunkEnd;
};

}  // namespace uot::gpu::detail
