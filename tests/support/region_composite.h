#pragma once
// The regions' composite (core/color/mask.h, compositeRegions) worked out
// sample by sample for tests: at pixel i, with the masks' weights w_r and
// S = sum w_r, each sample is source + min(1, S) (sum w_r part_r / S - source),
// rounded half away from zero; the source where S = 0 (a gray source as
// R = G = B). The parts are the regions' unblended results (RGB or RGBA).

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "core/color/image.h"
#include "core/color/mask.h"

namespace uot::test {

inline double sampleOf(const Image& image, std::size_t k)
{
    return image.depth == 16 ? image.samples16()[k] : image.data[k];
}

inline Image compositeByHand(const Image& source, const std::vector<const Mask*>& masks,
                             const std::vector<const Image*>& parts)
{
    Image out = *parts.front();  // the parts' shape
    const int channels = out.channels;
    for (std::size_t i = 0; i < source.pixelCount(); ++i) {
        double total = 0;
        for (const Mask* mask : masks) total += mask->values[i];
        for (int c = 0; c < channels; ++c) {
            const double from = sampleOf(source, i * source.channels + (source.channels == 1 ? 0 : c));
            double value = from;
            if (total > 0) {
                double weighted = 0;
                for (std::size_t r = 0; r < masks.size(); ++r)
                    if (masks[r]->values[i] > 0) weighted += masks[r]->values[i] * sampleOf(*parts[r], i * channels + c);
                value = from + std::min(1.0, total) * (weighted / total - from);
            }
            const std::size_t k = i * channels + c;
            if (out.depth == 16) out.samples16()[k] = static_cast<std::uint16_t>(std::lround(value));
            else out.data[k] = static_cast<std::uint8_t>(std::lround(value));
        }
    }
    return out;
}

}  // namespace uot::test
