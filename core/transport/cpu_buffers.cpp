#include "core/transport/cpu_buffers.h"

#include <cstring>

namespace uot {

template <typename T>
KernelBuildReport buildPaddedKernel(const UotProblem& problem, AlignedBuffer<T>& out, std::size_t ld, int threads)
{
    const std::size_t rows = problem.rows();
    const std::size_t cols = problem.cols();
    out.resize(rows * ld);
    T* k = out.data();
    // Built densely first (the shared builder validates every entry), then
    // spread in place to the padded stride, last row first so that no row is
    // overwritten before it has moved.
    const KernelBuildReport report = buildKernelMatrix<T>(problem, k, threads);
    for (std::size_t i = rows; i-- > 0;) {
        if (ld != cols && i > 0) std::memmove(k + i * ld, k + i * cols, cols * sizeof(T));
        for (std::size_t j = cols; j < ld; ++j) k[i * ld + j] = T(0);
    }
    return report;
}

template KernelBuildReport buildPaddedKernel<float>(const UotProblem&, AlignedBuffer<float>&, std::size_t, int);
template KernelBuildReport buildPaddedKernel<double>(const UotProblem&, AlignedBuffer<double>&, std::size_t, int);

}  // namespace uot
