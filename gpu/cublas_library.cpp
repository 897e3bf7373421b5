#include "gpu/cublas_library.h"

#include <cuda_runtime_api.h>
#include <dlfcn.h>

#include <mutex>
#include <string>

#include "core/transport/uot_error.h"

namespace uot::gpu {

namespace {

template <typename Fn>
void resolve(void* handle, const char* symbol, Fn& out)
{
    out = reinterpret_cast<Fn>(dlsym(handle, symbol));
    if (!out) throw Error(ErrorCode::Unavailable, std::string("cuBLAS was loaded but lacks ") + symbol);
}

// The folder of the CUDA runtime library this process uses: cuBLAS ships beside it.
std::string cudaRuntimeFolder()
{
    Dl_info info{};
    if (!dladdr(reinterpret_cast<void*>(&cudaGetDeviceCount), &info) || !info.dli_fname) return {};
    const std::string path = info.dli_fname;
    const auto slash = path.rfind('/');
    return slash == std::string::npos ? std::string() : path.substr(0, slash + 1);
}

CublasLibrary load()
{
    const std::string versioned = "libcublas.so." + std::to_string(CUBLAS_VER_MAJOR);
    void* handle = dlopen(versioned.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!handle) handle = dlopen((cudaRuntimeFolder() + versioned).c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!handle) handle = dlopen("libcublas.so", RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
        const char* why = dlerror();
        throw Error(ErrorCode::Unavailable, "gpu-pot-style needs cuBLAS (" + versioned +
                                                "), which could not be loaded: " + (why ? why : "unknown error") +
                                                "; add the CUDA Toolkit's lib folder to LD_LIBRARY_PATH or use "
                                                "another GPU variant");
    }
    // The handle stays open for the life of the process.
    CublasLibrary lib;
    resolve(handle, "cublasCreate_v2", lib.create);
    resolve(handle, "cublasDestroy_v2", lib.destroy);
    resolve(handle, "cublasSetStream_v2", lib.setStream);
    resolve(handle, "cublasSetWorkspace_v2", lib.setWorkspace);
    resolve(handle, "cublasSgemv_v2", lib.sgemv);
    resolve(handle, "cublasDgemv_v2", lib.dgemv);
    resolve(handle, "cublasGetStatusString", lib.statusString);
    return lib;
}

}  // namespace

const CublasLibrary& cublasLibrary()
{
    static std::mutex mutex;
    static CublasLibrary library;
    static bool loaded = false;
    const std::lock_guard<std::mutex> lock(mutex);
    if (!loaded) {
        library = load();  // throws: the next call tries again
        loaded = true;
    }
    return library;
}

}  // namespace uot::gpu
