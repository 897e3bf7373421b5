#pragma once
// The guided filter of He, Sun and Tang (2013) on raw float buffers: box means
// over (2r+1)^2 windows clipped to the image, per-window linear models of the
// filtered field in the guide, and the models averaged over the windows that
// contain each pixel. Two guides:
//   - gray (one channel): per window p = a I + b, a = cov(I, p) / (var(I) + eps);
//   - colour (three channels, He et al.'s colour guide): per window p = A I + b
//     with A = cov(p, I) (Sigma_I + eps U)^-1, one 3x3 symmetric positive
//     definite solve per window (Eigen LDLT).
// The colour guide lets the field follow any colour edge, not only lightness
// edges, and keeps a displacement that varies with colour inside a window.
// Fast variant: subsample > 1 computes the models on block means and
// interpolates them bilinearly (He & Sun 2015).

#include <array>
#include <vector>

namespace uot {

// Box mean over the (2r+1)^2 window clipped to the image, for `channels`
// interleaved channels (double accumulation). out may not alias in.
void boxMean(const float* in, float* out, int width, int height, int channels, int radius, int threads);

// Gray guide: the box means of the per-window coefficients, per pixel
// [mean a (channels), mean b (channels)], so that q = mean_a * I + mean_b.
// guide: width x height; field: width x height x channels (interleaved).
// minSlope (channels values, or null): a lower bound on each window's a per channel;
// a window whose a is raised keeps b = mean(p) - a mean(I), so that its model still
// passes through the window's means.
std::vector<float> grayGuidedCoefficients(const float* guide, const float* field, int width, int height, int channels,
                                          int radius, double eps, int threads, const double* minSlope = nullptr);

// The guide's share of the colour-guided filter: the box means of the guide and
// the inverse of every window's regularised 3x3 covariance (one LDLT each), kept
// for any number of fields on the same guide (the recolor pipeline refits its field
// a few times for the residual match). guide: width x height x 3 (copied); eps and
// channelEps as for colorGuidedCoefficients.
class ColorGuideWindows {
public:
    ColorGuideWindows(const float* guide, int width, int height, int radius, double eps, int threads,
                      const std::array<double, 3>* channelEps = nullptr);
    // colorGuidedCoefficients() of `field` (width x height x channels, interleaved).
    std::vector<float> coefficients(const float* field, int channels, int threads) const;

private:
    int m_width, m_height, m_radius;
    std::vector<float> m_guide;     // 3 per pixel
    std::vector<float> m_mean;      // the window mean of the guide, 3 per pixel
    std::vector<double> m_inverse;  // (Sigma + eps)^-1, 9 per pixel (column-major)
};

// Colour guide: the box means of the per-window models, per pixel
// [A (channels x 3, row-major), b (channels)], so that q_c = sum_j A_cj I_j + b_c.
// guide: width x height x 3 (interleaved); eps in guide units^2, added to the
// diagonal of every window's 3x3 guide covariance. channelEps (or null): one
// regulariser per guide channel in place of eps (a larger one on a channel keeps
// variations along it that are small against its square root out of the models).
std::vector<float> colorGuidedCoefficients(const float* guide, const float* field, int width, int height, int channels,
                                           int radius, double eps, int threads,
                                           const std::array<double, 3>* channelEps = nullptr);

// Filters the `channels`-channel field (width x height, interleaved floats) in
// place, guided by the single-channel guide. radius in pixels, eps in guide
// units^2, subsample 1 = exact filter. Throws uot::Error(InvalidArgument) for a
// bad size, radius, eps or subsample.
void guidedFilter(const float* guide, float* field, int width, int height, int channels, int radius, double eps,
                  int subsample, int threads = 0);

// The same with a three-channel guide (width x height x 3, interleaved).
void colorGuidedFilter(const float* guide, float* field, int width, int height, int channels, int radius, double eps,
                       int subsample, int threads = 0);

// Block means over subsample x subsample blocks (partial blocks at the right and
// bottom edges) of a width x height x channels buffer: out is
// ceil(width / s) x ceil(height / s) x channels.
void blockMeans(const float* in, float* out, int width, int height, int channels, int subsample, int threads);

}  // namespace uot
