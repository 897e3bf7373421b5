#pragma once
// Shared bodies of the row kernels, instantiated once per instruction set in
// row_kernels_{generic,avx2,avx512}.cpp, each compiled with its own flags.
// Include only from those files, inside an anonymous namespace: these
// functions must not be merged across translation units built for different
// instruction sets.
//
// V is a "vector traits" type: Scalar, Reg, W (lanes), zero(), set1(), load(),
// store(), add(), mul(), fma(a, b, c) = a * b + c, hsum().

template <typename V>
typename V::Scalar dotImpl(const typename V::Scalar* k, const typename V::Scalar* x, std::size_t n)
{
    using R = typename V::Reg;
    constexpr std::size_t W = V::W;
    R acc0 = V::zero(), acc1 = V::zero(), acc2 = V::zero(), acc3 = V::zero();
    std::size_t j = 0;
    for (; j + 4 * W <= n; j += 4 * W) {
        acc0 = V::fma(V::load(k + j), V::load(x + j), acc0);
        acc1 = V::fma(V::load(k + j + W), V::load(x + j + W), acc1);
        acc2 = V::fma(V::load(k + j + 2 * W), V::load(x + j + 2 * W), acc2);
        acc3 = V::fma(V::load(k + j + 3 * W), V::load(x + j + 3 * W), acc3);
    }
    for (; j < n; j += W) acc0 = V::fma(V::load(k + j), V::load(x + j), acc0);
    return V::hsum(V::add(V::add(acc0, acc1), V::add(acc2, acc3)));
}

template <typename V>
void axpyImpl(typename V::Scalar alpha, const typename V::Scalar* k, typename V::Scalar* s, std::size_t n)
{
    constexpr std::size_t W = V::W;
    const typename V::Reg a = V::set1(alpha);
    std::size_t j = 0;
    for (; j + 2 * W <= n; j += 2 * W) {
        V::store(s + j, V::fma(a, V::load(k + j), V::load(s + j)));
        V::store(s + j + W, V::fma(a, V::load(k + j + W), V::load(s + j + W)));
    }
    for (; j < n; j += W) V::store(s + j, V::fma(a, V::load(k + j), V::load(s + j)));
}

template <typename V>
void scaleAccumulateImpl(typename V::Scalar* a, const typename V::Scalar* beta, typename V::Scalar alpha,
                         typename V::Scalar* s, std::size_t n)
{
    constexpr std::size_t W = V::W;
    const typename V::Reg al = V::set1(alpha);
    for (std::size_t j = 0; j < n; j += W) {
        const typename V::Reg x = V::mul(V::mul(V::load(a + j), V::load(beta + j)), al);
        V::store(a + j, x);
        V::store(s + j, V::add(V::load(s + j), x));
    }
}

// Log-domain kernels. DV is a float64 vector traits type: Reg, W, set1(),
// zero(), load(const double*), loadT(const float*/const double*) (aligned,
// widened to float64), store(), add(), sub(), mul(), max(), exp(), hmax(), hsum().
template <typename DV, typename T>
double rowLogSumExpImpl(const T* logk, const double* logv, std::size_t n)
{
    constexpr std::size_t W = DV::W;
    typename DV::Reg mx = DV::set1(-__builtin_huge_val());
    for (std::size_t j = 0; j < n; j += W) mx = DV::max(mx, DV::add(DV::loadT(logk + j), DV::load(logv + j)));
    const double m = DV::hmax(mx);
    const typename DV::Reg mm = DV::set1(m);
    typename DV::Reg s0 = DV::zero(), s1 = DV::zero();
    std::size_t j = 0;
    for (; j + 2 * W <= n; j += 2 * W) {
        s0 = DV::add(s0, DV::exp(DV::sub(DV::add(DV::loadT(logk + j), DV::load(logv + j)), mm)));
        s1 = DV::add(s1, DV::exp(DV::sub(DV::add(DV::loadT(logk + j + W), DV::load(logv + j + W)), mm)));
    }
    for (; j < n; j += W) s0 = DV::add(s0, DV::exp(DV::sub(DV::add(DV::loadT(logk + j), DV::load(logv + j)), mm)));
    return m + __builtin_log(DV::hsum(DV::add(s0, s1)));
}

template <typename DV, typename T>
void columnLogSumExpImpl(const T* logk, double lu, double* cm, double* cs, std::size_t n)
{
    constexpr std::size_t W = DV::W;
    const typename DV::Reg l = DV::set1(lu);
    for (std::size_t j = 0; j < n; j += W) {
        const typename DV::Reg x = DV::add(DV::loadT(logk + j), l);
        const typename DV::Reg c = DV::load(cm + j);
        const typename DV::Reg m2 = DV::max(c, x);
        DV::store(cs + j, DV::add(DV::mul(DV::load(cs + j), DV::exp(DV::sub(c, m2))), DV::exp(DV::sub(x, m2))));
        DV::store(cm + j, m2);
    }
}

