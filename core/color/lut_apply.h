#pragma once
// A look's 3-D LUT applied to whole video frames at playback speed (no Qt, no
// OpenCV): packed 8- or 16-bit RGB / BGR rows with any stride, tetrahedral
// interpolation as applyCube (core/color/cube_lut.h) computes it, outputs
// rounded to the nearest code value as applyCubeToImage rounds them.
//
// FrameLut prepares the LUT once per look: the lattice as float RGB + pad nodes
// (16 bytes, one vector load per node) and, per channel and input code value,
// the lattice cell and the fraction inside it, computed with applyCube's own
// double-precision formula (so both choose the same cell and weights). The
// per-pixel kernel is branch-free: the tetrahedron comes from a table indexed
// by the three comparisons of the fractions. Two builds of the kernel, chosen at
// run time: AVX2 + FMA (two pixels per 256-bit register) and portable C++.
// Rows are split over OpenMP threads.
//
// FrameLutCache8 is the other option for 8-bit frames: the LUT evaluated once at
// all 2^24 inputs (48 MiB), then one table read per pixel.
// bench/quality/lut_apply_speed.cpp compares the two and applyCubeToImage.

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/color/cube_lut.h"
#include "core/color/image.h"

namespace uot {

// Packed pixel layouts of a frame row: three samples per pixel, no alpha.
enum class FramePixelFormat { Rgb8, Bgr8, Rgb16, Bgr16 };
int bytesPerPixel(FramePixelFormat format);  // 3 or 6
bool isDeep(FramePixelFormat format);        // 16-bit samples (native byte order)
bool isBgr(FramePixelFormat format);

// A frame in host memory: `height` rows of `width` pixels, row y starting at
// data + y * strideBytes (strideBytes >= width * bytesPerPixel(format); 16-bit
// rows must start at even addresses).
struct ConstFrameView {
    const std::uint8_t* data = nullptr;
    int width = 0;
    int height = 0;
    std::size_t strideBytes = 0;
    FramePixelFormat format = FramePixelFormat::Rgb8;
};
struct FrameView {
    std::uint8_t* data = nullptr;
    int width = 0;
    int height = 0;
    std::size_t strideBytes = 0;
    FramePixelFormat format = FramePixelFormat::Rgb8;
    operator ConstFrameView() const { return {data, width, height, strideBytes, format}; }
};
// Views of a tightly packed 8/16-bit RGB uot::Image (3 channels).
ConstFrameView frameViewOf(const Image& image);
FrameView frameViewOf(Image& image);

// The kernel builds. Auto is the best the CPU supports, lowered by the
// environment variable UOT_SIMD=generic (as the solver row kernels).
enum class LutKernelPath { Auto, Generic, Avx2 };
bool lutKernelPathSupported(LutKernelPath path);
LutKernelPath bestLutKernelPath();  // Generic or Avx2
std::string toString(LutKernelPath path);

// One channel's input code value -> lattice cell and fraction.
struct LutAxisEntry {
    std::int32_t offset = 0;  // cell index times the node stride of this channel, in floats
    float fraction = 0;       // position inside the cell, [0, 1]
};

class FrameLut {
public:
    // Validates `lut` (as formatCube does; throws uot::Error(InvalidArgument)).
    explicit FrameLut(const CubeLut& lut);

