// The GPU color mapping when the project is built without CUDA: same interface,
// the constructor says plainly that there is no GPU support in this build.

#include "core/color/marginal_match.h"
#include "core/transport/uot_error.h"
#include "gpu/gpu_color_map.h"

namespace uot::gpu {

struct ColorMapper::Impl {};

ColorMapper::ColorMapper(int)
{
    throw Error(ErrorCode::Unavailable,
                "this build has no GPU support (CUDA was not found or UOT_CUDA=OFF at configure time); "
                "the mapping runs on the CPU");
}
ColorMapper::~ColorMapper() = default;
LowResolution ColorMapper::setSource(const Image&, WorkingSpace, int) { throw Error(ErrorCode::Unavailable, "no GPU support"); }
LowResolution ColorMapper::blockMeans(int) { throw Error(ErrorCode::Unavailable, "no GPU support"); }
DisplacementField ColorMapper::computeField(const DisplacementLut&, const MappingSettings&)
{
    throw Error(ErrorCode::Unavailable, "no GPU support");
}
bool ColorMapper::hasSource() const { return false; }
std::vector<float> ColorMapper::sampleMapped(const DisplacementLut&, const DisplacementField&, int)
{
    throw Error(ErrorCode::Unavailable, "no GPU support");
}
ChannelQuantiles ColorMapper::sampledQuantiles(const DisplacementLut&, const DisplacementField&, int, int, int)
{
    throw Error(ErrorCode::Unavailable, "no GPU support");
}
DisplacementLut ColorMapper::foldLattice(const DisplacementLut&, const DisplacementField&, int, const LatticeFieldFit&)
{
    throw Error(ErrorCode::Unavailable, "no GPU support");
}
void ColorMapper::compose(const DisplacementLut&, const DisplacementField&, const MappingSettings&, Image&)
{
    throw Error(ErrorCode::Unavailable, "no GPU support");
}
double ColorMapper::lastSetSourceSeconds() const { return 0; }
double ColorMapper::lastComposeSeconds() const { return 0; }
ColorMapper::FoldIterations ColorMapper::lastFoldIterations() const { return {}; }
bool ColorMapper::entropicLattice(DisplacementLut&, const std::vector<std::size_t>&, const float*, const float*,
                                  const float*, const float*, std::size_t, float)
{
    return false;
}
bool ColorMapper::lipschitzSweeps(float*, std::size_t, int, const double*, const std::vector<LatticeEdge>&) { return false; }

}  // namespace uot::gpu
