// Colour transfer quality benchmark: ordered pairs (source, reference) of the
// images in one or more folders, recolored by the UOT pipeline (the given recolor
// settings, defaults otherwise) and by three classical baselines (Reinhard,
// histogram matching, MKL; bench/quality/quality_metrics.h), scored by palette
// distance (sliced W2 in CIELAB to the reference's pixels, lower is better) and
// structure (SSIM structure term on L between source and result, 1 = kept), and by
// the artifact measures of bench/quality/artifact_metrics.h (blotch: created colour
// edges and islands; flip: lightness bands and inversions; neutral drift: chroma
// gained by the source's greys), each as mean, worst pair and pairs over a threshold.
//
// Cross-validation split (--half): the unordered pairs {i, j}, i < j, of the sorted
// file list are numbered in order (0,1), (0,2), ..., (1,2), ...; even-numbered ones
// form the tuning half, odd-numbered ones the held-back half, both directions of a
// pair always in the same half. Settings are chosen on `--half tune` and reported
// on `--half held`.
//
// Reports per method the mean and median palette distance and mean structure; per
// baseline the median of UOT's palette-distance ratio and UOT's per-pair wins and
// losses; against the best baseline of each pair the median and the worst ratio;
// structure against MKL. Writes before/after strips of a few pairs with --strips.
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
#include "core/pipeline/look_export.h"
#include "core/pipeline/recolor_pipeline.h"
#include "bench/quality/artifact_metrics.h"
#include "bench/quality/quality_metrics.h"

namespace fs = std::filesystem;
using namespace uot;

