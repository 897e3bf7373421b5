#include "core/perf/bandwidth_probe.h"

#include <omp.h>
#include <sys/mman.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "core/transport/uot_error.h"

namespace uot::perf {
namespace {

using Clock = std::chrono::steady_clock;

// The inner loops are compiled for AVX-512, AVX2 and a portable baseline and
// picked at run time, so the probe is as wide as the widest solver kernel.
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define UOT_PROBE_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define UOT_PROBE_CLONES
#endif

constexpr std::size_t kLanes = 64;  // independent partial sums: hides the add latency

UOT_PROBE_CLONES double sumFloats(const float* data, std::size_t count)
{
    float acc[kLanes] = {};
    std::size_t i = 0;
    for (; i + kLanes <= count; i += kLanes) {
#pragma omp simd
        for (std::size_t k = 0; k < kLanes; ++k) acc[k] += data[i + k];
    }
    double total = 0;
    for (; i < count; ++i) total += data[i];
    for (float a : acc) total += a;
    return total;
}

UOT_PROBE_CLONES void scaleFloats(float* data, std::size_t count, float factor)
{
#pragma omp simd
    for (std::size_t i = 0; i < count; ++i) data[i] *= factor;
}

// The same work over kStreams interleaved sub-ranges: more independent hardware-prefetch
// streams per core, which on this VM's cores moves 10 to 20% more than one stream (and is
// what a kernel working on several matrix rows at once gets). The probe reports the better
// of the one-stream and the multi-stream figure.
constexpr std::size_t kStreams = 4;
constexpr std::size_t kChunk = 16;  // one 64-byte line of floats per stream per step

UOT_PROBE_CLONES double sumFloatsStreams(const float* data, std::size_t count)
{
    const std::size_t part = count / kStreams / kChunk * kChunk;
    float acc[kStreams][kChunk] = {};
    for (std::size_t i = 0; i < part; i += kChunk) {
        for (std::size_t s = 0; s < kStreams; ++s) {
#pragma omp simd
            for (std::size_t k = 0; k < kChunk; ++k) acc[s][k] += data[s * part + i + k];
        }
    }
    double total = 0;
    for (std::size_t i = kStreams * part; i < count; ++i) total += data[i];
    for (const auto& a : acc)
        for (float x : a) total += x;
    return total;
}

UOT_PROBE_CLONES void scaleFloatsStreams(float* data, std::size_t count, float factor)
{
    const std::size_t part = count / kStreams / kChunk * kChunk;
    for (std::size_t i = 0; i < part; i += kChunk) {
        for (std::size_t s = 0; s < kStreams; ++s) {
#pragma omp simd
            for (std::size_t k = 0; k < kChunk; ++k) data[s * part + i + k] *= factor;
        }
    }
    for (std::size_t i = kStreams * part; i < count; ++i) data[i] *= factor;
}

class MappedBuffer {
public:
    explicit MappedBuffer(std::size_t bytes) : m_bytes(bytes)
    {
        void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (p == MAP_FAILED) {
            throw Error(ErrorCode::OutOfMemory, "bandwidth probe: cannot allocate a " +
                                                    std::to_string(bytes >> 20) + " MiB buffer");
        }
        m_data = static_cast<float*>(p);
    }
    ~MappedBuffer() { munmap(m_data, m_bytes); }
    MappedBuffer(const MappedBuffer&) = delete;
    MappedBuffer& operator=(const MappedBuffer&) = delete;
    float* data() const { return m_data; }

private:
    float* m_data = nullptr;
    std::size_t m_bytes = 0;
};

// [begin, end) of thread t's share of count elements, aligned to whole cache lines.
std::pair<std::size_t, std::size_t> share(std::size_t count, int threads, int t)
{
    const std::size_t lines = (count + 15) / 16;
    const std::size_t begin = std::min(count, lines * std::size_t(t) / std::size_t(threads) * 16);
    const std::size_t end = std::min(count, lines * std::size_t(t + 1) / std::size_t(threads) * 16);
    return {begin, end};
}

double median(std::vector<double> values)
{
    std::sort(values.begin(), values.end());
    const std::size_t n = values.size();
    return n % 2 ? values[n / 2] : 0.5 * (values[n / 2 - 1] + values[n / 2]);
}

volatile double g_sink = 0;  // keeps the sums observable so the reads are not optimised away

}  // namespace

BandwidthResult measureHostBandwidth(const BandwidthOptions& options)
{
    const std::size_t count = options.bytes / sizeof(float);
    if (count < 1024) throw Error(ErrorCode::InvalidArgument, "bandwidth probe: the buffer must be at least 4 KiB");
    if (options.repetitions < 1 || options.warmups < 0) {
        throw Error(ErrorCode::InvalidArgument, "bandwidth probe: repetitions must be >= 1 and warm-ups >= 0");
    }
    const int threads = options.threads > 0 ? options.threads : omp_get_max_threads();
    const std::size_t bytes = count * sizeof(float);
    MappedBuffer buffer(bytes);
    float* data = buffer.data();

    // First touch with the same partition as the timed passes (page placement).
#pragma omp parallel num_threads(threads)
    {
        const auto [b, e] = share(count, omp_get_num_threads(), omp_get_thread_num());
        for (std::size_t i = b; i < e; ++i) data[i] = 1.0f + float(i % 7);
    }

    bool streams = false;  // which form the passes use (see kStreams)
    auto readPass = [&] {
        double total = 0;
#pragma omp parallel num_threads(threads) reduction(+ : total)
        {
            const auto [b, e] = share(count, omp_get_num_threads(), omp_get_thread_num());
            total += streams ? sumFloatsStreams(data + b, e - b) : sumFloats(data + b, e - b);
        }
        g_sink = g_sink + total;
    };
    bool halve = true;
    auto scalePass = [&] {
        const float factor = halve ? 0.5f : 2.0f;  // exact in binary: the data never drifts
        halve = !halve;
#pragma omp parallel num_threads(threads)
        {
            const auto [b, e] = share(count, omp_get_num_threads(), omp_get_thread_num());
            if (streams) scaleFloatsStreams(data + b, e - b, factor);
            else scaleFloats(data + b, e - b, factor);
        }
    };
    auto timeIt = [](auto&& pass) {
        const auto t0 = Clock::now();
        pass();
        return std::chrono::duration<double>(Clock::now() - t0).count();
    };

    for (int w = 0; w < options.warmups; ++w) {
        readPass();
        scalePass();
    }
    // Both forms, interleaved repetition by repetition (the same machine state for both).
    std::vector<double> readRates[2], rwRates[2];
    for (int r = 0; r < options.repetitions; ++r) {
        for (int form = 0; form < 2; ++form) {
            streams = form == 1;
            readRates[form].push_back(double(bytes) / timeIt(readPass) / 1e9);
            rwRates[form].push_back(2.0 * double(bytes) / timeIt(scalePass) / 1e9);
        }
    }
    const int readForm = median(readRates[1]) > median(readRates[0]) ? 1 : 0;
    const int rwForm = median(rwRates[1]) > median(rwRates[0]) ? 1 : 0;

    BandwidthResult result;
    result.readGBps = median(readRates[readForm]);
    result.readWriteGBps = median(rwRates[rwForm]);
    result.readBestGBps = *std::max_element(readRates[readForm].begin(), readRates[readForm].end());
    result.readWorstGBps = *std::min_element(readRates[readForm].begin(), readRates[readForm].end());
    result.readWriteBestGBps = *std::max_element(rwRates[rwForm].begin(), rwRates[rwForm].end());
    result.bytes = bytes;
    result.threads = threads;
    return result;
}

const BandwidthResult& cachedHostBandwidth(int threads)
{
    static std::mutex mutex;
    static std::map<int, BandwidthResult> cache;
    const int key = threads > 0 ? threads : omp_get_max_threads();
    std::lock_guard<std::mutex> lock(mutex);
    auto it = cache.find(key);
    if (it == cache.end()) {
        BandwidthOptions options;
        options.threads = key;
        it = cache.emplace(key, measureHostBandwidth(options)).first;
    }
    return it->second;
}

}  // namespace uot::perf
