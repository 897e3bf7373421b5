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