namespace {

using namespace uot::quality;

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

// The split of the unordered pair {i, j} (i < j) of n images: true for the tuning half.
bool inTuningHalf(std::size_t i, std::size_t j, std::size_t n)
{
    if (i > j) std::swap(i, j);
    const std::size_t index = i * n - i * (i + 1) / 2 + (j - i - 1);  // position in (0,1), (0,2), ..., (1,2), ...
    return index % 2 == 0;
}

double median(std::vector<double> v)
{
    if (v.empty()) return 0;
    std::sort(v.begin(), v.end());
    const std::size_t n = v.size();
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

double mean(const std::vector<double>& v)
{
    double s = 0;
    for (double x : v) s += x;
    return v.empty() ? 0 : s / static_cast<double>(v.size());
}

// Diagnostic (--structure-parts): where the structure term on L is lost. h is the
// result's lightness as a function of the source's alone (mean result L* per 1/8 L* bin
// of the source, interpolated); the terms: the result as it is, h(L) in float, h(L) with
// the result's a*, b* through 8-bit sRGB (quantization and the gamut's clipping), and the
// share of pixels whose h(L) with the result's chroma leaves the sRGB gamut.
std::array<double, 4> structureParts(const std::vector<float>& srcLab, const std::vector<float>& outLab, int w, int h)
{
    const std::size_t n = static_cast<std::size_t>(w) * h;
    const int bins = 800;
    std::vector<double> sum(bins + 1, 0.0), weight(bins + 1, 0.0);
    const auto binOf = [&](double L) { return std::clamp(L / 100.0 * bins, 0.0, static_cast<double>(bins)); };
    for (std::size_t p = 0; p < n; ++p) {
        const double t = binOf(srcLab[3 * p]);
        const std::size_t i = std::min(static_cast<std::size_t>(t), static_cast<std::size_t>(bins - 1));
        const double f = t - static_cast<double>(i);
        sum[i] += (1 - f) * outLab[3 * p], weight[i] += 1 - f;
        sum[i + 1] += f * outLab[3 * p], weight[i + 1] += f;
    }
    std::vector<double> curve(bins + 1, 0.0);
    std::vector<std::size_t> known;
    for (std::size_t i = 0; i <= static_cast<std::size_t>(bins); ++i)
        if (weight[i] > 1e-9) curve[i] = sum[i] / weight[i], known.push_back(i);
    for (std::size_t k = 0; k + 1 < known.size(); ++k)
        for (std::size_t i = known[k] + 1; i < known[k + 1]; ++i)
            curve[i] = curve[known[k]] + (curve[known[k + 1]] - curve[known[k]]) * static_cast<double>(i - known[k]) /
                                             static_cast<double>(known[k + 1] - known[k]);
    std::vector<float> flat(3 * n, 0.0f), viaRgb(3 * n);
    Image q = Image::allocate(w, h, 3, 8);
    std::size_t outside = 0;
    for (std::size_t p = 0; p < n; ++p) {
        const double t = binOf(srcLab[3 * p]);
        const std::size_t i = std::min(static_cast<std::size_t>(t), static_cast<std::size_t>(bins - 1));
        const double L = curve[i] + (t - static_cast<double>(i)) * (curve[i + 1] - curve[i]);
        flat[3 * p] = static_cast<float>(L);
        const double lab[3] = {L, outLab[3 * p + 1], outLab[3 * p + 2]};
        double rgb[3];
        spaceToLinearRgb(WorkingSpace::Lab, lab, rgb);
        bool out = false;
        for (int c = 0; c < 3; ++c) {
            out = out || rgb[c] < -1e-3 || rgb[c] > 1 + 1e-3;
            q.data[3 * p + c] = static_cast<std::uint8_t>(std::lround(std::clamp(linearToSrgb(std::clamp(rgb[c], 0.0, 1.0)), 0.0, 1.0) * 255));
        }
        outside += out;
    }
    const std::vector<float> qLab = toLab(q);
    return {structureTerm(srcLab, outLab, w, h), structureTerm(srcLab, flat, w, h), structureTerm(srcLab, qLab, w, h),
            100.0 * static_cast<double>(outside) / static_cast<double>(n)};
}

}  // namespace

int main(int argc, char** argv)
{
    using namespace uot::cli;
    ArgParser parser("uot_quality_bench [--images DIR[,DIR...]] [--half all|tune|held] [--strips DIR] [recolor options]",
                     "Colour transfer quality over ordered pairs of the images in the folders, UOT against baselines.");
    parser.addOption("images", "DIRS", "comma-separated folders of test images", "resources/samples");
    parser.addOption("half", "all|tune|held", "which pairs: all, the tuning half or the held-back half", "all");
    parser.addOption("strips", "DIR", "write before/after strips here (empty = none)", "");
    parser.addOption("masks", "DIR", "write, per pair, UOT's result with its blotch (red) and flip (yellow) pixels marked", "");
    parser.addOption("strip-pairs", "N", "number of pairs to draw as strips", "4");
    parser.addOption("limit", "N", "only the first N pairs (0 = all)", "0");
    parser.addFlag("per-pair", "print every pair's figures");
    parser.addFlag("structure-parts", "per pair and method, the structure term of the result, of its lightness as a curve of the "
                                      "source's alone, and of that curve through 8-bit sRGB, and the % of it outside the gamut");
    parser.addFlag("axes", "also the palette distance along L*, a* and b* alone (1-D W2 of each marginal), per method");
    parser.addOption("lut-sizes", "N,M,...",
                     "per pair, the PSNR of the exported look LUT of these sizes (tetrahedral, as `uot lut` fits it) "
                     "against UOT's result (empty = none)", "33,65");
    // The map's bounds (MappingSettings::bounds; not options of `uot recolor`): to tune them here.
    const MapBounds b0;
    parser.addOption("bounds", "on|off", "the map's bounds (off: the unbounded map)", "on");
    parser.addOption("chroma-slope", "X", "bound on d(chroma displacement)/d(chroma)", std::to_string(b0.chromaSlope));
    parser.addOption("chroma-lightness-slope", "X", "bound on d(chroma displacement)/dL", std::to_string(b0.chromaLightnessSlope));
    parser.addOption("chroma-lightness-range", "X",
                     "width of the output chroma along lightness at one source chroma, per axis (Lab units; inf = none)",
                     std::to_string(b0.chromaLightnessRange));
    parser.addOption("chroma-range-radius", "X",
                     "the range holds between lightness levels that meet within X pixels of the picture at 128 px "
                     "(inf = over each whole column)",
                     std::to_string(b0.chromaRangeRadius));
    parser.addOption("lightness-slopes", "MIN,MAX", "bounds on the lightness curve's slope",
                     std::to_string(b0.lightnessMinSlope) + "," + std::to_string(b0.lightnessMaxSlope));
    parser.addOption("residual-slopes", "MIN,MAX", "bounds on the residual match's slope",
                     std::to_string(b0.residualMinSlope) + "," + std::to_string(b0.residualMaxSlope));
    parser.addOption("field-deviation", "X", "the field's largest chroma distance to the global map (Lab units)",
                     std::to_string(b0.fieldDeviation));
    parser.addOption("field-lightness-deviation", "X", "the field's largest lightness distance to the global map (L units)",
                     std::to_string(b0.fieldLightnessDeviation));
    // MappingSettings::lutFaithful and the fold's weights (not options of `uot recolor`): to compare and tune them here.
    const LatticeFieldFit f0;
    parser.addOption("fold", "on|off", "the smoothed field folded into the colour lattice (off: the field composed directly)",
                     "on");
    parser.addOption("fold-smooth", "X", "the fold's pull between neighbouring lattice nodes", std::to_string(f0.smooth));
    addRecolorOptions(parser);
    try {
        parser.parse(std::vector<std::string>(argv + 1, argv + argc));
        if (parser.helpRequested()) {
            std::printf("%s", parser.helpText().c_str());
            return 0;
        }
        RecolorCliSettings cli = readRecolorOptions(parser);
        {
            MapBounds& b = cli.recolor.mapping.bounds;
            if (parser.value("bounds") != "on" && parser.value("bounds") != "off") throw std::runtime_error("--bounds: on or off");
            b.enabled = parser.value("bounds") == "on";
            if (parser.value("fold") != "on" && parser.value("fold") != "off") throw std::runtime_error("--fold: on or off");
            cli.recolor.mapping.lutFaithful = parser.value("fold") == "on";
            cli.recolor.mapping.fold.smooth = std::stod(parser.value("fold-smooth"));
            b.chromaSlope = std::stod(parser.value("chroma-slope"));
            b.chromaLightnessSlope = std::stod(parser.value("chroma-lightness-slope"));
            b.chromaLightnessRange = std::stod(parser.value("chroma-lightness-range"));
            b.chromaRangeRadius = std::stod(parser.value("chroma-range-radius"));
            const auto pairOf = [&](const std::string& key, double& lo, double& hi) {
                const std::vector<std::string> v = uot::cli::splitList(parser.value(key));
                if (v.size() != 2) throw std::runtime_error("--" + key + ": MIN,MAX");
                lo = std::stod(v[0]), hi = std::stod(v[1]);
            };
            pairOf("lightness-slopes", b.lightnessMinSlope, b.lightnessMaxSlope);
            pairOf("residual-slopes", b.residualMinSlope, b.residualMaxSlope);
            b.fieldDeviation = std::stod(parser.value("field-deviation"));
            b.fieldLightnessDeviation = std::stod(parser.value("field-lightness-deviation"));
        }
        const std::string half = parser.value("half");
        if (half != "all" && half != "tune" && half != "held")
            throw std::runtime_error("--half must be all, tune or held (got '" + half + "')");
        std::vector<std::string> files;
        for (const std::string& dir : uot::cli::splitList(parser.value("images"))) {
            if (!fs::is_directory(dir)) throw std::runtime_error("--images: '" + dir + "' is not a folder");
            std::vector<std::string> here;
            for (const auto& e : fs::directory_iterator(dir))
                if (isSupportedImageExtension(e.path().string())) here.push_back(e.path().string());
            std::sort(here.begin(), here.end());
            files.insert(files.end(), here.begin(), here.end());
        }
        if (files.size() < 2) throw std::runtime_error("--images: need at least two images");
        std::vector<Image> images;
        for (const auto& f : files) images.push_back(rgb8(readImage(f)));
        const std::vector<std::string> methods = {"reinhard", "histogram", "mkl", "uot"};
        const std::vector<std::string> baselines = {"reinhard", "histogram", "mkl"};
        std::map<std::string, std::vector<double>> sw, st, blotch, flip, drift, cast;
        std::map<std::string, std::array<std::vector<double>, 3>> axisSw;  // with --axes
        std::map<std::string, std::vector<double>> spreadL;                // with --axes: std of L* / the reference's
        std::vector<double> sourceSpreadL;
        std::map<std::string, double> timeSum;
        std::vector<int> lutSizes;
        for (const std::string& v : uot::cli::splitList(parser.value("lut-sizes"))) lutSizes.push_back(std::stoi(v));
        std::map<int, std::vector<double>> lutPsnr;
        std::vector<std::string> pairNames;
        const int limit = parser.integer("limit");
        const int stripPairs = parser.integer("strip-pairs");
        const std::string strips = parser.value("strips");
        if (!strips.empty()) fs::create_directories(strips);
        const std::string masks = parser.value("masks");
        if (!masks.empty()) fs::create_directories(masks);
        std::vector<std::pair<std::size_t, std::size_t>> selected;
        for (std::size_t i = 0; i < images.size(); ++i)
            for (std::size_t j = 0; j < images.size(); ++j) {
                if (i == j) continue;
                const bool tune = inTuningHalf(i, j, images.size());
                if ((half == "tune" && !tune) || (half == "held" && tune)) continue;
                if (limit > 0 && static_cast<int>(selected.size()) >= limit) continue;
                selected.emplace_back(i, j);
            }
        const MappingSettings& ms = cli.recolor.mapping;
        std::printf("%zu images, %zu ordered pairs (%s); UOT: space %s, palette %d, eps %g, tau_b %g, smooth %s (%s) r=%g e=%g "
                    "chroma e=%g slope floor %g, residual match chroma %g lightness %g; bounds %s: chroma slope %g, along L %g (range %g, radius %g, exempt %g), "
                    "lightness slopes %g..%g, transfer %g, residual slopes %g..%g, field deviation %g (lightness %g); fold %s (smooth %g)\n",
                    images.size(), selected.size(), half.c_str(), toString(cli.recolor.space).c_str(),
                    cli.recolor.palette.size, cli.recolor.transport.eps, cli.recolor.transport.adherence,
                    ms.smooth ? "on" : "off", toString(ms.smoothGuide).c_str(), ms.smoothRadius, ms.smoothEps,
                    ms.smoothChromaEps, ms.smoothMinSlope,
                    ms.residualMatch, ms.residualLightness, ms.bounds.enabled ? "on" : "off", ms.bounds.chromaSlope,
                    ms.bounds.chromaLightnessSlope, ms.bounds.chromaLightnessRange, ms.bounds.chromaRangeRadius, ms.bounds.chromaRangeExempt,
                    ms.bounds.lightnessMinSlope,
                    ms.bounds.lightnessMaxSlope, ms.bounds.lightnessTransfer,
                    ms.bounds.residualMinSlope, ms.bounds.residualMaxSlope, ms.bounds.fieldDeviation,
                    ms.bounds.fieldLightnessDeviation, ms.lutFaithful ? "on" : "off", ms.fold.smooth);
        const int every = stripPairs > 0 ? std::max(1, static_cast<int>(selected.size()) / stripPairs) : 0;
        for (std::size_t k = 0; k < selected.size(); ++k) {
            const auto [i, j] = selected[k];
            const Image& src = images[i];
            const Image& ref = images[j];
            const std::string name = fs::path(files[i]).stem().string() + " <- " + fs::path(files[j]).stem().string();
            pairNames.push_back(name);
            const std::vector<float> srcLab = toLab(src), refLab = toLab(ref);
            const AnalysisImage srcSeen = analysisImage(src);
            if (parser.flag("axes"))
                sourceSpreadL.push_back(channelStd(srcLab, src.pixelCount())[0] / channelStd(refLab, ref.pixelCount())[0]);
            std::map<std::string, Image> results;
            for (const std::string& m : methods) {
                const auto t0 = std::chrono::steady_clock::now();
                double lutSeconds = 0;  // the LUT exports are not part of the method's time
                Image out;
                if (m == "reinhard") out = reinhard(src, ref);
                else if (m == "histogram") out = histogramMatching(src, ref);
                else if (m == "mkl") out = mkl(src, ref);
                else {
                    RecolorPipeline pipeline(cli.recolor);
                    pipeline.setSource(src);
                    pipeline.setReference(ref);
                    out = pipeline.run();
                    const auto l0 = std::chrono::steady_clock::now();
                    for (int size : lutSizes)
                        lutPsnr[size].push_back(
                            exportPipelineLook(pipeline, size, "bench", LookLutSource::Rendered, {}, &out).psnr);
                    lutSeconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - l0).count();
                }
                timeSum[m] += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() - lutSeconds;
                const std::vector<float> outLab = toLab(out);
                sw[m].push_back(slicedWasserstein(outLab, out.pixelCount(), refLab, ref.pixelCount()));
                if (parser.flag("axes")) {
                    const std::array<double, 3> w = axisWasserstein(outLab, out.pixelCount(), refLab, ref.pixelCount());
                    for (std::size_t c = 0; c < 3; ++c) axisSw[m][c].push_back(w[c]);
                    spreadL[m].push_back(channelStd(outLab, out.pixelCount())[0] / channelStd(refLab, ref.pixelCount())[0]);
                }
                st[m].push_back(structureTerm(srcLab, outLab, src.width, src.height));
                if (parser.flag("structure-parts")) {
                    const std::array<double, 4> sp = structureParts(srcLab, outLab, src.width, src.height);
                    std::printf("  parts %-40s %-9s result %.4f curve %.4f curve-8bit %.4f outside-gamut %.2f %%\n", name.c_str(),
                                m.c_str(), sp[0], sp[1], sp[2], sp[3]);
                }
                const AnalysisImage outSeen = analysisImage(out);
                std::vector<unsigned char> mask;
                const Artifacts a = measureArtifacts(srcSeen, outSeen, {}, &mask);
                if (m == "uot" && !masks.empty()) {
                    // The result at the measures' scale, 4x, marked pixels painted over.
                    cv::Mat small = toBgrMat(out, outSeen.height);
                    cv::resize(small, small, cv::Size(outSeen.width, outSeen.height), 0, 0, cv::INTER_AREA);
                    cv::Mat marked = small.clone();
                    for (int y = 0; y < outSeen.height; ++y)
                        for (int x = 0; x < outSeen.width; ++x) {
                            const unsigned char k = mask[static_cast<std::size_t>(y) * outSeen.width + x];
                            if (k & 1) marked.at<cv::Vec3b>(y, x) = cv::Vec3b(0, 0, 255);
                            else if (k & 2) marked.at<cv::Vec3b>(y, x) = cv::Vec3b(0, 255, 255);
                        }
                    cv::Mat pairImage, big;
                    cv::hconcat(std::vector<cv::Mat>{toBgrMat(src, outSeen.height), small, marked}, pairImage);
                    cv::resize(pairImage, big, cv::Size(), 4, 4, cv::INTER_NEAREST);
                    cv::imwrite((fs::path(masks) / ("artifacts_" + fs::path(files[i]).stem().string() + "_from_" +
                                                    fs::path(files[j]).stem().string() + ".png"))
                                    .string(),
                                big);
                }
                blotch[m].push_back(a.blotch);
                flip[m].push_back(a.flip);
                drift[m].push_back(a.neutralDrift);
                cast[m].push_back(a.neutralCast);
                results[m] = std::move(out);
            }
            if (parser.flag("per-pair")) {
                std::printf("  %-40s", name.c_str());
                for (const std::string& m : methods)
                    std::printf(" %s %6.2f/%.4f b%.2f f%.2f n%.1f", m.c_str(), sw[m].back(), st[m].back(), blotch[m].back(),
                                flip[m].back(), drift[m].back());
                for (int size : lutSizes) std::printf(" lut%d %.1f dB", size, lutPsnr[size].back());
                if (parser.flag("axes"))
                    for (const std::string& m : methods)
                        std::printf(" %s-Lab %.2f/%.2f/%.2f", m.c_str(), axisSw[m][0].back(), axisSw[m][1].back(),
                                    axisSw[m][2].back());
                std::printf("\n");
            }
            if (!strips.empty() && every > 0 && static_cast<int>(k) % every == 0 && static_cast<int>(k) / every < stripPairs) {
                const int h = 200;
                std::vector<cv::Mat> row = {captioned(toBgrMat(src, h), "source"), captioned(toBgrMat(ref, h), "reference")};
                for (const std::string& m : methods) row.push_back(captioned(toBgrMat(results[m], h), captionOf(m)));
                cv::Mat strip;
                cv::hconcat(row, strip);
                const std::string file = (fs::path(strips) / ("quality_" + fs::path(files[i]).stem().string() + "_from_" +
                                                              fs::path(files[j]).stem().string() + ".jpg"))
                                             .string();
                cv::imwrite(file, strip, {cv::IMWRITE_JPEG_QUALITY, 88});
                std::printf("  strip: %s\n", file.c_str());
            }
        }
        const std::size_t n = selected.size();
        if (n == 0) throw std::runtime_error("no pairs selected");
        std::printf("\n| method | palette distance mean | median | structure mean | seconds per pair |\n|---|---|---|---|---|\n");
        for (const std::string& m : methods)
            std::printf("| %s | %.3f | %.3f | %.4f | %.3f |\n", m.c_str(), mean(sw[m]), median(sw[m]), mean(st[m]),
                        timeSum[m] / static_cast<double>(n));
        if (parser.flag("axes")) {
            std::printf("\n| method | W2 along L* mean | median | along a* mean | median | along b* mean | median | std of L* / "
                        "the reference's, median |\n|---|---|---|---|---|---|---|---|\n");
            for (const std::string& m : methods)
                std::printf("| %s | %.3f | %.3f | %.3f | %.3f | %.3f | %.3f | %.3f |\n", m.c_str(), mean(axisSw[m][0]),
                            median(axisSw[m][0]), mean(axisSw[m][1]), median(axisSw[m][1]), mean(axisSw[m][2]),
                            median(axisSw[m][2]), median(spreadL[m]));
            std::printf("| (source) | | | | | | | %.3f |\n", median(sourceSpreadL));
        }
        const auto over = [](const std::vector<double>& v, double t) {
            return static_cast<int>(std::count_if(v.begin(), v.end(), [t](double x) { return x > t; }));
        };
        const auto worstOf = [](const std::vector<double>& v) { return *std::max_element(v.begin(), v.end()); };
        std::printf("\n| method | blotch %% mean | worst | pairs > 3 %% | flip %% mean | worst | pairs > 2 %% | neutral drift "
                    "(C*) mean | worst | neutral cast %% mean |\n|---|---|---|---|---|---|---|---|---|---|\n");
        for (const std::string& m : methods)
            std::printf("| %s | %.2f | %.2f | %d | %.2f | %.2f | %d | %.2f | %.2f | %.1f |\n", m.c_str(), mean(blotch[m]),
                        worstOf(blotch[m]), over(blotch[m], 3), mean(flip[m]), worstOf(flip[m]), over(flip[m], 2),
                        mean(drift[m]), worstOf(drift[m]), mean(cast[m]));
        std::printf("\n| UOT against | median ratio of palette distance | UOT wins | UOT loses |\n|---|---|---|---|\n");
        std::vector<double> bestRatio(n);
        for (std::size_t k = 0; k < n; ++k) {
            double best = 1e300;
            for (const std::string& b : baselines) best = std::min(best, sw[b][k]);
            bestRatio[k] = sw["uot"][k] / best;
        }
        for (const std::string& b : baselines) {
            std::vector<double> ratio(n);
            int wins = 0;
            for (std::size_t k = 0; k < n; ++k) {
                ratio[k] = sw["uot"][k] / sw[b][k];
                wins += ratio[k] < 1;
            }
            std::printf("| %s | %.3f | %d | %d |\n", b.c_str(), median(ratio), wins, static_cast<int>(n) - wins);
        }
        int winsBest = 0;
        for (double r : bestRatio) winsBest += r < 1;
        std::printf("| best baseline of each pair | %.3f | %d | %d |\n", median(bestRatio), winsBest,
                    static_cast<int>(n) - winsBest);
        const std::size_t worst = static_cast<std::size_t>(std::max_element(bestRatio.begin(), bestRatio.end()) - bestRatio.begin());
        int structureLosses = 0;
        for (std::size_t k = 0; k < n; ++k) structureLosses += st["uot"][k] < st["mkl"][k];
        std::printf("\npairs: %zu; median palette ratio to the best baseline %.3f; worst pair %.3f (%s; "
                    "target <= 1.15); structure - MKL's %+.4f (target >= 0), below MKL on %d pairs\n",
                    n, median(bestRatio), bestRatio[worst], pairNames[worst].c_str(), mean(st["uot"]) - mean(st["mkl"]),
                    structureLosses);
        const std::size_t worstBlotch =
            static_cast<std::size_t>(std::max_element(blotch["uot"].begin(), blotch["uot"].end()) - blotch["uot"].begin());
        const std::size_t worstFlip =
            static_cast<std::size_t>(std::max_element(flip["uot"].begin(), flip["uot"].end()) - flip["uot"].begin());
        std::printf("artifacts: blotch mean %.2f %% (target <= 1), worst %.2f %% (%s; target <= 3); flip mean %.2f %% "
                    "(target <= 0.5), worst %.2f %% (%s; target <= 2); median palette ratio target <= 0.85\n",
                    mean(blotch["uot"]), blotch["uot"][worstBlotch], pairNames[worstBlotch].c_str(), mean(flip["uot"]),
                    flip["uot"][worstFlip], pairNames[worstFlip].c_str());
        for (int size : lutSizes) {
            // The targets: 33^3 >= 40 dB on 90 % of pairs, 65^3 >= 45 dB.
            const std::vector<double>& v = lutPsnr[size];
            const double target = size >= 65 ? 45 : 40;
            const auto reached = std::count_if(v.begin(), v.end(), [target](double x) { return x >= target; });
            std::printf("look LUT %d^3 against the result: median %.1f dB, worst %.1f dB, %d of %zu pairs >= %.0f dB\n", size,
                        median(v), *std::min_element(v.begin(), v.end()), static_cast<int>(reached), v.size(), target);
        }
    } catch (const std::exception& e) {
        std::fprintf(stderr, "uot_quality_bench: %s\n", e.what());
        return 1;
    }
    return 0;
}
