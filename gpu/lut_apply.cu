// The GPU frame LUT (gpu/lut_apply.h): one thread per pixel, the tetrahedral
// blend of core/color/lut_apply_pixel.h written for the device, and the slots
// that overlap uploads, kernels and downloads over a sequence of frames.

#include "gpu/lut_apply.h"

#include <cstdint>
#include <cstring>
#include <vector>

#include "gpu/cuda_support.h"
#include "gpu/gpu_backend.h"
#include "gpu/host_copy.h"

namespace uot::gpu {
namespace {

// The tetrahedra of FrameLut (float offsets, as tetraFirst / tetraSecond / farCorner).
struct TetraTable {
    std::int32_t first[8];
    std::int32_t second[8];
    std::int32_t far;
};

// Device copy of LutAxisEntry (same layout: the tables are uploaded as they are).
struct AxisEntry {
    std::int32_t offset;
    float fraction;
};
static_assert(sizeof(AxisEntry) == sizeof(LutAxisEntry));

template <bool Deep, bool InBgr, bool OutBgr>
__global__ void mapFrameKernel(const std::uint8_t* __restrict__ in, std::uint8_t* __restrict__ out,
                               std::size_t pixels, const float4* __restrict__ nodes,
                               const AxisEntry* __restrict__ axes, TetraTable tetra)
{
    const std::size_t p = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (p >= pixels) return;
    constexpr int codes = Deep ? 65536 : 256;
    constexpr int ri = InBgr ? 2 : 0, bi = InBgr ? 0 : 2;
    int s[3];
    if constexpr (Deep) {
        const std::uint16_t* q = reinterpret_cast<const std::uint16_t*>(in) + 3 * p;
        s[0] = q[ri], s[1] = q[1], s[2] = q[bi];
    } else {
        const std::uint8_t* q = in + 3 * p;
        s[0] = q[ri], s[1] = q[1], s[2] = q[bi];
    }
    const AxisEntry r = axes[s[0]], g = axes[codes + s[1]], b = axes[2 * codes + s[2]];  // const __restrict__: read-only cache
    const float fr = r.fraction, fg = g.fraction, fb = b.fraction;
    const int code = int(fr > fg) | int(fg > fb) << 1 | int(fr > fb) << 2;
    const float hi = fmaxf(fr, fmaxf(fg, fb)), lo = fminf(fr, fminf(fg, fb));
    const float mid = fmaxf(fminf(fr, fg), fminf(fmaxf(fr, fg), fb));
    const std::int32_t base = r.offset + g.offset + b.offset;  // in floats: 4 per node
    const float4 n0 = __ldg(nodes + base / 4), n1 = __ldg(nodes + (base + tetra.first[code]) / 4);
    const float4 n2 = __ldg(nodes + (base + tetra.second[code]) / 4), n3 = __ldg(nodes + (base + tetra.far) / 4);
    const float w0 = 1.0f - hi, w1 = hi - mid, w2 = mid - lo, w3 = lo;
    float v[3] = {w0 * n0.x + w1 * n1.x + w2 * n2.x + w3 * n3.x, w0 * n0.y + w1 * n1.y + w2 * n2.y + w3 * n3.y,
                  w0 * n0.z + w1 * n1.z + w2 * n2.z + w3 * n3.z};
    constexpr float maxValue = Deep ? 65535.0f : 255.0f;
    for (float& x : v) x = fminf(fmaxf(x, 0.0f), 1.0f) * maxValue + 0.5f;
    constexpr int ro = OutBgr ? 2 : 0, bo = OutBgr ? 0 : 2;
    if constexpr (Deep) {
        std::uint16_t* q = reinterpret_cast<std::uint16_t*>(out) + 3 * p;
        q[0] = static_cast<std::uint16_t>(v[ro]), q[1] = static_cast<std::uint16_t>(v[1]), q[2] = static_cast<std::uint16_t>(v[bo]);
    } else {
        std::uint8_t* q = out + 3 * p;
        q[0] = static_cast<std::uint8_t>(v[ro]), q[1] = static_cast<std::uint8_t>(v[1]), q[2] = static_cast<std::uint8_t>(v[bo]);
    }
}

template <bool Deep>
void launchFor(bool inBgr, bool outBgr, const std::uint8_t* in, std::uint8_t* out, std::size_t pixels,
               const float4* nodes, const AxisEntry* axes, const TetraTable& tetra, cudaStream_t stream)
{
    constexpr int threads = 256;
    const unsigned blocks = static_cast<unsigned>((pixels + threads - 1) / threads);
    if (inBgr) {
        if (outBgr) mapFrameKernel<Deep, true, true><<<blocks, threads, 0, stream>>>(in, out, pixels, nodes, axes, tetra);
        else mapFrameKernel<Deep, true, false><<<blocks, threads, 0, stream>>>(in, out, pixels, nodes, axes, tetra);
    } else {
        if (outBgr) mapFrameKernel<Deep, false, true><<<blocks, threads, 0, stream>>>(in, out, pixels, nodes, axes, tetra);
        else mapFrameKernel<Deep, false, false><<<blocks, threads, 0, stream>>>(in, out, pixels, nodes, axes, tetra);
    }
    UOT_CUDA_CHECK_LAUNCH();
}

// Copies `rows` rows of `rowBytes` between buffers of strides srcStride / dstStride
// (tight frames over the OpenMP threads, padded ones row by row).
void copyRows(std::uint8_t* dst, std::size_t dstStride, const std::uint8_t* src, std::size_t srcStride,
              std::size_t rowBytes, int rows)
{
    if (srcStride == rowBytes && dstStride == rowBytes) {
        detail::parallelCopy(dst, src, rowBytes * static_cast<std::size_t>(rows));
        return;
    }
    for (int y = 0; y < rows; ++y)
        std::memcpy(dst + static_cast<std::size_t>(y) * dstStride, src + static_cast<std::size_t>(y) * srcStride, rowBytes);
}

}  // namespace

struct FrameLutDevice::Impl {
    struct Slot {
        detail::Stream stream;
        detail::Event done{false};
        detail::PinnedBuffer<std::uint8_t> stagingIn, stagingOut;
        detail::DeviceBuffer<std::uint8_t> deviceIn, deviceOut;
        std::size_t capacity = 0;  // bytes of each buffer
        bool busy = false;
        FrameView out;             // where the result goes
    };

