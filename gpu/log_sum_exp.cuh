#pragma once
// Internal to gpu/: the online log-sum-exp state (running max m, sum s of
// exp(x - m)) every log-domain reduction of the GPU kernels uses, in double.

#include <cmath>

namespace uot::gpu::detail {

// One exponential either way, chosen by selects rather than branches: lanes that
// differ take one exponential, not both paths' one after the other, and the
// exponentials of several states side by side (the step's sweep and decision) are not
// held apart by branches. The same values as the branching form.
__device__ __forceinline__ void lseAdd(double& m, double& s, double x)
{
    if (x == -INFINITY) return;
    const bool up = x > m;
    const double e = exp(up ? m - x : x - m);
    s = up ? s * e + 1.0 : s + e;
    m = up ? x : m;
}

// lseAdd whose first term costs no exponential: into the empty state (m = -inf,
// s = 0) a term x > -inf goes in as m = x, s = 1, what lseAdd's exp(-inf) = 0 gives
// (a NaN and later terms go through lseAdd). For the step's few terms a thread
// (gpu/relaxed_step_device.cuh), where the first is most of them; the hot loops of
// the plain passes keep lseAdd.
__device__ __forceinline__ void lseAddFirstFree(double& m, double& s, double x)
{
    if (m == -INFINITY && s == 0.0 && x > -INFINITY) {
        m = x;
        s = 1.0;
        return;
    }
    lseAdd(m, s, x);
}

__device__ __forceinline__ void lseMerge(double& m, double& s, double m2, double s2)
{
    if (m2 == -INFINITY) return;
    if (m == -INFINITY) {
        m = m2;
        s = s2;
        return;
    }
    const double top = fmax(m, m2);
    s = s * exp(m - top) + s2 * exp(m2 - top);
    m = top;
}

}  // namespace uot::gpu::detail
