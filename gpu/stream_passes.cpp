#include "gpu/stream_passes.h"

#include <cmath>
#include <cstring>

namespace uot::gpu::detail {

StreamPasses::StreamPasses(cudaStream_t stream, const IterateBuffers& iterate, CheckValues* check, CheckValues* host)
    : m_stream(stream), m_iterate(iterate), m_check(check), m_host(host)
{
}

void StreamPasses::startChunk()
{
    UOT_CUDA_CHECK(cudaEventRecord(m_chunkStart.get(), m_stream));
}

void StreamPasses::markSlice(int slot)
{
    UOT_CUDA_CHECK(cudaEventRecord(m_sliceDone[slot].get(), m_stream));
}

void StreamPasses::waitSlice(int slot)
{
    UOT_CUDA_CHECK(cudaEventSynchronize(m_sliceDone[slot].get()));
}

void StreamPasses::copyAll(const std::array<void*, 2>& dst, const std::array<void*, 2>& src)
{
    for (int k = 0; k < 2; ++k)
        if (m_iterate.length[k])
            UOT_CUDA_CHECK(cudaMemcpyAsync(dst[k], src[k], m_iterate.length[k] * m_iterate.elementBytes,
                                           cudaMemcpyDeviceToDevice, m_stream));
}

void StreamPasses::snapshot()
{
    copyAll(m_iterate.previous, m_iterate.current);
}

void StreamPasses::keepGood()
{
    copyAll(m_iterate.good, m_iterate.current);
}

void StreamPasses::restoreGood()
{
    copyAll(m_iterate.current, m_iterate.good);
    UOT_CUDA_CHECK(cudaStreamSynchronize(m_stream));
}

DeviceCheck StreamPasses::check(bool marginals)
{
    UOT_CUDA_CHECK(cudaEventRecord(m_chunkEnd.get(), m_stream));
    enqueueCheck(marginals);
    UOT_CUDA_CHECK(cudaMemcpyAsync(m_host, m_check, sizeof(CheckValues), cudaMemcpyDeviceToHost, m_stream));
    UOT_CUDA_CHECK(cudaStreamSynchronize(m_stream));
    float ms = 0;
    UOT_CUDA_CHECK(cudaEventElapsedTime(&ms, m_chunkStart.get(), m_chunkEnd.get()));
    const CheckValues& c = *m_host;
    DeviceCheck out;
    out.bad = c.bad != 0;
    out.diffU = c.diffU;
    out.scaleU = c.scaleU;
    out.diffV = c.diffV;
    out.scaleV = c.scaleV;
    out.marginalA = c.marginalA;
    out.marginalB = c.marginalB;
    out.chunkSeconds = ms * 1e-3;
    return out;
}

void StreamPasses::readLog(const void* src, std::size_t n, std::vector<double>& out)
{
    out.resize(n);
    if (m_iterate.logDomain && m_iterate.elementBytes == sizeof(double)) {
        if (n) UOT_CUDA_CHECK(cudaMemcpyAsync(out.data(), src, n * sizeof(double), cudaMemcpyDeviceToHost, m_stream));
        UOT_CUDA_CHECK(cudaStreamSynchronize(m_stream));
        return;
    }
    std::vector<unsigned char> raw(n * m_iterate.elementBytes);
    if (n) UOT_CUDA_CHECK(cudaMemcpyAsync(raw.data(), src, raw.size(), cudaMemcpyDeviceToHost, m_stream));
    UOT_CUDA_CHECK(cudaStreamSynchronize(m_stream));
    for (std::size_t i = 0; i < n; ++i) {
        double x;
        if (m_iterate.elementBytes == sizeof(float)) {
            float f;
            std::memcpy(&f, raw.data() + i * sizeof(float), sizeof(float));
            x = f;
        } else {
            std::memcpy(&x, raw.data() + i * sizeof(double), sizeof(double));
        }
        out[i] = m_iterate.logDomain ? x : std::log(x);
    }
}

void StreamPasses::readLogPotentials(std::vector<double>& logU, std::vector<double>& logUPrev,
                                     std::vector<double>& logV, std::vector<double>& logVPrev)
{
    readLog(m_iterate.current[0], m_iterate.length[0], logU);
    readLog(m_iterate.previous[0], m_iterate.length[0], logUPrev);
    readLog(m_iterate.current[1], m_iterate.length[1], logV);
    readLog(m_iterate.previous[1], m_iterate.length[1], logVPrev);
}

}  // namespace uot::gpu::detail
