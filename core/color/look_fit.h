#pragma once
// The 3-D LUT that best reproduces a rendered image (no Qt, no OpenCV).
//
// A recolor with edge-aware smoothing is not a function of the pixel's colour
// alone, so no LUT holds it exactly. The best a LUT can do is the lattice whose
// interpolation, applied to every source pixel, is closest to the rendered
// result in least squares. That is what fitCubeToImage computes:
//
//   minimise  sum_p | L(s_p) - t_p |^2                       (the rendered pixels)
//           + prior  * n * sum_n | L_n - P_n |^2              (nodes far from every pixel keep P)
//           + smooth * n * sum_(n,m neighbours) | (L_n - P_n) - (L_m - P_m) |^2
//
// where L(s) is the lattice's interpolation at source colour s (cubeStencil, the
// same weights a LUT client uses), t_p the rendered colour, P the prior lattice
// (the look's global map), and n the mean number of samples per node, so the two
// regularisers keep their meaning whatever the image size. The normal equations
// have a 27-point stencil on the lattice and are solved by conjugate gradients
// (Jacobi-preconditioned), one right-hand side per channel, from P.

#include <cstddef>
#include <vector>

#include "core/color/cube_lut.h"
#include "core/color/image.h"

namespace uot {

struct LookFitOptions {
    CubeInterpolation interpolation = CubeInterpolation::Tetrahedral;  // ffmpeg lut3d's default
    double prior = 1e-3;    // pull toward the prior lattice, per mean sample count
    double smooth = 1e-3;   // pull between neighbouring nodes, per mean sample count (equal to
                            // prior: the data's influence decays within about one node)
    std::size_t maxSamples = std::size_t(1) << 22;  // pixels used (a regular stride beyond this)
    int maxIterations = 400;
    double tolerance = 1e-7;  // conjugate gradients: relative residual
    int threads = 0;          // 0 = all cores
};

// The lattice of prior's size and domain whose interpolation at inputs[k] (domain
// units) is closest in least squares to targets[k] (any three values), k < n, with
// the regularisers above (options.maxSamples: a regular stride beyond it). The
// same fit as below on samples that are not pixels of an image (e.g. the pipeline's
// edge-aware look folded into its colour lattice). Unlike fitCubeToImage the nodes
// are not bounded. Throws uot::Error(InvalidArgument) for an inconsistent prior,
// bad options or n == 0.
CubeLut fitCubeToSamples(const float* inputs, const float* targets, std::size_t n, const CubeLut& prior,
                         const LookFitOptions& options = {});

// The data part of the fit's normal equations, accumulated by the caller (e.g. on a
// device, from pixels held there): for each node n (prior's node order) its 27
// stencil coefficients sum_k w_n(s_k) w_m(s_k) over its 3 x 3 x 3 neighbours m
// (slot (db + 1) * 9 + (dg + 1) * 3 + (dr + 1) for the neighbour at offset (dr, dg, db))
// and its right-hand side sum_k w_n(s_k) t_k, over `samples` samples.
struct LookNormalEquations {
    std::vector<double> matrix;  // nodes x 27
    std::vector<double> rhs;     // nodes x 3
    std::size_t samples = 0;
};

// The equations with the regularisers of options added: the system whose solution
// from the prior by Jacobi-preconditioned conjugate gradients (options' iterations and
// tolerance, one system per channel) fitCubeToSamples returns (e.g. solved on a device). Throws uot::Error(InvalidArgument) for an
// inconsistent prior, bad options, equations of another lattice or no samples.
LookNormalEquations regularisedNormalEquations(LookNormalEquations equations, const CubeLut& prior,
                                               const LookFitOptions& options = {});

// The lattice of prior's size and domain that best maps source to target
// (same width and height; RGB, RGBA or gray; 8 or 16 bits; values in their
// encoded units, as a LUT client sees them). Throws uot::Error(InvalidArgument)
// when the images do not match or the prior is inconsistent.
CubeLut fitCubeToImage(const Image& source, const Image& target, const CubeLut& prior,
                       const LookFitOptions& options = {});

// PSNR in dB of `lut` applied to `source` the way a LUT client does it (rounded
// to the image's code values) against `target`, over the R, G and B samples, with
// the peak at the largest code value. +inf when they are identical.
double cubePsnr(const CubeLut& lut, const Image& source, const Image& target,
                CubeInterpolation interpolation = CubeInterpolation::Tetrahedral, int threads = 0);

}  // namespace uot
