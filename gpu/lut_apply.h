#pragma once
// A look's 3-D LUT on video frames on the GPU: the interpolation of
// core/color/lut_apply.h (the same prepared lattice, axis tables and
// tetrahedra, so outputs match the CPU kernels to float rounding), for a
// sequence of frames. No CUDA types here; the build without CUDA provides the
// same class, whose constructor throws uot::Error(Unavailable).
//
// Each frame goes through one of `inFlight` slots, each with its own stream,
// page-locked staging and device buffers: submit() copies the frame into the
// slot's staging (the caller may reuse its buffer on return), queues the
// upload, the kernel and the download, and returns; the output reaches the
// caller's buffer when the slot comes round again or at flush(). So the upload
// of one frame, the kernel of another and the download of a third overlap, and
// the host's copies overlap the device's work.
//
// The lattice is read through the read-only data cache rather than shared
// memory: a 33^3 lattice of float4 nodes is 575 KB, beyond a block's shared
// memory, and stays in L2 (50 MB on an H100) for the whole clip.

#include <memory>
#include <string>

#include "core/color/lut_apply.h"

namespace uot::gpu {

class FrameLutDevice final : public DeviceFrameLut {
public:
    // Uploads `lut` to CUDA device `device`. Throws uot::Error(Unavailable)
    // without CUDA or a usable device, InvalidArgument for a bad ordinal or
    // inFlight < 1, OutOfMemory / Device on CUDA failures.
    explicit FrameLutDevice(const FrameLut& lut, int device = 0, int inFlight = 3);
    ~FrameLutDevice() override;
    FrameLutDevice(const FrameLutDevice&) = delete;
    FrameLutDevice& operator=(const FrameLutDevice&) = delete;

    // DeviceFrameLut: `out` (host memory) must stay valid until it is written.
    // A frame of another size or depth completes the pending ones first.
    void submit(const ConstFrameView& in, const FrameView& out) override;
    void flush() override;
    int inFlight() const override;
    std::string deviceName() const override;  // "GPU 0 (NVIDIA H100 80GB HBM3)"

    // For benchmarks: milliseconds per frame of the kernel alone (the frame
    // already on the device, `frames` launches timed with events).
    double kernelMilliseconds(int width, int height, FramePixelFormat format, int frames);

    struct Impl;

private:
    std::unique_ptr<Impl> m_impl;
};

}  // namespace uot::gpu
