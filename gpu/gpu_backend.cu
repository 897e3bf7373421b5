// The public GPU API (gpu/gpu_backend.h) when the project is built with CUDA.

#include "gpu/gpu_backend.h"

#include <algorithm>
#include <mutex>
#include <sstream>
#include <vector>

#include "core/transport/uot_error.h"
#include "gpu/cuda_support.h"
#include "gpu/engine_cache.h"
#include "gpu/gpu_kernels.h"
#include "gpu/gpu_solver.h"
#include "gpu/mapreduce_kernels.h"
#include "gpu/mapreduce_solver.h"

namespace uot::gpu {

using namespace detail;

namespace {

std::mutex g_tuningMutex;
Tuning g_defaultTuning;

void requireDevice(int device)
{
    const std::string reason = unavailableReason();
    if (!reason.empty()) throw Error(ErrorCode::Unavailable, reason);
    int count = 0;
    UOT_CUDA_CHECK(cudaGetDeviceCount(&count));
    if (device < 0 || device >= count) {
        std::ostringstream msg;
        msg << "GPU " << device << " does not exist: this machine has " << count << " device(s), numbered from 0";
        throw Error(ErrorCode::InvalidArgument, msg.str());
    }
}

double median(std::vector<double> x)
{
    std::sort(x.begin(), x.end());
    return x.empty() ? 0.0 : x[x.size() / 2];
}

// Median device time in ms of `reps` runs of fn (after one warm-up run).
template <typename Fn>
double timeMedianMs(cudaStream_t stream, int reps, Fn&& fn)
{
    Event start, stop;
    fn();
    std::vector<double> times;
    for (int r = 0; r < reps; ++r) {
        UOT_CUDA_CHECK(cudaEventRecord(start.get(), stream));
        fn();
        UOT_CUDA_CHECK(cudaEventRecord(stop.get(), stream));
        UOT_CUDA_CHECK(cudaEventSynchronize(stop.get()));
        float ms = 0;
        UOT_CUDA_CHECK(cudaEventElapsedTime(&ms, start.get(), stop.get()));
        times.push_back(ms);
    }
    return median(times);
}

}  // namespace

bool builtWithCuda() { return true; }

std::string unavailableReason()
{
    int count = 0;
    const cudaError_t status = cudaGetDeviceCount(&count);
    if (status != cudaSuccess) {
        (void)cudaGetLastError();
        return std::string("no usable GPU: ") + cudaGetErrorString(status) +
               " (the NVIDIA driver is missing or does not match this CUDA build); use a CPU solver";
    }
    if (count == 0) return "no CUDA device found on this machine; use a CPU solver";
    return {};
}

std::vector<DeviceInfo> listDevices()
{
    std::vector<DeviceInfo> out;
    if (!unavailableReason().empty()) return out;
    int count = 0;
    UOT_CUDA_CHECK(cudaGetDeviceCount(&count));
    for (int d = 0; d < count; ++d) {
        cudaDeviceProp prop{};
        UOT_CUDA_CHECK(cudaGetDeviceProperties(&prop, d));
        DeviceInfo info;
        info.ordinal = d;
        info.name = prop.name;
        info.totalMemoryBytes = prop.totalGlobalMem;
        info.multiprocessors = prop.multiProcessorCount;
        info.computeCapabilityMajor = prop.major;
        info.computeCapabilityMinor = prop.minor;
        info.l2CacheBytes = static_cast<std::size_t>(prop.l2CacheSize);
        const DeviceMemory mem = deviceMemory(d);
        info.freeMemoryBytes = mem.freeBytes;
        out.push_back(info);
    }
    return out;
}

DeviceMemory deviceMemory(int device)
{
    requireDevice(device);
    DeviceGuard guard(device);
    DeviceMemory mem;
    UOT_CUDA_CHECK(cudaMemGetInfo(&mem.freeBytes, &mem.totalBytes));
    return mem;
}

DeviceContextStats deviceContextStats() { return EngineCache::instance().stats(); }

std::vector<double> pointCloudCostOnDevice(const PointCloudCost& cost, int device)
{
    requireDevice(device);
    DeviceGuard guard(device);
    Stream stream;
    const std::size_t m = cost.rows, n = cost.cols, d = cost.dim;
    DeviceBuffer<double> x(m * d), y(n * d), c(m * n);
    std::vector<double> out(m * n);
    if (out.empty()) return out;
    UOT_CUDA_CHECK(cudaMemcpyAsync(x.get(), cost.x, m * d * sizeof(double), cudaMemcpyHostToDevice, stream.get()));
    UOT_CUDA_CHECK(cudaMemcpyAsync(y.get(), cost.y, n * d * sizeof(double), cudaMemcpyHostToDevice, stream.get()));
    // The solvers' build kernel with -cost * invEps = cost, stored as the "log" value.
    BuildParams params;
    params.invEps = -1;
    params.logDomain = true;
    launchBuildFromPoints<double>(x.get(), y.get(), m, n, d, cost.scale, n, c.get(), params, stream.get());
    UOT_CUDA_CHECK(cudaMemcpyAsync(out.data(), c.get(), m * n * sizeof(double), cudaMemcpyDeviceToHost, stream.get()));
    UOT_CUDA_CHECK(cudaStreamSynchronize(stream.get()));
    return out;
}

void releaseDeviceContexts()
{
    EngineCache::instance().clear();
    // Stream-ordered frees (the plan evaluation's scratch) go back to each
    // device's default pool, which keeps them until it is trimmed: "release"
    // means the memory is the device's again.
    int count = 0;
    if (cudaGetDeviceCount(&count) != cudaSuccess) {
        (void)cudaGetLastError();
        return;
    }
    for (int device = 0; device < count; ++device) {
        DeviceGuard guard(device);
        cudaMemPool_t pool = nullptr;
        if (cudaDeviceSynchronize() == cudaSuccess && cudaDeviceGetDefaultMemPool(&pool, device) == cudaSuccess)
            (void)cudaMemPoolTrimTo(pool, 0);
        (void)cudaGetLastError();
    }
}

std::unique_ptr<UotSolver> createSolver(const std::string& name) { return createSolver(name, defaultTuning()); }

std::unique_ptr<UotSolver> createSolver(const std::string& name, const Tuning& tuning)
{
    if (name == "gpu-mapreduce") return createMapReduceSolver(tuning.mapReduce);
    Variant variant;
    Storage storage = Storage::Native;
    if (name == "gpu-pot-style")
        variant = Variant::PotStyle;
    else if (name == "gpu-mapuot")
        variant = Variant::MapUot;
    else if (name == "gpu-fused")
        variant = Variant::Fused;
    else if (name == "gpu-fused-bf16") {
        variant = Variant::Fused;
        storage = Storage::Bf16;
    } else if (name == "gpu-log")
        variant = Variant::Log;
    else
        throw Error(ErrorCode::InvalidArgument,
                    "unknown GPU solver '" + name +
                        "': choose gpu-pot-style, gpu-mapuot, gpu-fused, gpu-fused-bf16, gpu-log or gpu-mapreduce");
    if (tuning.mapTx < 1 || tuning.mapTy < 1 || tuning.mapNy < 1 || tuning.mapTx * tuning.mapTy > 1024 ||
        tuning.rowTx < 32 || tuning.rowTx % 32 != 0 || tuning.rowTx > 1024 || tuning.rowNy < 1 ||
        tuning.fusedPartials < 0 || tuning.fusedCluster < 0 || tuning.fusedCluster > 8 || tuning.finalizeLanes < 0 ||
        tuning.finalizeLanes > 32)
        throw Error(ErrorCode::InvalidArgument,
                    "GPU tuning out of range: mapTx*mapTy <= 1024, rowTx a multiple of 32 up to 1024, all >= 1, "
                    "fusedCluster 0..8, finalizeLanes 0..32");
    const std::string reason = unavailableReason();
    if (!reason.empty()) throw Error(ErrorCode::Unavailable, reason);
    return std::make_unique<GpuSolver>(variant, name, tuning, storage);
}

std::unique_ptr<UotSolver> createMapReduceSolver(const MapReduceConfig& config)
{
    const std::string reason = unavailableReason();
    if (!reason.empty()) throw Error(ErrorCode::Unavailable, reason);
    return std::make_unique<MapReduceSolver>(config);
}

double measureExp2Throughput(int device)
{
    requireDevice(device);
    return measureExp2PerSecond(device);
}

void setDefaultTuning(const Tuning& tuning)
{
    std::lock_guard<std::mutex> lock(g_tuningMutex);
    g_defaultTuning = tuning;
}

Tuning defaultTuning()
{
    std::lock_guard<std::mutex> lock(g_tuningMutex);
    return g_defaultTuning;
}

BandwidthMeasurement measureBandwidth(int device, std::size_t bytes)
{
    requireDevice(device);
    DeviceGuard guard(device);
    bytes = std::max<std::size_t>(bytes / 32 * 32, 32);
    const std::size_t floats = bytes / sizeof(float);
    DeviceBuffer<float> buffer(floats);
    DeviceBuffer<float> sink(1);
    Stream stream;
    launchFillPattern(buffer.get(), floats, stream.get());
    int sms = 0;
    UOT_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
    const double readMs = timeMedianMs(stream.get(), 10, [&] {
        launchStreamRead(buffer.get(), floats / 4, sink.get(), sms * 4, stream.get());
    });
    const std::size_t half = bytes / 2;
    const double copyMs = timeMedianMs(stream.get(), 10, [&] {
        UOT_CUDA_CHECK(cudaMemcpyAsync(reinterpret_cast<char*>(buffer.get()) + half, buffer.get(), half,
                                       cudaMemcpyDeviceToDevice, stream.get()));
    });
    // fp32 FMA rate: enough blocks to fill every SM several times over.
    constexpr int kThreads = 256, kSteps = 4096;
    const int fmaBlocks = sms * 32;
    const double fmaMs = timeMedianMs(stream.get(), 5, [&] {
        launchFmaThroughput(fmaBlocks, kThreads, kSteps, sink.get(), stream.get());
    });
    BandwidthMeasurement m;
    m.readGBps = static_cast<double>(bytes) / (readMs * 1e-3) / 1e9;
    m.copyGBps = static_cast<double>(2 * half) / (copyMs * 1e-3) / 1e9;
    m.fp32Gflops = 16.0 * kSteps * double(fmaBlocks) * kThreads / (fmaMs * 1e-3) / 1e9;
    return m;
}

Tuning tuneMapUot(int device, std::size_t rows, std::size_t cols, std::vector<TuningTrial>* trials)
{
    requireDevice(device);
    if (rows == 0 || cols == 0) throw Error(ErrorCode::InvalidArgument, "tuning needs rows, cols >= 1");
    DeviceGuard guard(device);
    const std::size_t pitch = (cols + 3) / 4 * 4;
    DeviceBuffer<float> A(rows * pitch), alpha(rows), beta(pitch), rowSum(rows), colSum(pitch);
    Stream stream;
    cudaStream_t s = stream.get();
    launchFillPattern(A.get(), rows * pitch, s);
    const std::vector<float> onesRows(rows, 1.f), onesCols(pitch, 1.f);
    UOT_CUDA_CHECK(cudaMemcpyAsync(alpha.get(), onesRows.data(), rows * sizeof(float), cudaMemcpyHostToDevice, s));
    UOT_CUDA_CHECK(cudaMemcpyAsync(beta.get(), onesCols.data(), pitch * sizeof(float), cudaMemcpyHostToDevice, s));
    UOT_CUDA_CHECK(cudaMemsetAsync(rowSum.get(), 0, rows * sizeof(float), s));
    UOT_CUDA_CHECK(cudaMemsetAsync(colSum.get(), 0, pitch * sizeof(float), s));
    UOT_CUDA_CHECK(cudaStreamSynchronize(s));

    Tuning best = defaultTuning();
    double bestPart2 = 1e300, bestPart4 = 1e300;
    for (int tx : {32, 64, 128})
        for (int ty : {1, 2, 4, 8})
            for (int ny : {2, 4, 8, 16, 32}) {
                if (tx * ty > 1024) continue;
                const double ms = timeMedianMs(s, 5, [&] {
                    launchMapApplyRows<float>(A.get(), rows, pitch, alpha.get(), colSum.get(), tx, ty, ny, s);
                });
                Tuning t = best;
                t.mapTx = tx;
                t.mapTy = ty;
                t.mapNy = ny;
                if (trials) trials->push_back({t, "part2", ms});
                if (ms < bestPart2) {
                    bestPart2 = ms;
                    best.mapTx = tx;
                    best.mapTy = ty;
                    best.mapNy = ny;
                }
            }
    for (int tx : {64, 128, 256, 512})
        for (int ny : {1, 2, 4, 8, 16}) {
            const double ms = timeMedianMs(s, 5, [&] {
                launchMapApplyCols<float>(A.get(), rows, pitch, beta.get(), rowSum.get(), tx, ny, s);
            });
            Tuning t = best;
            t.rowTx = tx;
            t.rowNy = ny;
            if (trials) trials->push_back({t, "part4", ms});
            if (ms < bestPart4) {
                bestPart4 = ms;
                best.rowTx = tx;
                best.rowNy = ny;
            }
        }
    return best;
}

}  // namespace uot::gpu
