#include "core/color/guided_filter.h"

#include <algorithm>
#include <cmath>
#include <cstddef>

#include <Eigen/Dense>

#include "core/color/color_map_inline.h"
#include "core/transport/kernel_matrix.h"
#include "core/transport/uot_error.h"

namespace uot {

void boxMean(const float* in, float* out, int w, int h, int ch, int r, int threads)
{
    const std::size_t rowLen = static_cast<std::size_t>(w) * ch;
    std::vector<double> colSum(static_cast<std::size_t>(h + 1) * rowLen);
    // Vertical prefix sums per column (double: exact enough for any size here), row by
    // row over strips of columns, so that both buffers are read and written in order.
    for (std::size_t k = 0; k < rowLen; ++k) colSum[k] = 0;
    constexpr std::size_t kStrip = 512;
    const std::ptrdiff_t strips = static_cast<std::ptrdiff_t>((rowLen + kStrip - 1) / kStrip);
#pragma omp parallel for num_threads(threads) schedule(static)
    for (std::ptrdiff_t strip = 0; strip < strips; ++strip) {
        const std::size_t k0 = static_cast<std::size_t>(strip) * kStrip, k1 = std::min(rowLen, k0 + kStrip);
        for (int y = 0; y < h; ++y) {
            const float* row = in + static_cast<std::size_t>(y) * rowLen;
            const double* above = &colSum[static_cast<std::size_t>(y) * rowLen];
            double* sum = &colSum[static_cast<std::size_t>(y + 1) * rowLen];
            for (std::size_t k = k0; k < k1; ++k) sum[k] = above[k] + row[k];
        }
    }
#pragma omp parallel num_threads(threads)
    {
        std::vector<double> rowSum(static_cast<std::size_t>(w + 1) * ch);
#pragma omp for schedule(static)
        for (int y = 0; y < h; ++y) {
            const int y0 = std::max(0, y - r), y1 = std::min(h - 1, y + r);
            const double* top = &colSum[static_cast<std::size_t>(y0) * rowLen];
            const double* bottom = &colSum[static_cast<std::size_t>(y1 + 1) * rowLen];
            for (int c = 0; c < ch; ++c) rowSum[c] = 0;
            for (int x = 0; x < w; ++x)
                for (int c = 0; c < ch; ++c)
                    rowSum[static_cast<std::size_t>(x + 1) * ch + c] =
                        rowSum[static_cast<std::size_t>(x) * ch + c] + bottom[static_cast<std::size_t>(x) * ch + c] -
                        top[static_cast<std::size_t>(x) * ch + c];
            const double rows = y1 - y0 + 1;
            for (int x = 0; x < w; ++x) {
                const int x0 = std::max(0, x - r), x1 = std::min(w - 1, x + r);
                const double norm = 1.0 / (rows * (x1 - x0 + 1));
                for (int c = 0; c < ch; ++c)
                    out[static_cast<std::size_t>(y) * rowLen + static_cast<std::size_t>(x) * ch + c] = static_cast<float>(
                        (rowSum[static_cast<std::size_t>(x1 + 1) * ch + c] - rowSum[static_cast<std::size_t>(x0) * ch + c]) *
                        norm);
            }
        }
    }
}

void blockMeans(const float* in, float* out, int w, int h, int ch, int s, int threads)
{
    const int wl = (w + s - 1) / s, hl = (h + s - 1) / s;
#pragma omp parallel for num_threads(threads) schedule(static)
    for (int ly = 0; ly < hl; ++ly) {
        std::vector<double> acc(static_cast<std::size_t>(ch));
        for (int lx = 0; lx < wl; ++lx) {
            std::fill(acc.begin(), acc.end(), 0.0);
            const int y1 = std::min(h, (ly + 1) * s), x1 = std::min(w, (lx + 1) * s);
            int cnt = 0;
            for (int y = ly * s; y < y1; ++y)
                for (int x = lx * s; x < x1; ++x, ++cnt)
                    for (int c = 0; c < ch; ++c) acc[c] += in[(static_cast<std::size_t>(y) * w + x) * ch + c];
            for (int c = 0; c < ch; ++c)
                out[(static_cast<std::size_t>(ly) * wl + lx) * ch + c] = static_cast<float>(acc[c] / cnt);
        }
    }
}

std::vector<float> grayGuidedCoefficients(const float* I, const float* P, int wl, int hl, int channels, int r, double eps,
                                          int t, const double* minSlope)
{
    const std::size_t nl = static_cast<std::size_t>(wl) * hl;
    const std::size_t ch = static_cast<std::size_t>(channels);
    // Packed per pixel: [I, I*I, P_0..P_ch-1, I*P_0..I*P_ch-1]
    const std::size_t packed = 2 + 2 * ch;
    std::vector<float> in(nl * packed), mean(nl * packed);
#pragma omp parallel for num_threads(t) schedule(static)
    for (std::ptrdiff_t k = 0; k < static_cast<std::ptrdiff_t>(nl); ++k) {
        float* q = &in[static_cast<std::size_t>(k) * packed];
        const float i = I[k];
        q[0] = i;
        q[1] = i * i;
        for (std::size_t c = 0; c < ch; ++c) {
            const float p = P[static_cast<std::size_t>(k) * ch + c];
            q[2 + c] = p;
            q[2 + ch + c] = i * p;
        }
    }
    boxMean(in.data(), mean.data(), wl, hl, static_cast<int>(packed), r, t);
    const std::size_t coefLen = 2 * ch;
    std::vector<float> coef(nl * coefLen), coefMean(nl * coefLen);
#pragma omp parallel for num_threads(t) schedule(static)
    for (std::ptrdiff_t k = 0; k < static_cast<std::ptrdiff_t>(nl); ++k) {
        const float* m = &mean[static_cast<std::size_t>(k) * packed];
        float* o = &coef[static_cast<std::size_t>(k) * coefLen];
        const double var = std::max(0.0, static_cast<double>(m[1]) - static_cast<double>(m[0]) * m[0]);
        for (std::size_t c = 0; c < ch; ++c) {
            const double cov = static_cast<double>(m[2 + ch + c]) - static_cast<double>(m[0]) * m[2 + c];
            double a = cov / (var + eps);
            if (minSlope && a < minSlope[c]) a = minSlope[c];  // b below keeps the window's mean
            o[c] = static_cast<float>(a);
            o[ch + c] = static_cast<float>(m[2 + c] - a * m[0]);
        }
    }
    boxMean(coef.data(), coefMean.data(), wl, hl, static_cast<int>(coefLen), r, t);
    return coefMean;
}

ColorGuideWindows::ColorGuideWindows(const float* guide, int width, int height, int radius, double eps, int threads,
                                     const std::array<double, 3>* channelEps)
    : m_width(width), m_height(height), m_radius(radius)
{
    const std::size_t n = static_cast<std::size_t>(width) * height;
    const Eigen::Vector3d regulariser =
        channelEps ? Eigen::Vector3d((*channelEps)[0], (*channelEps)[1], (*channelEps)[2]) : Eigen::Vector3d::Constant(eps);
    m_guide.assign(guide, guide + 3 * n);
    // Box means of [I (3), I I^T upper triangle (6)].
    constexpr int kUpper[6][2] = {{0, 0}, {0, 1}, {0, 2}, {1, 1}, {1, 2}, {2, 2}};
    std::vector<float> in(n * 9), mean(n * 9);
#pragma omp parallel for num_threads(threads) schedule(static)
    for (std::ptrdiff_t k = 0; k < static_cast<std::ptrdiff_t>(n); ++k) {
        float* q = &in[static_cast<std::size_t>(k) * 9];
        const float* g = guide + 3 * k;
        for (int j = 0; j < 3; ++j) q[j] = g[j];
        for (int u = 0; u < 6; ++u) q[3 + u] = g[kUpper[u][0]] * g[kUpper[u][1]];
    }
    boxMean(in.data(), mean.data(), width, height, 9, radius, threads);
    m_mean.resize(3 * n);
    m_inverse.resize(9 * n);
#pragma omp parallel for num_threads(threads) schedule(static)
    for (std::ptrdiff_t k = 0; k < static_cast<std::ptrdiff_t>(n); ++k) {
        const float* m = &mean[static_cast<std::size_t>(k) * 9];
        const Eigen::Vector3d mu(m[0], m[1], m[2]);
        Eigen::Matrix3d sigma;
        for (int u = 0; u < 6; ++u) {
            const int i = kUpper[u][0], j = kUpper[u][1];
            sigma(i, j) = sigma(j, i) = static_cast<double>(m[3 + u]) - mu[i] * mu[j];
        }
        sigma.diagonal() += regulariser;
        // (Sigma + eps)^-1 by one LDLT of the symmetric positive definite 3x3 system.
        const Eigen::Matrix3d inverse = Eigen::LDLT<Eigen::Matrix3d>(sigma).solve(Eigen::Matrix3d::Identity());
        for (int j = 0; j < 3; ++j) m_mean[3 * static_cast<std::size_t>(k) + j] = m[j];
        Eigen::Map<Eigen::Matrix3d> stored(&m_inverse[9 * static_cast<std::size_t>(k)]);
        stored = inverse;
    }
}

std::vector<float> ColorGuideWindows::coefficients(const float* P, int channels, int t) const
{
    const std::size_t nl = static_cast<std::size_t>(m_width) * m_height;
    const std::size_t ch = static_cast<std::size_t>(channels);
    // Packed per pixel: [P (ch), P I^T (ch x 3)].
    const std::size_t packed = 4 * ch;
    std::vector<float> in(nl * packed), mean(nl * packed);
#pragma omp parallel for num_threads(t) schedule(static)
    for (std::ptrdiff_t k = 0; k < static_cast<std::ptrdiff_t>(nl); ++k) {
        float* q = &in[static_cast<std::size_t>(k) * packed];
        const float* g = &m_guide[3 * static_cast<std::size_t>(k)];
        for (std::size_t c = 0; c < ch; ++c) {
            const float p = P[static_cast<std::size_t>(k) * ch + c];
            q[c] = p;
            for (int j = 0; j < 3; ++j) q[ch + 3 * c + j] = p * g[j];
        }
    }
    boxMean(in.data(), mean.data(), m_width, m_height, static_cast<int>(packed), m_radius, t);
    const std::size_t coefLen = 4 * ch;
    std::vector<float> coef(nl * coefLen), coefMean(nl * coefLen);
#pragma omp parallel for num_threads(t) schedule(static)
    for (std::ptrdiff_t k = 0; k < static_cast<std::ptrdiff_t>(nl); ++k) {
        const float* m = &mean[static_cast<std::size_t>(k) * packed];
        float* o = &coef[static_cast<std::size_t>(k) * coefLen];
        const Eigen::Map<const Eigen::Vector3f> muf(&m_mean[3 * static_cast<std::size_t>(k)]);
        const Eigen::Vector3d mu = muf.cast<double>();
        const Eigen::Map<const Eigen::Matrix3d> inverse(&m_inverse[9 * static_cast<std::size_t>(k)]);
        for (std::size_t c = 0; c < ch; ++c) {
            const double meanP = m[c];
            const Eigen::Vector3d cov = Eigen::Vector3d(m[ch + 3 * c], m[ch + 3 * c + 1], m[ch + 3 * c + 2]) - meanP * mu;
            const Eigen::Vector3d a = inverse * cov;  // Sigma symmetric: the row of A
            for (int j = 0; j < 3; ++j) o[3 * c + j] = static_cast<float>(a[j]);
            o[3 * ch + c] = static_cast<float>(meanP - a.dot(mu));
        }
    }
    boxMean(coef.data(), coefMean.data(), m_width, m_height, static_cast<int>(coefLen), m_radius, t);
    return coefMean;
}

std::vector<float> colorGuidedCoefficients(const float* I, const float* P, int wl, int hl, int channels, int r, double eps,
                                           int t, const std::array<double, 3>* channelEps)
{
    return ColorGuideWindows(I, wl, hl, r, eps, t, channelEps).coefficients(P, channels, t);
}

namespace {

// The shared frame of both filters: block means (when subsampling), the
// coefficients at low resolution, then per pixel q = model(guide) with the
// coefficients interpolated bilinearly. guideChannels: 1 or 3.
template <typename Coefficients>
void filterWith(const float* guide, int guideChannels, float* field, int width, int height, int channels, int radius,
                double eps, int subsample, int threads, Coefficients coefficients)
{
    if (width <= 0 || height <= 0 || channels <= 0 || radius < 0 || !(eps > 0) || subsample < 1)
        throw Error(ErrorCode::InvalidArgument, "guidedFilter: invalid size, radius, eps or subsample");
    if (radius == 0) return;
    const int t = resolveThreadCount(threads);
    const int s = subsample;
    const int wl = (width + s - 1) / s, hl = (height + s - 1) / s;
    const int r = std::max(1, static_cast<int>(std::lround(static_cast<double>(radius) / s)));
    const std::size_t nl = static_cast<std::size_t>(wl) * hl;
    const std::size_t ch = static_cast<std::size_t>(channels), gch = static_cast<std::size_t>(guideChannels);
    std::vector<float> I(nl * gch), P(nl * ch);
    if (s == 1) {
        std::copy(guide, guide + nl * gch, I.begin());
        std::copy(field, field + nl * ch, P.begin());
    } else {
        blockMeans(guide, I.data(), width, height, guideChannels, s, t);
        blockMeans(field, P.data(), width, height, channels, s, t);
    }
    const std::vector<float> coefMean = coefficients(I.data(), P.data(), wl, hl, channels, r, eps, t);
    // Per channel: gch slope values, then (after all slopes) one offset.
    const std::size_t coefLen = (gch + 1) * ch;
#pragma omp parallel for num_threads(t) schedule(static)
    for (int y = 0; y < height; ++y) {
        const color_detail::Bilinear by = color_detail::bilinearAt(y, s, hl);
        std::vector<float> c(coefLen);
        for (int x = 0; x < width; ++x) {
            const color_detail::Bilinear bx = color_detail::bilinearAt(x, s, wl);
            const float* c00 = &coefMean[(static_cast<std::size_t>(by.i0) * wl + bx.i0) * coefLen];
            const float* c01 = &coefMean[(static_cast<std::size_t>(by.i0) * wl + bx.i1) * coefLen];
            const float* c10 = &coefMean[(static_cast<std::size_t>(by.i1) * wl + bx.i0) * coefLen];
            const float* c11 = &coefMean[(static_cast<std::size_t>(by.i1) * wl + bx.i1) * coefLen];
            for (std::size_t k = 0; k < coefLen; ++k)
                c[k] = (1 - by.w) * ((1 - bx.w) * c00[k] + bx.w * c01[k]) + by.w * ((1 - bx.w) * c10[k] + bx.w * c11[k]);
            const std::size_t px = static_cast<std::size_t>(y) * width + x;
            const float* g = guide + px * gch;
            for (std::size_t k = 0; k < ch; ++k) {
                float q = c[gch * ch + k];
                for (std::size_t j = 0; j < gch; ++j) q += c[gch * k + j] * g[j];
                field[px * ch + k] = q;
            }
        }
    }
}

}  // namespace

void guidedFilter(const float* guide, float* field, int width, int height, int channels, int radius, double eps,
                  int subsample, int threads)
{
    filterWith(guide, 1, field, width, height, channels, radius, eps, subsample, threads,
               [](const float* I, const float* P, int wl, int hl, int ch, int r, double e, int t) {
                   return grayGuidedCoefficients(I, P, wl, hl, ch, r, e, t);
               });
}

void colorGuidedFilter(const float* guide, float* field, int width, int height, int channels, int radius, double eps,
                       int subsample, int threads)
{
    filterWith(guide, 3, field, width, height, channels, radius, eps, subsample, threads,
               [](const float* I, const float* P, int wl, int hl, int ch, int r, double e, int t) {
                   return colorGuidedCoefficients(I, P, wl, hl, ch, r, e, t);
               });
}

}  // namespace uot