// Row-group kernels (see RowKernels::dotRows). B is the group size.
template <typename V, int B>
void dotRowsFixed(const typename V::Scalar* k, std::size_t ld, const typename V::Scalar* x, std::size_t n,
                  typename V::Scalar* out)
{
    using R = typename V::Reg;
    constexpr std::size_t W = V::W;
    R acc0[B], acc1[B];
    for (int r = 0; r < B; ++r) acc0[r] = acc1[r] = V::zero();
    std::size_t j = 0;
    for (; j + 2 * W <= n; j += 2 * W) {
        const R x0 = V::load(x + j), x1 = V::load(x + j + W);
        for (int r = 0; r < B; ++r) {
            acc0[r] = V::fma(V::load(k + r * ld + j), x0, acc0[r]);
            acc1[r] = V::fma(V::load(k + r * ld + j + W), x1, acc1[r]);
        }
    }
    if (j < n) {
        const R x0 = V::load(x + j);
        for (int r = 0; r < B; ++r) acc0[r] = V::fma(V::load(k + r * ld + j), x0, acc0[r]);
    }
    for (int r = 0; r < B; ++r) out[r] = V::hsum(V::add(acc0[r], acc1[r]));
}

// The column updates run from the last column to the first: the caller has just
// read these rows front to back (their dot products), so their last columns are
// the ones still in L1 (docs/BENCHMARKS.md, "Row-group kernels").
template <typename V, int B>
void axpyRowsFixed(const typename V::Scalar* k, std::size_t ld, const typename V::Scalar* alpha,
                   typename V::Scalar* s, std::size_t n)
{
    using R = typename V::Reg;
    R a[B];
    for (int r = 0; r < B; ++r) a[r] = V::set1(alpha[r]);
    for (std::size_t j = n; j > 0;) {
        j -= V::W;
        R acc = V::load(s + j);
        for (int r = 0; r < B; ++r) acc = V::fma(a[r], V::load(k + r * ld + j), acc);
        V::store(s + j, acc);
    }
}

// Back to front as axpyRowsFixed; the next group is prefetched meanwhile (for
// this read+write pass that measured faster, unlike for axpyRows).
template <typename V, int B>
void scaleAccumulateRowsFixed(typename V::Scalar* a, std::size_t ld, const typename V::Scalar* beta,
                              const typename V::Scalar* alpha, typename V::Scalar* s, std::size_t n,
                              const typename V::Scalar* next)
{
    using R = typename V::Reg;
    R al[B];
    for (int r = 0; r < B; ++r) al[r] = V::set1(alpha[r]);
    for (std::size_t jj = 0; jj < n; jj += V::W) {
        for (int r = 0; r < B; ++r) __builtin_prefetch(next + r * ld + jj, 0, 2);
        const std::size_t j = n - V::W - jj;
        const R b = V::load(beta + j);
        R acc = V::load(s + j);
        for (int r = 0; r < B; ++r) {
            const R x = V::mul(V::mul(V::load(a + r * ld + j), b), al[r]);
            V::store(a + r * ld + j, x);
            acc = V::add(acc, x);
        }
        V::store(s + j, acc);
    }
}

// Groups of up to kMaxGroupRows rows, split into fixed-size pieces of 8, 4, 2, 1.
template <typename V>
void dotRowsImpl(const typename V::Scalar* k, std::size_t ld, std::size_t rows, const typename V::Scalar* x,
                 std::size_t n, typename V::Scalar* out)
{
    for (; rows >= 8; rows -= 8, k += 8 * ld, out += 8) dotRowsFixed<V, 8>(k, ld, x, n, out);
    if (rows >= 4) {
        dotRowsFixed<V, 4>(k, ld, x, n, out);
        rows -= 4, k += 4 * ld, out += 4;
    }
    if (rows >= 2) {
        dotRowsFixed<V, 2>(k, ld, x, n, out);
        rows -= 2, k += 2 * ld, out += 2;
    }
    if (rows == 1) dotRowsFixed<V, 1>(k, ld, x, n, out);
}

