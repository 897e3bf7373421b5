#include "bench/quality/artifact_metrics.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "bench/quality/quality_metrics.h"
#include "core/color/color_space.h"
#include "core/color/image_gradient.h"

namespace uot::quality {

namespace {

// Resamples n input samples (stride `stride` apart, 3 channels) to m outputs by area
// averaging: output k covers input [k n / m, (k + 1) n / m), partial samples weighted.
void areaResample(const float* in, std::size_t stride, int n, float* out, std::size_t outStride, int m)
{
    const double scale = static_cast<double>(n) / m;
    for (int k = 0; k < m; ++k) {
        const double a = k * scale, b = (k + 1) * scale;
        double s[3] = {0, 0, 0}, wsum = 0;
        for (int i = static_cast<int>(std::floor(a)); i < n && i < b; ++i) {
            const double w = std::min<double>(b, i + 1) - std::max<double>(a, i);
            if (w <= 0) continue;
            for (int c = 0; c < 3; ++c) s[c] += w * in[i * stride + c];
            wsum += w;
        }
        for (int c = 0; c < 3; ++c) out[k * outStride + c] = static_cast<float>(s[c] / wsum);
    }
}

}  // namespace

std::vector<float> scaledSrgb(const Image& img, int longSide, int& width, int& height)
{
    const Image c = rgb8(img);
    const int w = c.width, h = c.height;
    const double f = std::min(1.0, static_cast<double>(longSide) / std::max(w, h));
    width = std::max(1, static_cast<int>(std::lround(w * f)));
    height = std::max(1, static_cast<int>(std::lround(h * f)));
    std::vector<float> full(c.pixelCount() * 3);
    for (std::size_t k = 0; k < full.size(); ++k) full[k] = c.data[k];
    std::vector<float> rows(static_cast<std::size_t>(width) * h * 3);  // scaled along x
    for (int y = 0; y < h; ++y)
        areaResample(&full[3 * static_cast<std::size_t>(y) * w], 3, w, &rows[3 * static_cast<std::size_t>(y) * width], 3, width);
    std::vector<float> out(static_cast<std::size_t>(width) * height * 3);
    for (int x = 0; x < width; ++x)
        areaResample(&rows[3 * static_cast<std::size_t>(x)], 3 * static_cast<std::size_t>(width), h,
                     &out[3 * static_cast<std::size_t>(x)], 3 * static_cast<std::size_t>(width), height);
    return out;
}

AnalysisImage analysisImage(const Image& img, const ArtifactSettings& settings)
{
    AnalysisImage a;
    std::vector<float> srgb = scaledSrgb(img, settings.longSide, a.width, a.height);
    a.lab.resize(srgb.size());
    for (std::size_t p = 0; p < srgb.size() / 3; ++p) {
        double rgb[3], lab[3];
        for (int c = 0; c < 3; ++c) rgb[c] = srgbToLinear(srgb[3 * p + c] / 255.0);
        linearRgbToSpace(WorkingSpace::Lab, rgb, lab);
        for (int c = 0; c < 3; ++c) a.lab[3 * p + c] = static_cast<float>(lab[c]);
    }
    gaussianBlur3(a.lab, a.width, a.height, settings.sigma);
    return a;
}

Artifacts measureArtifacts(const AnalysisImage& source, const AnalysisImage& result, const ArtifactSettings& settings,
                           std::vector<unsigned char>* mask)
{
    if (source.width != result.width || source.height != result.height || source.lab.size() != result.lab.size())
        throw std::invalid_argument("measureArtifacts: the source and the result differ in size");
    const int w = source.width, h = source.height;
    std::vector<float> g[2][3][2];  // [image][channel][x, y]
    for (int c = 0; c < 3; ++c) {
        sobel(source.lab, w, h, c, g[0][c][0], g[0][c][1]);
        sobel(result.lab, w, h, c, g[1][c][0], g[1][c][1]);
    }
    Artifacts a;
    const std::size_t n = static_cast<std::size_t>(w) * h;
    std::size_t blotches = 0, flips = 0, casts = 0;
    double drift = 0;
    if (mask) mask->assign(n, 0);
    for (std::size_t p = 0; p < n; ++p) {
        const auto chromaGradient = [&](int i) {
            return std::sqrt(double(g[i][1][0][p]) * g[i][1][0][p] + double(g[i][1][1][p]) * g[i][1][1][p] +
                             double(g[i][2][0][p]) * g[i][2][0][p] + double(g[i][2][1][p]) * g[i][2][1][p]);
        };
        if (chromaGradient(1) > settings.blotchGain * chromaGradient(0) + settings.blotchOffset) {
            ++blotches;
            if (mask) (*mask)[p] |= 1;
        }
        const double sx = g[0][0][0][p], sy = g[0][0][1][p];
        if (std::hypot(sx, sy) > settings.flipMinGradient) {
            ++a.gradientPixels;
            if (sx * g[1][0][0][p] + sy * g[1][0][1][p] < 0) {
                ++flips;
                if (mask) (*mask)[p] |= 2;
            }
        }
        const double cs = std::hypot(source.lab[3 * p + 1], source.lab[3 * p + 2]);
        if (cs < settings.neutralChroma) {
            ++a.neutralPixels;
            const double gain = std::max(0.0, std::hypot(result.lab[3 * p + 1], result.lab[3 * p + 2]) - cs);
            drift += gain;
            if (gain > settings.castChroma) ++casts;
        }
    }
    a.blotch = 100.0 * static_cast<double>(blotches) / static_cast<double>(n);
    a.flip = a.gradientPixels ? 100.0 * static_cast<double>(flips) / static_cast<double>(a.gradientPixels) : 0.0;
    a.neutralDrift = a.neutralPixels ? drift / static_cast<double>(a.neutralPixels) : 0.0;
    a.neutralCast = a.neutralPixels ? 100.0 * static_cast<double>(casts) / static_cast<double>(a.neutralPixels) : 0.0;
    return a;
}

Artifacts measureArtifacts(const Image& source, const Image& result, const ArtifactSettings& settings)
{
    if (source.width != result.width || source.height != result.height)
        throw std::invalid_argument("measureArtifacts: the source and the result differ in size");
    return measureArtifacts(analysisImage(source, settings), analysisImage(result, settings), settings);
}

}  // namespace uot::quality
