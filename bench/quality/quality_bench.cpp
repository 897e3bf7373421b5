// Colour transfer quality benchmark: every ordered pair (source, reference) of
// the images in a folder, recolored by the UOT pipeline at its default
// settings and by three classical baselines:
//   - Reinhard et al. 2001: per-channel mean/std transfer in CIELAB;
//   - per-channel histogram matching in sRGB (CDF matching, 8-bit);
//   - Pitie & Kokaram 2007 linear Monge-Kantorovich (MKL) in sRGB:
//       x -> T (x - mu_s) + mu_r,  T = S^-1/2 (S^1/2 R S^1/2)^1/2 S^-1/2.
// Metrics per result:
//   palette distance: sliced Wasserstein-2 distance in CIELAB between the result's
//     and the reference's pixel colours (equal-size regular subsamples, 64 fixed
//     directions), in Lab units; lower is closer to the reference palette.
//   structure: the structure term of SSIM, (s_xy + C3) / (s_x s_y + C3), on CIELAB L
//     between source and result over 7x7 windows, C3 = (0.03 * 100)^2 / 2, averaged
//     over the image; 1 = local structure kept.
// Writes before/after strips of a few pairs (source | reference | Reinhard | histogram
// | MKL | UOT) into --strips DIR and prints a Markdown table.
#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <map>
#include <random>
#include <string>
#include <vector>

#include <opencv2/core.hpp>
#include <opencv2/imgcodecs.hpp>
#include <opencv2/imgproc.hpp>

#include "app/cli/arg_parser.h"
#include "app/cli/recolor_options.h"
#include "core/color/color_space.h"
#include "core/imageio/image_io.h"
#include "core/pipeline/recolor_pipeline.h"

namespace fs = std::filesystem;
using namespace uot;