template <typename V>
void axpyRowsImpl(const typename V::Scalar* k, std::size_t ld, std::size_t rows, const typename V::Scalar* alpha,
                  typename V::Scalar* s, std::size_t n)
{
    for (; rows >= 8; rows -= 8, k += 8 * ld, alpha += 8) axpyRowsFixed<V, 8>(k, ld, alpha, s, n);
    if (rows >= 4) {
        axpyRowsFixed<V, 4>(k, ld, alpha, s, n);
        rows -= 4, k += 4 * ld, alpha += 4;
    }
    if (rows >= 2) {
        axpyRowsFixed<V, 2>(k, ld, alpha, s, n);
        rows -= 2, k += 2 * ld, alpha += 2;
    }
    if (rows == 1) axpyRowsFixed<V, 1>(k, ld, alpha, s, n);
}

template <typename V>
void scaleAccumulateRowsImpl(typename V::Scalar* a, std::size_t ld, std::size_t rows, const typename V::Scalar* beta,
                             const typename V::Scalar* alpha, typename V::Scalar* s, std::size_t n,
                             const typename V::Scalar* next)
{
    for (; rows >= 8; rows -= 8, a += 8 * ld, alpha += 8, next += 8 * ld)
        scaleAccumulateRowsFixed<V, 8>(a, ld, beta, alpha, s, n, next);
    if (rows >= 4) {
        scaleAccumulateRowsFixed<V, 4>(a, ld, beta, alpha, s, n, next);
        rows -= 4, a += 4 * ld, alpha += 4, next += 4 * ld;
    }
    if (rows >= 2) {
        scaleAccumulateRowsFixed<V, 2>(a, ld, beta, alpha, s, n, next);
        rows -= 2, a += 2 * ld, alpha += 2, next += 2 * ld;
    }
    if (rows == 1) scaleAccumulateRowsFixed<V, 1>(a, ld, beta, alpha, s, n, next);
}

template <typename V, int BN, int BC>
void fusedRowsFixed(const typename V::Scalar* next, const typename V::Scalar* cur, std::size_t ld,
                    const typename V::Scalar* x, const typename V::Scalar* alpha, typename V::Scalar* s,
                    std::size_t n, typename V::Scalar* out)
{
    using R = typename V::Reg;
    constexpr std::size_t W = V::W;
    R acc0[BN], acc1[BN], a[BC];
    for (int r = 0; r < BN; ++r) acc0[r] = acc1[r] = V::zero();
    for (int r = 0; r < BC; ++r) a[r] = V::set1(alpha[r]);
    std::size_t j = 0;
    for (; j + 2 * W <= n; j += 2 * W) {
        const R x0 = V::load(x + j), x1 = V::load(x + j + W);
        for (int r = 0; r < BN; ++r) {
            acc0[r] = V::fma(V::load(next + r * ld + j), x0, acc0[r]);
            acc1[r] = V::fma(V::load(next + r * ld + j + W), x1, acc1[r]);
        }
        R s0 = V::load(s + j), s1 = V::load(s + j + W);
        for (int r = 0; r < BC; ++r) {
            s0 = V::fma(a[r], V::load(cur + r * ld + j), s0);
            s1 = V::fma(a[r], V::load(cur + r * ld + j + W), s1);
        }
        V::store(s + j, s0);
        V::store(s + j + W, s1);
    }
    if (j < n) {
        const R x0 = V::load(x + j);
        for (int r = 0; r < BN; ++r) acc0[r] = V::fma(V::load(next + r * ld + j), x0, acc0[r]);
        R s0 = V::load(s + j);
        for (int r = 0; r < BC; ++r) s0 = V::fma(a[r], V::load(cur + r * ld + j), s0);
        V::store(s + j, s0);
    }
    for (int r = 0; r < BN; ++r) out[r] = V::hsum(V::add(acc0[r], acc1[r]));
}

template <typename V, int BN>
void fusedRowsCur(const typename V::Scalar* next, const typename V::Scalar* cur, std::size_t curRows, std::size_t ld,
                  const typename V::Scalar* x, const typename V::Scalar* alpha, typename V::Scalar* s, std::size_t n,
                  typename V::Scalar* out)
{
    switch (curRows) {
    case 4: fusedRowsFixed<V, BN, 4>(next, cur, ld, x, alpha, s, n, out); break;
    case 3: fusedRowsFixed<V, BN, 3>(next, cur, ld, x, alpha, s, n, out); break;
    case 2: fusedRowsFixed<V, BN, 2>(next, cur, ld, x, alpha, s, n, out); break;
    default: fusedRowsFixed<V, BN, 1>(next, cur, ld, x, alpha, s, n, out); break;
    }
}

