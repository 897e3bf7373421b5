#include "bench/quality/quality_metrics.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <random>

#include "core/color/color_space.h"

namespace uot::quality {

Image rgb8(const Image& img)
{
    if (img.channels == 3 && img.depth == 8) return img;
    Image out = Image::allocate(img.width, img.height, 3, 8);
    for (std::size_t p = 0; p < img.pixelCount(); ++p)
        for (int c = 0; c < 3; ++c) {
            const int sc = img.channels == 1 ? 0 : c;
            const std::size_t k = p * img.channels + sc;
            out.data[3 * p + c] = img.depth == 16 ? static_cast<std::uint8_t>(img.samples16()[k] / 257) : img.data[k];
        }
    return out;
}

std::vector<float> toLab(const Image& img)
{
    std::vector<float> lab(img.pixelCount() * 3);
    imageToSpace(img, WorkingSpace::Lab, lab.data(), 0);
    return lab;
}

namespace {

Image fromLinearRgb(const std::vector<double>& rgb, int w, int h)
{
    Image out = Image::allocate(w, h, 3, 8);
    for (std::size_t k = 0; k < rgb.size(); ++k)
        out.data[k] = static_cast<std::uint8_t>(std::lround(std::clamp(linearToSrgb(std::clamp(rgb[k], 0.0, 1.0)), 0.0, 1.0) * 255));
    return out;
}

// Mean and per-channel variance of n interleaved 3-vectors.
void meanVariance(const std::vector<float>& x, std::size_t n, Eigen::Array3d& mean, Eigen::Array3d& var)
{
    const auto m = Eigen::Map<const Eigen::Matrix<float, 3, Eigen::Dynamic>>(x.data(), 3, static_cast<Eigen::Index>(n)).cast<double>();
    mean = m.rowwise().mean().array();
    var = (m.colwise() - mean.matrix()).array().square().rowwise().mean();
}

// f(A) for symmetric A through its eigen-decomposition.
template <typename F>
Eigen::Matrix3d symmetricFunction(const Eigen::Matrix3d& a, F f)
{
    const Eigen::SelfAdjointEigenSolver<Eigen::Matrix3d> es(a);
    return es.eigenvectors() * es.eigenvalues().unaryExpr(f).asDiagonal() * es.eigenvectors().transpose();
}

}  // namespace

std::array<double, 3> channelStd(const std::vector<float>& x, std::size_t n)
{
    Eigen::Array3d mean, var;
    meanVariance(x, n, mean, var);
    return {std::sqrt(var[0]), std::sqrt(var[1]), std::sqrt(var[2])};
}

Image reinhard(const Image& src, const Image& ref)
{
    const std::vector<float> s = toLab(src), r = toLab(ref);
    Eigen::Array3d ms, vs, mr, vr;
    meanVariance(s, src.pixelCount(), ms, vs);
    meanVariance(r, ref.pixelCount(), mr, vr);
    const Eigen::Array3d gain = (vr / vs.max(1e-12)).sqrt();
    std::vector<double> rgb(src.pixelCount() * 3);
    for (std::size_t p = 0; p < src.pixelCount(); ++p) {
        const Eigen::Array3d x(s[3 * p], s[3 * p + 1], s[3 * p + 2]);
        const Eigen::Array3d lab = (x - ms) * gain + mr;
        spaceToLinearRgb(WorkingSpace::Lab, lab.data(), &rgb[3 * p]);
    }
    return fromLinearRgb(rgb, src.width, src.height);
}

Image histogramMatching(const Image& src, const Image& ref)
{
    Image out = src;
    for (int c = 0; c < 3; ++c) {
        std::array<double, 256> hs{}, hr{};
        for (std::size_t p = 0; p < src.pixelCount(); ++p) hs[src.data[3 * p + c]] += 1;
        for (std::size_t p = 0; p < ref.pixelCount(); ++p) hr[ref.data[3 * p + c]] += 1;
        std::array<double, 256> cs{}, cr{};
        double a = 0, b = 0;
        for (int v = 0; v < 256; ++v) {
            a += hs[v] / src.pixelCount();
            b += hr[v] / ref.pixelCount();
            cs[v] = a, cr[v] = b;
        }
        std::array<std::uint8_t, 256> map{};
        int j = 0;
        for (int v = 0; v < 256; ++v) {
            while (j < 255 && cr[j] < cs[v]) ++j;
            map[v] = static_cast<std::uint8_t>(j);
        }
        for (std::size_t p = 0; p < src.pixelCount(); ++p) out.data[3 * p + c] = map[src.data[3 * p + c]];
    }
    return out;
}

void colourMoments(const Image& img, Eigen::Vector3d& mean, Eigen::Matrix3d& covariance)
{
    const Eigen::Index n = static_cast<Eigen::Index>(img.pixelCount());
    const Eigen::Matrix3Xd x =
        Eigen::Map<const Eigen::Matrix<std::uint8_t, 3, Eigen::Dynamic>>(img.data.data(), 3, n).cast<double>() / 255.0;
    mean = x.rowwise().mean();
    const Eigen::Matrix3Xd centred = x.colwise() - mean;
    covariance = centred * centred.transpose() / static_cast<double>(n);
}

Eigen::Matrix3d mklMatrix(const Eigen::Matrix3d& S, const Eigen::Matrix3d& R)
{
    const Eigen::Matrix3d sHalf = symmetricFunction(S, [](double x) { return std::sqrt(std::max(x, 0.0)); });
    const Eigen::Matrix3d sInvHalf = symmetricFunction(S, [](double x) { return 1 / std::sqrt(std::max(x, 1e-12)); });
    const Eigen::Matrix3d mid = symmetricFunction(sHalf * R * sHalf, [](double x) { return std::sqrt(std::max(x, 0.0)); });
    return sInvHalf * mid * sInvHalf;
}

Image mkl(const Image& src, const Image& ref)
{
    Eigen::Vector3d ms, mr;
    Eigen::Matrix3d S, R;
    colourMoments(src, ms, S);
    colourMoments(ref, mr, R);
    S.diagonal().array() += 1e-6;  // regularise flat images
    R.diagonal().array() += 1e-6;
    const Eigen::Matrix3d T = mklMatrix(S, R);
    Image out = src;
    for (std::size_t p = 0; p < src.pixelCount(); ++p) {
        const Eigen::Vector3d x(src.data[3 * p] / 255.0, src.data[3 * p + 1] / 255.0, src.data[3 * p + 2] / 255.0);
        const Eigen::Vector3d y = T * (x - ms) + mr;
        for (int i = 0; i < 3; ++i)
            out.data[3 * p + i] = static_cast<std::uint8_t>(std::lround(std::clamp(y[i], 0.0, 1.0) * 255));
    }
    return out;
}

namespace {

// An equal-size regular subsample (m of the n colours of x) as the columns of a matrix.
Eigen::Matrix3Xd regularSample(const std::vector<float>& x, std::size_t n, std::size_t m)
{
    Eigen::Matrix3Xd s(3, static_cast<Eigen::Index>(m));
    for (std::size_t k = 0; k < m; ++k) {
        const std::size_t p = k * n / m;
        s.col(static_cast<Eigen::Index>(k)) = Eigen::Vector3d(x[3 * p], x[3 * p + 1], x[3 * p + 2]);
    }
    return s;
}

// The squared 1-D W2 distance between the projections of the columns of sa and sb on v.
double projectedSquared(const Eigen::Matrix3Xd& sa, const Eigen::Matrix3Xd& sb, const Eigen::Vector3d& v)
{
    Eigen::VectorXd pa = sa.transpose() * v, pb = sb.transpose() * v;
    std::sort(pa.begin(), pa.end());
    std::sort(pb.begin(), pb.end());
    return (pa - pb).squaredNorm() / static_cast<double>(pa.size());
}

}  // namespace

double slicedWasserstein(const std::vector<float>& a, std::size_t na, const std::vector<float>& b, std::size_t nb,
                         int directions, std::size_t maxSamples)
{
    const std::size_t m = std::min<std::size_t>({na, nb, maxSamples});
    if (m == 0) return 0;
    const Eigen::Matrix3Xd sa = regularSample(a, na, m), sb = regularSample(b, nb, m);
    std::mt19937 rng(12345);
    std::normal_distribution<double> g(0, 1);
    double total = 0;
    for (int d = 0; d < directions; ++d) {
        Eigen::Vector3d v(g(rng), g(rng), g(rng));
        v.normalize();
        total += projectedSquared(sa, sb, v);
    }
    return std::sqrt(total / directions);
}

std::array<double, 3> axisWasserstein(const std::vector<float>& a, std::size_t na, const std::vector<float>& b,
                                      std::size_t nb, std::size_t maxSamples)
{
    const std::size_t m = std::min<std::size_t>({na, nb, maxSamples});
    std::array<double, 3> out{0, 0, 0};
    if (m == 0) return out;
    const Eigen::Matrix3Xd sa = regularSample(a, na, m), sb = regularSample(b, nb, m);
    for (int c = 0; c < 3; ++c) out[static_cast<std::size_t>(c)] = std::sqrt(projectedSquared(sa, sb, Eigen::Vector3d::Unit(c)));
    return out;
}

double structureTerm(const std::vector<float>& a, const std::vector<float>& b, int w, int h, int r, double c3)
{
    // Integral images of x, y, xx, yy, xy on the first channel.
    const std::size_t W = static_cast<std::size_t>(w) + 1;
    std::vector<double> I[5];
    for (auto& v : I) v.assign(W * (h + 1), 0.0);
    for (int y = 0; y < h; ++y)
        for (int x = 0; x < w; ++x) {
            const double u = a[3 * (static_cast<std::size_t>(y) * w + x)], v = b[3 * (static_cast<std::size_t>(y) * w + x)];
            const double vals[5] = {u, v, u * u, v * v, u * v};
            for (int k = 0; k < 5; ++k)
                I[k][(y + 1) * W + x + 1] = vals[k] + I[k][y * W + x + 1] + I[k][(y + 1) * W + x] - I[k][y * W + x];
        }
    const double area = static_cast<double>((2 * r + 1) * (2 * r + 1));
    double sum = 0;
    std::size_t count = 0;
    for (int y = r; y < h - r; ++y)
        for (int x = r; x < w - r; ++x) {
            const std::size_t y0 = y - r, y1 = y + r + 1, x0 = x - r, x1 = x + r + 1;
            double m[5];
            for (int k = 0; k < 5; ++k) m[k] = (I[k][y1 * W + x1] - I[k][y0 * W + x1] - I[k][y1 * W + x0] + I[k][y0 * W + x0]) / area;
            const double vx = std::max(0.0, m[2] - m[0] * m[0]), vy = std::max(0.0, m[3] - m[1] * m[1]);
            const double cxy = m[4] - m[0] * m[1];
            sum += (cxy + c3) / (std::sqrt(vx * vy) + c3);
            ++count;
        }
    return count ? sum / count : 1.0;
}

}  // namespace uot::quality
