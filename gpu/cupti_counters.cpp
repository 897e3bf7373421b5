#include "gpu/cupti_counters.h"

#include <cuda.h>
#include <cuda_runtime_api.h>
#include <cupti_profiler_host.h>
#include <cupti_profiler_target.h>
#include <cupti_range_profiler.h>
#include <cupti_result.h>
#include <cupti_target.h>
#include <dlfcn.h>

#include <cmath>
#include <mutex>
#include <string>
#include <vector>

namespace uot::gpu::detail {
namespace {

// The CUPTI entry points used here, resolved from libcupti at run time.
struct Cupti {
    decltype(&cuptiGetResultString) resultString = nullptr;
    decltype(&cuptiProfilerInitialize) initialize = nullptr;
    decltype(&cuptiDeviceGetChipName) chipName = nullptr;
    decltype(&cuptiProfilerGetCounterAvailability) counterAvailability = nullptr;
    decltype(&cuptiProfilerHostInitialize) hostInitialize = nullptr;
    decltype(&cuptiProfilerHostDeinitialize) hostDeinitialize = nullptr;
    decltype(&cuptiProfilerHostConfigAddMetrics) addMetrics = nullptr;
    decltype(&cuptiProfilerHostGetConfigImageSize) configImageSize = nullptr;
    decltype(&cuptiProfilerHostGetConfigImage) configImage = nullptr;
    decltype(&cuptiProfilerHostEvaluateToGpuValues) evaluate = nullptr;
    decltype(&cuptiRangeProfilerEnable) enable = nullptr;
    decltype(&cuptiRangeProfilerDisable) disable = nullptr;
    decltype(&cuptiRangeProfilerGetCounterDataSize) counterDataSize = nullptr;
    decltype(&cuptiRangeProfilerCounterDataImageInitialize) counterDataInitialize = nullptr;
    decltype(&cuptiRangeProfilerSetConfig) setConfig = nullptr;
    decltype(&cuptiRangeProfilerStart) start = nullptr;
    decltype(&cuptiRangeProfilerStop) stop = nullptr;
    decltype(&cuptiRangeProfilerPushRange) pushRange = nullptr;
    decltype(&cuptiRangeProfilerPopRange) popRange = nullptr;
    decltype(&cuptiRangeProfilerDecodeData) decode = nullptr;
    decltype(&cuCtxGetCurrent) currentContext = nullptr;
    std::string loadError;  // empty when everything resolved
};

// The folder of the CUDA runtime library this process uses: CUPTI ships beside
// it in the toolkit's lib folder (or in extras/CUPTI/lib64).
std::string runtimeFolder()
{
    Dl_info info{};
    if (!dladdr(reinterpret_cast<void*>(&cudaGetDeviceCount), &info) || !info.dli_fname) return {};
    const std::string path = info.dli_fname;
    const auto slash = path.rfind('/');
    return slash == std::string::npos ? std::string() : path.substr(0, slash + 1);
}

void* openCupti()
{
    const std::string major = "libcupti.so." + std::to_string(CUDART_VERSION / 1000);
    const std::string folder = runtimeFolder();
    for (const std::string& candidate :
         {major, folder + major, std::string("libcupti.so"), std::string("/usr/local/cuda/lib64/") + major,
          std::string("/usr/local/cuda/extras/CUPTI/lib64/") + major, std::string("/usr/local/cuda/lib/") + major}) {
        if (void* handle = dlopen(candidate.c_str(), RTLD_NOW | RTLD_LOCAL)) return handle;
    }
    return nullptr;
}

template <typename Fn>
bool resolve(void* handle, const char* symbol, Fn& out, std::string& error)
{
    out = reinterpret_cast<Fn>(dlsym(handle, symbol));
    if (!out && error.empty()) error = std::string("libcupti lacks ") + symbol + " (CUPTI older than CUDA 12.6?)";
    return out != nullptr;
}

const Cupti& cupti()
{
    static Cupti lib;
    static std::once_flag once;
    std::call_once(once, [] {
        void* handle = openCupti();
        if (!handle) {
            lib.loadError = "libcupti could not be loaded (install the CUDA Toolkit's CUPTI or add its lib folder "
                            "to LD_LIBRARY_PATH)";
            return;
        }
        std::string& e = lib.loadError;
        resolve(handle, "cuptiGetResultString", lib.resultString, e);
        resolve(handle, "cuptiProfilerInitialize", lib.initialize, e);
        resolve(handle, "cuptiDeviceGetChipName", lib.chipName, e);
        resolve(handle, "cuptiProfilerGetCounterAvailability", lib.counterAvailability, e);
        resolve(handle, "cuptiProfilerHostInitialize", lib.hostInitialize, e);
        resolve(handle, "cuptiProfilerHostDeinitialize", lib.hostDeinitialize, e);
        resolve(handle, "cuptiProfilerHostConfigAddMetrics", lib.addMetrics, e);
        resolve(handle, "cuptiProfilerHostGetConfigImageSize", lib.configImageSize, e);
        resolve(handle, "cuptiProfilerHostGetConfigImage", lib.configImage, e);
        resolve(handle, "cuptiProfilerHostEvaluateToGpuValues", lib.evaluate, e);
        resolve(handle, "cuptiRangeProfilerEnable", lib.enable, e);
        resolve(handle, "cuptiRangeProfilerDisable", lib.disable, e);
        resolve(handle, "cuptiRangeProfilerGetCounterDataSize", lib.counterDataSize, e);
        resolve(handle, "cuptiRangeProfilerCounterDataImageInitialize", lib.counterDataInitialize, e);
        resolve(handle, "cuptiRangeProfilerSetConfig", lib.setConfig, e);
        resolve(handle, "cuptiRangeProfilerStart", lib.start, e);
        resolve(handle, "cuptiRangeProfilerStop", lib.stop, e);
        resolve(handle, "cuptiRangeProfilerPushRange", lib.pushRange, e);
        resolve(handle, "cuptiRangeProfilerPopRange", lib.popRange, e);
        resolve(handle, "cuptiRangeProfilerDecodeData", lib.decode, e);
        void* driver = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
        if (!driver || !resolve(driver, "cuCtxGetCurrent", lib.currentContext, e))
            if (e.empty()) e = "the CUDA driver library could not be opened for CUPTI";
    });
    return lib;
}

// A CUPTI failure, with the library's own words and what to do when profiling
// is not permitted.
struct CuptiFailure {
    std::string text;
};

void check(CUptiResult status, const char* what)
{
    if (status == CUPTI_SUCCESS) return;
    const char* words = nullptr;
    if (cupti().resultString) cupti().resultString(status, &words);
    std::string text = std::string(what) + ": " + (words ? words : "CUPTI error " + std::to_string(int(status)));
    if (status == CUPTI_ERROR_INSUFFICIENT_PRIVILEGES)
        text = "profiling is not permitted for this user (the driver restricts GPU performance counters to "
               "administrators: NVreg_RestrictProfilingToAdminUsers=0 lifts it)";
    throw CuptiFailure{text};
}

const char* const kMetrics[] = {"dram__bytes_read.sum", "dram__bytes_write.sum", "lts__t_sector_hit_rate.pct",
                                "l1tex__t_sector_hit_rate.pct"};
constexpr std::size_t kMetricCount = sizeof(kMetrics) / sizeof(kMetrics[0]);

// CUPTI allows one range-profiler session per process at a time.
std::mutex g_sessionMutex;

}  // namespace

HardwareCounters profileWorkload(int device, int iterationsPerRun, const std::function<void()>& workload)
{
    HardwareCounters counters;
    counters.source = "CUPTI range profiler";
    const Cupti& lib = cupti();
    if (!lib.loadError.empty()) {
        counters.note = lib.loadError;
        return counters;
    }
    std::lock_guard<std::mutex> lock(g_sessionMutex);
    CUpti_Profiler_Host_Object* host = nullptr;
    CUpti_RangeProfiler_Object* profiler = nullptr;
    try {
        CUpti_Profiler_Initialize_Params init{CUpti_Profiler_Initialize_Params_STRUCT_SIZE, nullptr};
        check(lib.initialize(&init), "cuptiProfilerInitialize");
        CUpti_Device_GetChipName_Params chip{CUpti_Device_GetChipName_Params_STRUCT_SIZE, nullptr,
                                             std::size_t(device), nullptr};
        check(lib.chipName(&chip), "cuptiDeviceGetChipName");
        CUcontext context = nullptr;
        if (lib.currentContext(&context) != CUDA_SUCCESS || !context)
            throw CuptiFailure{"no current CUDA context to profile"};

        CUpti_Profiler_GetCounterAvailability_Params availability{
            CUpti_Profiler_GetCounterAvailability_Params_STRUCT_SIZE, nullptr, context, 0, nullptr};
        check(lib.counterAvailability(&availability), "cuptiProfilerGetCounterAvailability");
        std::vector<std::uint8_t> availabilityImage(availability.counterAvailabilityImageSize);
        availability.pCounterAvailabilityImage = availabilityImage.data();
        check(lib.counterAvailability(&availability), "cuptiProfilerGetCounterAvailability");

        CUpti_Profiler_Host_Initialize_Params hostInit{CUpti_Profiler_Host_Initialize_Params_STRUCT_SIZE, nullptr,
                                                       CUPTI_PROFILER_TYPE_RANGE_PROFILER, chip.pChipName,
                                                       availabilityImage.data(), nullptr};
        check(lib.hostInitialize(&hostInit), "cuptiProfilerHostInitialize");
        host = hostInit.pHostObject;
        const char* metrics[kMetricCount];
        for (std::size_t k = 0; k < kMetricCount; ++k) metrics[k] = kMetrics[k];
        CUpti_Profiler_Host_ConfigAddMetrics_Params add{CUpti_Profiler_Host_ConfigAddMetrics_Params_STRUCT_SIZE,
                                                        nullptr, host, metrics, kMetricCount};
        check(lib.addMetrics(&add), "cuptiProfilerHostConfigAddMetrics");
        CUpti_Profiler_Host_GetConfigImageSize_Params configSize{
            CUpti_Profiler_Host_GetConfigImageSize_Params_STRUCT_SIZE, nullptr, host, 0};
        check(lib.configImageSize(&configSize), "cuptiProfilerHostGetConfigImageSize");
        std::vector<std::uint8_t> config(configSize.configImageSize);
        CUpti_Profiler_Host_GetConfigImage_Params configImage{CUpti_Profiler_Host_GetConfigImage_Params_STRUCT_SIZE,
                                                              nullptr, host, config.size(), config.data()};
        check(lib.configImage(&configImage), "cuptiProfilerHostGetConfigImage");

        CUpti_RangeProfiler_Enable_Params enable{CUpti_RangeProfiler_Enable_Params_STRUCT_SIZE, nullptr, context,
                                                 nullptr};
        check(lib.enable(&enable), "cuptiRangeProfilerEnable");
        profiler = enable.pRangeProfilerObject;
        CUpti_RangeProfiler_GetCounterDataSize_Params dataSize{
            CUpti_RangeProfiler_GetCounterDataSize_Params_STRUCT_SIZE, nullptr, profiler, metrics, kMetricCount, 1, 1,
            0};
        check(lib.counterDataSize(&dataSize), "cuptiRangeProfilerGetCounterDataSize");
        std::vector<std::uint8_t> counterData(dataSize.counterDataSize);
        CUpti_RangeProfiler_CounterDataImage_Initialize_Params dataInit{
            CUpti_RangeProfiler_CounterDataImage_Initialize_Params_STRUCT_SIZE, nullptr, profiler, counterData.size(),
            counterData.data()};
        check(lib.counterDataInitialize(&dataInit), "cuptiRangeProfilerCounterDataImageInitialize");
        CUpti_RangeProfiler_SetConfig_Params setConfig{CUpti_RangeProfiler_SetConfig_Params_STRUCT_SIZE,
                                                       nullptr,
                                                       profiler,
                                                       config.size(),
                                                       config.data(),
                                                       counterData.size(),
                                                       counterData.data(),
                                                       CUPTI_UserRange,
                                                       CUPTI_UserReplay,
                                                       1,
                                                       1,
                                                       1,
                                                       0,
                                                       1};
        check(lib.setConfig(&setConfig), "cuptiRangeProfilerSetConfig");

        // One user range around the workload, replayed until every pass is in.
        constexpr int kMaxPasses = 16;
        int passes = 0;
        for (bool done = false; !done;) {
            if (++passes > kMaxPasses) throw CuptiFailure{"the metrics need more than 16 replay passes"};
            CUpti_RangeProfiler_Start_Params start{CUpti_RangeProfiler_Start_Params_STRUCT_SIZE, nullptr, profiler};
            check(lib.start(&start), "cuptiRangeProfilerStart");
            CUpti_RangeProfiler_PushRange_Params push{CUpti_RangeProfiler_PushRange_Params_STRUCT_SIZE, nullptr,
                                                      profiler, "iterations"};
            check(lib.pushRange(&push), "cuptiRangeProfilerPushRange");
            workload();
            CUpti_RangeProfiler_PopRange_Params pop{CUpti_RangeProfiler_PopRange_Params_STRUCT_SIZE, nullptr,
                                                    profiler};
            check(lib.popRange(&pop), "cuptiRangeProfilerPopRange");
            CUpti_RangeProfiler_Stop_Params stop{CUpti_RangeProfiler_Stop_Params_STRUCT_SIZE, nullptr, profiler, 0, 0,
                                                 0};
            check(lib.stop(&stop), "cuptiRangeProfilerStop");
            done = stop.isAllPassSubmitted != 0;
        }
        CUpti_RangeProfiler_DecodeData_Params decode{CUpti_RangeProfiler_DecodeData_Params_STRUCT_SIZE, nullptr,
                                                     profiler, 0};
        check(lib.decode(&decode), "cuptiRangeProfilerDecodeData");

        double values[kMetricCount] = {};
        CUpti_Profiler_Host_EvaluateToGpuValues_Params evaluate{
            CUpti_Profiler_Host_EvaluateToGpuValues_Params_STRUCT_SIZE,
            nullptr,
            host,
            counterData.data(),
            counterData.size(),
            0,
            metrics,
            kMetricCount,
            values};
        check(lib.evaluate(&evaluate), "cuptiProfilerHostEvaluateToGpuValues");

        const double per = 1.0 / std::max(1, iterationsPerRun);
        counters.sampled = true;
        counters.passes = passes;
        counters.sampledIterations = iterationsPerRun;
        counters.dramReadBytesPerIteration = values[0] * per;
        counters.dramWriteBytesPerIteration = values[1] * per;
        counters.l2HitRate = values[2] / 100.0;
        counters.l1HitRate = values[3] / 100.0;
        if (decode.numOfRangeDropped > 0) counters.note = "CUPTI dropped the profiled range";
    } catch (const CuptiFailure& failure) {
        counters.sampled = false;
        counters.note = failure.text;
    }
    if (profiler) {
        CUpti_RangeProfiler_Disable_Params disable{CUpti_RangeProfiler_Disable_Params_STRUCT_SIZE, nullptr, profiler};
        lib.disable(&disable);
    }
    if (host) {
        CUpti_Profiler_Host_Deinitialize_Params deinit{CUpti_Profiler_Host_Deinitialize_Params_STRUCT_SIZE, nullptr,
                                                       host};
        lib.hostDeinitialize(&deinit);
    }
    return counters;
}

}  // namespace uot::gpu::detail