namespace {

std::vector<float> toLab(const Image& img)
{
    std::vector<float> lab(img.pixelCount() * 3);
    imageToSpace(img, WorkingSpace::Lab, lab.data(), 0);
    return lab;
}

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

Image fromLinearRgb(const std::vector<double>& rgb, int w, int h)
{
    Image out = Image::allocate(w, h, 3, 8);
    for (std::size_t k = 0; k < rgb.size(); ++k)
        out.data[k] = static_cast<std::uint8_t>(std::lround(std::clamp(linearToSrgb(std::clamp(rgb[k], 0.0, 1.0)), 0.0, 1.0) * 255));
    return out;
}

// --- baselines -------------------------------------------------------------

Image reinhard(const Image& src, const Image& ref)
{
    const std::vector<float> s = toLab(src), r = toLab(ref);
    double ms[3] = {0, 0, 0}, mr[3] = {0, 0, 0}, vs[3] = {0, 0, 0}, vr[3] = {0, 0, 0};
    const std::size_t ns = src.pixelCount(), nr = ref.pixelCount();
    for (std::size_t p = 0; p < ns; ++p)
        for (int c = 0; c < 3; ++c) ms[c] += s[3 * p + c] / static_cast<double>(ns);
    for (std::size_t p = 0; p < nr; ++p)
        for (int c = 0; c < 3; ++c) mr[c] += r[3 * p + c] / static_cast<double>(nr);
    for (std::size_t p = 0; p < ns; ++p)
        for (int c = 0; c < 3; ++c) vs[c] += std::pow(s[3 * p + c] - ms[c], 2) / static_cast<double>(ns);
    for (std::size_t p = 0; p < nr; ++p)
        for (int c = 0; c < 3; ++c) vr[c] += std::pow(r[3 * p + c] - mr[c], 2) / static_cast<double>(nr);
    std::vector<double> rgb(ns * 3);
    for (std::size_t p = 0; p < ns; ++p) {
        double lab[3];
        for (int c = 0; c < 3; ++c)
            lab[c] = (s[3 * p + c] - ms[c]) * std::sqrt(vr[c] / std::max(vs[c], 1e-12)) + mr[c];
        spaceToLinearRgb(WorkingSpace::Lab, lab, &rgb[3 * p]);
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

using Mat3 = std::array<std::array<double, 3>, 3>;

// Symmetric 3x3 eigen-decomposition by cyclic Jacobi rotations: A = V diag(w) V^T.
void eigenSym(Mat3 a, std::array<double, 3>& w, Mat3& v)
{
    v = {{{1, 0, 0}, {0, 1, 0}, {0, 0, 1}}};
    for (int sweep = 0; sweep < 50; ++sweep) {
        double off = std::abs(a[0][1]) + std::abs(a[0][2]) + std::abs(a[1][2]);
        if (off < 1e-15) break;
        for (int p = 0; p < 2; ++p)
            for (int q = p + 1; q < 3; ++q) {
                if (std::abs(a[p][q]) < 1e-18) continue;
                const double theta = (a[q][q] - a[p][p]) / (2 * a[p][q]);
                const double t = (theta >= 0 ? 1 : -1) / (std::abs(theta) + std::sqrt(theta * theta + 1));
                const double c = 1 / std::sqrt(t * t + 1), s = t * c;
                for (int k = 0; k < 3; ++k) {  // A = J^T A J
                    const double akp = a[k][p], akq = a[k][q];
                    a[k][p] = c * akp - s * akq;
                    a[k][q] = s * akp + c * akq;
                }
                for (int k = 0; k < 3; ++k) {
                    const double apk = a[p][k], aqk = a[q][k];
                    a[p][k] = c * apk - s * aqk;
                    a[q][k] = s * apk + c * aqk;
                }
                for (int k = 0; k < 3; ++k) {
                    const double vkp = v[k][p], vkq = v[k][q];
                    v[k][p] = c * vkp - s * vkq;
                    v[k][q] = s * vkp + c * vkq;
                }
            }
    }
    for (int k = 0; k < 3; ++k) w[k] = a[k][k];
}

Mat3 mul(const Mat3& a, const Mat3& b)
{
    Mat3 r{};
    for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j)
            for (int k = 0; k < 3; ++k) r[i][j] += a[i][k] * b[k][j];
    return r;
}

// f(A) for symmetric A through its eigenvalues.
template <typename F>
Mat3 matFunction(const Mat3& a, F f)
{
    std::array<double, 3> w;
    Mat3 v;
    eigenSym(a, w, v);
    Mat3 r{};
    for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j)
            for (int k = 0; k < 3; ++k) r[i][j] += v[i][k] * f(w[k]) * v[j][k];
    return r;
}

void meanCov(const Image& img, double mu[3], Mat3& cov)
{
    const std::size_t n = img.pixelCount();
    for (int c = 0; c < 3; ++c) mu[c] = 0;
    for (std::size_t p = 0; p < n; ++p)
        for (int c = 0; c < 3; ++c) mu[c] += img.data[3 * p + c] / 255.0 / static_cast<double>(n);
    cov = Mat3{};
    for (std::size_t p = 0; p < n; ++p)
        for (int i = 0; i < 3; ++i)
            for (int j = 0; j < 3; ++j)
                cov[i][j] += (img.data[3 * p + i] / 255.0 - mu[i]) * (img.data[3 * p + j] / 255.0 - mu[j]) / static_cast<double>(n);
    for (int i = 0; i < 3; ++i) cov[i][i] += 1e-6;  // regularise flat images
}

Image mkl(const Image& src, const Image& ref)
{
    double ms[3], mr[3];
    Mat3 S, R;
    meanCov(src, ms, S);
    meanCov(ref, mr, R);
    const Mat3 sHalf = matFunction(S, [](double x) { return std::sqrt(std::max(x, 0.0)); });
    const Mat3 sInvHalf = matFunction(S, [](double x) { return 1 / std::sqrt(std::max(x, 1e-12)); });
    const Mat3 mid = matFunction(mul(mul(sHalf, R), sHalf), [](double x) { return std::sqrt(std::max(x, 0.0)); });
    const Mat3 T = mul(mul(sInvHalf, mid), sInvHalf);
    Image out = src;
    for (std::size_t p = 0; p < src.pixelCount(); ++p) {
        double x[3];
        for (int c = 0; c < 3; ++c) x[c] = src.data[3 * p + c] / 255.0 - ms[c];
        for (int i = 0; i < 3; ++i) {
            double y = mr[i];
            for (int k = 0; k < 3; ++k) y += T[i][k] * x[k];
            out.data[3 * p + i] = static_cast<std::uint8_t>(std::lround(std::clamp(y, 0.0, 1.0) * 255));
        }
    }
    return out;
}

// --- metrics ----------------------------------------------------------------

double slicedWasserstein(const std::vector<float>& a, std::size_t na, const std::vector<float>& b, std::size_t nb)
{
    const std::size_t m = std::min<std::size_t>({na, nb, 20000});
    const auto sample = [m](const std::vector<float>& x, std::size_t n) {
        std::vector<float> s(3 * m);
        for (std::size_t k = 0; k < m; ++k) {
            const std::size_t p = k * n / m;
            std::copy(&x[3 * p], &x[3 * p] + 3, &s[3 * k]);
        }
        return s;
    };
    const std::vector<float> sa = sample(a, na), sb = sample(b, nb);
    std::mt19937 rng(12345);
    std::normal_distribution<double> g(0, 1);
    double total = 0;
    const int directions = 64;
    std::vector<double> pa(m), pb(m);
    for (int d = 0; d < directions; ++d) {
        double v[3] = {g(rng), g(rng), g(rng)};
        const double norm = std::sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]);
        for (double& x : v) x /= norm;
        for (std::size_t k = 0; k < m; ++k) {
            pa[k] = v[0] * sa[3 * k] + v[1] * sa[3 * k + 1] + v[2] * sa[3 * k + 2];
            pb[k] = v[0] * sb[3 * k] + v[1] * sb[3 * k + 1] + v[2] * sb[3 * k + 2];
        }
        std::sort(pa.begin(), pa.end());
        std::sort(pb.begin(), pb.end());
        double s = 0;
        for (std::size_t k = 0; k < m; ++k) s += (pa[k] - pb[k]) * (pa[k] - pb[k]);
        total += s / m;
    }
    return std::sqrt(total / directions);
}

