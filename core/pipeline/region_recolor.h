#pragma once
// Regional colour transfer on top of RecolorPipeline (no OpenCV, no Qt):
//   - a masked recolor: the source palette is built from the source's pixels
//     weighted by the mask (so the plan moves only the region's colours), the
//     whole image is mapped, and the result is blended with the source through
//     the mask (core/color/mask.h): black keeps the source bit for bit, white
//     takes the transfer;
//   - several regions, each a (mask, reference palette, settings) solved as its
//     own problem and composited in order over the source.

#include <memory>
#include <vector>

#include "core/color/mask.h"
#include "core/color/palette.h"
#include "core/pipeline/recolor_pipeline.h"

namespace uot {

// The mask made ready for `source`: resized to it (resizeMask) and, with
// featherRadius > 0, feathered along the source's colour edges in `space`
// (featherMask). Throws uot::Error(InvalidArgument) for an empty mask or a
// negative radius.
Mask prepareMask(const Mask& mask, const Image& source, int featherRadius, WorkingSpace space, int threads = 0);

// A masked recolor with `pipeline`, which holds the source and the reference
// (image or palette) and the settings: sets the source palette weighted by
// `mask` (the source's size: prepareMask) and renders, then blends the result
// with the source through the mask. Throws uot::Error(InvalidArgument) when
// the mask does not match the source or is black everywhere.
Image recolorMasked(RecolorPipeline& pipeline, const Mask& mask, const PipelineControl& control = {});

// One region: a mask of the source's size, the reference palette it takes its
// colours from (buildImagePalette / buildPooledPalette in the region's space)
// and the settings it is solved and mapped with.
struct RecolorRegion {
    Mask mask;
    std::shared_ptr<const Palette> reference;
    RecolorSettings settings;
};

inline constexpr int kMaxRegions = 4;

// How recolorRegions runs the regions' own work (their masked palettes, their
// solves when not batched, their map stages): concurrently, one OpenMP thread
// per region with the region's own loops nested under it, or one after the
// other. The result is the same, bit for bit: each region is its own pipeline
// with its own thread count either way.
enum class RegionSchedule { Concurrent, OneByOne };

// Recolors `source` region by region: each region is a masked recolor of the
// source (its own UOT problem, the source palette weighted by its mask), mapped
// only where its mask is > 0, and the regions' results are composited over the
// source in one pass (compositeRegions, core/color/mask.h): where masks overlap
// the regions share the pixel in proportion to their weights, the source shows
// through by 1 - (the sum of the weights) where they cover less than all of it,
// so complementary feathered masks leave no source at their seam. Pixels under
// no region keep the source exactly; under one region alone the result is
// recolorMasked's. When every region's solver runs on
// the GPU and a batched GPU solver is registered ("gpu-batched"), the problems
// of the regions whose solve options (SolveOptions: tolerance, iterations,
// mode...) are equal are solved together in one batched call (eps and the
// penalties may differ), each region's solve time being its share of the call;
// a region alone, or a batched call that fails, is solved by its own pipeline.
// Each region has its own pipeline; what depends on the source alone is made
// once and shared (RecolorPipeline::shareSourceWith), and the regions' own work
// runs as `schedule` says (concurrently by default; the result is the same).
// stats (or null) receives the statistics of each region that was recolored
// (strength > 0), in order, the masked source palette's time included in
// timings.palette; stats[k].solve->solver names what solved it. Throws uot::Error(InvalidArgument) for no
// region, more than kMaxRegions, or a region whose mask or palette is missing.
Image recolorRegions(const Image& source, const std::vector<RecolorRegion>& regions,
                     const PipelineControl& control = {}, std::vector<PipelineStats>* stats = nullptr,
                     RegionSchedule schedule = RegionSchedule::Concurrent);

}  // namespace uot
