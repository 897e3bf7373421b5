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
