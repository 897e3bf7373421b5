// GPU per-pixel mapping (gpu_color_map.h). The per-pixel formulas are the
// inline functions of core/color/color_space_inline.h and color_map_inline.h,
// compiled here for the device (UOT_HD), so CPU and GPU share one definition.

#include "gpu/gpu_color_map.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <mutex>
#include <string>
#include <vector>

#include "core/color/color_map_inline.h"
#include "core/color/color_space_inline.h"
#include "core/transport/uot_error.h"
#include "gpu/cuda_support.h"
#include "gpu/gpu_backend.h"

namespace uot::gpu {

using detail::DeviceBuffer;
using detail::Stream;

namespace {

using Clock = std::chrono::steady_clock;
double secondsSince(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

constexpr int kThreads = 256;
unsigned blocksFor(std::size_t n) { return static_cast<unsigned>((n + kThreads - 1) / kThreads); }

// Pixels [first, first + count) of an image with `channels` samples per pixel
// -> working-space colors (3 floats per pixel).
template <typename Sample>
__global__ void convertKernel(const Sample* __restrict__ samples, int channels, std::size_t first, std::size_t count,
                              const float* __restrict__ decode, WorkingSpace space, float* __restrict__ colors)
{
    const std::size_t k = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (k >= count) return;
    const std::size_t p = first + k;
    const Sample* s = samples + p * channels;
    float rgb[3];
    if (channels == 1) {
        rgb[0] = rgb[1] = rgb[2] = decode[s[0]];
    } else {
        rgb[0] = decode[s[0]];
        rgb[1] = decode[s[1]];
        rgb[2] = decode[s[2]];
    }
    color_detail::linearToSpaceWith(space, rgb, colors + 3 * p, color_detail::LabFExact{});
}

// Block means over s x s blocks (partial at the right and bottom edges), as
// downsampleColors: low colors (wl x hl x 3) and guide (wl x hl).
__global__ void blockMeansKernel(const float* __restrict__ colors, int width, int height, int s, int wl, int hl,
                                 WorkingSpace space, float* __restrict__ lowColors, float* __restrict__ lowGuide)
{
    const int lx = blockIdx.x * blockDim.x + threadIdx.x;
    const int ly = blockIdx.y;
    if (lx >= wl || ly >= hl) return;
    const int y1 = min(height, (ly + 1) * s), x1 = min(width, (lx + 1) * s);
    double a0 = 0, a1 = 0, a2 = 0;
    int cnt = 0;
    for (int y = ly * s; y < y1; ++y)
        for (int x = lx * s; x < x1; ++x, ++cnt) {
            const float* c = colors + 3 * (static_cast<std::size_t>(y) * width + x);
            a0 += c[0], a1 += c[1], a2 += c[2];
        }
    const std::size_t k = static_cast<std::size_t>(ly) * wl + lx;
    float* o = lowColors + 3 * k;
    o[0] = static_cast<float>(a0 / cnt);
    o[1] = static_cast<float>(a1 / cnt);
    o[2] = static_cast<float>(a2 / cnt);
    lowGuide[k] = color_detail::guideOf(space, o);
}

// Displacement at the block means through the LUT, packed with the guide for the
// guided filter: [I, I*I, P0, P1, P2, I*P0, I*P1, I*P2] per low-resolution pixel.
__global__ void packGuidedKernel(const float* __restrict__ lowColors, const float* __restrict__ lowGuide, std::size_t nl,
                                 const float* __restrict__ lut, int lutSize, double lo0, double lo1, double lo2,
                                 double st0, double st1, double st2, float* __restrict__ packed)
{
    const std::size_t k = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (k >= nl) return;
    const double lo[3] = {lo0, lo1, lo2}, step[3] = {st0, st1, st2};
    float d[3];
    color_detail::lutLookupRaw(lut, lutSize, lo, step, lowColors + 3 * k, d);
    const float i = lowGuide[k];
    float* q = packed + 8 * k;
    q[0] = i;
    q[1] = i * i;
    for (int c = 0; c < 3; ++c) {
        q[2 + c] = d[c];
        q[5 + c] = i * d[c];
    }
}

// Mean over the window [x - r, x + r] (horizontal) or [y - r, y + r] (vertical)
// clipped to the image, for `ch` interleaved channels (ch <= 8). Applied once
// each way it gives the clipped (2r+1)^2 box mean of the CPU's boxFilter.
__global__ void boxPassKernel(const float* __restrict__ in, float* __restrict__ out, int w, int h, int ch, int r,
                              bool horizontal)
{
    const int x = blockIdx.x * blockDim.x + threadIdx.x;
    const int y = blockIdx.y;
    if (x >= w || y >= h) return;
    double acc[8] = {0, 0, 0, 0, 0, 0, 0, 0};
    int lo, hi;
    if (horizontal) {
        lo = max(0, x - r), hi = min(w - 1, x + r);
        for (int t = lo; t <= hi; ++t)
            for (int c = 0; c < ch; ++c) acc[c] += in[(static_cast<std::size_t>(y) * w + t) * ch + c];
    } else {
        lo = max(0, y - r), hi = min(h - 1, y + r);
        for (int t = lo; t <= hi; ++t)
            for (int c = 0; c < ch; ++c) acc[c] += in[(static_cast<std::size_t>(t) * w + x) * ch + c];
    }
    const double norm = 1.0 / (hi - lo + 1);
    for (int c = 0; c < ch; ++c) out[(static_cast<std::size_t>(y) * w + x) * ch + c] = static_cast<float>(acc[c] * norm);
}

// He et al.'s coefficients from the box means of the packed inputs: [a0..a2, b0..b2].
__global__ void guidedCoefKernel(const float* __restrict__ mean, std::size_t nl, double eps, float* __restrict__ coef)
{
    const std::size_t k = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (k >= nl) return;
    const float* m = mean + 8 * k;
    float* o = coef + 6 * k;
    const double var = fmax(0.0, static_cast<double>(m[1]) - static_cast<double>(m[0]) * m[0]);
    for (int c = 0; c < 3; ++c) {
        const double cov = static_cast<double>(m[5 + c]) - static_cast<double>(m[0]) * m[2 + c];
        const double a = cov / (var + eps);
        o[c] = static_cast<float>(a);
        o[3 + c] = static_cast<float>(m[2 + c] - a * m[0]);
    }
}

struct ComposeParams {
    WorkingSpace space;
    float strength;
    bool keepL;
    GamutMode gamut;
    int width, height;
    int srcChannels, outChannels;
    bool copyAlpha;
    float maxValue;
    // smoothed field: 6 coefficients per node (lightness guide: d = a g + b) or
    // 12 (colour guide: d = A c + b, A row-major then b)
    bool smoothed;
    bool colorGuided;
    int subsample, lowWidth, lowHeight;
    // LUT
    int lutSize;
    double lo[3], step[3];
};

// The displacement d of pixel (x, y), colour c: from the smoothed field (the CPU's
// order: along y first, then along x) or from the LUT.
__device__ void displacementAt(const ComposeParams& prm, int x, int y, const float* c, const float* __restrict__ coef,
                               const float* __restrict__ lut, float d[3])
{
    if (!prm.smoothed) {
        color_detail::lutLookupRaw(lut, prm.lutSize, prm.lo, prm.step, c, d);
        return;
    }
    const color_detail::Bilinear by = color_detail::bilinearAt(y, prm.subsample, prm.lowHeight);
    const color_detail::Bilinear bx = color_detail::bilinearAt(x, prm.subsample, prm.lowWidth);
    const std::size_t wl = static_cast<std::size_t>(prm.lowWidth);
    const std::size_t len = prm.colorGuided ? 12 : 6;
    const float* r00 = coef + (static_cast<std::size_t>(by.i0) * wl + bx.i0) * len;
    const float* r10 = coef + (static_cast<std::size_t>(by.i1) * wl + bx.i0) * len;
    const float* r01 = coef + (static_cast<std::size_t>(by.i0) * wl + bx.i1) * len;
    const float* r11 = coef + (static_cast<std::size_t>(by.i1) * wl + bx.i1) * len;
    float m[12];
    for (std::size_t k = 0; k < len; ++k) {
        const float v0 = r00[k] + by.w * (r10[k] - r00[k]);
        const float v1 = r01[k] + by.w * (r11[k] - r01[k]);
        m[k] = v0 + bx.w * (v1 - v0);
    }
    color_detail::fieldDisplacement(m, prm.colorGuided, c, prm.colorGuided ? 0.0f : color_detail::guideOf(prm.space, c), d);
}

// The transferred colours c + d on the grid of pixels whose x and y are multiples
// of step, row by row (sampleMappedColors' layout).
__global__ void sampleMappedKernel(ComposeParams prm, const float* __restrict__ colors, const float* __restrict__ coef,
                                   const float* __restrict__ lut, int step, int sampleCols, float* __restrict__ out)
{
    const int sx = blockIdx.x * blockDim.x + threadIdx.x;
    const int sy = blockIdx.y;
    const int x = sx * step, y = sy * step;
    if (x >= prm.width || y >= prm.height) return;
    const float* c = colors + 3 * (static_cast<std::size_t>(y) * prm.width + x);
    float d[3];
    displacementAt(prm, x, y, c, coef, lut, d);
    float* o = out + 3 * (static_cast<std::size_t>(sy) * sampleCols + sx);
    for (int k = 0; k < 3; ++k) o[k] = c[k] + d[k];
}

template <typename Sample>
__global__ void composeKernel(ComposeParams prm, const float* __restrict__ colors, const Sample* __restrict__ source,
                              const float* __restrict__ coef, const float* __restrict__ lut,
                              const float* __restrict__ encode, Sample* __restrict__ out)
{
    const int x = blockIdx.x * blockDim.x + threadIdx.x;
    const int y = blockIdx.y;
    if (x >= prm.width || y >= prm.height) return;
    const std::size_t p = static_cast<std::size_t>(y) * prm.width + x;
    const float* c = colors + 3 * p;
    float d[3];
    displacementAt(prm, x, y, c, coef, lut, d);
    float rgb[3];
    color_detail::composeLinear(prm.space, prm.strength, prm.keepL, prm.gamut, c, d, rgb);
    Sample* o = out + p * prm.outChannels;
    for (int k = 0; k < 3; ++k)
        o[k] = static_cast<Sample>(color_detail::srgbEncode(encode, rgb[k]) * prm.maxValue + 0.5f);
    if (prm.outChannels == 4)
        o[3] = prm.copyAlpha ? source[p * 4 + 3] : static_cast<Sample>(prm.maxValue);
}

// Pinned host memory that grows on demand and is kept between calls.
class Staging {
public:
    ~Staging()
    {
        if (m_data) cudaFreeHost(m_data);
    }
    std::uint8_t* ensure(std::size_t bytes)
    {
        if (bytes > m_capacity) {
            if (m_data) cudaFreeHost(m_data);
            m_data = nullptr;
            m_capacity = 0;
            void* p = nullptr;
            UOT_CUDA_CHECK(cudaMallocHost(&p, bytes));
            m_data = static_cast<std::uint8_t*>(p);
            m_capacity = bytes;
        }
        return m_data;
    }

private:
    std::uint8_t* m_data = nullptr;
    std::size_t m_capacity = 0;
};

constexpr std::size_t kChunkBytes = std::size_t(4) << 20;  // overlap granularity of the host copies and transfers

}  // namespace

struct ColorMapper::Impl {
    int device = 0;
    // High priority: the mapping of an image goes ahead of long solver kernels
    // sharing the device (the batched recolor engine solves the next group while
    // it maps the images of the last one).
    Stream stream{detail::highestStreamPriority()};
    DeviceBuffer<float> decode8, decode16, encode;
    DeviceBuffer<std::uint8_t> pixels, output;
    DeviceBuffer<float> colors, lowColors, lowGuide, coef, lut, packed, packedMean, scratch, coefRaw,
        samples;
    int lowWidth = 0, lowHeight = 0, lowSubsample = 0;  // of the block means on the device
    Staging upStage, downStage;
    bool hasSource = false;
    int width = 0, height = 0, channels = 3, depth = 8;
    WorkingSpace space = WorkingSpace::Lab;
    double setSourceSeconds = 0, composeSeconds = 0;
};

namespace {

// Device buffers, pinned staging and tables of mappers that were destroyed, kept
// for the next mapper of the same device in this process (a batch or a
// benchmark creates one pipeline per image: allocating and pinning about 300 MB
// again each time would cost tens of milliseconds).
std::mutex g_poolMutex;
std::vector<std::unique_ptr<ColorMapper::Impl>>& pool()
{
    static std::vector<std::unique_ptr<ColorMapper::Impl>> p;
    return p;
}

}  // namespace

ColorMapper::ColorMapper(int device)
{
    const std::string reason = unavailableReason();
    if (!reason.empty()) throw Error(ErrorCode::Unavailable, reason);
    int count = 0;
    UOT_CUDA_CHECK(cudaGetDeviceCount(&count));
    if (device < 0 || device >= count)
        throw Error(ErrorCode::InvalidArgument, "GPU " + std::to_string(device) + " does not exist (this machine has " +
                                                    std::to_string(count) + ")");
    {
        std::lock_guard<std::mutex> lock(g_poolMutex);
        auto& p = pool();
        for (auto it = p.begin(); it != p.end(); ++it)
            if ((*it)->device == device) {
                m_impl = std::move(*it);
                p.erase(it);
                m_impl->hasSource = false;
                return;
            }
    }
    detail::DeviceGuard guard(device);
    m_impl = std::make_unique<Impl>();
    Impl& m = *m_impl;
    m.device = device;
    // The same tables as the CPU path (color_space.cpp / color_map.cpp).
    std::vector<float> t8(256), t16(65536), enc(color_detail::kSrgbEncodeSize + 2);
    for (int i = 0; i < 256; ++i) t8[i] = static_cast<float>(srgbToLinear(i / 255.0));
    for (int i = 0; i < 65536; ++i) t16[i] = static_cast<float>(srgbToLinear(i / 65535.0));
    for (int i = 0; i <= color_detail::kSrgbEncodeSize + 1; ++i)
        enc[i] = static_cast<float>(linearToSrgb(std::min(1.0, i / double(color_detail::kSrgbEncodeSize))));
    m.decode8.allocate(t8.size());
    m.decode16.allocate(t16.size());
    m.encode.allocate(enc.size());
    UOT_CUDA_CHECK(cudaMemcpy(m.decode8.get(), t8.data(), t8.size() * sizeof(float), cudaMemcpyHostToDevice));
    UOT_CUDA_CHECK(cudaMemcpy(m.decode16.get(), t16.data(), t16.size() * sizeof(float), cudaMemcpyHostToDevice));
    UOT_CUDA_CHECK(cudaMemcpy(m.encode.get(), enc.data(), enc.size() * sizeof(float), cudaMemcpyHostToDevice));
}

ColorMapper::~ColorMapper()
{
    if (!m_impl) return;
    m_impl->hasSource = false;
    try {
        std::lock_guard<std::mutex> lock(g_poolMutex);
        if (pool().size() < 2) pool().push_back(std::move(m_impl));
    } catch (...) {
        // Keeping it is an optimisation only; otherwise it is freed here.
    }
}

bool ColorMapper::hasSource() const { return m_impl && m_impl->hasSource; }
double ColorMapper::lastSetSourceSeconds() const { return m_impl ? m_impl->setSourceSeconds : 0; }
double ColorMapper::lastComposeSeconds() const { return m_impl ? m_impl->composeSeconds : 0; }

LowResolution ColorMapper::setSource(const Image& source, WorkingSpace space, int subsample)
{
    validateImage(source, "source image");
    const auto start = Clock::now();
    Impl& m = *m_impl;
    detail::DeviceGuard guard(m.device);
    m.hasSource = false;
    m.lowSubsample = 0;
    cudaStream_t st = m.stream.get();
    const std::size_t n = source.pixelCount();
    const std::size_t bytes = source.byteSize();
    const std::size_t pixelBytes = static_cast<std::size_t>(source.channels) * source.bytesPerSample();
    m.pixels.ensure(bytes);
    m.colors.ensure(3 * n);
    std::uint8_t* stage = m.upStage.ensure(bytes);
    // Chunks of whole pixels: the host copy of chunk k+1 overlaps the transfer and
    // conversion of chunk k.
    const std::size_t chunkPixels = std::max<std::size_t>(1, kChunkBytes / pixelBytes);
    for (std::size_t first = 0; first < n; first += chunkPixels) {
        const std::size_t count = std::min(chunkPixels, n - first);
        const std::size_t off = first * pixelBytes, len = count * pixelBytes;
        std::memcpy(stage + off, source.data.data() + off, len);
        UOT_CUDA_CHECK(cudaMemcpyAsync(m.pixels.get() + off, stage + off, len, cudaMemcpyHostToDevice, st));
        if (source.depth == 16)
            convertKernel<std::uint16_t><<<blocksFor(count), kThreads, 0, st>>>(
                reinterpret_cast<const std::uint16_t*>(m.pixels.get()), source.channels, first, count, m.decode16.get(),
                space, m.colors.get());
        else
            convertKernel<std::uint8_t><<<blocksFor(count), kThreads, 0, st>>>(
                m.pixels.get(), source.channels, first, count, m.decode8.get(), space, m.colors.get());
        UOT_CUDA_CHECK_LAUNCH();
    }
    UOT_CUDA_CHECK(cudaStreamSynchronize(st));
    m.hasSource = true;
    m.width = source.width;
    m.height = source.height;
    m.channels = source.channels;
    m.depth = source.depth;
    m.space = space;
    LowResolution low = subsample >= 1 ? blockMeans(subsample) : LowResolution{};
    m.setSourceSeconds = secondsSince(start);
    return low;
}

LowResolution ColorMapper::blockMeans(int subsample)
{
    Impl& m = *m_impl;
    if (!m.hasSource) throw Error(ErrorCode::InvalidArgument, "ColorMapper::blockMeans: no source set");
    if (subsample < 1) throw Error(ErrorCode::InvalidArgument, "ColorMapper::blockMeans: subsample must be >= 1");
    detail::DeviceGuard guard(m.device);
    cudaStream_t st = m.stream.get();
    LowResolution low;
    const int s = subsample;
    low.space = m.space;
    low.subsample = s;
    low.width = (m.width + s - 1) / s;
    low.height = (m.height + s - 1) / s;
    const std::size_t nl = static_cast<std::size_t>(low.width) * low.height;
    m.lowColors.ensure(3 * nl);
    m.lowGuide.ensure(nl);
    const dim3 grid((low.width + 127) / 128, low.height);
    blockMeansKernel<<<grid, 128, 0, st>>>(m.colors.get(), m.width, m.height, s, low.width, low.height, m.space,
                                            m.lowColors.get(), m.lowGuide.get());
    UOT_CUDA_CHECK_LAUNCH();
    low.colors.resize(3 * nl);
    low.guide.resize(nl);
    UOT_CUDA_CHECK(cudaMemcpyAsync(low.colors.data(), m.lowColors.get(), 3 * nl * sizeof(float), cudaMemcpyDeviceToHost, st));
    UOT_CUDA_CHECK(cudaMemcpyAsync(low.guide.data(), m.lowGuide.get(), nl * sizeof(float), cudaMemcpyDeviceToHost, st));
    UOT_CUDA_CHECK(cudaStreamSynchronize(st));
    m.lowWidth = low.width;
    m.lowHeight = low.height;
    m.lowSubsample = s;
    return low;
}

DisplacementField ColorMapper::computeField(const DisplacementLut& lut, const MappingSettings& settings)
{
    Impl& m = *m_impl;
    if (!m.hasSource || m.lowSubsample < 1)
        throw Error(ErrorCode::InvalidArgument, "ColorMapper::computeField: no block means on the device");
    if (settings.smoothGuide != SmoothingGuide::Lightness)
        throw Error(ErrorCode::Unavailable, "ColorMapper::computeField: the color guide is fitted on the host");
    if (std::isfinite(settings.smoothMinSlope))
        throw Error(ErrorCode::Unavailable, "ColorMapper::computeField: the lightness slope floor is fitted on the host");
    if (settings.bounds.enabled)
        throw Error(ErrorCode::Unavailable, "ColorMapper::computeField: the map's bounds are fitted on the host");
    if (lut.size < 2 || lut.values.size() != 3 * std::size_t(lut.size) * lut.size * lut.size)
        throw Error(ErrorCode::InvalidArgument, "computeField: the LUT is empty or inconsistent");
    DisplacementField field;
    field.width = m.width;
    field.height = m.height;
    const int radius = smoothingRadiusPixels(settings, m.width, m.height);
    if (radius < 1) return field;
    const int s = m.lowSubsample;
    const int r = std::max(1, static_cast<int>(std::lround(static_cast<double>(radius) / s)));
    detail::DeviceGuard guard(m.device);
    cudaStream_t st = m.stream.get();
    const int wl = m.lowWidth, hl = m.lowHeight;
    const std::size_t nl = static_cast<std::size_t>(wl) * hl;
    m.lut.ensure(lut.values.size());
    UOT_CUDA_CHECK(cudaMemcpyAsync(m.lut.get(), lut.values.data(), lut.values.size() * sizeof(float), cudaMemcpyHostToDevice, st));
    m.packed.ensure(8 * nl);
    m.packedMean.ensure(8 * nl);
    m.scratch.ensure(8 * nl);
    m.coefRaw.ensure(6 * nl);
    m.coef.ensure(6 * nl);
    packGuidedKernel<<<blocksFor(nl), kThreads, 0, st>>>(m.lowColors.get(), m.lowGuide.get(), nl, m.lut.get(), lut.size,
                                                         lut.lo[0], lut.lo[1], lut.lo[2], lut.step[0], lut.step[1],
                                                         lut.step[2], m.packed.get());
    UOT_CUDA_CHECK_LAUNCH();
    const dim3 grid((wl + 127) / 128, hl);
    boxPassKernel<<<grid, 128, 0, st>>>(m.packed.get(), m.scratch.get(), wl, hl, 8, r, true);
    boxPassKernel<<<grid, 128, 0, st>>>(m.scratch.get(), m.packedMean.get(), wl, hl, 8, r, false);
    guidedCoefKernel<<<blocksFor(nl), kThreads, 0, st>>>(m.packedMean.get(), nl, settings.smoothEps, m.coefRaw.get());
    boxPassKernel<<<grid, 128, 0, st>>>(m.coefRaw.get(), m.scratch.get(), wl, hl, 6, r, true);
    boxPassKernel<<<grid, 128, 0, st>>>(m.scratch.get(), m.coef.get(), wl, hl, 6, r, false);
    UOT_CUDA_CHECK_LAUNCH();
    field.coefficients.resize(6 * nl);
    UOT_CUDA_CHECK(cudaMemcpyAsync(field.coefficients.data(), m.coef.get(), 6 * nl * sizeof(float), cudaMemcpyDeviceToHost, st));
    UOT_CUDA_CHECK(cudaStreamSynchronize(st));
    field.smoothed = true;
    field.subsample = s;
    field.lowWidth = wl;
    field.lowHeight = hl;
    return field;
}

namespace {

// The displacement source of a composition or a sample (the smoothed field or the
// LUT), checked against the kept source and uploaded; fills its part of prm.
void uploadDisplacement(ColorMapper::Impl& m, const DisplacementLut& lut, const DisplacementField& field,
                        ComposeParams& prm, cudaStream_t st)
{
    if (field.smoothed && (field.width != m.width || field.height != m.height))
        throw Error(ErrorCode::InvalidArgument, "composeMapped: the field was computed for another image size");
    if (!field.smoothed && (lut.size < 2 || lut.values.size() != 3 * std::size_t(lut.size) * lut.size * lut.size))
        throw Error(ErrorCode::InvalidArgument, "compose: the LUT is empty or inconsistent");
    prm.space = m.space;
    prm.width = m.width;
    prm.height = m.height;
    prm.smoothed = field.smoothed;
    prm.colorGuided = field.colorGuided;
    if (field.smoothed) {
        const std::size_t len = field.colorGuided ? 12 : 6;
        if (field.coefficients.size() != len * static_cast<std::size_t>(field.lowWidth) * field.lowHeight)
            throw Error(ErrorCode::InvalidArgument, "compose: the field's coefficients do not match its size");
        prm.subsample = field.subsample;
        prm.lowWidth = field.lowWidth;
        prm.lowHeight = field.lowHeight;
        m.coef.ensure(field.coefficients.size());
        UOT_CUDA_CHECK(cudaMemcpyAsync(m.coef.get(), field.coefficients.data(), field.coefficients.size() * sizeof(float),
                                       cudaMemcpyHostToDevice, st));
    } else {
        prm.lutSize = lut.size;
        for (int a = 0; a < 3; ++a) prm.lo[a] = lut.lo[a], prm.step[a] = lut.step[a];
        m.lut.ensure(lut.values.size());
        UOT_CUDA_CHECK(cudaMemcpyAsync(m.lut.get(), lut.values.data(), lut.values.size() * sizeof(float),
                                       cudaMemcpyHostToDevice, st));
    }
}

}  // namespace

std::vector<float> ColorMapper::sampleMapped(const DisplacementLut& lut, const DisplacementField& field, int step)
{
    Impl& m = *m_impl;
    if (!m.hasSource) throw Error(ErrorCode::InvalidArgument, "ColorMapper::sampleMapped: no source set");
    if (step < 1) throw Error(ErrorCode::InvalidArgument, "sampleMappedColors: invalid size or step");
    detail::DeviceGuard guard(m.device);
    cudaStream_t st = m.stream.get();
    ComposeParams prm{};
    uploadDisplacement(m, lut, field, prm, st);
    const int cols = (m.width + step - 1) / step, rows = (m.height + step - 1) / step;
    const std::size_t n = 3 * static_cast<std::size_t>(cols) * rows;
    m.samples.ensure(n);
    sampleMappedKernel<<<dim3((cols + 127) / 128, rows), 128, 0, st>>>(prm, m.colors.get(), m.coef.get(), m.lut.get(),
                                                                     step, cols, m.samples.get());
    UOT_CUDA_CHECK_LAUNCH();
    std::vector<float> out(n);
    UOT_CUDA_CHECK(cudaMemcpyAsync(out.data(), m.samples.get(), n * sizeof(float), cudaMemcpyDeviceToHost, st));
    UOT_CUDA_CHECK(cudaStreamSynchronize(st));
    return out;
}

void ColorMapper::compose(const DisplacementLut& lut, const DisplacementField& field, const MappingSettings& settings,
                          Image& result)
{
    Impl& m = *m_impl;
    if (!m.hasSource) throw Error(ErrorCode::InvalidArgument, "ColorMapper::compose: no source set");
    if (result.width != m.width || result.height != m.height || (result.channels != 3 && result.channels != 4))
        throw Error(ErrorCode::InvalidArgument, "compose: the result must have the source's size and 3 or 4 channels");
    validateImage(result, "result");
    const auto start = Clock::now();
    detail::DeviceGuard guard(m.device);
    cudaStream_t st = m.stream.get();

    ComposeParams prm{};
    uploadDisplacement(m, lut, field, prm, st);
    prm.strength = static_cast<float>(settings.strength);
    prm.keepL = settings.preserveLuminance;
    prm.gamut = settings.gamut;
    prm.srcChannels = m.channels;
    prm.outChannels = result.channels;
    prm.copyAlpha = result.channels == 4 && m.channels == 4 && m.depth == result.depth;
    prm.maxValue = result.depth == 16 ? 65535.0f : 255.0f;
    const std::size_t bytes = result.byteSize();
    m.output.ensure(bytes);
    const dim3 grid((m.width + 127) / 128, m.height);
    if (result.depth == 16) {
        if (prm.copyAlpha || m.depth == 16)
            composeKernel<std::uint16_t><<<grid, 128, 0, st>>>(
                prm, m.colors.get(), reinterpret_cast<const std::uint16_t*>(m.pixels.get()), m.coef.get(), m.lut.get(),
                m.encode.get(), reinterpret_cast<std::uint16_t*>(m.output.get()));
        else {
            prm.copyAlpha = false;
            composeKernel<std::uint16_t><<<grid, 128, 0, st>>>(prm, m.colors.get(), nullptr, m.coef.get(), m.lut.get(),
                                                                m.encode.get(),
                                                                reinterpret_cast<std::uint16_t*>(m.output.get()));
        }
    } else {
        const std::uint8_t* src = m.depth == 8 ? m.pixels.get() : nullptr;
        if (!src) prm.copyAlpha = false;
        composeKernel<std::uint8_t><<<grid, 128, 0, st>>>(prm, m.colors.get(), src, m.coef.get(), m.lut.get(),
                                                           m.encode.get(), m.output.get());
    }
    UOT_CUDA_CHECK_LAUNCH();
    // Download in chunks; the host copy out of the pinned buffer of chunk k
    // overlaps the transfer of chunk k+1.
    std::uint8_t* stage = m.downStage.ensure(bytes);
    const std::size_t chunks = (bytes + kChunkBytes - 1) / kChunkBytes;
    std::vector<cudaEvent_t> done(chunks, nullptr);
    struct EventList {
        std::vector<cudaEvent_t>& e;
        ~EventList()
        {
            for (cudaEvent_t x : e)
                if (x) cudaEventDestroy(x);
        }
    } guardEvents{done};
    for (std::size_t k = 0; k < chunks; ++k) {
        const std::size_t off = k * kChunkBytes, len = std::min(kChunkBytes, bytes - off);
        UOT_CUDA_CHECK(cudaMemcpyAsync(stage + off, m.output.get() + off, len, cudaMemcpyDeviceToHost, st));
        UOT_CUDA_CHECK(cudaEventCreateWithFlags(&done[k], cudaEventDisableTiming));
        UOT_CUDA_CHECK(cudaEventRecord(done[k], st));
    }
    for (std::size_t k = 0; k < chunks; ++k) {
        const std::size_t off = k * kChunkBytes, len = std::min(kChunkBytes, bytes - off);
        UOT_CUDA_CHECK(cudaEventSynchronize(done[k]));
        std::memcpy(result.data.data() + off, stage + off, len);
    }
    m.composeSeconds = secondsSince(start);
}

}  // namespace uot::gpu
