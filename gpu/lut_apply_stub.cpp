// The GPU frame LUT when the project is built without CUDA: same interface,
// the constructor says plainly that this build has no GPU support.

#include "core/transport/uot_error.h"
#include "gpu/lut_apply.h"

namespace uot::gpu {

struct FrameLutDevice::Impl {};

FrameLutDevice::FrameLutDevice(const FrameLut&, int, int)
{
    throw Error(ErrorCode::Unavailable, "this build has no GPU support (CUDA was not found or UOT_CUDA=OFF at configure time)");
}
FrameLutDevice::~FrameLutDevice() = default;
void FrameLutDevice::submit(const ConstFrameView&, const FrameView&) { throw Error(ErrorCode::Unavailable, "no GPU support"); }
void FrameLutDevice::flush() {}
int FrameLutDevice::inFlight() const { return 0; }
std::string FrameLutDevice::deviceName() const { return "none"; }
double FrameLutDevice::kernelMilliseconds(int, int, FramePixelFormat, int)
{
    throw Error(ErrorCode::Unavailable, "no GPU support");
}

}  // namespace uot::gpu
