// GPU per-pixel mapping (gpu_color_map.h). The per-pixel formulas are the
// inline functions of core/color/color_space_inline.h and color_map_inline.h,
// compiled here for the device (UOT_HD), so CPU and GPU share one definition.

#include "gpu/gpu_color_map.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <mutex>
#include <string>
#include <vector>

#include "core/color/color_map_inline.h"
#include "core/color/color_space_inline.h"
#include "core/color/look_lattice.h"
#include "core/color/marginal_match.h"
#include "core/transport/uot_error.h"
#include "gpu/cuda_support.h"
#include "gpu/gpu_backend.h"
#include "gpu/lipschitz_sweeps.h"

namespace uot::gpu {

using detail::DeviceBuffer;
using detail::Stream;

// The fold's conjugate gradients (look_fit.cpp's solveConjugateGradients, one system per
// channel sharing the 27-point matrix, Jacobi-preconditioned, from the prior) on the device,
// the scalars kept there so that the host waits once, at the end. An iteration after
// convergence changes nothing (`done`).
struct FoldScalars {
    double rz[3], bNorm[3], pq[3], rr[3], rzNew[3], beta[3];
    double tolerance2;
    int done;
    int iterations;  // the updates made before done (solveConjugateGradients' count)
};

namespace {

using Clock = std::chrono::steady_clock;
double secondsSince(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

constexpr int kThreads = 256;
unsigned blocksFor(std::size_t n) { return static_cast<unsigned>((n + kThreads - 1) / kThreads); }

// Pixels [first, first + count) of an image with `channels` samples per pixel
// -> working-space colors (3 floats per pixel).
template <typename Sample>
__global__ void convertKernel(const Sample* __restrict__ samples, int channels, std::size_t first, std::size_t count,
                              const float* __restrict__ decode, WorkingSpace space, float* __restrict__ colors)
{
    const std::size_t k = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (k >= count) return;
    const std::size_t p = first + k;
    const Sample* s = samples + p * channels;
    float rgb[3];
    if (channels == 1) {
        rgb[0] = rgb[1] = rgb[2] = decode[s[0]];
    } else {
        rgb[0] = decode[s[0]];
        rgb[1] = decode[s[1]];
        rgb[2] = decode[s[2]];
    }
    color_detail::linearToSpaceWith(space, rgb, colors + 3 * p, color_detail::LabFExact{});
}

// Block means over s x s blocks (partial at the right and bottom edges), as
// downsampleColors: low colors (wl x hl x 3) and guide (wl x hl).
__global__ void blockMeansKernel(const float* __restrict__ colors, int width, int height, int s, int wl, int hl,
                                 WorkingSpace space, float* __restrict__ lowColors, float* __restrict__ lowGuide)
{
    const int lx = blockIdx.x * blockDim.x + threadIdx.x;
    const int ly = blockIdx.y;
    if (lx >= wl || ly >= hl) return;
    const int y1 = min(height, (ly + 1) * s), x1 = min(width, (lx + 1) * s);
    double a0 = 0, a1 = 0, a2 = 0;
    int cnt = 0;
    for (int y = ly * s; y < y1; ++y)
        for (int x = lx * s; x < x1; ++x, ++cnt) {
            const float* c = colors + 3 * (static_cast<std::size_t>(y) * width + x);
            a0 += c[0], a1 += c[1], a2 += c[2];
        }
    const std::size_t k = static_cast<std::size_t>(ly) * wl + lx;
    float* o = lowColors + 3 * k;
    o[0] = static_cast<float>(a0 / cnt);
    o[1] = static_cast<float>(a1 / cnt);
    o[2] = static_cast<float>(a2 / cnt);
    lowGuide[k] = color_detail::guideOf(space, o);
}

// Displacement at the block means through the LUT, packed with the guide for the
// guided filter: [I, I*I, P0, P1, P2, I*P0, I*P1, I*P2] per low-resolution pixel.
__global__ void packGuidedKernel(const float* __restrict__ lowColors, const float* __restrict__ lowGuide, std::size_t nl,
                                 const float* __restrict__ lut, int lutSize, double lo0, double lo1, double lo2,
                                 double st0, double st1, double st2, float* __restrict__ packed)
{
    const std::size_t k = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (k >= nl) return;
    const double lo[3] = {lo0, lo1, lo2}, step[3] = {st0, st1, st2};
    float d[3];
    color_detail::lutLookupRaw(lut, lutSize, lo, step, lowColors + 3 * k, d);
    const float i = lowGuide[k];
    float* q = packed + 8 * k;
    q[0] = i;
    q[1] = i * i;
    for (int c = 0; c < 3; ++c) {
        q[2 + c] = d[c];
        q[5 + c] = i * d[c];
    }
}

// Mean over the window [x - r, x + r] (horizontal) or [y - r, y + r] (vertical)
// clipped to the image, for `ch` interleaved channels (ch <= 8). Applied once
// each way it gives the clipped (2r+1)^2 box mean of the CPU's boxFilter.
__global__ void boxPassKernel(const float* __restrict__ in, float* __restrict__ out, int w, int h, int ch, int r,
                              bool horizontal)
{
    const int x = blockIdx.x * blockDim.x + threadIdx.x;
    const int y = blockIdx.y;
    if (x >= w || y >= h) return;
    double acc[8] = {0, 0, 0, 0, 0, 0, 0, 0};
    int lo, hi;
    if (horizontal) {
        lo = max(0, x - r), hi = min(w - 1, x + r);
        for (int t = lo; t <= hi; ++t)
            for (int c = 0; c < ch; ++c) acc[c] += in[(static_cast<std::size_t>(y) * w + t) * ch + c];
    } else {
        lo = max(0, y - r), hi = min(h - 1, y + r);
        for (int t = lo; t <= hi; ++t)
            for (int c = 0; c < ch; ++c) acc[c] += in[(static_cast<std::size_t>(t) * w + x) * ch + c];
    }
    const double norm = 1.0 / (hi - lo + 1);
    for (int c = 0; c < ch; ++c) out[(static_cast<std::size_t>(y) * w + x) * ch + c] = static_cast<float>(acc[c] * norm);
}

// He et al.'s coefficients from the box means of the packed inputs: [a0..a2, b0..b2].
__global__ void guidedCoefKernel(const float* __restrict__ mean, std::size_t nl, double eps, float* __restrict__ coef)
{
    const std::size_t k = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (k >= nl) return;
    const float* m = mean + 8 * k;
    float* o = coef + 6 * k;
    const double var = fmax(0.0, static_cast<double>(m[1]) - static_cast<double>(m[0]) * m[0]);
    for (int c = 0; c < 3; ++c) {
        const double cov = static_cast<double>(m[5 + c]) - static_cast<double>(m[0]) * m[2 + c];
        const double a = cov / (var + eps);
        o[c] = static_cast<float>(a);
        o[3 + c] = static_cast<float>(m[2 + c] - a * m[0]);
    }
}

struct ComposeParams {
    WorkingSpace space;
    float strength;
    bool keepL;
    GamutMode gamut;
    int width, height;
    int srcChannels, outChannels;
    bool copyAlpha;
    float maxValue;
    // smoothed field: 6 coefficients per node (lightness guide: d = a g + b) or
    // 12 (colour guide: d = A c + b, A row-major then b)
    bool smoothed;
    bool colorGuided;
    int subsample, lowWidth, lowHeight;
    // LUT
    int lutSize;
    double lo[3], step[3];
};

// The displacement d of pixel (x, y), colour c: from the smoothed field (the CPU's
// order: along y first, then along x) or from the LUT.
__device__ void displacementAt(const ComposeParams& prm, int x, int y, const float* c, const float* __restrict__ coef,
                               const float* __restrict__ lut, float d[3])
{
    if (!prm.smoothed) {
        color_detail::lutLookupRaw(lut, prm.lutSize, prm.lo, prm.step, c, d);
        return;
    }
    const color_detail::Bilinear by = color_detail::bilinearAt(y, prm.subsample, prm.lowHeight);
    const color_detail::Bilinear bx = color_detail::bilinearAt(x, prm.subsample, prm.lowWidth);
    const std::size_t wl = static_cast<std::size_t>(prm.lowWidth);
    const std::size_t len = prm.colorGuided ? 12 : 6;
    const float* r00 = coef + (static_cast<std::size_t>(by.i0) * wl + bx.i0) * len;
    const float* r10 = coef + (static_cast<std::size_t>(by.i1) * wl + bx.i0) * len;
    const float* r01 = coef + (static_cast<std::size_t>(by.i0) * wl + bx.i1) * len;
    const float* r11 = coef + (static_cast<std::size_t>(by.i1) * wl + bx.i1) * len;
    float m[12];
    for (std::size_t k = 0; k < len; ++k) {
        const float v0 = r00[k] + by.w * (r10[k] - r00[k]);
        const float v1 = r01[k] + by.w * (r11[k] - r01[k]);
        m[k] = v0 + bx.w * (v1 - v0);
    }
    color_detail::fieldDisplacement(m, prm.colorGuided, c, prm.colorGuided ? 0.0f : color_detail::guideOf(prm.space, c), d);
}

// The transferred colours c + d on the grid of pixels whose x and y are multiples
// of step, row by row (sampleMappedColors' layout).
__global__ void sampleMappedKernel(ComposeParams prm, const float* __restrict__ colors, const float* __restrict__ coef,
                                   const float* __restrict__ lut, int step, int sampleCols, float* __restrict__ out)
{
    const int sx = blockIdx.x * blockDim.x + threadIdx.x;
    const int sy = blockIdx.y;
    const int x = sx * step, y = sy * step;
    if (x >= prm.width || y >= prm.height) return;
    const float* c = colors + 3 * (static_cast<std::size_t>(y) * prm.width + x);
    float d[3];
    displacementAt(prm, x, y, c, coef, lut, d);
    float* o = out + 3 * (static_cast<std::size_t>(sy) * sampleCols + sx);
    for (int k = 0; k < 3; ++k) o[k] = c[k] + d[k];
}

// The lattice of the fold (fitLatticeToField) as the device sees it: nodes per axis
// and each working-space coordinate's range over the lattice (the cube's domain).
struct FoldLattice {
    int size;
    double lo[3], hi[3];
};

// One sampled pixel's part of the fold's normal equations (look_fit.cpp's accumulate
// for the lattice as a cube): its target is the field's displacement, (c + d) - c as
// fitLatticeToField computes it from the sampled colours; its trilinear stencil is
// cubeStencil's, the cube's channel 0 being the lattice's last coordinate.
__global__ void foldEquationsKernel(ComposeParams prm, const float* __restrict__ colors, const float* __restrict__ coef,
                                    int step, int sampleCols, FoldLattice lat, double* __restrict__ matrix,
                                    double* __restrict__ rhs)
{
    const int sx = blockIdx.x * blockDim.x + threadIdx.x;
    const int sy = blockIdx.y;
    const int x = sx * step, y = sy * step;
    if (sx >= sampleCols || y >= prm.height) return;
    const float* c = colors + 3 * (static_cast<std::size_t>(y) * prm.width + x);
    float d[3];
    displacementAt(prm, x, y, c, coef, nullptr, d);
    float t[3];
    int cell[3];
    float f[3];
    const int n = lat.size;
    for (int a = 0; a < 3; ++a) {
        const float mapped = c[a] + d[a];
        t[a] = mapped - c[a];
        const double u = fmin(fmax((c[a] - lat.lo[a]) / (lat.hi[a] - lat.lo[a]) * (n - 1), 0.0), static_cast<double>(n - 1));
        cell[a] = min(static_cast<int>(u), n - 2);
        f[a] = static_cast<float>(u - cell[a]);
    }
    // Corner k = (d2, d1, d0) bits (the cube's r, g, b order): offset along each coordinate.
    float w[8];
    std::size_t node[8];
    for (int k = 0; k < 8; ++k) {
        const int o0 = (k >> 2) & 1, o1 = (k >> 1) & 1, o2 = k & 1;
        w[k] = (o2 ? f[2] : 1 - f[2]) * (o1 ? f[1] : 1 - f[1]) * (o0 ? f[0] : 1 - f[0]);
        node[k] = (static_cast<std::size_t>(cell[0] + o0) * n + (cell[1] + o1)) * n + (cell[2] + o2);
    }
    for (int i = 0; i < 8; ++i) {
        const double wi = w[i];
        if (wi == 0.0) continue;
        double* row = matrix + node[i] * 27;
        for (int j = 0; j < 8; ++j) {
            const int slot = (((j >> 2) & 1) - ((i >> 2) & 1) + 1) * 9 + (((j >> 1) & 1) - ((i >> 1) & 1) + 1) * 3 +
                             ((j & 1) - (i & 1) + 1);
            atomicAdd(row + slot, wi * w[j]);
        }
        for (int a = 0; a < 3; ++a) atomicAdd(rhs + node[i] * 3 + a, wi * t[a]);
    }
}

// Per-block minimum and maximum of each channel of n colours (3 floats each):
// partial[6 * block + c] the minimum of channel c, partial[6 * block + 3 + c] its maximum.
__global__ void channelRangeKernel(const float* __restrict__ colors, std::size_t n, float* __restrict__ partial)
{
    __shared__ float lo[3][kThreads], hi[3][kThreads];
    float l[3] = {colors[0], colors[1], colors[2]}, h[3] = {l[0], l[1], l[2]};
    for (std::size_t k = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; k < n;
         k += static_cast<std::size_t>(gridDim.x) * blockDim.x)
        for (int c = 0; c < 3; ++c) l[c] = fminf(l[c], colors[3 * k + c]), h[c] = fmaxf(h[c], colors[3 * k + c]);
    for (int c = 0; c < 3; ++c) lo[c][threadIdx.x] = l[c], hi[c][threadIdx.x] = h[c];
    __syncthreads();
    for (int half = blockDim.x / 2; half > 0; half /= 2) {
        if (threadIdx.x < half)
            for (int c = 0; c < 3; ++c) {
                lo[c][threadIdx.x] = fminf(lo[c][threadIdx.x], lo[c][threadIdx.x + half]);
                hi[c][threadIdx.x] = fmaxf(hi[c][threadIdx.x], hi[c][threadIdx.x + half]);
            }
        __syncthreads();
    }
    if (threadIdx.x < 3) {
        partial[6 * blockIdx.x + threadIdx.x] = lo[threadIdx.x][0];
        partial[6 * blockIdx.x + 3 + threadIdx.x] = hi[threadIdx.x][0];
    }
}

// The histogram of channel blockIdx.y of n colours over [lo, lo + bins * width)
// (channelQuantiles' bins: the index of (v - lo) / width, clamped), counted in
// shared memory per block and added into counts[channel * bins + bin].
struct HistogramRange {
    float lo[3];
    double width[3];
};

__global__ void channelHistogramKernel(const float* __restrict__ colors, std::size_t n, HistogramRange range, int bins,
                                       unsigned long long* __restrict__ counts)
{
    extern __shared__ unsigned int local[];
    const int c = blockIdx.y;
    for (int b = threadIdx.x; b < bins; b += blockDim.x) local[b] = 0;
    __syncthreads();
    for (std::size_t k = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; k < n;
         k += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
        const double u = (colors[3 * k + c] - range.lo[c]) / range.width[c];
        atomicAdd(&local[min(max(static_cast<int>(u), 0), bins - 1)], 1u);
    }
    __syncthreads();
    for (int b = threadIdx.x; b < bins; b += blockDim.x)
        if (local[b]) atomicAdd(&counts[static_cast<std::size_t>(c) * bins + b], static_cast<unsigned long long>(local[b]));
}

// Adds the three values of each thread into sum[0..2] (warp shuffles, then one atomic add a warp).
__device__ void addToSums(double v0, double v1, double v2, double* sum)
{
    for (int o = 16; o > 0; o /= 2) {
        v0 += __shfl_down_sync(0xffffffffu, v0, o);
        v1 += __shfl_down_sync(0xffffffffu, v1, o);
        v2 += __shfl_down_sync(0xffffffffu, v2, o);
    }
    if ((threadIdx.x & 31) == 0) {
        atomicAdd(sum, v0);
        atomicAdd(sum + 1, v1);
        atomicAdd(sum + 2, v2);
    }
}

// y = A x over the 27-point stencil, three channels (look_fit.cpp's multiply).
__global__ void foldMultiplyKernel(const double* __restrict__ matrix, int n, const double* __restrict__ x,
                                   double* __restrict__ y, const FoldScalars* sc)
{
    const std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    const std::size_t nodes = static_cast<std::size_t>(n) * n * n;
    if (i >= nodes || sc->done) return;
    const int c0 = static_cast<int>(i / (static_cast<std::size_t>(n) * n)), c1 = static_cast<int>((i / n) % n),
              c2 = static_cast<int>(i % n);
    double acc[3] = {0, 0, 0};
    const double* row = matrix + i * 27;
    for (int d0 = -1; d0 <= 1; ++d0) {
        if (c0 + d0 < 0 || c0 + d0 >= n) continue;
        for (int d1 = -1; d1 <= 1; ++d1) {
            if (c1 + d1 < 0 || c1 + d1 >= n) continue;
            for (int d2 = -1; d2 <= 1; ++d2) {
                if (c2 + d2 < 0 || c2 + d2 >= n) continue;
                const double w = row[(d0 + 1) * 9 + (d1 + 1) * 3 + (d2 + 1)];
                if (w == 0.0) continue;
                const std::size_t m = (static_cast<std::size_t>(c0 + d0) * n + (c1 + d1)) * n + (c2 + d2);
                for (int a = 0; a < 3; ++a) acc[a] += w * x[m * 3 + a];
            }
        }
    }
    for (int a = 0; a < 3; ++a) y[i * 3 + a] = acc[a];
}

// r = b - A x, z = r / diag, p = z; rz and |b|^2 per channel.
__global__ void foldStartKernel(const double* __restrict__ matrix, const double* __restrict__ rhs, std::size_t nodes,
                                const double* __restrict__ q, double* __restrict__ r, double* __restrict__ z,
                                double* __restrict__ p, FoldScalars* sc)
{
    const std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    double rz[3] = {0, 0, 0}, bb[3] = {0, 0, 0};
    if (i < nodes)
        for (int a = 0; a < 3; ++a) {
            const std::size_t k = i * 3 + a;
            r[k] = rhs[k] - q[k];
            z[k] = r[k] / matrix[i * 27 + 13];
            p[k] = z[k];
            rz[a] = r[k] * z[k];
            bb[a] = rhs[k] * rhs[k];
        }
    addToSums(rz[0], rz[1], rz[2], sc->rz);
    addToSums(bb[0], bb[1], bb[2], sc->bNorm);
}

// p . q per channel.
__global__ void foldDotKernel(const double* __restrict__ p, const double* __restrict__ q, std::size_t nodes, FoldScalars* sc)
{
    if (sc->done) return;
    const std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    double v[3] = {0, 0, 0};
    if (i < nodes)
        for (int a = 0; a < 3; ++a) v[a] = p[i * 3 + a] * q[i * 3 + a];
    addToSums(v[0], v[1], v[2], sc->pq);
}

// x += alpha p, r -= alpha q, z = r / diag; |r|^2 and r . z per channel.
__global__ void foldUpdateKernel(const double* __restrict__ matrix, std::size_t nodes, const double* __restrict__ p,
                                 const double* __restrict__ q, double* __restrict__ x, double* __restrict__ r,
                                 double* __restrict__ z, FoldScalars* sc)
{
    if (sc->done) return;
    const std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    double rr[3] = {0, 0, 0}, rz[3] = {0, 0, 0};
    if (i < nodes)
        for (int a = 0; a < 3; ++a) {
            const double alpha = sc->pq[a] > 0 ? sc->rz[a] / sc->pq[a] : 0.0;
            const std::size_t k = i * 3 + a;
            x[k] += alpha * p[k];
            r[k] -= alpha * q[k];
            z[k] = r[k] / matrix[i * 27 + 13];
            rr[a] = r[k] * r[k];
            rz[a] = r[k] * z[k];
        }
    addToSums(rr[0], rr[1], rr[2], sc->rr);
    addToSums(rz[0], rz[1], rz[2], sc->rzNew);
}

// The convergence test and the next direction's weight; the sums of the next iteration cleared.
__global__ void foldScalarsKernel(FoldScalars* sc)
{
    if (sc->done) return;
    ++sc->iterations;
    bool done = true;
    for (int a = 0; a < 3; ++a) done = done && sc->rr[a] <= sc->tolerance2 * fmax(sc->bNorm[a], 1e-300);
    for (int a = 0; a < 3; ++a) {
        sc->beta[a] = sc->rz[a] > 0 ? sc->rzNew[a] / sc->rz[a] : 0.0;
        sc->rz[a] = sc->rzNew[a];
        sc->pq[a] = sc->rr[a] = sc->rzNew[a] = 0;
    }
    sc->done = done ? 1 : 0;
}

// p = z + beta p.
__global__ void foldDirectionKernel(const double* __restrict__ z, std::size_t nodes, double* __restrict__ p,
                                    const FoldScalars* sc)
{
    if (sc->done) return;
    const std::size_t k = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (k < 3 * nodes) p[k] = z[k] + sc->beta[k % 3] * p[k];
}

// buildDisplacementLut's entropic map (color_map.cpp) at nodes[w], a warp per node: the
// largest exponent, then the weights' sums (in another order than the host's).
struct LatticeBox {
    int size;
    double lo[3], step[3];
};

__global__ void entropicLatticeKernel(const std::uint32_t* __restrict__ nodes, std::size_t count, LatticeBox box,
                                      const float* __restrict__ yx, const float* __restrict__ yy,
                                      const float* __restrict__ yz, const float* __restrict__ logW, int cols,
                                      float factor, float* __restrict__ out)
{
    const std::size_t w = (static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x) / 32;
    const int lane = static_cast<int>(threadIdx.x & 31);
    if (w >= count) return;
    const std::uint32_t node = nodes[w], s = static_cast<std::uint32_t>(box.size);
    const float x0 = static_cast<float>(box.lo[0] + (node / (s * s)) * box.step[0]);
    const float x1 = static_cast<float>(box.lo[1] + ((node / s) % s) * box.step[1]);
    const float x2 = static_cast<float>(box.lo[2] + (node % s) * box.step[2]);
    float best = -3.0e38f;
    for (int j = lane; j < cols; j += 32) {
        const float d0 = x0 - yx[j], d1 = x1 - yy[j], d2 = x2 - yz[j];
        best = fmaxf(best, logW[j] - factor * (d0 * d0 + d1 * d1 + d2 * d2));
    }
    for (int o = 16; o > 0; o >>= 1) best = fmaxf(best, __shfl_xor_sync(0xffffffffu, best, o));
    float sum = 0, t0 = 0, t1 = 0, t2 = 0;
    for (int j = lane; j < cols; j += 32) {
        const float d0 = x0 - yx[j], d1 = x1 - yy[j], d2 = x2 - yz[j];
        const float wgt = color_detail::fastExpNegative(logW[j] - factor * (d0 * d0 + d1 * d1 + d2 * d2) - best);
        sum += wgt;
        t0 += wgt * yx[j];
        t1 += wgt * yy[j];
        t2 += wgt * yz[j];
    }
    for (int o = 16; o > 0; o >>= 1) {
        sum += __shfl_xor_sync(0xffffffffu, sum, o);
        t0 += __shfl_xor_sync(0xffffffffu, t0, o);
        t1 += __shfl_xor_sync(0xffffffffu, t1, o);
        t2 += __shfl_xor_sync(0xffffffffu, t2, o);
    }
    if (lane == 0) {
        out[3 * w] = t0 / sum - x0;
        out[3 * w + 1] = t1 / sum - x1;
        out[3 * w + 2] = t2 / sum - x2;
    }
}

template <typename Sample>
__global__ void composeKernel(ComposeParams prm, const float* __restrict__ colors, const Sample* __restrict__ source,
                              const float* __restrict__ coef, const float* __restrict__ lut,
                              const float* __restrict__ encode, Sample* __restrict__ out)
{
    const int x = blockIdx.x * blockDim.x + threadIdx.x;
    const int y = blockIdx.y;
    if (x >= prm.width || y >= prm.height) return;
    const std::size_t p = static_cast<std::size_t>(y) * prm.width + x;
    const float* c = colors + 3 * p;
    float d[3];
    displacementAt(prm, x, y, c, coef, lut, d);
    float rgb[3];
    color_detail::composeLinear(prm.space, prm.strength, prm.keepL, prm.gamut, c, d, rgb);
    Sample* o = out + p * prm.outChannels;
    for (int k = 0; k < 3; ++k)
        o[k] = static_cast<Sample>(color_detail::srgbEncode(encode, rgb[k]) * prm.maxValue + 0.5f);
    if (prm.outChannels == 4)
        o[3] = prm.copyAlpha ? source[p * 4 + 3] : static_cast<Sample>(prm.maxValue);
}

// Pinned host memory that grows on demand and is kept between calls.
class Staging {
public:
    ~Staging()
    {
        if (m_data) cudaFreeHost(m_data);
    }
    std::uint8_t* ensure(std::size_t bytes)
    {
        if (bytes > m_capacity) {
            if (m_data) cudaFreeHost(m_data);
            m_data = nullptr;
            m_capacity = 0;
            void* p = nullptr;
            UOT_CUDA_CHECK(cudaMallocHost(&p, bytes));
            m_data = static_cast<std::uint8_t*>(p);
            m_capacity = bytes;
        }
        return m_data;
    }

private:
    std::uint8_t* m_data = nullptr;
    std::size_t m_capacity = 0;
};

constexpr std::size_t kChunkBytes = std::size_t(4) << 20;  // overlap granularity of the host copies and transfers
constexpr int kFoldCheckEvery = 8;  // conjugate-gradient iterations queued between two looks at the done flag

}  // namespace

struct ColorMapper::Impl {
    int device = 0;
    // High priority: the mapping of an image goes ahead of long solver kernels
    // sharing the device (the batched recolor engine solves the next group while
    // it maps the images of the last one).
    Stream stream{detail::highestStreamPriority()};
    DeviceBuffer<float> decode8, decode16, encode;
    DeviceBuffer<std::uint8_t> pixels, output;
    DeviceBuffer<float> colors, lowColors, lowGuide, coef, lut, packed, packedMean, scratch, coefRaw,
        samples;
    DeviceBuffer<double> foldMatrix, foldRhs, foldX, foldR, foldZ, foldP, foldQ;
    DeviceBuffer<FoldScalars> foldScalars;
    LatticeSweeps sweeps;
    DeviceBuffer<float> entropicColumns, entropicOut;  // grown only (sizes vary from look to look)
    DeviceBuffer<std::uint32_t> entropicNodes;
    Staging foldFlags;                                         // pinned: the done flags read back between chunks
    detail::Event foldChecked[2]{detail::Event(false, true), detail::Event(false, true)};
    ColorMapper::FoldIterations lastFold;
    DeviceBuffer<float> rangePartial;
    DeviceBuffer<unsigned long long> histogram;
    int lowWidth = 0, lowHeight = 0, lowSubsample = 0;  // of the block means on the device
    Staging upStage, downStage;
    // Recorded at the end of each call's work: the host thread sleeps on it instead of
    // spinning a core while the device works (a batch maps on many threads at once).
    detail::Event idle{false, true};
    bool hasSource = false;
    int width = 0, height = 0, channels = 3, depth = 8;
    WorkingSpace space = WorkingSpace::Lab;
    double setSourceSeconds = 0, composeSeconds = 0;
};

namespace {

// Blocks the calling thread, without spinning, until the device has done the work queued so far on m's stream.
void waitIdle(ColorMapper::Impl& m)
{
    UOT_CUDA_CHECK(cudaEventRecord(m.idle.get(), m.stream.get()));
    UOT_CUDA_CHECK(cudaEventSynchronize(m.idle.get()));
}

// Device buffers, pinned staging and tables of mappers that were destroyed, kept
// for the next mapper of the same device in this process (a batch or a
// benchmark creates one pipeline per image: allocating and pinning about 300 MB
// again each time would cost tens of milliseconds).
std::mutex g_poolMutex;
std::vector<std::unique_ptr<ColorMapper::Impl>>& pool()
{
    static std::vector<std::unique_ptr<ColorMapper::Impl>> p;
    return p;
}

}  // namespace

ColorMapper::ColorMapper(int device)
{
    const std::string reason = unavailableReason();
    if (!reason.empty()) throw Error(ErrorCode::Unavailable, reason);
    int count = 0;
    UOT_CUDA_CHECK(cudaGetDeviceCount(&count));
    if (device < 0 || device >= count)
        throw Error(ErrorCode::InvalidArgument, "GPU " + std::to_string(device) + " does not exist (this machine has " +
                                                    std::to_string(count) + ")");
    {
        std::lock_guard<std::mutex> lock(g_poolMutex);
        auto& p = pool();
        for (auto it = p.begin(); it != p.end(); ++it)
            if ((*it)->device == device) {
                m_impl = std::move(*it);
                p.erase(it);
                m_impl->hasSource = false;
                return;
            }
    }
    detail::DeviceGuard guard(device);
    m_impl = std::make_unique<Impl>();
    Impl& m = *m_impl;
    m.device = device;
    // The same tables as the CPU path (color_space.cpp / color_map.cpp).
    std::vector<float> t8(256), t16(65536), enc(color_detail::kSrgbEncodeSize + 2);
    for (int i = 0; i < 256; ++i) t8[i] = static_cast<float>(srgbToLinear(i / 255.0));
    for (int i = 0; i < 65536; ++i) t16[i] = static_cast<float>(srgbToLinear(i / 65535.0));
    for (int i = 0; i <= color_detail::kSrgbEncodeSize + 1; ++i)
        enc[i] = static_cast<float>(linearToSrgb(std::min(1.0, i / double(color_detail::kSrgbEncodeSize))));
    m.decode8.allocate(t8.size());
    m.decode16.allocate(t16.size());
    m.encode.allocate(enc.size());
    UOT_CUDA_CHECK(cudaMemcpy(m.decode8.get(), t8.data(), t8.size() * sizeof(float), cudaMemcpyHostToDevice));
    UOT_CUDA_CHECK(cudaMemcpy(m.decode16.get(), t16.data(), t16.size() * sizeof(float), cudaMemcpyHostToDevice));
    UOT_CUDA_CHECK(cudaMemcpy(m.encode.get(), enc.data(), enc.size() * sizeof(float), cudaMemcpyHostToDevice));
}

ColorMapper::~ColorMapper()
{
    if (!m_impl) return;
    m_impl->hasSource = false;
    try {
        std::lock_guard<std::mutex> lock(g_poolMutex);
        if (pool().size() < 2) pool().push_back(std::move(m_impl));
    } catch (...) {
        // Keeping it is an optimisation only; otherwise it is freed here.
    }
}

bool ColorMapper::hasSource() const { return m_impl && m_impl->hasSource; }
double ColorMapper::lastSetSourceSeconds() const { return m_impl ? m_impl->setSourceSeconds : 0; }
double ColorMapper::lastComposeSeconds() const { return m_impl ? m_impl->composeSeconds : 0; }
ColorMapper::FoldIterations ColorMapper::lastFoldIterations() const { return m_impl ? m_impl->lastFold : FoldIterations{}; }

LowResolution ColorMapper::setSource(const Image& source, WorkingSpace space, int subsample)
{
    validateImage(source, "source image");
    const auto start = Clock::now();
    Impl& m = *m_impl;
    detail::DeviceGuard guard(m.device);
    m.hasSource = false;
    m.lowSubsample = 0;
    cudaStream_t st = m.stream.get();
    const std::size_t n = source.pixelCount();
    const std::size_t bytes = source.byteSize();
    const std::size_t pixelBytes = static_cast<std::size_t>(source.channels) * source.bytesPerSample();
    m.pixels.ensure(bytes);
    m.colors.ensure(3 * n);
    std::uint8_t* stage = m.upStage.ensure(bytes);
    // Chunks of whole pixels: the host copy of chunk k+1 overlaps the transfer and
    // conversion of chunk k.
    const std::size_t chunkPixels = std::max<std::size_t>(1, kChunkBytes / pixelBytes);
    for (std::size_t first = 0; first < n; first += chunkPixels) {
        const std::size_t count = std::min(chunkPixels, n - first);
        const std::size_t off = first * pixelBytes, len = count * pixelBytes;
        std::memcpy(stage + off, source.data.data() + off, len);
        UOT_CUDA_CHECK(cudaMemcpyAsync(m.pixels.get() + off, stage + off, len, cudaMemcpyHostToDevice, st));
        if (source.depth == 16)
            convertKernel<std::uint16_t><<<blocksFor(count), kThreads, 0, st>>>(
                reinterpret_cast<const std::uint16_t*>(m.pixels.get()), source.channels, first, count, m.decode16.get(),
                space, m.colors.get());
        else
            convertKernel<std::uint8_t><<<blocksFor(count), kThreads, 0, st>>>(
                m.pixels.get(), source.channels, first, count, m.decode8.get(), space, m.colors.get());
        UOT_CUDA_CHECK_LAUNCH();
    }
    waitIdle(m);
    m.hasSource = true;
    m.width = source.width;
    m.height = source.height;
    m.channels = source.channels;
    m.depth = source.depth;
    m.space = space;
    LowResolution low = subsample >= 1 ? blockMeans(subsample) : LowResolution{};
    m.setSourceSeconds = secondsSince(start);
    return low;
}

LowResolution ColorMapper::blockMeans(int subsample)
{
    Impl& m = *m_impl;
    if (!m.hasSource) throw Error(ErrorCode::InvalidArgument, "ColorMapper::blockMeans: no source set");
    if (subsample < 1) throw Error(ErrorCode::InvalidArgument, "ColorMapper::blockMeans: subsample must be >= 1");
    detail::DeviceGuard guard(m.device);
    cudaStream_t st = m.stream.get();
    LowResolution low;
    const int s = subsample;
    low.space = m.space;
    low.subsample = s;
    low.width = (m.width + s - 1) / s;
    low.height = (m.height + s - 1) / s;
    const std::size_t nl = static_cast<std::size_t>(low.width) * low.height;
    m.lowColors.ensure(3 * nl);
    m.lowGuide.ensure(nl);
    const dim3 grid((low.width + 127) / 128, low.height);
    blockMeansKernel<<<grid, 128, 0, st>>>(m.colors.get(), m.width, m.height, s, low.width, low.height, m.space,
                                            m.lowColors.get(), m.lowGuide.get());
    UOT_CUDA_CHECK_LAUNCH();
    low.colors.resize(3 * nl);
    low.guide.resize(nl);
    UOT_CUDA_CHECK(cudaMemcpyAsync(low.colors.data(), m.lowColors.get(), 3 * nl * sizeof(float), cudaMemcpyDeviceToHost, st));
    UOT_CUDA_CHECK(cudaMemcpyAsync(low.guide.data(), m.lowGuide.get(), nl * sizeof(float), cudaMemcpyDeviceToHost, st));
    waitIdle(m);
    m.lowWidth = low.width;
    m.lowHeight = low.height;
    m.lowSubsample = s;
    return low;
}

DisplacementField ColorMapper::computeField(const DisplacementLut& lut, const MappingSettings& settings)
{
    Impl& m = *m_impl;
    if (!m.hasSource || m.lowSubsample < 1)
        throw Error(ErrorCode::InvalidArgument, "ColorMapper::computeField: no block means on the device");
    if (settings.smoothGuide != SmoothingGuide::Lightness)
        throw Error(ErrorCode::Unavailable, "ColorMapper::computeField: the color guide is fitted on the host");
    if (std::isfinite(settings.smoothMinSlope))
        throw Error(ErrorCode::Unavailable, "ColorMapper::computeField: the lightness slope floor is fitted on the host");
    if (settings.bounds.enabled)
        throw Error(ErrorCode::Unavailable, "ColorMapper::computeField: the map's bounds are fitted on the host");
    if (lut.size < 2 || lut.values.size() != 3 * std::size_t(lut.size) * lut.size * lut.size)
        throw Error(ErrorCode::InvalidArgument, "computeField: the LUT is empty or inconsistent");
    DisplacementField field;
    field.width = m.width;
    field.height = m.height;
    const int radius = smoothingRadiusPixels(settings, m.width, m.height);
    if (radius < 1) return field;
    const int s = m.lowSubsample;
    const int r = std::max(1, static_cast<int>(std::lround(static_cast<double>(radius) / s)));
    detail::DeviceGuard guard(m.device);
    cudaStream_t st = m.stream.get();
    const int wl = m.lowWidth, hl = m.lowHeight;
    const std::size_t nl = static_cast<std::size_t>(wl) * hl;
    m.lut.ensure(lut.values.size());
    UOT_CUDA_CHECK(cudaMemcpyAsync(m.lut.get(), lut.values.data(), lut.values.size() * sizeof(float), cudaMemcpyHostToDevice, st));
    m.packed.ensure(8 * nl);
    m.packedMean.ensure(8 * nl);
    m.scratch.ensure(8 * nl);
    m.coefRaw.ensure(6 * nl);
    m.coef.ensure(6 * nl);
    packGuidedKernel<<<blocksFor(nl), kThreads, 0, st>>>(m.lowColors.get(), m.lowGuide.get(), nl, m.lut.get(), lut.size,
                                                         lut.lo[0], lut.lo[1], lut.lo[2], lut.step[0], lut.step[1],
                                                         lut.step[2], m.packed.get());
    UOT_CUDA_CHECK_LAUNCH();
    const dim3 grid((wl + 127) / 128, hl);
    boxPassKernel<<<grid, 128, 0, st>>>(m.packed.get(), m.scratch.get(), wl, hl, 8, r, true);
    boxPassKernel<<<grid, 128, 0, st>>>(m.scratch.get(), m.packedMean.get(), wl, hl, 8, r, false);
    guidedCoefKernel<<<blocksFor(nl), kThreads, 0, st>>>(m.packedMean.get(), nl, settings.smoothEps, m.coefRaw.get());
    boxPassKernel<<<grid, 128, 0, st>>>(m.coefRaw.get(), m.scratch.get(), wl, hl, 6, r, true);
    boxPassKernel<<<grid, 128, 0, st>>>(m.scratch.get(), m.coef.get(), wl, hl, 6, r, false);
    UOT_CUDA_CHECK_LAUNCH();
    field.coefficients.resize(6 * nl);
    UOT_CUDA_CHECK(cudaMemcpyAsync(field.coefficients.data(), m.coef.get(), 6 * nl * sizeof(float), cudaMemcpyDeviceToHost, st));
    waitIdle(m);
    field.smoothed = true;
    field.subsample = s;
    field.lowWidth = wl;
    field.lowHeight = hl;
    return field;
}

namespace {

// The displacement source of a composition or a sample (the smoothed field or the
// LUT), checked against the kept source and uploaded; fills its part of prm.
void uploadDisplacement(ColorMapper::Impl& m, const DisplacementLut& lut, const DisplacementField& field,
                        ComposeParams& prm, cudaStream_t st)
{
    if (field.smoothed && (field.width != m.width || field.height != m.height))
        throw Error(ErrorCode::InvalidArgument, "composeMapped: the field was computed for another image size");
    if (!field.smoothed && (lut.size < 2 || lut.values.size() != 3 * std::size_t(lut.size) * lut.size * lut.size))
        throw Error(ErrorCode::InvalidArgument, "compose: the LUT is empty or inconsistent");
    prm.space = m.space;
    prm.width = m.width;
    prm.height = m.height;
    prm.smoothed = field.smoothed;
    prm.colorGuided = field.colorGuided;
    if (field.smoothed) {
        const std::size_t len = field.colorGuided ? 12 : 6;
        if (field.coefficients.size() != len * static_cast<std::size_t>(field.lowWidth) * field.lowHeight)
            throw Error(ErrorCode::InvalidArgument, "compose: the field's coefficients do not match its size");
        prm.subsample = field.subsample;
        prm.lowWidth = field.lowWidth;
        prm.lowHeight = field.lowHeight;
        m.coef.ensure(field.coefficients.size());
        UOT_CUDA_CHECK(cudaMemcpyAsync(m.coef.get(), field.coefficients.data(), field.coefficients.size() * sizeof(float),
                                       cudaMemcpyHostToDevice, st));
    } else {
        prm.lutSize = lut.size;
        for (int a = 0; a < 3; ++a) prm.lo[a] = lut.lo[a], prm.step[a] = lut.step[a];
        m.lut.ensure(lut.values.size());
        UOT_CUDA_CHECK(cudaMemcpyAsync(m.lut.get(), lut.values.data(), lut.values.size() * sizeof(float),
                                       cudaMemcpyHostToDevice, st));
    }
}

}  // namespace

namespace {

// The transferred colours on the grid of `step` into m.samples (sampleMappedColors' layout); their count.
std::size_t sampleOnDevice(ColorMapper::Impl& m, const DisplacementLut& lut, const DisplacementField& field, int step,
                           cudaStream_t st)
{
    if (!m.hasSource) throw Error(ErrorCode::InvalidArgument, "ColorMapper::sampleMapped: no source set");
    if (step < 1) throw Error(ErrorCode::InvalidArgument, "sampleMappedColors: invalid size or step");
    ComposeParams prm{};
    uploadDisplacement(m, lut, field, prm, st);
    const int cols = (m.width + step - 1) / step, rows = (m.height + step - 1) / step;
    const std::size_t n = static_cast<std::size_t>(cols) * rows;
    m.samples.ensure(3 * n);
    sampleMappedKernel<<<dim3((cols + 127) / 128, rows), 128, 0, st>>>(prm, m.colors.get(), m.coef.get(), m.lut.get(),
                                                                     step, cols, m.samples.get());
    UOT_CUDA_CHECK_LAUNCH();
    return n;
}

}  // namespace

std::vector<float> ColorMapper::sampleMapped(const DisplacementLut& lut, const DisplacementField& field, int step)
{
    Impl& m = *m_impl;
    detail::DeviceGuard guard(m.device);
    cudaStream_t st = m.stream.get();
    const std::size_t n = 3 * sampleOnDevice(m, lut, field, step, st);
    std::vector<float> out(n);
    UOT_CUDA_CHECK(cudaMemcpyAsync(out.data(), m.samples.get(), n * sizeof(float), cudaMemcpyDeviceToHost, st));
    waitIdle(m);
    return out;
}

ChannelQuantiles ColorMapper::sampledQuantiles(const DisplacementLut& lut, const DisplacementField& field, int step,
                                               int levels, int bins)
{
    if (levels < 2 || bins < 1)
        throw Error(ErrorCode::InvalidArgument, "ColorMapper::sampledQuantiles: levels must be >= 2 and bins >= 1");
    Impl& m = *m_impl;
    detail::DeviceGuard guard(m.device);
    cudaStream_t st = m.stream.get();
    const std::size_t n = sampleOnDevice(m, lut, field, step, st);
    const unsigned blocks = std::max(1u, std::min(blocksFor(n), 512u));
    m.rangePartial.ensure(6 * static_cast<std::size_t>(blocks));
    channelRangeKernel<<<blocks, kThreads, 0, st>>>(m.samples.get(), n, m.rangePartial.get());
    UOT_CUDA_CHECK_LAUNCH();
    std::vector<float> partial(6 * static_cast<std::size_t>(blocks));
    UOT_CUDA_CHECK(cudaMemcpyAsync(partial.data(), m.rangePartial.get(), partial.size() * sizeof(float),
                                   cudaMemcpyDeviceToHost, st));
    waitIdle(m);
    float lo[3], hi[3];
    for (int c = 0; c < 3; ++c) {
        lo[c] = partial[c], hi[c] = partial[3 + c];
        for (unsigned b = 1; b < blocks; ++b)
            lo[c] = std::min(lo[c], partial[6 * b + c]), hi[c] = std::max(hi[c], partial[6 * b + 3 + c]);
    }
    HistogramRange range{};
    for (int c = 0; c < 3; ++c) range.lo[c] = lo[c], range.width[c] = (static_cast<double>(hi[c]) - lo[c]) / bins;
    const std::size_t cells = 3 * static_cast<std::size_t>(bins);
    m.histogram.ensure(cells);
    UOT_CUDA_CHECK(cudaMemsetAsync(m.histogram.get(), 0, cells * sizeof(unsigned long long), st));
    const std::size_t shared = static_cast<std::size_t>(bins) * sizeof(unsigned int);
    if (shared > 48 * 1024) throw Error(ErrorCode::InvalidArgument, "sampledQuantiles: at most 12288 bins on the device");
    channelHistogramKernel<<<dim3(std::max(1u, std::min(blocksFor(n), 256u)), 3), kThreads, shared, st>>>(
        m.samples.get(), n, range, bins, m.histogram.get());
    UOT_CUDA_CHECK_LAUNCH();
    std::vector<unsigned long long> counts(cells);
    UOT_CUDA_CHECK(cudaMemcpyAsync(counts.data(), m.histogram.get(), cells * sizeof(unsigned long long),
                                   cudaMemcpyDeviceToHost, st));
    waitIdle(m);
    ChannelQuantiles out;
    for (int c = 0; c < 3; ++c) {
        std::vector<double> histogram(static_cast<std::size_t>(bins), 0.0);
        if (hi[c] > lo[c])
            for (int b = 0; b < bins; ++b) histogram[static_cast<std::size_t>(b)] = static_cast<double>(counts[c * bins + b]);
        out.q[c] = quantilesFromHistogram(lo[c], hi[c], histogram, static_cast<double>(n), levels);
    }
    return out;
}

DisplacementLut ColorMapper::foldLattice(const DisplacementLut& prior, const DisplacementField& field, int step,
                                         const LatticeFieldFit& weights)
{
    Impl& m = *m_impl;
    if (!m.hasSource) throw Error(ErrorCode::InvalidArgument, "ColorMapper::foldLattice: no source set");
    const std::size_t nodes = static_cast<std::size_t>(prior.size) * prior.size * prior.size;
    if (!field.smoothed || prior.size < 2 || prior.values.size() != 3 * nodes)
        throw Error(ErrorCode::InvalidArgument, "ColorMapper::foldLattice: needs a smoothed field and a full prior lattice");
    if (step < 1) throw Error(ErrorCode::InvalidArgument, "ColorMapper::foldLattice: the sample step must be >= 1");
    detail::DeviceGuard guard(m.device);
    cudaStream_t st = m.stream.get();
    ComposeParams prm{};
    uploadDisplacement(m, prior, field, prm, st);
    FoldLattice lat{};
    lat.size = prior.size;
    for (int a = 0; a < 3; ++a) {
        lat.lo[a] = prior.lo[a];
        lat.hi[a] = prior.lo[a] + (prior.size - 1) * prior.step[a];  // look_lattice.cpp's cube domain
    }
    const std::size_t matrixBytes = 27 * nodes * sizeof(double), vectorBytes = 3 * nodes * sizeof(double);
    m.foldMatrix.ensure(27 * nodes);
    m.foldRhs.ensure(3 * nodes);
    UOT_CUDA_CHECK(cudaMemsetAsync(m.foldMatrix.get(), 0, matrixBytes, st));
    UOT_CUDA_CHECK(cudaMemsetAsync(m.foldRhs.get(), 0, vectorBytes, st));
    const int cols = (m.width + step - 1) / step, rows = (m.height + step - 1) / step;
    foldEquationsKernel<<<dim3((cols + 127) / 128, rows), 128, 0, st>>>(prm, m.colors.get(), m.coef.get(), step, cols, lat,
                                                                      m.foldMatrix.get(), m.foldRhs.get());
    UOT_CUDA_CHECK_LAUNCH();
    // The regularisers on the host (a lattice-sized pass; look_fit.cpp's one definition).
    LookNormalEquations eq;
    eq.matrix.resize(27 * nodes);
    eq.rhs.resize(3 * nodes);
    eq.samples = static_cast<std::size_t>(cols) * rows;
    waitIdle(m);  // before the copies to pageable memory
    UOT_CUDA_CHECK(cudaMemcpyAsync(eq.matrix.data(), m.foldMatrix.get(), matrixBytes, cudaMemcpyDeviceToHost, st));
    UOT_CUDA_CHECK(cudaMemcpyAsync(eq.rhs.data(), m.foldRhs.get(), vectorBytes, cudaMemcpyDeviceToHost, st));
    eq = latticeFoldSystem(prior, std::move(eq), weights);
    UOT_CUDA_CHECK(cudaMemcpyAsync(m.foldMatrix.get(), eq.matrix.data(), matrixBytes, cudaMemcpyHostToDevice, st));
    UOT_CUDA_CHECK(cudaMemcpyAsync(m.foldRhs.get(), eq.rhs.data(), vectorBytes, cudaMemcpyHostToDevice, st));
    // The conjugate gradients from the prior.
    std::vector<double> x(prior.values.begin(), prior.values.end());
    for (DeviceBuffer<double>* b : {&m.foldX, &m.foldR, &m.foldZ, &m.foldP, &m.foldQ}) b->ensure(3 * nodes);
    m.foldScalars.ensure(1);
    FoldScalars start{};
    start.tolerance2 = kFoldTolerance * kFoldTolerance;
    UOT_CUDA_CHECK(cudaMemcpyAsync(m.foldX.get(), x.data(), vectorBytes, cudaMemcpyHostToDevice, st));
    UOT_CUDA_CHECK(cudaMemcpyAsync(m.foldScalars.get(), &start, sizeof start, cudaMemcpyHostToDevice, st));
    const unsigned nodeBlocks = blocksFor(nodes);
    FoldScalars* sc = m.foldScalars.get();
    foldMultiplyKernel<<<nodeBlocks, kThreads, 0, st>>>(m.foldMatrix.get(), prior.size, m.foldX.get(), m.foldQ.get(), sc);
    foldStartKernel<<<nodeBlocks, kThreads, 0, st>>>(m.foldMatrix.get(), m.foldRhs.get(), nodes, m.foldQ.get(),
                                                     m.foldR.get(), m.foldZ.get(), m.foldP.get(), sc);
    // In chunks of kFoldCheckEvery iterations: each chunk's done flag comes back while the
    // next chunk runs, and no chunk is queued after the one that saw the convergence (the
    // kernels of a chunk queued past it return at once).
    int* flags = reinterpret_cast<int*>(m.foldFlags.ensure(3 * sizeof(int)));
    int launched = 0;
    for (int chunk = 0; launched < kFoldIterations; ++chunk) {
        const int count = std::min(kFoldCheckEvery, kFoldIterations - launched);
        for (int iteration = 0; iteration < count; ++iteration) {
            foldMultiplyKernel<<<nodeBlocks, kThreads, 0, st>>>(m.foldMatrix.get(), prior.size, m.foldP.get(),
                                                                m.foldQ.get(), sc);
            foldDotKernel<<<nodeBlocks, kThreads, 0, st>>>(m.foldP.get(), m.foldQ.get(), nodes, sc);
            foldUpdateKernel<<<nodeBlocks, kThreads, 0, st>>>(m.foldMatrix.get(), nodes, m.foldP.get(), m.foldQ.get(),
                                                              m.foldX.get(), m.foldR.get(), m.foldZ.get(), sc);
            foldScalarsKernel<<<1, 1, 0, st>>>(sc);
            foldDirectionKernel<<<blocksFor(3 * nodes), kThreads, 0, st>>>(m.foldZ.get(), nodes, m.foldP.get(), sc);
        }
        UOT_CUDA_CHECK_LAUNCH();
        launched += count;
        const int slot = chunk % 2;
        UOT_CUDA_CHECK(cudaMemcpyAsync(flags + slot, &sc->done, sizeof(int), cudaMemcpyDeviceToHost, st));
        UOT_CUDA_CHECK(cudaEventRecord(m.foldChecked[slot].get(), st));
        if (chunk == 0) continue;
        UOT_CUDA_CHECK(cudaEventSynchronize(m.foldChecked[1 - slot].get()));
        if (flags[1 - slot]) break;
    }
    UOT_CUDA_CHECK(cudaMemcpyAsync(flags + 2, &sc->iterations, sizeof(int), cudaMemcpyDeviceToHost, st));
    waitIdle(m);  // before the copy to pageable memory
    UOT_CUDA_CHECK(cudaMemcpyAsync(x.data(), m.foldX.get(), vectorBytes, cudaMemcpyDeviceToHost, st));
    m.lastFold = {flags[2], launched};
    DisplacementLut out = prior;
    for (std::size_t i = 0; i < x.size(); ++i) out.values[i] = std::isfinite(x[i]) ? static_cast<float>(x[i]) : prior.values[i];
    return out;
}

bool ColorMapper::entropicLattice(DisplacementLut& lut, const std::vector<std::size_t>& nodes, const float* yx,
                                  const float* yy, const float* yz, const float* logW, std::size_t cols, float factor)
{
    const std::size_t lattice = static_cast<std::size_t>(lut.size) * lut.size * lut.size;
    if (lut.size < 2 || lut.values.size() != 3 * lattice || lattice > 0xffffffffu || cols == 0 || cols > 0x7fffffff)
        throw Error(ErrorCode::InvalidArgument, "ColorMapper::entropicLattice: a lattice and reference colours needed");
    if (nodes.empty()) return true;
    Impl& m = *m_impl;
    detail::DeviceGuard guard(m.device);
    cudaStream_t st = m.stream.get();
    std::vector<std::uint32_t> at(nodes.size());
    for (std::size_t k = 0; k < nodes.size(); ++k) {
        if (nodes[k] >= lattice) throw Error(ErrorCode::InvalidArgument, "ColorMapper::entropicLattice: node outside the lattice");
        at[k] = static_cast<std::uint32_t>(nodes[k]);
    }
    // Allocated once for the whole lattice (and palettes of up to 4096 colours): freeing a
    // device buffer would wait for every stream's work.
    const auto grow = [](auto& buffer, std::size_t count, std::size_t capacity) {
        if (buffer.size() < count) buffer.allocate(std::max(count, capacity));
    };
    grow(m.entropicNodes, at.size(), lattice);
    grow(m.entropicColumns, 4 * cols, 4 * std::size_t(4096));
    grow(m.entropicOut, 3 * at.size(), 3 * lattice);
    UOT_CUDA_CHECK(cudaMemcpyAsync(m.entropicNodes.get(), at.data(), at.size() * sizeof(std::uint32_t),
                                   cudaMemcpyHostToDevice, st));
    const float* columns[4] = {yx, yy, yz, logW};
    for (int k = 0; k < 4; ++k)
        UOT_CUDA_CHECK(cudaMemcpyAsync(m.entropicColumns.get() + k * cols, columns[k], cols * sizeof(float),
                                       cudaMemcpyHostToDevice, st));
    LatticeBox box{};
    box.size = lut.size;
    for (int a = 0; a < 3; ++a) box.lo[a] = lut.lo[a], box.step[a] = lut.step[a];
    const float* dc = m.entropicColumns.get();
    const std::size_t threads = 32 * at.size();
    entropicLatticeKernel<<<static_cast<unsigned>((threads + kThreads - 1) / kThreads), kThreads, 0, st>>>(
        m.entropicNodes.get(), at.size(), box, dc, dc + cols, dc + 2 * cols, dc + 3 * cols, static_cast<int>(cols), factor,
        m.entropicOut.get());
    UOT_CUDA_CHECK_LAUNCH();
    std::vector<float> out(3 * at.size());
    waitIdle(m);  // before the copy to pageable memory (see LatticeSweeps::run)
    UOT_CUDA_CHECK(cudaMemcpyAsync(out.data(), m.entropicOut.get(), out.size() * sizeof(float), cudaMemcpyDeviceToHost, st));
    for (std::size_t k = 0; k < at.size(); ++k)
        for (int c = 0; c < 3; ++c) lut.values[3 * static_cast<std::size_t>(at[k]) + c] = out[3 * k + c];
    return true;
}

bool ColorMapper::lipschitzSweeps(float* values, std::size_t nodes, int first, const double* bound,
                                  const std::vector<LatticeEdge>& edges)
{
    Impl& m = *m_impl;
    detail::DeviceGuard guard(m.device);
    return m.sweeps.run(values, nodes, first, bound, edges, m.stream.get(), m.idle.get());
}

void ColorMapper::compose(const DisplacementLut& lut, const DisplacementField& field, const MappingSettings& settings,
                          Image& result)
{
    Impl& m = *m_impl;
    if (!m.hasSource) throw Error(ErrorCode::InvalidArgument, "ColorMapper::compose: no source set");
    if (result.width != m.width || result.height != m.height || (result.channels != 3 && result.channels != 4))
        throw Error(ErrorCode::InvalidArgument, "compose: the result must have the source's size and 3 or 4 channels");
    validateImage(result, "result");
    const auto start = Clock::now();
    detail::DeviceGuard guard(m.device);
    cudaStream_t st = m.stream.get();

    ComposeParams prm{};
    uploadDisplacement(m, lut, field, prm, st);
    prm.strength = static_cast<float>(settings.strength);
    prm.keepL = settings.preserveLuminance;
    prm.gamut = settings.gamut;
    prm.srcChannels = m.channels;
    prm.outChannels = result.channels;
    prm.copyAlpha = result.channels == 4 && m.channels == 4 && m.depth == result.depth;
    prm.maxValue = result.depth == 16 ? 65535.0f : 255.0f;
    const std::size_t bytes = result.byteSize();
    m.output.ensure(bytes);
    const dim3 grid((m.width + 127) / 128, m.height);
    if (result.depth == 16) {
        if (prm.copyAlpha || m.depth == 16)
            composeKernel<std::uint16_t><<<grid, 128, 0, st>>>(
                prm, m.colors.get(), reinterpret_cast<const std::uint16_t*>(m.pixels.get()), m.coef.get(), m.lut.get(),
                m.encode.get(), reinterpret_cast<std::uint16_t*>(m.output.get()));
        else {
            prm.copyAlpha = false;
            composeKernel<std::uint16_t><<<grid, 128, 0, st>>>(prm, m.colors.get(), nullptr, m.coef.get(), m.lut.get(),
                                                                m.encode.get(),
                                                                reinterpret_cast<std::uint16_t*>(m.output.get()));
        }
    } else {
        const std::uint8_t* src = m.depth == 8 ? m.pixels.get() : nullptr;
        if (!src) prm.copyAlpha = false;
        composeKernel<std::uint8_t><<<grid, 128, 0, st>>>(prm, m.colors.get(), src, m.coef.get(), m.lut.get(),
                                                           m.encode.get(), m.output.get());
    }
    UOT_CUDA_CHECK_LAUNCH();
    // Download in chunks; the host copy out of the pinned buffer of chunk k
    // overlaps the transfer of chunk k+1.
    std::uint8_t* stage = m.downStage.ensure(bytes);
    const std::size_t chunks = (bytes + kChunkBytes - 1) / kChunkBytes;
    std::vector<cudaEvent_t> done(chunks, nullptr);
    struct EventList {
        std::vector<cudaEvent_t>& e;
        ~EventList()
        {
            for (cudaEvent_t x : e)
                if (x) cudaEventDestroy(x);
        }
    } guardEvents{done};
    for (std::size_t k = 0; k < chunks; ++k) {
        const std::size_t off = k * kChunkBytes, len = std::min(kChunkBytes, bytes - off);
        UOT_CUDA_CHECK(cudaMemcpyAsync(stage + off, m.output.get() + off, len, cudaMemcpyDeviceToHost, st));
        UOT_CUDA_CHECK(cudaEventCreateWithFlags(&done[k], cudaEventDisableTiming | cudaEventBlockingSync));
        UOT_CUDA_CHECK(cudaEventRecord(done[k], st));
    }
    for (std::size_t k = 0; k < chunks; ++k) {
        const std::size_t off = k * kChunkBytes, len = std::min(kChunkBytes, bytes - off);
        UOT_CUDA_CHECK(cudaEventSynchronize(done[k]));
        std::memcpy(result.data.data() + off, stage + off, len);
    }
    m.composeSeconds = secondsSince(start);
}

}  // namespace uot::gpu
