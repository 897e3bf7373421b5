#pragma once
// Colour-transfer baselines and quality metrics of the quality bench, in a
// library of their own so that tests can check them against hand-worked cases.
//   Baselines: Reinhard et al. 2001 (per-channel mean/std in CIELAB), per-channel
//   histogram matching in sRGB (8-bit CDF matching), Pitie & Kokaram 2007 linear
//   Monge-Kantorovich (MKL) in sRGB: x -> T (x - mu_s) + mu_r with
//   T = S^-1/2 (S^1/2 R S^1/2)^1/2 S^-1/2 (S, R: colour covariances).
//   Metrics: sliced Wasserstein-2 distance between two colour sets (palette
//   distance) and the structure term of SSIM on the first channel (structure).
#include <array>
#include <cstddef>
#include <vector>

#include <Eigen/Dense>

#include "core/color/image.h"

namespace uot::quality {

// 8-bit RGB copy of any image (gray expanded, 16 bit scaled, alpha dropped).
Image rgb8(const Image& img);
// CIELAB of every pixel (n x 3 floats).
std::vector<float> toLab(const Image& img);

Image reinhard(const Image& src, const Image& ref);
Image histogramMatching(const Image& src, const Image& ref);
Image mkl(const Image& src, const Image& ref);

// Mean and covariance (1/n normalisation) of the colours of an 8-bit RGB image in [0, 1].
void colourMoments(const Image& img, Eigen::Vector3d& mean, Eigen::Matrix3d& covariance);
// The MKL matrix T = S^-1/2 (S^1/2 R S^1/2)^1/2 S^-1/2 for symmetric positive definite S, R:
// the linear map with T S T = R that is symmetric positive definite.
Eigen::Matrix3d mklMatrix(const Eigen::Matrix3d& S, const Eigen::Matrix3d& R);

// Sliced Wasserstein-2 distance between the colour sets a (na x 3) and b (nb x 3):
// equal-size regular subsamples (at most `maxSamples`), `directions` fixed random
// unit directions, root of the mean squared 1-D quantile distance.
double slicedWasserstein(const std::vector<float>& a, std::size_t na, const std::vector<float>& b, std::size_t nb,
                         int directions = 64, std::size_t maxSamples = 20000);

// The 1-D W2 distance of each coordinate alone (the marginals along the three axes;
// in CIELAB: L*, a*, b*) between the same subsamples as slicedWasserstein's.
std::array<double, 3> axisWasserstein(const std::vector<float>& a, std::size_t na, const std::vector<float>& b,
                                      std::size_t nb, std::size_t maxSamples = 20000);

// The standard deviation of each coordinate of n interleaved 3-vectors (1/n normalisation).
std::array<double, 3> channelStd(const std::vector<float>& x, std::size_t n);

// Mean over (2r+1)^2 windows inside the image of the SSIM structure term
// (cov_xy + c3) / (s_x s_y + c3) on the first of the 3 interleaved channels of a and b.
double structureTerm(const std::vector<float>& a, const std::vector<float>& b, int w, int h, int r = 3,
                     double c3 = 4.5);

}  // namespace uot::quality
