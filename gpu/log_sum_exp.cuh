#pragma once
// Internal to gpu/: the online log-sum-exp state (running max m, sum s of
// exp(x - m)) every log-domain reduction of the GPU kernels uses, in double.

#include <cmath>

namespace uot::gpu::detail {

__device__ __forceinline__ void lseAdd(double& m, double& s, double x)
{
    if (x == -INFINITY) return;
    if (x > m) {
        s = s * exp(m - x) + 1.0;
        m = x;
    } else {
        s += exp(x - m);
    }
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
