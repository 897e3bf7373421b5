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
template <int B>
struct RowCount {
    static constexpr int value = B;
};

// Splits `rows` into pieces of 8, 4, 2 and 1 rows: f(RowCount<b>{}, first row of the piece).
template <typename F>
void forRowPieces(std::size_t rows, F&& f)
{
    std::size_t r = 0;
    for (; rows - r >= 8; r += 8) f(RowCount<8>{}, r);
    if (rows - r >= 4) {
        f(RowCount<4>{}, r);
        r += 4;
    }
    if (rows - r >= 2) {
        f(RowCount<2>{}, r);
        r += 2;
    }
    if (rows - r == 1) f(RowCount<1>{}, r);
}

// f(RowCount<count>{}) for count = 1 .. kMaxInterleavedRows.
template <typename F>
void withRowCount(std::size_t count, F&& f)
{
    static_assert(kMaxInterleavedRows == 4, "one case per row count");
    switch (count) {
    case 4: f(RowCount<4>{}); break;
    case 3: f(RowCount<3>{}); break;
    case 2: f(RowCount<2>{}); break;
    default: f(RowCount<1>{}); break;
    }
}

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

// The cache-resident work on B rows, one vector of columns at a time:
// column(j, xj) handles columns j .. j+W-1 (xj: x or beta at those columns).
// s[j] += alpha[0] k[j] + alpha[1] k[ld + j] + ...   (in row order)
template <typename V, int B>
struct AxpyColumns {
    using S = typename V::Scalar;
    using R = typename V::Reg;
    const S* k;
    std::size_t ld;
    S* s;
    R a[B];

    AxpyColumns(const S* rows, std::size_t stride, const S* alpha, S* sums) : k(rows), ld(stride), s(sums)
    {
        for (int r = 0; r < B; ++r) a[r] = V::set1(alpha[r]);
    }
    void column(std::size_t j, R)
    {
        R acc = V::load(s + j);
        for (int r = 0; r < B; ++r) acc = V::fma(a[r], V::load(k + r * ld + j), acc);
        V::store(s + j, acc);
    }
};

// a[r*ld + j] = (a[r*ld + j] * beta[j]) * alpha[r]; s[j] += that   (in row order)
template <typename V, int B>
struct RescaleColumns {
    using S = typename V::Scalar;
    using R = typename V::Reg;
    S* a;
    std::size_t ld;
    S* s;
    R al[B];

    RescaleColumns(S* rows, std::size_t stride, const S* alpha, S* sums) : a(rows), ld(stride), s(sums)
    {
        for (int r = 0; r < B; ++r) al[r] = V::set1(alpha[r]);
    }
    void column(std::size_t j, R beta)
    {
        R acc = V::load(s + j);
        for (int r = 0; r < B; ++r) {
            const R x = V::mul(V::mul(V::load(a + r * ld + j), beta), al[r]);
            V::store(a + r * ld + j, x);
            acc = V::add(acc, x);
        }
        V::store(s + j, acc);
    }
};

// The column updates run from the last column to the first: the caller has just
// read these rows front to back (their dot products), so their last columns are
// the ones still in L1 (docs/notes/benchmark-history.md, "Row-group kernels").
template <typename V, int B>
void axpyRowsFixed(const typename V::Scalar* k, std::size_t ld, const typename V::Scalar* alpha, typename V::Scalar* s,
                   std::size_t n)
{
    AxpyColumns<V, B> work(k, ld, alpha, s);
    for (std::size_t j = n; j > 0;) {
        j -= V::W;
        work.column(j, V::zero());
    }
}

// Back to front as axpyRowsFixed; the next group is prefetched meanwhile (for
// this read+write pass that measured faster, unlike for axpyRows).
template <typename V, int B>
void scaleAccumulateRowsFixed(typename V::Scalar* a, std::size_t ld, const typename V::Scalar* beta,
                              const typename V::Scalar* alpha, typename V::Scalar* s, std::size_t n,
                              const typename V::Scalar* next)
{
    RescaleColumns<V, B> work(a, ld, alpha, s);
    for (std::size_t jj = 0; jj < n; jj += V::W) {
        for (int r = 0; r < B; ++r) __builtin_prefetch(next + r * ld + jj, 0, 2);
        const std::size_t j = n - V::W - jj;
        work.column(j, V::load(beta + j));
    }
}

