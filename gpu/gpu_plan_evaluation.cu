#include "gpu/gpu_plan_evaluation.h"

#include <cmath>
#include <variant>
#include <vector>

#include "core/transport/uot_error.h"
#include "gpu/cuda_support.h"

namespace uot::gpu::detail {

namespace {

constexpr int kThreads = 256;       // columns per block, one per thread
constexpr int kRowsPerBlock = 32;   // rows per block
constexpr int kWarps = kThreads / 32;

__device__ double warpSum(double x)
{
    for (int offset = 16; offset > 0; offset /= 2) x += __shfl_xor_sync(0xffffffffu, x, offset);
    return x;
}

// One block: kThreads columns x kRowsPerBlock rows of the plan. Row sums,
// column sums and sum P (logU + logV) are added atomically into the outputs.
// logUR/logVR are the log scalings plus the log reference measure (0 for ones).
__global__ void __launch_bounds__(kThreads)
planSumsKernel(const double* __restrict__ x, const double* __restrict__ y, std::size_t rows, std::size_t cols, int dim,
               double costOverEps, const double* __restrict__ logU, const double* __restrict__ logV,
               const double* __restrict__ logUR, const double* __restrict__ logVR, double* rowSums, double* colSums,
               double* scaledLogSum)
{
    __shared__ double rowPart[kRowsPerBlock][kWarps];
    __shared__ double logPart[kWarps];
    const std::size_t j = static_cast<std::size_t>(blockIdx.x) * kThreads + threadIdx.x;
    const std::size_t i0 = static_cast<std::size_t>(blockIdx.y) * kRowsPerBlock;
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    const bool column = j < cols;
    const double lvr = column ? logVR[j] : 0.0;
    const double lv = column ? logV[j] : 0.0;
    double colSum = 0, logSum = 0;
    for (int r = 0; r < kRowsPerBlock; ++r) {
        const std::size_t i = i0 + r;
        double p = 0;
        if (column && i < rows) {
            double d2 = 0;
            for (int k = 0; k < dim; ++k) {
                const double d = x[i * dim + k] - y[j * dim + k];
                d2 += d * d;
            }
            p = exp(logUR[i] + lvr - d2 * costOverEps);
            colSum += p;
            logSum += p * (logU[i] + lv);
        }
        const double s = warpSum(p);
        if (lane == 0) rowPart[r][warp] = s;
    }
    const double l = warpSum(logSum);
    if (lane == 0) logPart[warp] = l;
    __syncthreads();
    if (threadIdx.x < kRowsPerBlock && i0 + threadIdx.x < rows) {
        double s = 0;
        for (int w = 0; w < kWarps; ++w) s += rowPart[threadIdx.x][w];
        atomicAdd(rowSums + i0 + threadIdx.x, s);
    }
    if (threadIdx.x == 0) {
        double s = 0;
        for (int w = 0; w < kWarps; ++w) s += logPart[w];
        atomicAdd(scaledLogSum, s);
    }
    if (column) atomicAdd(colSums + j, colSum);
}

// A device copy of a host array (stream-ordered allocation, freed with the object).
class AsyncArray {
public:
    AsyncArray(std::size_t count, cudaStream_t stream) : m_stream(stream)
    {
        UOT_CUDA_CHECK(cudaMallocAsync(reinterpret_cast<void**>(&m_data), (count ? count : 1) * sizeof(double), stream));
    }
    AsyncArray(const std::vector<double>& host, cudaStream_t stream) : AsyncArray(host.size(), stream)
    {
        if (!host.empty())
            UOT_CUDA_CHECK(cudaMemcpyAsync(m_data, host.data(), host.size() * sizeof(double), cudaMemcpyHostToDevice, stream));
    }
    ~AsyncArray() { cudaFreeAsync(m_data, m_stream); }
    AsyncArray(const AsyncArray&) = delete;
    AsyncArray& operator=(const AsyncArray&) = delete;
    double* get() const { return m_data; }

private:
    double* m_data = nullptr;
    cudaStream_t m_stream;
};

std::vector<double> withReference(std::span<const double> logs, std::span<const double> weights, bool product)
{
    std::vector<double> out(logs.begin(), logs.end());
    if (product)
        for (std::size_t k = 0; k < out.size(); ++k) out[k] += std::log(weights[k]);
    return out;
}

}  // namespace

PlanEvaluation evaluatePlanOnDevice(const UotProblem& problem, std::span<const double> logU,
                                    std::span<const double> logV, int device)
{
    const auto* cost = std::get_if<PointCloudCost>(&problem.cost);
    if (!cost) throw Error(ErrorCode::InvalidArgument, "evaluatePlanOnDevice: the cost is not a point cloud");
    const std::size_t rows = cost->rows, cols = cost->cols, dim = cost->dim;
    if (logU.size() != rows || logV.size() != cols)
        throw Error(ErrorCode::InvalidArgument, "evaluatePlanOnDevice: the scalings do not match the problem");
    DeviceGuard guard(device);
    Stream stream;
    const cudaStream_t s = stream.get();
    const bool product = problem.reference == ReferenceMeasure::Product;
    std::vector<double> rowSums(rows), colSums(cols);
    double scaledLogSum = 0;
    {
        const AsyncArray x(std::vector<double>(cost->x, cost->x + rows * dim), s);
        const AsyncArray y(std::vector<double>(cost->y, cost->y + cols * dim), s);
        const AsyncArray u(std::vector<double>(logU.begin(), logU.end()), s);
        const AsyncArray v(std::vector<double>(logV.begin(), logV.end()), s);
        const AsyncArray ur(withReference(logU, problem.a, product), s);
        const AsyncArray vr(withReference(logV, problem.b, product), s);
        const AsyncArray sums(rows + cols + 1, s);
        UOT_CUDA_CHECK(cudaMemsetAsync(sums.get(), 0, (rows + cols + 1) * sizeof(double), s));
        const dim3 grid(static_cast<unsigned>((cols + kThreads - 1) / kThreads),
                        static_cast<unsigned>((rows + kRowsPerBlock - 1) / kRowsPerBlock));
        if (grid.y > 65535u)
            throw Error(ErrorCode::InvalidArgument, "evaluatePlanOnDevice: too many rows for one launch");
        planSumsKernel<<<grid, kThreads, 0, s>>>(x.get(), y.get(), rows, cols, static_cast<int>(dim),
                                                 cost->scale / problem.eps, u.get(), v.get(), ur.get(), vr.get(),
                                                 sums.get(), sums.get() + rows, sums.get() + rows + cols);
        UOT_CUDA_CHECK_LAUNCH();
        UOT_CUDA_CHECK(cudaMemcpyAsync(rowSums.data(), sums.get(), rows * sizeof(double), cudaMemcpyDeviceToHost, s));
        UOT_CUDA_CHECK(cudaMemcpyAsync(colSums.data(), sums.get() + rows, cols * sizeof(double), cudaMemcpyDeviceToHost, s));
        UOT_CUDA_CHECK(cudaMemcpyAsync(&scaledLogSum, sums.get() + rows + cols, sizeof(double), cudaMemcpyDeviceToHost, s));
    }
    UOT_CUDA_CHECK(cudaStreamSynchronize(s));
    return evaluationFromSums(problem, rowSums, colSums, scaledLogSum);
}

}  // namespace uot::gpu::detail