double structureTerm(const std::vector<float>& a, const std::vector<float>& b, int w, int h)
{
    const int r = 3;
    const double c3 = std::pow(0.03 * 100, 2) / 2;
    // Integral images of x, y, xx, yy, xy on L.
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
    double sum = 0;
    std::size_t count = 0;
    for (int y = r; y < h - r; ++y)
        for (int x = r; x < w - r; ++x) {
            const std::size_t y0 = y - r, y1 = y + r + 1, x0 = x - r, x1 = x + r + 1;
            double m[5];
            for (int k = 0; k < 5; ++k) m[k] = (I[k][y1 * W + x1] - I[k][y0 * W + x1] - I[k][y1 * W + x0] + I[k][y0 * W + x0]) / 49.0;
            const double vx = std::max(0.0, m[2] - m[0] * m[0]), vy = std::max(0.0, m[3] - m[1] * m[1]);
            const double cxy = m[4] - m[0] * m[1];
            sum += (cxy + c3) / (std::sqrt(vx * vy) + c3);
            ++count;
        }
    return count ? sum / count : 1.0;
}

cv::Mat toBgrMat(const Image& img, int height)
{
    const Image c = rgb8(img);
    cv::Mat m(c.height, c.width, CV_8UC3, const_cast<std::uint8_t*>(c.data.data()));
    cv::Mat bgr, out;
    cv::cvtColor(m, bgr, cv::COLOR_RGB2BGR);
    cv::resize(bgr, out, cv::Size(static_cast<int>(std::lround(c.width * static_cast<double>(height) / c.height)), height), 0, 0,
               cv::INTER_AREA);
    return out;
}

// The name of a method as the strips show it.
std::string captionOf(const std::string& method)
{
    if (method == "reinhard") return "Reinhard";
    if (method == "histogram") return "histogram";
    if (method == "mkl") return "MKL";
    return "UOT (ours)";
}

// `tile` with a white band above it carrying `text`.
cv::Mat captioned(const cv::Mat& tile, const std::string& text)
{
    cv::Mat out;
    cv::copyMakeBorder(tile, out, 26, 0, 0, 0, cv::BORDER_CONSTANT, cv::Scalar(255, 255, 255));
    cv::putText(out, text, cv::Point(6, 19), cv::FONT_HERSHEY_SIMPLEX, 0.6, cv::Scalar(0, 0, 0), 1, cv::LINE_AA);
    return out;
}

}  // namespace

