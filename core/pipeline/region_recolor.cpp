#include "core/pipeline/region_recolor.h"

#include <string>

#include "core/color/float_buffer.h"
#include "core/transport/uot_error.h"

namespace uot {

Mask prepareMask(const Mask& mask, const Image& source, int featherRadius, WorkingSpace space, int threads)
{
    validateImage(source, "source image");
    if (mask.empty()) throw Error(ErrorCode::InvalidArgument, "the mask is empty");
    if (featherRadius < 0)
        throw Error(ErrorCode::InvalidArgument, "mask feather radius must be >= 0 (got " + std::to_string(featherRadius) + ")");
    Mask out = resizeMask(mask, source.width, source.height);
    if (featherRadius > 0) {
        FloatBuffer guide(source.pixelCount() * 3);  // not zeroed first: every value is written
        imageToSpace(source, space, guide.data(), threads);
        featherMask(out, guide.data(), space, featherRadius, threads);
    }
    return out;
}

Image recolorMasked(RecolorPipeline& pipeline, const Mask& mask, const PipelineControl& control)
{
    const std::shared_ptr<const Image> source = pipeline.sourceImage();
    if (!source) throw Error(ErrorCode::InvalidArgument, "no source image set");
    if (mask.width != source->width || mask.height != source->height)
        throw Error(ErrorCode::InvalidArgument, "the mask is " + std::to_string(mask.width) + "x" +
                                                    std::to_string(mask.height) + ", the source " +
                                                    std::to_string(source->width) + "x" + std::to_string(source->height));
    const RecolorSettings& st = pipeline.settings();
    pipeline.setSourcePalette(std::make_shared<const Palette>(
        buildWeightedImagePalette(*source, mask.values.data(), st.space, st.palette, st.threads)));
    Image result = pipeline.run(control);
    if (st.mapping.strength == 0.0) return result;  // exactly the source already (gray stays gray)
    blendMasked(*source, mask, result, st.threads);
    return result;
}

Image recolorRegions(const Image& source, const std::vector<RecolorRegion>& regions, const PipelineControl& control,
                     std::vector<PipelineStats>* stats)
{
    if (regions.empty()) throw Error(ErrorCode::InvalidArgument, "no region");
    if (regions.size() > static_cast<std::size_t>(kMaxRegions))
        throw Error(ErrorCode::InvalidArgument, "at most " + std::to_string(kMaxRegions) + " regions (got " +
                                                    std::to_string(regions.size()) + ")");
    for (std::size_t r = 0; r < regions.size(); ++r)
        if (!regions[r].reference || regions[r].mask.empty())
            throw Error(ErrorCode::InvalidArgument, "region " + std::to_string(r + 1) + " has no mask or no reference");
    if (stats) stats->clear();
    Image result = source;
    bool first = true;
    for (std::size_t r = 0; r < regions.size(); ++r) {
        const RecolorRegion& region = regions[r];
        if (region.settings.mapping.strength == 0.0) continue;  // keeps everything as it is
        RecolorPipeline pipeline(region.settings);
        pipeline.setSource(source);
        pipeline.setReferencePalette(region.reference);
        Image recolored = recolorMasked(pipeline, region.mask, control);
        if (stats) stats->push_back(pipeline.stats());
        // recolored is already the source where the mask is 0; over a region
        // before it, blend it with the result so far instead.
        if (!first) blendMasked(result, region.mask, recolored, region.settings.threads);
        result = std::move(recolored);
        first = false;
    }
    return result;
}

}  // namespace uot
