// Colour transfer quality benchmark: ordered pairs (source, reference) of the
// images in one or more folders, recolored by the UOT pipeline (the given recolor
// settings, defaults otherwise) and by three classical baselines (Reinhard,
// histogram matching, MKL; bench/quality/quality_metrics.h), scored by palette
// distance (sliced W2 in CIELAB to the reference's pixels, lower is better) and
// structure (SSIM structure term on L between source and result, 1 = kept).
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
#include "core/pipeline/recolor_pipeline.h"
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

}  // namespace

int main(int argc, char** argv)
{
    using namespace uot::cli;
    ArgParser parser("uot_quality_bench [--images DIR[,DIR...]] [--half all|tune|held] [--strips DIR] [recolor options]",
                     "Colour transfer quality over ordered pairs of the images in the folders, UOT against baselines.");
    parser.addOption("images", "DIRS", "comma-separated folders of test images", "resources/samples");
    parser.addOption("half", "all|tune|held", "which pairs: all, the tuning half or the held-back half", "all");
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
        std::map<std::string, std::vector<double>> sw, st;
        std::map<std::string, double> timeSum;
        std::vector<std::string> pairNames;
        const int limit = parser.integer("limit");
        const int stripPairs = parser.integer("strip-pairs");
        const std::string strips = parser.value("strips");
        if (!strips.empty()) fs::create_directories(strips);
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
                    "chroma e=%g slope floor %g, residual match chroma %g lightness %g\n",
                    images.size(), selected.size(), half.c_str(), toString(cli.recolor.space).c_str(),
                    cli.recolor.palette.size, cli.recolor.transport.eps, cli.recolor.transport.adherence,
                    ms.smooth ? "on" : "off", toString(ms.smoothGuide).c_str(), ms.smoothRadius, ms.smoothEps,
                    ms.smoothChromaEps, ms.smoothMinSlope,
                    ms.residualMatch, ms.residualLightness);
        const int every = stripPairs > 0 ? std::max(1, static_cast<int>(selected.size()) / stripPairs) : 0;
        for (std::size_t k = 0; k < selected.size(); ++k) {
            const auto [i, j] = selected[k];
            const Image& src = images[i];
            const Image& ref = images[j];
            const std::string name = fs::path(files[i]).stem().string() + " <- " + fs::path(files[j]).stem().string();
            pairNames.push_back(name);
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
                timeSum[m] += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
                const std::vector<float> outLab = toLab(out);
                sw[m].push_back(slicedWasserstein(outLab, out.pixelCount(), refLab, ref.pixelCount()));
                st[m].push_back(structureTerm(srcLab, outLab, src.width, src.height));
                results[m] = std::move(out);
            }
            if (parser.flag("per-pair")) {
                std::printf("  %-40s", name.c_str());
                for (const std::string& m : methods) std::printf(" %s %6.2f/%.4f", m.c_str(), sw[m].back(), st[m].back());
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
        std::printf("\npairs: %zu; median palette ratio to the best baseline %.3f (target <= 0.9); worst pair %.3f (%s; "
                    "target <= 1.15); structure - MKL's %+.4f (target >= 0), below MKL on %d pairs\n",
                    n, median(bestRatio), bestRatio[worst], pairNames[worst].c_str(), mean(st["uot"]) - mean(st["mkl"]),
                    structureLosses);
    } catch (const std::exception& e) {
        std::fprintf(stderr, "uot_quality_bench: %s\n", e.what());
        return 1;
    }
    return 0;
}