int main(int argc, char** argv)
{
    using namespace uot::cli;
    ArgParser parser("uot_quality_bench [--images DIR] [--strips DIR] [recolor options]",
                     "Colour transfer quality over all ordered pairs of the images in DIR.");
    parser.addOption("images", "DIR", "folder of test images", "resources/samples");
    parser.addOption("strips", "DIR", "write before/after strips here (empty = none)", "");
    parser.addOption("strip-pairs", "N", "number of pairs to draw as strips", "4");
    parser.addOption("limit", "N", "only the first N pairs (0 = all)", "0");
    parser.addFlag("per-pair", "print every pair's figures");
    addRecolorOptions(parser);
    try {
        parser.parse(std::vector<std::string>(argv + 1, argv + argc));
        if (parser.helpRequested()) {
            std::printf("%s", parser.helpText().c_str());
            return 0;
        }
        const RecolorCliSettings cli = readRecolorOptions(parser);
        std::vector<std::string> files;
        for (const auto& e : fs::directory_iterator(parser.value("images")))
            if (isSupportedImageExtension(e.path().string())) files.push_back(e.path().string());
        std::sort(files.begin(), files.end());
        std::vector<Image> images;
        for (const auto& f : files) images.push_back(rgb8(readImage(f)));
        const std::vector<std::string> methods = {"reinhard", "histogram", "mkl", "uot"};
        std::map<std::string, double> swSum, stSum, timeSum;
        int pairs = 0;
        const int limit = parser.integer("limit");
        const int stripPairs = parser.integer("strip-pairs");
        const std::string strips = parser.value("strips");
        if (!strips.empty()) fs::create_directories(strips);
        std::printf("%zu images, %zu ordered pairs; UOT: space %s, palette %d, eps %g, tau_b %g, smooth %s r=%g e=%g\n",
                    images.size(), images.size() * (images.size() - 1), toString(cli.recolor.space).c_str(),
                    cli.recolor.palette.size, cli.recolor.transport.eps, cli.recolor.transport.adherence,
                    cli.recolor.mapping.smooth ? "on" : "off", cli.recolor.mapping.smoothRadius, cli.recolor.mapping.smoothEps);
        for (std::size_t i = 0; i < images.size(); ++i)
            for (std::size_t j = 0; j < images.size(); ++j) {
                if (i == j) continue;
                if (limit > 0 && pairs >= limit) continue;
                const Image& src = images[i];
                const Image& ref = images[j];
                const std::vector<float> srcLab = toLab(src), refLab = toLab(ref);
                std::map<std::string, Image> results;
                for (const std::string& m : methods) {
                    const auto t0 = std::chrono::steady_clock::now();
                    Image out;
                    if (m == "reinhard") out = reinhard(src, ref);
                    else if (m == "histogram") out = histogramMatching(src, ref);
                    else if (m == "mkl") out = mkl(src, ref);
                    else {
                        RecolorPipeline pipeline(cli.recolor);
                        pipeline.setSource(src);
                        pipeline.setReference(ref);
                        out = pipeline.run();
                    }
                    const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
                    const std::vector<float> outLab = toLab(out);
                    const double sw = slicedWasserstein(outLab, out.pixelCount(), refLab, ref.pixelCount());
                    const double st = structureTerm(srcLab, outLab, src.width, src.height);
                    swSum[m] += sw;
                    stSum[m] += st;
                    timeSum[m] += secs;
                    if (parser.flag("per-pair"))
                        std::printf("  %-18s <- %-18s %-9s palette %6.2f structure %.4f  %.2f s\n",
                                    fs::path(files[i]).stem().c_str(), fs::path(files[j]).stem().c_str(), m.c_str(), sw, st, secs);
                    results[m] = std::move(out);
                }
                const int totalPairs = static_cast<int>(images.size() * (images.size() - 1));
                const int every = stripPairs > 0 ? std::max(1, totalPairs / stripPairs) : 0;
                if (!strips.empty() && every > 0 && pairs % every == 0 && pairs / every < stripPairs) {
                    const int h = 200;
                    std::vector<cv::Mat> row = {captioned(toBgrMat(src, h), "source"),
                                                captioned(toBgrMat(ref, h), "reference")};
                    for (const std::string& m : methods) row.push_back(captioned(toBgrMat(results[m], h), captionOf(m)));
                    cv::Mat strip;
                    cv::hconcat(row, strip);
                    const std::string name = (fs::path(strips) / ("quality_" + fs::path(files[i]).stem().string() + "_from_" +
                                                                   fs::path(files[j]).stem().string() + ".jpg"))
                                                 .string();
                    cv::imwrite(name, strip, {cv::IMWRITE_JPEG_QUALITY, 88});
                    std::printf("  strip: %s\n", name.c_str());
                }
                ++pairs;
            }
        std::printf("\n| method | palette distance (SW2, Lab units, lower is better) | structure (SSIM s-term on L, higher is better) | seconds per pair |\n|---|---|---|---|\n");
        for (const std::string& m : methods)
            std::printf("| %s | %.3f | %.4f | %.3f |\n", m.c_str(), swSum[m] / pairs, stSum[m] / pairs, timeSum[m] / pairs);
        double bestBaseline = 1e300;
        for (const char* m : {"reinhard", "histogram", "mkl"}) bestBaseline = std::min(bestBaseline, swSum[m] / pairs);
        std::printf("\npairs: %d; UOT palette distance / best baseline's = %.3f (target <= 0.9); UOT structure - MKL's = %+.4f "
                    "(target >= 0)\n",
                    pairs, swSum["uot"] / pairs / bestBaseline, (stSum["uot"] - stSum["mkl"]) / pairs);
    } catch (const std::exception& e) {
        std::fprintf(stderr, "uot_quality_bench: %s\n", e.what());
        return 1;
    }
    return 0;
}