    int device = 0;
    std::string name;
    detail::DeviceBuffer<float4> nodes;
    detail::DeviceBuffer<AxisEntry> axis8, axis16;
    TetraTable tetra{};
    std::vector<std::unique_ptr<Slot>> slots;
    int next = 0;  // the slot the next frame takes (the oldest pending one)
    // The shape of the frames in the slots.
    int width = 0, height = 0;
    bool deep = false;

    void complete(Slot& s)
    {
        if (!s.busy) return;
        s.busy = false;  // the output is lost if the wait fails: the error says so
        UOT_CUDA_CHECK(cudaEventSynchronize(s.done.get()));
        const std::size_t row = static_cast<std::size_t>(s.out.width) * bytesPerPixel(s.out.format);
        copyRows(s.out.data, s.out.strideBytes, s.stagingOut.get(), row, row, s.out.height);
    }

    void completeAll()
    {
        const int n = static_cast<int>(slots.size());
        for (int k = 0; k < n; ++k) complete(*slots[(next + k) % n]);
    }
};

FrameLutDevice::FrameLutDevice(const FrameLut& lut, int device, int inFlight)
{
    const std::string reason = unavailableReason();
    if (!reason.empty()) throw Error(ErrorCode::Unavailable, reason);
    int count = 0;
    UOT_CUDA_CHECK(cudaGetDeviceCount(&count));
    if (device < 0 || device >= count)
        throw Error(ErrorCode::InvalidArgument, "GPU " + std::to_string(device) + " does not exist (this machine has " +
                                                    std::to_string(count) + ")");
    if (inFlight < 1) throw Error(ErrorCode::InvalidArgument, "GPU frame LUT: at least one frame in flight");
    detail::DeviceGuard guard(device);
    m_impl = std::make_unique<Impl>();
    Impl& m = *m_impl;
    m.device = device;
    cudaDeviceProp prop{};
    UOT_CUDA_CHECK(cudaGetDeviceProperties(&prop, device));
    m.name = "GPU " + std::to_string(device) + " (" + prop.name + ")";
    const std::vector<float>& nodes = lut.nodes();
    m.nodes.allocate(nodes.size() / 4);
    UOT_CUDA_CHECK(cudaMemcpy(m.nodes.get(), nodes.data(), nodes.size() * sizeof(float), cudaMemcpyHostToDevice));
    auto uploadAxes = [&](detail::DeviceBuffer<AxisEntry>& dst, int codes, const LutAxisEntry* (FrameLut::*axis)(int) const) {
        dst.allocate(3 * static_cast<std::size_t>(codes));
        for (int c = 0; c < 3; ++c)
            UOT_CUDA_CHECK(cudaMemcpy(dst.get() + static_cast<std::size_t>(c) * codes, (lut.*axis)(c),
                                      codes * sizeof(AxisEntry), cudaMemcpyHostToDevice));
    };
    uploadAxes(m.axis8, 256, &FrameLut::axis8);
    uploadAxes(m.axis16, 65536, &FrameLut::axis16);
    for (int k = 0; k < 8; ++k) m.tetra.first[k] = lut.tetraFirst()[k], m.tetra.second[k] = lut.tetraSecond()[k];
    m.tetra.far = lut.farCorner();
    for (int k = 0; k < inFlight; ++k) m.slots.push_back(std::make_unique<Impl::Slot>());
}

FrameLutDevice::~FrameLutDevice()
{
    if (!m_impl) return;
    try {
        detail::DeviceGuard guard(m_impl->device);
        cudaDeviceSynchronize();  // nothing in flight writes into freed staging
    } catch (const Error&) {
    }
}

void FrameLutDevice::submit(const ConstFrameView& in, const FrameView& out)
{
    Impl& m = *m_impl;
    if (!in.data || !out.data || in.width <= 0 || in.height <= 0 || in.width != out.width || in.height != out.height ||
        isDeep(in.format) != isDeep(out.format))
        throw Error(ErrorCode::InvalidArgument, "GPU frame LUT: input and output frames differ or are empty");
    const std::size_t row = static_cast<std::size_t>(in.width) * bytesPerPixel(in.format);
    if (in.strideBytes < row || out.strideBytes < row)
        throw Error(ErrorCode::InvalidArgument, "GPU frame LUT: a row stride is shorter than a row");
    detail::DeviceGuard guard(m.device);
    if (in.width != m.width || in.height != m.height || isDeep(in.format) != m.deep) {
        m.completeAll();
        m.width = in.width, m.height = in.height, m.deep = isDeep(in.format);
    }
    Impl::Slot& s = *m.slots[static_cast<std::size_t>(m.next)];
    m.next = (m.next + 1) % static_cast<int>(m.slots.size());
    m.complete(s);
    const std::size_t bytes = row * static_cast<std::size_t>(in.height);
    if (s.capacity < bytes) {
        s.stagingIn.allocate(bytes);
        s.stagingOut.allocate(bytes);
        s.deviceIn.allocate(bytes);
        s.deviceOut.allocate(bytes);
        s.capacity = bytes;
    }
    copyRows(s.stagingIn.get(), row, in.data, in.strideBytes, row, in.height);
    const cudaStream_t st = s.stream.get();
    UOT_CUDA_CHECK(cudaMemcpyAsync(s.deviceIn.get(), s.stagingIn.get(), bytes, cudaMemcpyHostToDevice, st));
    const std::size_t pixels = static_cast<std::size_t>(in.width) * in.height;
    if (m.deep) launchFor<true>(isBgr(in.format), isBgr(out.format), s.deviceIn.get(), s.deviceOut.get(), pixels,
                                m.nodes.get(), m.axis16.get(), m.tetra, st);
    else launchFor<false>(isBgr(in.format), isBgr(out.format), s.deviceIn.get(), s.deviceOut.get(), pixels,
                          m.nodes.get(), m.axis8.get(), m.tetra, st);
    UOT_CUDA_CHECK(cudaMemcpyAsync(s.stagingOut.get(), s.deviceOut.get(), bytes, cudaMemcpyDeviceToHost, st));
    UOT_CUDA_CHECK(cudaEventRecord(s.done.get(), st));
    s.out = out;
    s.busy = true;
}

void FrameLutDevice::flush()
{
    detail::DeviceGuard guard(m_impl->device);
    m_impl->completeAll();
}

int FrameLutDevice::inFlight() const { return static_cast<int>(m_impl->slots.size()); }

std::string FrameLutDevice::deviceName() const { return m_impl->name; }

double FrameLutDevice::kernelMilliseconds(int width, int height, FramePixelFormat format, int frames)
{
    Impl& m = *m_impl;
    detail::DeviceGuard guard(m.device);
    const std::size_t pixels = static_cast<std::size_t>(width) * height;
    const std::size_t bytes = pixels * bytesPerPixel(format);
    detail::DeviceBuffer<std::uint8_t> in(bytes), out(bytes);
    // A smooth ramp with grain, so that neighbouring pixels share cells as in a picture.
    std::vector<std::uint8_t> host(bytes);
    for (std::size_t k = 0; k < bytes; ++k) host[k] = static_cast<std::uint8_t>((k / 3 % 1920) / 8 + ((k * 2654435761u) >> 28 & 15));
    UOT_CUDA_CHECK(cudaMemcpy(in.get(), host.data(), bytes, cudaMemcpyHostToDevice));
    detail::Stream stream;
    detail::Event start, stop;
    auto launch = [&] {
        if (isDeep(format)) launchFor<true>(isBgr(format), false, in.get(), out.get(), pixels, m.nodes.get(), m.axis16.get(), m.tetra, stream.get());
        else launchFor<false>(isBgr(format), false, in.get(), out.get(), pixels, m.nodes.get(), m.axis8.get(), m.tetra, stream.get());
    };
    launch();  // warm-up: the lattice into L2
    UOT_CUDA_CHECK(cudaEventRecord(start.get(), stream.get()));
    for (int k = 0; k < frames; ++k) launch();
    UOT_CUDA_CHECK(cudaEventRecord(stop.get(), stream.get()));
    UOT_CUDA_CHECK(cudaEventSynchronize(stop.get()));
    float ms = 0;
    UOT_CUDA_CHECK(cudaEventElapsedTime(&ms, start.get(), stop.get()));
    return ms / frames;
}

}  // namespace uot::gpu