template <typename V>
void fusedRowsImpl(const typename V::Scalar* next, std::size_t nextRows, const typename V::Scalar* cur,
                   std::size_t curRows, std::size_t ld, const typename V::Scalar* x, const typename V::Scalar* alpha,
                   typename V::Scalar* s, std::size_t n, typename V::Scalar* out)
{
    switch (nextRows) {
    case 4: fusedRowsCur<V, 4>(next, cur, curRows, ld, x, alpha, s, n, out); break;
    case 3: fusedRowsCur<V, 3>(next, cur, curRows, ld, x, alpha, s, n, out); break;
    case 2: fusedRowsCur<V, 2>(next, cur, curRows, ld, x, alpha, s, n, out); break;
    default: fusedRowsCur<V, 1>(next, cur, curRows, ld, x, alpha, s, n, out); break;
    }
}

template <typename V, int BN, int BC>
void mapRowsFixed(const typename V::Scalar* next, typename V::Scalar* cur, std::size_t ld,
                  const typename V::Scalar* beta, const typename V::Scalar* alpha, typename V::Scalar* s,
                  std::size_t n, typename V::Scalar* out)
{
    using R = typename V::Reg;
    constexpr std::size_t W = V::W;
    R acc0[BN], acc1[BN], al[BC];
    for (int r = 0; r < BN; ++r) acc0[r] = acc1[r] = V::zero();
    for (int r = 0; r < BC; ++r) al[r] = V::set1(alpha[r]);
    std::size_t j = 0;
    for (; j + 2 * W <= n; j += 2 * W) {
        const R b0 = V::load(beta + j), b1 = V::load(beta + j + W);
        for (int r = 0; r < BN; ++r) {
            acc0[r] = V::fma(V::load(next + r * ld + j), b0, acc0[r]);
            acc1[r] = V::fma(V::load(next + r * ld + j + W), b1, acc1[r]);
        }
        R s0 = V::load(s + j), s1 = V::load(s + j + W);
        for (int r = 0; r < BC; ++r) {
            const R x0 = V::mul(V::mul(V::load(cur + r * ld + j), b0), al[r]);
            const R x1 = V::mul(V::mul(V::load(cur + r * ld + j + W), b1), al[r]);
            V::store(cur + r * ld + j, x0);
            V::store(cur + r * ld + j + W, x1);
            s0 = V::add(s0, x0);
            s1 = V::add(s1, x1);
        }
        V::store(s + j, s0);
        V::store(s + j + W, s1);
    }
    if (j < n) {
        const R b0 = V::load(beta + j);
        for (int r = 0; r < BN; ++r) acc0[r] = V::fma(V::load(next + r * ld + j), b0, acc0[r]);
        R s0 = V::load(s + j);
        for (int r = 0; r < BC; ++r) {
            const R x0 = V::mul(V::mul(V::load(cur + r * ld + j), b0), al[r]);
            V::store(cur + r * ld + j, x0);
            s0 = V::add(s0, x0);
        }
        V::store(s + j, s0);
    }
    for (int r = 0; r < BN; ++r) out[r] = V::hsum(V::add(acc0[r], acc1[r]));
}

template <typename V, int BN>
void mapRowsCur(const typename V::Scalar* next, typename V::Scalar* cur, std::size_t curRows, std::size_t ld,
                const typename V::Scalar* beta, const typename V::Scalar* alpha, typename V::Scalar* s, std::size_t n,
                typename V::Scalar* out)
{
    switch (curRows) {
    case 4: mapRowsFixed<V, BN, 4>(next, cur, ld, beta, alpha, s, n, out); break;
    case 3: mapRowsFixed<V, BN, 3>(next, cur, ld, beta, alpha, s, n, out); break;
    case 2: mapRowsFixed<V, BN, 2>(next, cur, ld, beta, alpha, s, n, out); break;
    default: mapRowsFixed<V, BN, 1>(next, cur, ld, beta, alpha, s, n, out); break;
    }
}

template <typename V>
void mapRowsImpl(const typename V::Scalar* next, std::size_t nextRows, typename V::Scalar* cur, std::size_t curRows,
                 std::size_t ld, const typename V::Scalar* beta, const typename V::Scalar* alpha, typename V::Scalar* s,
                 std::size_t n, typename V::Scalar* out)
{
    switch (nextRows) {
    case 4: mapRowsCur<V, 4>(next, cur, curRows, ld, beta, alpha, s, n, out); break;
    case 3: mapRowsCur<V, 3>(next, cur, curRows, ld, beta, alpha, s, n, out); break;
    case 2: mapRowsCur<V, 2>(next, cur, curRows, ld, beta, alpha, s, n, out); break;
    default: mapRowsCur<V, 1>(next, cur, curRows, ld, beta, alpha, s, n, out); break;
    }
}
