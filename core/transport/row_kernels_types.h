#pragma once
// The table of row kernels (see row_kernels.h). Kept apart, with no standard
// library include beyond <cstddef>, because the per-instruction-set files
// include it: nothing inline may be compiled there that other files share.

#include <cstddef>

namespace uot::kernels {

inline constexpr std::size_t kAlignBytes = 64;
// The most rows one dotRows / axpyRows / scaleAccumulateRows call takes.
inline constexpr std::size_t kMaxGroupRows = 8;
// The most rows of each group one fusedRows / mapRows call takes.
inline constexpr std::size_t kMaxInterleavedRows = 4;

template <typename T>
struct RowKernels {
    // sum_j k[j] * x[j], accumulated in T lanes.
    T (*dot)(const T* k, const T* x, std::size_t n);
    // s[j] += alpha * k[j]
    void (*axpy)(T alpha, const T* k, T* s, std::size_t n);
    // a[j] = (a[j] * beta[j]) * alpha; s[j] += a[j]   (MAP-UOT's in-place rescaling)
    void (*scaleAccumulate)(T* a, const T* beta, T alpha, T* s, std::size_t n);
    // Several rows at once (rows <= kMaxGroupRows, row stride ld), so that x /
    // s / beta are loaded once per group of rows instead of once per row; each
    // row's arithmetic is the same whatever the group size (two vector
    // accumulators per row for the dot products; column sums in row order), so
    // results do not depend on how rows are grouped (or split among threads).
    // out[r] = sum_j k[r*ld + j] * x[j]
    void (*dotRows)(const T* k, std::size_t ld, std::size_t rows, const T* x, std::size_t n, T* out);
    // s[j] += alpha[0] k[j] + alpha[1] k[ld + j] + ...   (in row order).
    void (*axpyRows)(const T* k, std::size_t ld, std::size_t rows, const T* alpha, T* s, std::size_t n);
    // a[r*ld + j] = (a[r*ld + j] * beta[j]) * alpha[r]; s[j] += that   (in row order).
    // next: the rows the caller will read next (same layout, `rows` rows),
    // prefetched meanwhile so that memory stays busy while this cache-resident
    // work runs. Prefetches never fault: any valid pointer, or nullptr for none.
    void (*scaleAccumulateRows)(T* a, std::size_t ld, std::size_t rows, const T* beta, const T* alpha, T* s,
                                std::size_t n, const T* next);
    // The fused pass's software pipeline, one call per group of rows: the dot
    // products of the next group (out[r] = sum_j next[r*ld + j] x[j], r <
    // nextRows, read from memory) interleaved, column chunk by column chunk,
    // with the column update of the current group (s[j] += alpha[r] cur[r*ld + j],
    // r < curRows, rows already in cache), so that memory never waits for the
    // cache-resident half. Same bits as dotRows + axpyRows. Rows <= kMaxInterleavedRows each.
    void (*fusedRows)(const T* next, std::size_t nextRows, const T* cur, std::size_t curRows, std::size_t ld,
                      const T* x, const T* alpha, T* s, std::size_t n, T* out);
    // The same pipeline for MAP-UOT: row sums of the next group against beta
    // (out[r] = sum_j next[r*ld + j] beta[j]) interleaved with the in-place
    // rescaling of the current group (as scaleAccumulateRows). Same bits as
    // dotRows + scaleAccumulateRows. Rows <= kMaxInterleavedRows each.
    void (*mapRows)(const T* next, std::size_t nextRows, T* cur, std::size_t curRows, std::size_t ld,
                    const T* beta, const T* alpha, T* s, std::size_t n, T* out);
    // out[k] = x[k]^y for k < n (any n, any alignment; float64 whatever T is).
    // Vectorised with glibc's libmvec where available (at most a few ulp from
    // std::pow); lanes are independent, so results do not depend on how a
    // caller batches its values.
    void (*powBatch)(const double* x, double y, double* out, std::size_t n);
    // out[k] = exp(x[k]) for k < n (any n, any alignment; float64 whatever T
    // is; out may be x). libmvec where available, as powBatch.
    void (*expBatch)(const double* x, double* out, std::size_t n);
    // Log-domain kernels, float64 arithmetic whatever the storage T. Entries of
    // logk must be finite (pads: a very negative finite value).
    // log sum_j exp(logk[j] + logv[j]) (max first, then one pass of vector exp).
    double (*rowLogSumExp)(const T* logk, const double* logv, std::size_t n);
    // Per-column log-sum-exp accumulators (running max cm, scaled sum cs) updated
    // with x_j = logk[j] + lu:  m' = max(cm, x); cs = cs e^(cm - m') + e^(x - m'); cm = m'.
    void (*columnLogSumExp)(const T* logk, double lu, double* cm, double* cs, std::size_t n);
};

}  // namespace uot::kernels