template <typename V>
void dotRowsImpl(const typename V::Scalar* k, std::size_t ld, std::size_t rows, const typename V::Scalar* x,
                 std::size_t n, typename V::Scalar* out)
{
    forRowPieces(rows,
                 [&](auto b, std::size_t r) { dotRowsFixed<V, decltype(b)::value>(k + r * ld, ld, x, n, out + r); });
}

template <typename V>
void axpyRowsImpl(const typename V::Scalar* k, std::size_t ld, std::size_t rows, const typename V::Scalar* alpha,
                  typename V::Scalar* s, std::size_t n)
{
    forRowPieces(rows,
                 [&](auto b, std::size_t r) { axpyRowsFixed<V, decltype(b)::value>(k + r * ld, ld, alpha + r, s, n); });
}

template <typename V>
void scaleAccumulateRowsImpl(typename V::Scalar* a, std::size_t ld, std::size_t rows, const typename V::Scalar* beta,
                             const typename V::Scalar* alpha, typename V::Scalar* s, std::size_t n,
                             const typename V::Scalar* next)
{
    // No next rows (nullptr): prefetch these (arithmetic on a null pointer is undefined).
    const typename V::Scalar* ahead = next != nullptr ? next : a;
    forRowPieces(rows, [&](auto b, std::size_t r) {
        scaleAccumulateRowsFixed<V, decltype(b)::value>(a + r * ld, ld, beta, alpha + r, s, n, ahead + r * ld);
    });
}

// The interleaved kernels' loop: the dot products of BN `next` rows against x,
// and, column vector by column vector, the current group's work (Work::column,
// given x at those columns).
template <typename V, int BN, typename Work>
void interleavedRows(const typename V::Scalar* next, std::size_t ld, const typename V::Scalar* x, std::size_t n,
                     typename V::Scalar* out, Work& work)
{
    using R = typename V::Reg;
    constexpr std::size_t W = V::W;
    R acc0[BN], acc1[BN];
    for (int r = 0; r < BN; ++r) acc0[r] = acc1[r] = V::zero();
    std::size_t j = 0;
    for (; j + 2 * W <= n; j += 2 * W) {
        const R x0 = V::load(x + j), x1 = V::load(x + j + W);
        for (int r = 0; r < BN; ++r) {
            acc0[r] = V::fma(V::load(next + r * ld + j), x0, acc0[r]);
            acc1[r] = V::fma(V::load(next + r * ld + j + W), x1, acc1[r]);
        }
        work.column(j, x0);
        work.column(j + W, x1);
    }
    if (j < n) {
        const R x0 = V::load(x + j);
        for (int r = 0; r < BN; ++r) acc0[r] = V::fma(V::load(next + r * ld + j), x0, acc0[r]);
        work.column(j, x0);
    }
    for (int r = 0; r < BN; ++r) out[r] = V::hsum(V::add(acc0[r], acc1[r]));
}

template <typename V>
void fusedRowsImpl(const typename V::Scalar* next, std::size_t nextRows, const typename V::Scalar* cur,
                   std::size_t curRows, std::size_t ld, const typename V::Scalar* x, const typename V::Scalar* alpha,
                   typename V::Scalar* s, std::size_t n, typename V::Scalar* out)
{
    withRowCount(curRows, [&](auto c) {
        AxpyColumns<V, decltype(c)::value> work(cur, ld, alpha, s);
        withRowCount(nextRows, [&](auto b) { interleavedRows<V, decltype(b)::value>(next, ld, x, n, out, work); });
    });
}

template <typename V>
void mapRowsImpl(const typename V::Scalar* next, std::size_t nextRows, typename V::Scalar* cur, std::size_t curRows,
                 std::size_t ld, const typename V::Scalar* beta, const typename V::Scalar* alpha, typename V::Scalar* s,
                 std::size_t n, typename V::Scalar* out)
{
    withRowCount(curRows, [&](auto c) {
        RescaleColumns<V, decltype(c)::value> work(cur, ld, alpha, s);
        withRowCount(nextRows, [&](auto b) { interleavedRows<V, decltype(b)::value>(next, ld, beta, n, out, work); });
    });
}
