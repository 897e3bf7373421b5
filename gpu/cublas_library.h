#pragma once
// cuBLAS, loaded on first use with dlopen instead of being linked. Linking
// libcublas/libcublasLt costs every process that contains the GPU backend about
// 0.45 s at start-up (their static initialisers), even a `uot --help` or a CPU
// solve; only gpu-pot-style needs cuBLAS. Private to gpu/.

#include <cublas_v2.h>

namespace uot::gpu {

struct CublasLibrary {
    decltype(&cublasCreate_v2) create = nullptr;
    decltype(&cublasDestroy_v2) destroy = nullptr;
    decltype(&cublasSetStream_v2) setStream = nullptr;
    decltype(&cublasSetWorkspace_v2) setWorkspace = nullptr;
    decltype(&cublasSgemv_v2) sgemv = nullptr;
    decltype(&cublasDgemv_v2) dgemv = nullptr;
    decltype(&cublasGetStatusString) statusString = nullptr;
};

// Loads libcublas.so.<major of the headers> once (thread-safe) and returns its
// entry points. Throws uot::Error(Unavailable) naming the library and the
// loader's message when it cannot be loaded.
const CublasLibrary& cublasLibrary();

}  // namespace uot::gpu
