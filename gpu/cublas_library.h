#pragma once
// cuBLAS, loaded on first use with dlopen instead of being linked. Linking
// libcublas/libcublasLt costs every process that contains the GPU backend about
// 0.45 s at start-up (their static initialisers), even a `uot --help` or a CPU
// solve; only gpu-pot-style needs cuBLAS. Private to gpu/.

#include <cublas_v2.h>

#include <cstddef>
#include <string>

#include "core/transport/uot_error.h"

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

// Workspace bytes given to each handle (cublasSetWorkspace), so that gemv never allocates.
constexpr std::size_t kCublasWorkspaceBytes = std::size_t(4) << 20;

}  // namespace uot::gpu

// Checks a cuBLAS call; throws uot::Error (OutOfMemory or Device) naming it.
#define UOT_CUBLAS_CHECK(call)                                                                                 \
    do {                                                                                                       \
        const cublasStatus_t uot_cublas_status = (call);                                                       \
        if (uot_cublas_status != CUBLAS_STATUS_SUCCESS) {                                                      \
            throw ::uot::Error(uot_cublas_status == CUBLAS_STATUS_ALLOC_FAILED ? ::uot::ErrorCode::OutOfMemory \
                                                                               : ::uot::ErrorCode::Device,     \
                               std::string("cuBLAS failure: ") +                                               \
                                   ::uot::gpu::cublasLibrary().statusString(uot_cublas_status) + " in " #call); \
        }                                                                                                      \
    } while (0)

namespace uot::gpu {

// An owned cuBLAS handle.
class CublasHandle {
public:
    CublasHandle() { UOT_CUBLAS_CHECK(cublasLibrary().create(&m_handle)); }
    ~CublasHandle()
    {
        if (m_handle) cublasLibrary().destroy(m_handle);
    }
    CublasHandle(const CublasHandle&) = delete;
    CublasHandle& operator=(const CublasHandle&) = delete;
    cublasHandle_t get() const { return m_handle; }

private:
    cublasHandle_t m_handle = nullptr;
};

// y = op(A) x (column-major A, m x n, leading dimension lda), float and double.
inline cublasStatus_t gemv(cublasHandle_t h, cublasOperation_t op, int m, int n, const float* A, int lda,
                           const float* x, float* y)
{
    const float one = 1.f, zero = 0.f;
    return cublasLibrary().sgemv(h, op, m, n, &one, A, lda, x, 1, &zero, y, 1);
}
inline cublasStatus_t gemv(cublasHandle_t h, cublasOperation_t op, int m, int n, const double* A, int lda,
                           const double* x, double* y)
{
    const double one = 1.0, zero = 0.0;
    return cublasLibrary().dgemv(h, op, m, n, &one, A, lda, x, 1, &zero, y, 1);
}

}  // namespace uot::gpu
