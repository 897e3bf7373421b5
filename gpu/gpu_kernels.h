#pragma once
// Internal to gpu/: the CUDA kernels of every GPU variant, behind host launchers.
// All pointers are device pointers unless named host*. Matrices are row-major
// with a row pitch (in elements) that is a multiple of the 16-byte vector width,
// so every row starts 16-byte aligned; the padding columns hold K = 0
// (log-domain: -inf) and are never reported.
// Implemented by family: gpu_kernels_build.cu (K from costs or points, zero
// lines), gpu_kernels_scaling.cu (scaling updates, rescaling, gpu-mapuot),
// gpu_kernels_fused.cu (gpu-fused and its column finalize), gpu_kernels_log.cu
// (gpu-log), gpu_kernels_reduce.cu (marginal errors, convergence check),
// gpu_kernels_probe.cu (bandwidth probe); shared device helpers in
// gpu_kernels_device.cuh.

#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

namespace uot::gpu::detail {

// bfloat16 storage of K for gpu-fused-bf16 (8-bit mantissa; arithmetic in float).
using Bf16 = __nv_bfloat16;

// Elements of T in one 128-bit vector.
template <typename T>
constexpr std::size_t vectorWidth()
{
    return 16 / sizeof(T);
}

// Result of the convergence check, reduced on the device (one block).
struct CheckValues {
    double diffU, scaleU, diffV, scaleV;  // max|x - xPrev| and max(1, |x|, |xPrev|) per side
    int bad;                              // a scaling is not finite and > 0
    int pad;
    double marginalA, marginalB;          // |P 1 - a|_1, |P^T 1 - b|_1 (launchMarginalErrors; NaN if not run)
};

// How K is built from a cost chunk: K = exp(-C/eps + logR) (multiplicative) or
// logK = -C/eps + logR (log domain). logA/logB are null for ReferenceMeasure::Ones.
struct BuildParams {
    double invEps = 1;
    const double* logA = nullptr;  // device, rows
    const double* logB = nullptr;  // device, cols
    bool logDomain = false;
};

// Writes rows [rowBegin, rowBegin + chunkRows) of K from a dense cost chunk
// (chunkRows x cols, row-major, no padding). Records in *firstBad the smallest
// linear index (i * cols + j) of a negative or non-finite cost.
template <typename T, typename C>
void launchBuildFromDense(const C* cost, std::size_t rowBegin, std::size_t chunkRows, std::size_t cols,
                          std::size_t pitch, T* K, BuildParams params, unsigned long long* firstBad,
                          cudaStream_t stream);

// Writes all of K from two point sets (x: rows x dim, y: cols x dim, float64):
// C_ij = scale |x_i - y_j|^2.
template <typename T>
void launchBuildFromPoints(const double* x, const double* y, std::size_t rows, std::size_t cols, std::size_t dim,
                           double scale, std::size_t pitch, T* K, BuildParams params, cudaStream_t stream);

// Counts rows and columns of K that are entirely zero (underflow); counters are
// overwritten (device ints).
template <typename T>
void launchCountZeroLines(const T* K, std::size_t rows, std::size_t cols, std::size_t pitch, int* zeroRows,
                          int* zeroCols, cudaStream_t stream);

// x_k = (w_k / s_k)^f for k < n (w float64). omega (device, may be null = 1):
// over-relaxed, x_k = x_k^(1 - omega) ((w_k / s_k)^f)^omega with x_k the input x.
template <typename T>
void launchScalingUpdate(const T* s, const double* w, T* x, std::size_t n, double f, cudaStream_t stream,
                         const double* omega = nullptr);

// A_ij *= u_i v_j (mapuot warm start).
template <typename T>
void launchScaleMatrix(T* A, std::size_t rows, std::size_t pitch, const T* u, const T* v, cudaStream_t stream);

// gpu-fused: one read-only pass. For every row i: r_i = sum_j K_ij v_j, u_i =
// (a_i / r_i)^fa, then partials[p][j] += K_ij u_i (p = block % partialRows, or
// with clusters p = (block / cluster) % partialRows after an on-chip sum over the
// cluster's blocks), with the rows staged through shared memory by asynchronous copies.
struct FusedPlan {
    bool usable = false;     // false when a row does not fit the shared-memory pipeline
    int items = 0;           // 128-bit vectors per thread per row
    int threads = 0;
    int groupRows = 0;       // rows per pipeline stage
    int stages = 0;          // pipeline depth (groups staged in shared memory)
    int blocks = 0;          // a multiple of cluster
    int cluster = 1;         // blocks per thread-block cluster (> 1: partials summed on chip per cluster)
    std::size_t sharedBytes = 0;
};
// cluster: blocks per thread-block cluster wanted (1 = none, 0 = automatic: 2, or
// 4 for few rows of one block per multiprocessor); the plan falls back to 1 where
// the device cannot launch clusters of that size. evenGroups: the fewest blocks
// (a multiple of the cluster) with the same largest row-group count per block.
// S: the stored type of K (T, or Bf16 with T = float).
template <typename T, typename S = T>
FusedPlan planFused(std::size_t rows, std::size_t cols, std::size_t pitch, int device, int cluster, bool evenGroups);
// programmatic: launch with programmatic dependent launch (the kernel prefetches K
// before waiting for its predecessor; Hopper and later). S: the stored type of K
// (T, or Bf16 with T = float; the plan must come from planFused<T, S>). omega
// (device, may be null = 1): over-relaxed rows, u_i = u_i^(1 - w) ((a_i / r_i)^fa)^w
// with u_i the input u (relaxed_kernels.h); the partials then sum K_ij of that u.
template <typename T, typename S = T>
void launchFused(const FusedPlan& plan, const S* K, std::size_t rows, std::size_t pitch, const T* v,
                 const double* a, double fa, T* u, T* partials, int partialRows, bool programmatic,
                 cudaStream_t stream, const double* omega = nullptr);

// Second stage of the column reduction: s_j = sum_p partials[p][j] (partials
// zeroed again when partialRows > 0, i.e. shared rows), v_j = (b_j / s_j)^fb;
// colSums (may be null) receives s. lanes: partial rows summed side by side per
// column (8, 16 or 32; 0 = automatic, 8).
template <typename T>
void launchFinalizeColumns(T* partials, int partialRows, std::size_t pitch, std::size_t cols, const double* b,
                           double fb, T* v, T* colSums, int lanes, bool programmatic, cudaStream_t stream);

// gpu-mapuot, exact in-place form (docs/ALGORITHMS.md s2):
// factor_k = (w_k / s_k)^f * x_k^(f - 1); x_k *= factor_k; s_k = 0 (ready for the next atomics).
// omega (device, may be null = plain): over-relaxed, factor_k to the power omega
// (x_k^(1 - omega) (plain x_k)^omega); an unusable factor is stored as 1 (the matrix
// keeps its row) while x_k shows it to the step kernels.
template <typename T>
void launchMapFactors(T* s, const double* w, T* x, T* factor, std::size_t n, double f, cudaStream_t stream,
                      const double* omega = nullptr);

// Over-relaxed gpu-mapuot, after the step kernels settled (u, v) (accepted, or put
// back): the factors that bring A, which holds diag(uHeld alpha) K diag(vHeld) after
// part 2, to diag(u) K diag(v): alpha_i = u_i / (uHeld_i alpha_i), beta_j = v_j / vHeld_j;
// then uHeld = u, vHeld = v. Part 4 applies both (launchMapApplyCols with rowFactor).
template <typename T>
void launchMapRealign(const T* u, T* uHeld, T* alpha, std::size_t rows, const T* v, T* vHeld, T* beta,
                      std::size_t cols, cudaStream_t stream);

// Part 2: A_ij *= alpha_i, colSum_j += A_ij (blocks ty x tx, ny rows per thread).
template <typename T>
void launchMapApplyRows(T* A, std::size_t rows, std::size_t pitch, const T* alpha, T* colSum, int tx, int ty,
                        int ny, cudaStream_t stream);

// Part 4: A_ij *= beta_j (times rowFactor_i when not null), rowSum_i += A_ij (1-D
// blocks of tx threads, ny rows per block).
template <typename T>
void launchMapApplyCols(T* A, std::size_t rows, std::size_t pitch, const T* beta, T* rowSum, int tx, int ny,
                        cudaStream_t stream, const T* rowFactor = nullptr);

// Row sums s_i = sum_j A_ij (one warp per row).
template <typename T>
void launchRowSums(const T* A, std::size_t rows, std::size_t cols, std::size_t pitch, T* s, cudaStream_t stream);

// gpu-log: lu_i = fa (log a_i - LSE_j(logK_ij + lv_j)) (one warp per row). omega
// (device, may be null = 1): over-relaxed, lu_i = (1 - omega) lu_i + omega (that).
template <typename T>
void launchLogRows(const T* logK, std::size_t rows, std::size_t cols, std::size_t pitch, const double* lv,
                   const double* logWeightA, double fa, double* lu, cudaStream_t stream,
                   const double* omega = nullptr);

// gpu-log columns: per band partial (max, sum) of logK_ij + lu_i, then
// lv_j = fb (log b_j - LSE_i(...)). partialMax/partialSum hold bands x cols.
int logColumnBands(std::size_t rows, std::size_t cols, int device);
// The first stage alone: partialMax/partialSum (bands x cols) for band b hold the
// max and the shifted sum of logK_ij + lu_i over the band's rows (also used by
// the log-domain marginal errors).
template <typename T>
void launchLogColPartials(const T* logK, std::size_t rows, std::size_t cols, std::size_t pitch, const double* lu,
                          double* partialMax, double* partialSum, int bands, cudaStream_t stream);
template <typename T>
void launchLogCols(const T* logK, std::size_t rows, std::size_t cols, std::size_t pitch, const double* lu,
                   const double* logWeightB, double fb, double* lv, double* partialMax, double* partialSum,
                   int bands, cudaStream_t stream);

// The stopping criterion's maxima and the finiteness flag, in one block.
// fromLogs: x are log-scalings (compared as exp(x)).
template <typename T>
void launchCheck(const T* u, const T* uPrev, std::size_t rows, const T* v, const T* vPrev, std::size_t cols,
                 bool fromLogs, CheckValues* out, cudaStream_t stream);

// Marginal errors of the current plan, added into out[0] = |P 1 - a|_1 and
// out[1] = |P^T 1 - b|_1 (out is zeroed first; float64 accumulation). The plan is
// P = diag(u) K diag(v) (u or v null: ones; gpu-mapuot passes its rescaled
// matrix with both null) or, when lu is given, P_ij = exp(lu_i + logK_ij + lv_j).
// colSums: K^T u of the current u when the iteration left it (multiplicative with
// v given; then only the row side reads the matrix), else null. colScratch: cols
// doubles (multiplicative) or 2 x bands x cols doubles (log); bands as
// logColumnBands. One or two reads of the matrix. S: the stored type of K (T, or
// Bf16 with T = float, multiplicative only).
template <typename T, typename S = T>
void launchMarginalErrors(const S* K, std::size_t rows, std::size_t cols, std::size_t pitch, const T* u, const T* v,
                          const double* lu, const double* lv, const double* a, const double* b, const T* colSums,
                          double* colScratch, int bands, double* out, cudaStream_t stream);

// Streaming read of `count` 16-byte vectors (result folded into *sink so the
// loads are not removed).
void launchStreamRead(const float* data, std::size_t count, float* sink, int blocks, cudaStream_t stream);

// Fills n floats with a deterministic pattern in (0.5, 1].
void launchFillPattern(float* data, std::size_t n, cudaStream_t stream);

// fp32 FMA throughput probe: blocks x threads threads, each 8 independent chains
// of `steps` FMAs (16 * steps flops per thread). Writes nothing useful to sink.
void launchFmaThroughput(int blocks, int threads, int steps, float* sink, cudaStream_t stream);

}  // namespace uot::gpu::detail
