#pragma once
// Palettes: an image's pixels as a small set of weighted color points in the
// working space, deterministic for a given seed.

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "core/color/color_space.h"
#include "core/color/image.h"
#include "core/color/marginal_match.h"

namespace uot {

enum class PaletteMethod {
    Histogram,  // adaptive 3-D histogram: the finest octree level with <= size non-empty cells,
                // then the heaviest cells split one level down while the count stays <= size
    KMeans      // weighted k-means (k-means++ seeding from `seed`) on the fine histogram cells
};

std::string toString(PaletteMethod method);
PaletteMethod parsePaletteMethod(const std::string& text);  // "histogram" | "kmeans"

// The largest palette: 2^16 points, the one limit every check and help text
// uses (a 512x384 image took 39 s and 4.1 GiB at this size). Palettes whose
// transport matrix would not fit in memory are solved matrix-free (mapreduce,
// core/transport/point_cloud_cost.h).
inline constexpr int kMaxPaletteSize = 1 << 16;

struct PaletteSettings {
    PaletteMethod method = PaletteMethod::Histogram;
    // Maximum number of points, 1..kMaxPaletteSize. 512: chosen on the tuning half of the
    // quality bench's broader set (256..1024 score alike there, 4096 worse; docs/BENCHMARKS.md).
    int size = 512;
    int finestBins = 64;           // bins per axis of the finest histogram level (power of two, 8..256)
    std::uint64_t seed = 1;        // k-means seeding and pixel sampling
    std::size_t sampleLimit = 2'000'000;  // at most this many pixels are read (regular stride), 0 = all
    int kmeansIterations = 8;

    bool operator==(const PaletteSettings&) const = default;  // the palette stage's cache key (with the space)
};

// Weighted color points in a working space. points: size() x 3, row-major;
// weights sum to 1.
struct Palette {
    WorkingSpace space = WorkingSpace::Lab;
    std::vector<double> points;
    std::vector<double> weights;
    // Per-channel quantiles of the colours the palette was built from (the
    // reference's distributions for the pipeline's residual match; empty for a
    // palette made by hand).
    ChannelQuantiles marginals;
    std::size_t size() const { return weights.size(); }
};

// Builds a palette from n working-space colors (interleaved floats, host memory).
// Reads at most settings.sampleLimit of them (a regular stride whose offset
// depends on the seed). Throws uot::Error(InvalidArgument) for bad settings, a
// color that is not finite, or n == 0.
Palette buildPalette(const float* colors, std::size_t n, WorkingSpace space, const PaletteSettings& settings,
                     int threads = 0);

// The same palette as buildPalette() over imageToSpace(image), bit for bit, but
// only the sampled pixels are converted (a 12 MP photo with the default sample
// limit converts one pixel in six). Throws as buildPalette().
Palette buildImagePalette(const Image& image, WorkingSpace space, const PaletteSettings& settings, int threads = 0);

// A palette of weighted colours: each colour adds its weight (finite, >= 0) to
// its histogram cell, its k-means cluster and the distributions (marginals);
// colours of weight 0 are left out as if absent, so with weights 0 and 1 it is
// buildPalette() of the colours of weight 1, bit for bit. At most
// settings.sampleLimit of the colours of positive weight are read (a regular
// stride over them, as buildPalette). Throws as buildPalette(), and
// uot::Error(InvalidArgument) for a negative weight or when none is positive.
Palette buildWeightedPalette(const float* colors, const float* weights, std::size_t n, WorkingSpace space,
                             const PaletteSettings& settings, int threads = 0);

// buildWeightedPalette() over imageToSpace(image), one weight per pixel (e.g. a
// mask: core/color/mask.h), converting only the sampled pixels.
Palette buildWeightedImagePalette(const Image& image, const float* weights, WorkingSpace space,
                                  const PaletteSettings& settings, int threads = 0);

// One palette of the pixels of several images pooled: image i's sampled pixels
// share the weight imageWeights[i] / sum(imageWeights) (empty: equal weights,
// whatever the images' sizes). Each image is read with an equal share of
// settings.sampleLimit. Throws uot::Error(InvalidArgument) for no image, a
// weight count that does not match, or a weight that is not a finite number > 0.
Palette buildPooledPalette(const std::vector<const Image*>& images, const std::vector<double>& imageWeights,
                           WorkingSpace space, const PaletteSettings& settings, int threads = 0);

}  // namespace uot
