// Registers the GPU frame LUT (gpu/lut_apply.h) with core/color/lut_apply.h, so
// that FrameLutRunner can map a clip's frames on the GPU when asked to. Plain
// C++, built with and without CUDA (without it the factory throws Unavailable
// and the runner maps on the CPU, saying why). Linked whole through uot::solvers.

#include <memory>

#include "core/color/lut_apply.h"
#include "gpu/lut_apply.h"

namespace uot::gpu {
namespace {

const bool registered = registerDeviceFrameLutFactory(
    [](const FrameLut& lut, int device) -> std::unique_ptr<DeviceFrameLut> {
        return std::make_unique<FrameLutDevice>(lut, device);
    });

}  // namespace
}  // namespace uot::gpu
