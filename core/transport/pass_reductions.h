#pragma once
// Steps shared by the parallel passes of the CPU variants (fused, pot-style,
// mapuot, log): per-thread partial results and their merge, and the scaling
// updates that follow a pass. Private to core/transport.

#include <cmath>
#include <cstddef>
#include <span>
#include <vector>

#include "core/transport/row_groups.h"
#include "core/transport/row_kernels.h"
#include "core/transport/row_kernels_types.h"
#include "core/transport/scaling_loop.h"

namespace uot {

// Per-thread scalars of a pass, one cache line each (no false sharing).
struct alignas(64) ThreadSums {
    double errA = 0;   // partial |P 1 - a|_1
    double errB = 0;   // partial |P^T 1 - b|_1
    bool bad = false;  // a scaling became zero, infinite or NaN
};

// Adds up the first `used` threads' sums into errA / errB and tells whether any was bad.
inline PassStatus mergeThreadSums(const ThreadSums* sums, int used, double& errA, double& errB)
{
    bool bad = false;
    errA = errB = 0;
    for (int t = 0; t < used; ++t) {
        bad = bad || sums[t].bad;
        errA += sums[t].errA;
        errB += sums[t].errB;
    }
    return bad ? PassStatus::NotFinite : PassStatus::Ok;
}

// Rows i0, i0 + stride, ... (nb <= kernels::kMaxGroupRows of them) after their
// sums r (= (K v)_i) are known:
//   uNew_i = (a_i / r_i)^fa, rounded to T and stored in ut[0..nb) too; with an
// over-relaxation omega != 1, uNew_i = u_i^(1 - omega) (a_i / r_i)^(fa omega);
// adds |u_i r_i - a_i| to local.errA when rowMarginal (the marginal of the plan
// with the previous u); a non-positive or non-finite u marks local.bad and is
// stored as 0 in ut. Host memory throughout.
template <typename T, typename Kernels>
void updateRowScalings(std::size_t i0, std::size_t stride, std::size_t nb, const T* r, const double* u,
                       std::span<const double> a, double fa, const Kernels& kern, double* uNew, T* ut,
                       bool rowMarginal, ThreadSums& local, double omega = 1.0)
{
    double x[kernels::kMaxGroupRows];
    for (std::size_t q = 0; q < nb; ++q) {
        const std::size_t i = i0 + q * stride;
        const double ri = static_cast<double>(r[q]);
        if (rowMarginal) local.errA += std::abs(u[i] * ri - a[i]);
        x[q] = a[i] / ri;
    }
    if (fa * omega != 1.0 && nb > 0) kern.powBatch(x, fa * omega, x, nb);
    if (omega != 1.0)
        for (std::size_t q = 0; q < nb; ++q) x[q] *= std::pow(u[i0 + q * stride], 1.0 - omega);
    for (std::size_t q = 0; q < nb; ++q) {
        ut[q] = static_cast<T>(x[q]);
        uNew[i0 + q * stride] = static_cast<double>(ut[q]);
        if (!(ut[q] > T(0)) || !std::isfinite(ut[q])) {
            local.bad = true;
            ut[q] = T(0);
        }
    }
}

// Columns c0 .. c1-1 after every thread's column partials (rows of length ld,
// `threads` of them) are complete: col_j = s_j = sum of the partials (in float64).
template <typename T>
void sumColumnPartials(std::size_t c0, std::size_t c1, const T* partials, int threads, std::size_t ld, double* col)
{
    for (std::size_t j = c0; j < c1; ++j) {
        double sum = 0;
        for (int p = 0; p < threads; ++p) sum += static_cast<double>(partials[static_cast<std::size_t>(p) * ld + j]);
        col[j] = sum;
    }
}

// Columns c0 .. c1-1 from their sums s = col: vNew_j = (b_j / s_j)^fb rounded to
// T; adds |v_j s_j - b_j| to local.errB when colMarginal; marks local.bad on a
// non-positive or non-finite v.
template <typename T, typename Kernels>
void updateColumnsFromSums(std::size_t c0, std::size_t c1, const double* col, std::span<const double> b, double fb,
                           const Kernels& kern, double* vNew, bool colMarginal, ThreadSums& local)
{
    for (std::size_t j = c0; j < c1; ++j) vNew[j] = b[j] / col[j];
    if (fb != 1.0 && c1 > c0) kern.powBatch(vNew + c0, fb, vNew + c0, c1 - c0);
    for (std::size_t j = c0; j < c1; ++j) {
        const T vjT = static_cast<T>(vNew[j]);
        vNew[j] = static_cast<double>(vjT);
        if (!(vjT > T(0)) || !std::isfinite(vjT)) local.bad = true;
        if (colMarginal) local.errB += std::abs(vNew[j] * col[j] - b[j]);
    }
}

// Both of the above: the column step of a pass in one process. col receives s.
template <typename T, typename Kernels>
void updateColumnScalings(std::size_t c0, std::size_t c1, const T* partials, int threads, std::size_t ld,
                          std::span<const double> b, double fb, const Kernels& kern, double* col, double* vNew,
                          bool colMarginal, ThreadSums& local)
{
    sumColumnPartials(c0, c1, partials, threads, ld, col);
    updateColumnsFromSums<T>(c0, c1, col, b, fb, kern, vNew, colMarginal, local);
}

// |P 1 - a|_1 for the plan diag(u) K diag(v): one parallel pass of row dot
// products K_i. vt (vt = v rounded to T). u == nullptr means the scalings are
// already folded into the matrix (u = 1). Per-row values are summed in row
// order, so the result does not depend on the thread count. Host memory throughout.
template <typename T, typename Kernels>
double rowMarginalErrorOf(const T* k, std::size_t rows, std::size_t ld, const T* vt, const double* u,
                          std::span<const double> a, const Kernels& kern, int threads, bool parallel)
{
    std::vector<double> perRow(rows);
    const std::ptrdiff_t m = static_cast<std::ptrdiff_t>(rows);
#pragma omp parallel for num_threads(threads) if (parallel) schedule(static)
    for (std::ptrdiff_t si = 0; si < m; ++si) {
        const std::size_t i = static_cast<std::size_t>(si);
        const double rowSum = static_cast<double>(kern.dot(k + i * ld, vt, ld));
        perRow[i] = std::abs((u ? u[i] * rowSum : rowSum) - a[i]);
    }
    double err = 0;
    for (double e : perRow) err += e;
    return err;
}

// The fused pass over rows [r0, r1) of the padded matrix k (row stride ld) for
// one thread: the row sums (k v)_i of a group of rows (against vt = v in T),
// then finish(g, stride, r, ut) turns the group's sums r[0 .. g.count) (rows
// g.first, g.first + stride, ...) into its row factors ut, then s += the
// group's rows times ut while they are in cache. The row order and the
// interleaving follow pipelinedRowsPreferred() (row_groups.h; same bits either way).
template <typename T, typename Kernels, typename Finish>
void fusedRowPass(const Kernels& kern, const T* k, std::size_t ld, std::size_t r0, std::size_t r1, const T* vt, T* s,
                  Finish&& finish)
{
    const bool pipelined = kernels::pipelinedRowsPreferred();
    const RowGroups groups = pipelined ? RowGroups::adjacent(r0, r1, kernels::kMaxInterleavedRows)
                                       : RowGroups::forRowLength(r0, r1, ld * sizeof(T));
    const std::size_t rowStride = groups.stride() * ld;
    T rt[kernels::kMaxGroupRows];
    runGroupPipeline<T>(
        groups, pipelined, [&](RowGroup g) { kern.dotRows(k + g.first * ld, rowStride, g.count, vt, ld, rt); },
        [&](RowGroup g, T* ut) { finish(g, groups.stride(), static_cast<const T*>(rt), ut); },
        [&](RowGroup g, const T* ut, RowGroup) { kern.axpyRows(k + g.first * ld, rowStride, g.count, ut, s, ld); },
        [&](RowGroup next, RowGroup cur, const T* ut) {
            kern.fusedRows(k + next.first * ld, next.count, k + cur.first * ld, cur.count, rowStride, vt, ut, s, ld,
                           rt);
        });
}

}  // namespace uot