    int size() const { return m_size; }
    // size^3 nodes of 4 floats (R, G, B, 0), red index fastest.
    const std::vector<float>& nodes() const { return m_nodes; }
    // Per channel (R, G, B): 256 entries for 8-bit codes, 65536 for 16-bit codes.
    const LutAxisEntry* axis8(int channel) const { return m_axis8[channel].data(); }
    const LutAxisEntry* axis16(int channel) const { return m_axis16[channel].data(); }
    // The two inner corners of the tetrahedron, as float offsets from the cell's
    // corner 000, for code = (fr > fg) | (fg > fb) << 1 | (fr > fb) << 2.
    const std::int32_t* tetraFirst() const { return m_first; }
    const std::int32_t* tetraSecond() const { return m_second; }
    std::int32_t farCorner() const { return m_far; }  // offset of corner 111

private:
    int m_size = 0;
    std::vector<float> m_nodes;
    std::vector<LutAxisEntry> m_axis8[3];
    std::vector<LutAxisEntry> m_axis16[3];
    std::int32_t m_first[8] = {};
    std::int32_t m_second[8] = {};
    std::int32_t m_far = 0;
};

// Maps `in` through `lut` into `out` (same width, height and depth; RGB and BGR
// may differ between the two; out may be in itself, same stride). threads <= 0:
// all OpenMP threads. Throws uot::Error(InvalidArgument) for inconsistent views
// or an unsupported path.
void applyLutToFrame(const FrameLut& lut, const ConstFrameView& in, const FrameView& out, int threads = 0,
                     LutKernelPath path = LutKernelPath::Auto);

// The full 8-bit table: out(r, g, b) for all 2^24 inputs, filled by
// applyLutToFrame (so identical to it), 3 bytes an entry plus one of padding.
class FrameLutCache8 {
public:
    explicit FrameLutCache8(const FrameLut& lut, int threads = 0);
    // As applyLutToFrame, for 8-bit frames only.
    void apply(const ConstFrameView& in, const FrameView& out, int threads = 0) const;
    std::size_t bytes() const { return m_table.size(); }

private:
    std::vector<std::uint8_t> m_table;  // index ((r << 16) | (g << 8) | b) * 3, RGB
};

// A frame mapper on a device (the GPU backend's, gpu/lut_apply.h), for a
// sequence of frames: submit() queues a frame and returns once its input may be
// reused; the output is written by the time a later submit() or flush() returns
// (at most inFlight() frames pending). Methods throw uot::Error (Device,
// OutOfMemory, InvalidArgument).
class DeviceFrameLut {
public:
    virtual ~DeviceFrameLut() = default;
    virtual void submit(const ConstFrameView& in, const FrameView& out) = 0;
    virtual void flush() = 0;
    virtual int inFlight() const = 0;
    virtual std::string deviceName() const = 0;
};
// Creates a device mapper for `lut` on device ordinal `device`; throws
// uot::Error(Unavailable) without a usable device.
using DeviceFrameLutFactory = std::function<std::unique_ptr<DeviceFrameLut>(const FrameLut& lut, int device)>;
// Called by a device backend's static registration; returns true.
bool registerDeviceFrameLutFactory(DeviceFrameLutFactory factory);
bool hasDeviceFrameLutFactory();

// What a clip's map loop uses: the GPU when asked for and usable, else the CPU
// kernels, with the reason in fallbackMessage(). A device failure while frames
// run (out of memory, a lost device) moves the remaining frames to the CPU too;
// frames already handed to the device are completed or the error is thrown.
// On the CPU, 8-bit frames switch to the 8-bit table (FrameLutCache8, same
// output) once table8AfterFrames of them have been mapped: building it costs
// about as much as 20 frames through the kernel (bench/quality/lut_apply_speed),
// so a long clip gains and a still image or a short clip never pays for it.
class FrameLutRunner {
public:
    struct Options {
        bool useGpu = false;
        int device = 0;
        int threads = 0;  // CPU threads (<= 0: all)
        LutKernelPath cpuPath = LutKernelPath::Auto;
        int table8AfterFrames = 24;  // < 0: never
    };
    FrameLutRunner(const CubeLut& lut, const Options& options);
    ~FrameLutRunner();
    FrameLutRunner(const FrameLutRunner&) = delete;
    FrameLutRunner& operator=(const FrameLutRunner&) = delete;

    // As DeviceFrameLut::submit (on the CPU the frame is mapped before it returns).
    void submit(const ConstFrameView& in, const FrameView& out);
    void flush();
    bool onDevice() const { return m_device != nullptr; }
    // Frames a submit() may leave pending (their outputs not yet written): the
    // device's inFlight(), 0 on the CPU.
    int inFlight() const { return m_device ? m_device->inFlight() : 0; }
    // Where frames are mapped, e.g. "GPU 0 (NVIDIA H100 80GB HBM3)", "CPU (avx2, 2 threads)"
    // or "CPU (8-bit table, 2 threads)".
    std::string describe() const;
    // Empty when the GPU was not asked for or is in use; otherwise why the CPU maps.
    const std::string& fallbackMessage() const { return m_fallback; }

private:
    FrameLut m_lut;
    Options m_options;
    std::unique_ptr<DeviceFrameLut> m_device;
    std::unique_ptr<FrameLutCache8> m_table8;
    int m_cpuFrames8 = 0;  // 8-bit frames mapped by the CPU kernel
    std::string m_fallback;
};

}  // namespace uot
