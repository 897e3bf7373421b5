#include "core/pipeline/region_mask_file.h"

#include <algorithm>
#include <cmath>

#include "core/pipeline/region_recolor.h"
#include "core/transport/uot_error.h"

namespace uot {

Mask readMaskFor(const std::string& path, const Image& source, int featherRadius, WorkingSpace space,
                 const ReadOptions& read, int threads)
{
    ReadOptions options = read;
    options.convertToSrgb = false;
    const Mask mask = maskFromImage(readImage(path, options));
    const double maskAspect = static_cast<double>(mask.width) / mask.height;
    const double sourceAspect = static_cast<double>(source.width) / source.height;
    if (std::abs(maskAspect / sourceAspect - 1.0) > 0.02)
        throw Error(ErrorCode::InvalidArgument,
                    "mask " + path + " is " + std::to_string(mask.width) + "x" + std::to_string(mask.height) +
                        ", the source " + std::to_string(source.width) + "x" + std::to_string(source.height) +
                        ": their aspect ratios differ (a mask made for another image?)");
    Mask ready = prepareMask(mask, source, featherRadius, space, threads);
    if (std::all_of(ready.values.begin(), ready.values.end(), [](float v) { return v == 0.0f; }))
        throw Error(ErrorCode::InvalidArgument, "mask " + path + " is black everywhere: nothing would be recolored");
    return ready;
}

}  // namespace uot
