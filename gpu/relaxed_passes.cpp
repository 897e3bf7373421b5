#include "gpu/relaxed_passes.h"

#include <cstddef>
#include <sstream>

namespace uot::gpu::detail {

void RelaxedDevice::configure(const UotProblem& problem, const SolveOptions& options,
                              const TranslationParams& translation, bool translate, bool logDomain, bool fp32,
                              int sweeps, AllocationTracker* tracker)
{
    m_state.ensure(1, tracker);
    m_work.ensure(relaxedWorkDoubles(0), tracker);
    m_params = RelaxedParams{};
    m_params.ra = translation.ra;
    m_params.rb = translation.rb;
    m_params.fb = problem.exponentB();
    m_params.cs = translation.cs;
    m_params.ct = translation.ct;
    m_params.translate = translate;
    m_params.logDomain = logDomain;
    m_params.safeguard = options.relaxationSafeguard;
    m_params.eps = problem.eps;
    m_params.tauA = problem.tauA;
    m_params.tauB = problem.tauB;
    m_params.slack = objectiveSlack(fp32);
    m_params.tolerance = options.tolerance;
    m_params.maxIterations = options.maxIterations;
    m_params.sweeps = sweeps;
}

void uploadStartingRelaxedState(RelaxedState& host, RelaxedState* device, const SolveOptions& options,
                                cudaStream_t stream)
{
    host = RelaxedState{};
    host.rule.start(options.acceleration,
                    options.acceleration == Acceleration::Auto ? options.autoInitialOmega : options.omega);
    host.omega = host.rule.omega;
    UOT_CUDA_CHECK(cudaMemcpyAsync(device, &host, sizeof(RelaxedState), cudaMemcpyHostToDevice, stream));
    UOT_CUDA_CHECK(cudaStreamSynchronize(stream));
}

void RelaxedDevice::start(const SolveOptions& options, cudaStream_t stream)
{
    uploadStartingRelaxedState(*m_host.get(), m_state.get(), options, stream);
}

const double* RelaxedDevice::omega() const
{
    return reinterpret_cast<const double*>(reinterpret_cast<const char*>(m_state.get()) +
                                           offsetof(RelaxedState, omega));
}

template <typename V>
void RelaxedDevice::enqueueStep(V* u, V* v, V* uSaved, V* vSaved, std::size_t rows, std::size_t cols,
                                const double* a, const double* b, const double* logA, const double* logB,
                                cudaStream_t stream)
{
    launchRelaxedStep<V>(u, v, uSaved, vSaved, rows, cols, a, b, logA, logB, m_params, m_state.get(), m_work.get(),
                         stream);
}

template void RelaxedDevice::enqueueStep<float>(float*, float*, float*, float*, std::size_t, std::size_t,
                                                const double*, const double*, const double*, const double*,
                                                cudaStream_t);
template void RelaxedDevice::enqueueStep<double>(double*, double*, double*, double*, std::size_t, std::size_t,
                                                 const double*, const double*, const double*, const double*,
                                                 cudaStream_t);

DeviceStop deviceStopOf(int relaxedStop)
{
    return relaxedStop == kConverged      ? DeviceStop::Converged
           : relaxedStop == kNotFinite    ? DeviceStop::NotFinite
           : relaxedStop == kIterationCap ? DeviceStop::IterationCap
                                          : DeviceStop::Running;
}

DeviceCheck checkOfRelaxedState(const RelaxedState& state)
{
    DeviceCheck c;
    c.iterations = state.iterations;
    c.passes = state.passes;
    c.error = state.error;
    c.marginalA = state.marginalA;
    c.marginalB = state.marginalB;
    c.stop = deviceStopOf(state.stop);
    return c;
}

DeviceCheck RelaxedDevice::read(cudaStream_t stream)
{
    UOT_CUDA_CHECK(cudaMemcpyAsync(m_host.get(), m_state.get(), sizeof(RelaxedState), cudaMemcpyDeviceToHost, stream));
    UOT_CUDA_CHECK(cudaStreamSynchronize(stream));
    return checkOfRelaxedState(*m_host.get());
}

std::string RelaxedDevice::graphKey() const
{
    std::ostringstream key;
    key << std::hexfloat << static_cast<const void*>(m_state.get()) << ' ' << static_cast<const void*>(m_work.get())
        << ' ' << m_params.ra << ' ' << m_params.rb << ' ' << m_params.fb << ' ' << m_params.cs << ' ' << m_params.ct
        << ' ' << m_params.translate << ' ' << m_params.logDomain << ' ' << m_params.safeguard << ' ' << m_params.eps
        << ' ' << m_params.tauA << ' ' << m_params.tauB << ' ' << m_params.slack << ' ' << m_params.tolerance << ' '
        << m_params.maxIterations << ' ' << m_params.sweeps;
    return key.str();
}

RelaxedPasses::RelaxedPasses(RelaxedDevice& relaxed, int device, cudaStream_t stream, std::function<void(int)> launch)
    : m_relaxed(relaxed), m_device(device), m_stream(stream), m_launch(std::move(launch))
{
}

void RelaxedPasses::startChunk()
{
    DeviceGuard guard(m_device);
    UOT_CUDA_CHECK(cudaEventRecord(m_chunkStart.get(), m_stream));
}

DeviceCheck RelaxedPasses::check(bool)
{
    DeviceGuard guard(m_device);
    UOT_CUDA_CHECK(cudaEventRecord(m_chunkEnd.get(), m_stream));
    DeviceCheck c = m_relaxed.read(m_stream);
    float ms = 0;
    UOT_CUDA_CHECK(cudaEventElapsedTime(&ms, m_chunkStart.get(), m_chunkEnd.get()));
    c.chunkSeconds = ms * 1e-3;
    return c;
}

}  // namespace uot::gpu::detail
