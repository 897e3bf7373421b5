// The prepared LUT, the frame loop over rows, the kernel choice, the 8-bit
// table, the device registration and the runner (core/color/lut_apply.h); the
// portable row kernel. The AVX2 kernel is in lut_apply_avx2.cpp.

#include "core/color/lut_apply.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <omp.h>

#include "core/color/lut_apply_kernels.h"
#include "core/color/lut_apply_pixel.h"
#include "core/transport/uot_error.h"

namespace uot {

int bytesPerPixel(FramePixelFormat format) { return isDeep(format) ? 6 : 3; }
bool isDeep(FramePixelFormat format) { return format == FramePixelFormat::Rgb16 || format == FramePixelFormat::Bgr16; }
bool isBgr(FramePixelFormat format) { return format == FramePixelFormat::Bgr8 || format == FramePixelFormat::Bgr16; }

namespace {

FramePixelFormat rgbFormatOf(const Image& image)
{
    validateImage(image, "frame");
    if (image.channels != 3) throw Error(ErrorCode::InvalidArgument, "frame: a LUT frame view needs 3 channels");
    return image.depth == 16 ? FramePixelFormat::Rgb16 : FramePixelFormat::Rgb8;
}

}  // namespace

ConstFrameView frameViewOf(const Image& image)
{
    const FramePixelFormat f = rgbFormatOf(image);
    return {image.data.data(), image.width, image.height, static_cast<std::size_t>(image.width) * bytesPerPixel(f), f};
}

FrameView frameViewOf(Image& image)
{
    const FramePixelFormat f = rgbFormatOf(image);
    return {image.data.data(), image.width, image.height, static_cast<std::size_t>(image.width) * bytesPerPixel(f), f};
}

// --- kernel choice ---------------------------------------------------------

bool lutKernelPathSupported(LutKernelPath path)
{
    switch (path) {
    case LutKernelPath::Auto:
    case LutKernelPath::Generic: return true;
    case LutKernelPath::Avx2:
#if UOT_HAVE_X86_LUT_KERNELS
        __builtin_cpu_init();
        return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
#else
        return false;
#endif
    }
    return false;
}

LutKernelPath bestLutKernelPath()
{
    static const LutKernelPath best = [] {
        const char* env = std::getenv("UOT_SIMD");
        if (env && std::strcmp(env, "generic") == 0) return LutKernelPath::Generic;
        return lutKernelPathSupported(LutKernelPath::Avx2) ? LutKernelPath::Avx2 : LutKernelPath::Generic;
    }();
    return best;
}

std::string toString(LutKernelPath path)
{
    switch (path) {
    case LutKernelPath::Auto: return "auto";
    case LutKernelPath::Generic: return "generic";
    case LutKernelPath::Avx2: return "avx2";
    }
    return "?";
}

// --- the prepared LUT -----------------------------------------------------

FrameLut::FrameLut(const CubeLut& lut) : m_size(lut.size)
{
    validateCube(lut);
    const std::size_t n = static_cast<std::size_t>(m_size);
    m_nodes.assign(4 * n * n * n, 0.0f);
    for (std::size_t k = 0; k < n * n * n; ++k)
        for (int a = 0; a < 3; ++a) m_nodes[4 * k + a] = lut.values[3 * k + a];
    // Node strides in floats: red fastest (CubeLut::nodeIndex).
    const std::int32_t stride[3] = {4, 4 * m_size, 4 * m_size * m_size};
    for (int a = 0; a < 3; ++a) {
        auto fill = [&](std::vector<LutAxisEntry>& axis, int codes) {
            axis.resize(static_cast<std::size_t>(codes));
            const float maxValue = static_cast<float>(codes - 1);
            for (int c = 0; c < codes; ++c) {
                // The input applyCubeToImage gives applyCube for this code value.
                const CubeAxisPosition p = cubeAxisPosition(lut, a, static_cast<float>(c) / maxValue);
                axis[static_cast<std::size_t>(c)] = {p.cell * stride[a], p.fraction};
            }
        };
        fill(m_axis8[a], 256);
        fill(m_axis16[a], 65536);
    }
    // The tetrahedra of applyCube (cube_lut.cpp), by the comparisons
    // rg = fr > fg, gb = fg > fb, rb = fr > fb: the first inner corner steps along
    // the axis of the largest fraction, the second adds the middle one. Codes that
    // no ordering produces (rg and gb without rb, and the reverse) get any corner:
    // they are never used.
    const std::int32_t r = stride[0], g = stride[1], b = stride[2];
    for (int code = 0; code < 8; ++code) {
        const bool rg = code & 1, gb = code & 2, rb = code & 4;
        std::int32_t first, second;
        if (rg) {
            if (gb) first = r, second = r + g;        // r > g > b
            else if (rb) first = r, second = r + b;   // r > b >= g
            else first = b, second = r + b;           // b >= r > g
        } else {
            if (!gb && !rb) first = b, second = g + b;  // b >= g >= r (ties: any side, zero weight)
            else if (!gb) first = b, second = g + b;    // b >= g, r > b: not an ordering
            else if (rb) first = g, second = r + g;     // g >= r > b
            else first = g, second = g + b;             // g > b >= r
        }
        m_first[code] = first;
        m_second[code] = second;
    }
    m_far = r + g + b;
}

// --- the portable kernel --------------------------------------------------

namespace lutkernels {
namespace {

template <bool Deep, bool InBgr, bool OutBgr>
void mapRowT(const FrameLut& lut, const std::uint8_t* in, std::uint8_t* out, int width)
{
    const float* nodes = lut.nodes().data();
    constexpr float maxValue = Deep ? 65535.0f : 255.0f;
    constexpr int ro = OutBgr ? 2 : 0, bo = OutBgr ? 0 : 2;
    for (int x = 0; x < width; ++x) {
        const LutAxisEntry *r, *g, *b;
        pixelAxes<Deep, InBgr>(lut, in, x, r, g, b);
        const LutTetra t = locateTetra(lut, *r, *g, *b);
        float v[3];
        for (int a = 0; a < 3; ++a) {
            float sum = 0.0f;
            for (int k = 0; k < 4; ++k) sum += t.weight[k] * nodes[t.node[k] + a];
            v[a] = std::clamp(sum, 0.0f, 1.0f) * maxValue + 0.5f;
        }
        if constexpr (Deep) {
            const std::uint16_t s[3] = {static_cast<std::uint16_t>(v[ro]), static_cast<std::uint16_t>(v[1]),
                                        static_cast<std::uint16_t>(v[bo])};
            std::memcpy(out + static_cast<std::size_t>(x) * 6, s, sizeof s);
        } else {
            std::uint8_t* p = out + static_cast<std::size_t>(x) * 3;
            p[0] = static_cast<std::uint8_t>(v[ro]);
            p[1] = static_cast<std::uint8_t>(v[1]);
            p[2] = static_cast<std::uint8_t>(v[bo]);
        }
    }
}

}  // namespace

void mapRowGeneric(const FrameLut& lut, const std::uint8_t* in, FramePixelFormat inFormat, std::uint8_t* out,
                   FramePixelFormat outFormat, int width)
{
    forFormats(inFormat, outFormat, [&](auto deep, auto inBgr, auto outBgr) {
        mapRowT<decltype(deep)::value, decltype(inBgr)::value, decltype(outBgr)::value>(lut, in, out, width);
    });
}

#if !UOT_HAVE_X86_LUT_KERNELS
void mapRowAvx2(const FrameLut&, const std::uint8_t*, FramePixelFormat, std::uint8_t*, FramePixelFormat, int)
{
    throw Error(ErrorCode::Unavailable, "the AVX2 LUT kernel is not built for this processor");
}
#endif

}  // namespace lutkernels

// --- frames ---------------------------------------------------------------

namespace {

void checkViews(const ConstFrameView& in, const FrameView& out)
{
    auto bad = [](const std::string& what) { throw Error(ErrorCode::InvalidArgument, "LUT frame: " + what); };
    if (!in.data || !out.data || in.width <= 0 || in.height <= 0) bad("empty frame");
    if (in.width != out.width || in.height != out.height) bad("input and output sizes differ");
    if (isDeep(in.format) != isDeep(out.format)) bad("input and output depths differ");
    const std::size_t row = static_cast<std::size_t>(in.width) * bytesPerPixel(in.format);
    if (in.strideBytes < row || out.strideBytes < row) bad("a row stride is shorter than a row");
    if (in.data == out.data && in.strideBytes != out.strideBytes) bad("in place needs the same stride");
}

int threadCount(int threads) { return threads > 0 ? threads : omp_get_max_threads(); }

}  // namespace

void applyLutToFrame(const FrameLut& lut, const ConstFrameView& in, const FrameView& out, int threads, LutKernelPath path)
{
    checkViews(in, out);
    if (path == LutKernelPath::Auto) path = bestLutKernelPath();
    if (!lutKernelPathSupported(path))
        throw Error(ErrorCode::InvalidArgument, "LUT frame: the " + toString(path) + " kernel is not supported here");
    const auto row = path == LutKernelPath::Avx2 ? lutkernels::mapRowAvx2 : lutkernels::mapRowGeneric;
    const int t = std::min(threadCount(threads), in.height);
    // Small frames stay on the calling thread (a 256x64 tile is ~50 us).
#pragma omp parallel for num_threads(t) schedule(static) if (static_cast<long long>(in.width) * in.height > 16384)
    for (int y = 0; y < in.height; ++y)
        row(lut, in.data + static_cast<std::size_t>(y) * in.strideBytes, in.format,
            out.data + static_cast<std::size_t>(y) * out.strideBytes, out.format, in.width);
}

// --- the 8-bit table ------------------------------------------------------

FrameLutCache8::FrameLutCache8(const FrameLut& lut, int threads)
{
    // All inputs as a 256 x 65536 frame, red fastest: row (b << 8 | g).
    const std::size_t entries = std::size_t(1) << 24;
    m_table.resize(entries * 3 + 1);  // the pad lets apply() read 4 bytes at the last entry
    std::vector<std::uint8_t> inputs(entries * 3);
    const int t = threadCount(threads);
#pragma omp parallel for num_threads(t) schedule(static)
    for (int row = 0; row < 65536; ++row)
        for (int r = 0; r < 256; ++r) {
            std::uint8_t* p = &inputs[(static_cast<std::size_t>(row) * 256 + r) * 3];
            p[0] = static_cast<std::uint8_t>(r), p[1] = static_cast<std::uint8_t>(row & 255),
            p[2] = static_cast<std::uint8_t>(row >> 8);
        }
    // Written in the table's own order (index r << 16 | g << 8 | b) by mapping
    // the inputs as BGR: row (r << 8 | g), column b.
    applyLutToFrame(lut, {inputs.data(), 256, 65536, 768, FramePixelFormat::Bgr8},
                    {m_table.data(), 256, 65536, 768, FramePixelFormat::Rgb8}, threads);
}

void FrameLutCache8::apply(const ConstFrameView& in, const FrameView& out, int threads) const
{
    checkViews(in, out);
    if (isDeep(in.format)) throw Error(ErrorCode::InvalidArgument, "LUT frame: the 8-bit table maps 8-bit frames only");
    const std::uint8_t* table = m_table.data();
    const bool inBgr = isBgr(in.format), outBgr = isBgr(out.format);
    const int t = std::min(threadCount(threads), in.height);
#pragma omp parallel for num_threads(t) schedule(static) if (static_cast<long long>(in.width) * in.height > 16384)
    for (int y = 0; y < in.height; ++y) {
        const std::uint8_t* src = in.data + static_cast<std::size_t>(y) * in.strideBytes;
        std::uint8_t* dst = out.data + static_cast<std::size_t>(y) * out.strideBytes;
        for (int x = 0; x < in.width; ++x, src += 3, dst += 3) {
            const std::uint32_t r = src[inBgr ? 2 : 0], g = src[1], b = src[inBgr ? 0 : 2];
            const std::uint8_t* e = table + static_cast<std::size_t>(r << 16 | g << 8 | b) * 3;
            const std::uint8_t v0 = e[0], v1 = e[1], v2 = e[2];
            dst[0] = outBgr ? v2 : v0;
            dst[1] = v1;
            dst[2] = outBgr ? v0 : v2;
        }
    }
}

// --- device registration and the runner ------------------------------------

namespace {

DeviceFrameLutFactory& deviceFactory()
{
    static DeviceFrameLutFactory factory;
    return factory;
}

}  // namespace

bool registerDeviceFrameLutFactory(DeviceFrameLutFactory factory)
{
    deviceFactory() = std::move(factory);
    return true;
}

bool hasDeviceFrameLutFactory() { return static_cast<bool>(deviceFactory()); }

FrameLutRunner::FrameLutRunner(const CubeLut& lut, const Options& options) : m_lut(lut), m_options(options)
{
    if (!options.useGpu) return;
    if (!hasDeviceFrameLutFactory()) {
        m_fallback = "GPU LUT mapping unavailable: this program has no GPU backend linked; mapping frames on the CPU";
        return;
    }
    try {
        m_device = deviceFactory()(m_lut, options.device);
    } catch (const Error& e) {
        m_fallback = std::string("GPU LUT mapping unavailable (") + e.what() + "); mapping frames on the CPU";
    }
}

FrameLutRunner::~FrameLutRunner()
{
    if (!m_device) return;
    try {
        m_device->flush();
    } catch (const Error&) {
        // The owner that wanted the frames called flush() and saw the error.
    }
}

void FrameLutRunner::submit(const ConstFrameView& in, const FrameView& out)
{
    if (m_device) {
        try {
            m_device->submit(in, out);
            return;
        } catch (const Error& e) {
            if (e.code() == ErrorCode::InvalidArgument) throw;
            // Frames already on the device: complete them, or give up (their outputs are lost).
            const std::string reason = e.what();
            m_device->flush();
            m_device.reset();
            m_fallback = "GPU LUT mapping failed (" + reason + "); mapping the remaining frames on the CPU";
        }
    }
    if (!isDeep(in.format) && m_options.table8AfterFrames >= 0) {
        if (!m_table8 && m_cpuFrames8 >= m_options.table8AfterFrames)
            m_table8 = std::make_unique<FrameLutCache8>(m_lut, m_options.threads);
        if (m_table8) {
            m_table8->apply(in, out, m_options.threads);
            return;
        }
        ++m_cpuFrames8;
    }
    applyLutToFrame(m_lut, in, out, m_options.threads, m_options.cpuPath);
}

void FrameLutRunner::flush()
{
    if (m_device) m_device->flush();
}

std::string FrameLutRunner::describe() const
{
    if (m_device) return m_device->deviceName();
    const LutKernelPath path = m_options.cpuPath == LutKernelPath::Auto ? bestLutKernelPath() : m_options.cpuPath;
    return "CPU (" + (m_table8 ? std::string("8-bit table") : toString(path)) + ", " + std::to_string(threadCount(m_options.threads)) + " threads)";
}

}  // namespace uot
