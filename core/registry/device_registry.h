#pragma once
// Backend-neutral access to accelerator devices (today: CUDA GPUs). A backend
// registers what it can do here (core/registry/solver_registry.h has its solver
// variants); the pipeline, CLI and studio list devices, measure them and map
// colours on them through this interface, without including the backend.

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/color/color_map.h"
#include "core/color/color_space.h"
#include "core/color/image.h"
#include "core/color/map_regularizer.h"
#include "core/registry/solver_registry.h"

namespace uot {

struct DeviceDescription {
    int ordinal = 0;
    std::string name;
    std::size_t totalMemoryBytes = 0;
    std::size_t freeMemoryBytes = 0;
    int multiprocessors = 0;
    int computeCapabilityMajor = 0;
    int computeCapabilityMinor = 0;
    std::size_t l2CacheBytes = 0;
};

// Streaming-read and device-to-device copy bandwidth in GB/s (bytes read, and
// bytes read + written, per second), the fp32 FMA rate in GFLOP/s, and the
// exponentials per second of the device's fast exp2 (0 = not measured): the
// limit of its matrix-free variant.
struct DeviceBandwidth {
    double readGBps = 0;
    double copyGBps = 0;
    double fp32Gflops = 0;
    double exp2PerSecond = 0;
};

// The per-pixel stages of the colour mapping (core/color/color_map.h) on a
// device; the pipeline uses it when the solve runs on that device. Methods
// throw uot::Error (Device, OutOfMemory, InvalidArgument); the caller falls
// back to the CPU mapping. The GPU backend's implementation documents the
// details (gpu/gpu_color_map.h).
class DeviceColorMapper {
public:
    virtual ~DeviceColorMapper() = default;
    // Keeps `source` and its working-space colours on the device; returns the
    // block means when subsample >= 1 (as downsampleColors).
    virtual LowResolution setSource(const Image& source, WorkingSpace space, int subsample) = 0;
    // Block means of the kept source (subsample >= 1), without uploading it again.
    virtual LowResolution blockMeans(int subsample) = 0;
    // computeDisplacementField(lut, block means, settings) on the device; a
    // backend may support only some guides and throw Unavailable for the others.
    virtual DisplacementField computeField(const DisplacementLut& lut, const MappingSettings& settings) = 0;
    virtual bool hasSource() const = 0;
    // sampleMappedColors() of the kept source: the transferred colours c + d on the
    // grid of pixels whose x and y are multiples of `step` (the residual match's sample).
    virtual std::vector<float> sampleMapped(const DisplacementLut& lut, const DisplacementField& field, int step) = 0;
    // channelQuantiles(sampleMapped(lut, field, step), 1, levels, bins): the residual
    // match's distributions of the transferred colours, the sample kept where it is made.
    virtual ChannelQuantiles sampledQuantiles(const DisplacementLut& lut, const DisplacementField& field, int step,
                                              int levels, int bins) = 0;
    // fitLatticeToField(prior, kept source's colours, field, ..., step, weights)
    // (core/color/look_lattice.h) where the pixels are: the fold of the smoothed field
    // into the lattice.
    virtual DisplacementLut foldLattice(const DisplacementLut& prior, const DisplacementField& field, int step,
                                        const LatticeFieldFit& weights) = 0;
    // composeMapped() of the kept source into `result` (host memory).
    virtual void compose(const DisplacementLut& lut, const DisplacementField& field, const MappingSettings& settings,
                         Image& result) = 0;
    // The Lipschitz sweeps of regularizeDisplacementLut (a LipschitzSweeper's work,
    // core/color/map_regularizer.h) on the device, bit for bit; false when this backend
    // does not run them (then they run on the host).
    virtual bool lipschitzSweeps(float* /*values*/, std::size_t /*nodes*/, int /*first*/, const double* /*bound*/,
                                 const std::vector<LatticeEdge>& /*edges*/)
    {
        return false;
    }
    // The entropic map at the lattice's nodes (an EntropicLattice's work,
    // core/color/color_map.h) on the device; false when this backend does not make it.
    virtual bool entropicLattice(DisplacementLut& /*lut*/, const std::vector<std::size_t>& /*nodes*/, const float* /*yx*/,
                                 const float* /*yy*/, const float* /*yz*/, const float* /*logW*/, std::size_t /*cols*/,
                                 float /*factor*/)
    {
        return false;
    }
    // Wall-clock seconds of the last setSource() / compose().
    virtual double lastSetSourceSeconds() const = 0;
    virtual double lastComposeSeconds() const = 0;
};

// What a device backend registers.
struct DeviceBackend {
    DeviceKind kind = DeviceKind::Gpu;
    std::string displayName;  // e.g. "CUDA"
    std::function<bool()> compiledIn;                        // false for a stub build
    std::function<std::vector<DeviceDescription>()> listDevices;
    std::function<std::string()> unavailableReason;          // empty when a device is usable
    std::function<DeviceBandwidth(int ordinal)> measureBandwidth;  // throws Unavailable
    std::function<std::unique_ptr<DeviceColorMapper>(int ordinal)> createColorMapper;  // throws Unavailable
    // Optional kernel auto-tuning for `uot devices --tune`: prints its report
    // (JSON fragment when json is true) to stdout. Empty when the backend has none.
    std::function<void(int ordinal, bool json)> tuneKernels;
};

// Adds a device backend (one per kind). Returns true for static initialisers.
bool registerDeviceBackend(DeviceBackend backend);

// The backend of that kind, or nullptr when none is linked into this program.
const DeviceBackend* findDeviceBackend(DeviceKind kind);

// Convenience for the GPU: empty when a GPU is usable, otherwise why not.
std::string gpuUnavailableReason();

// The memory a stored kernel matrix may take on a device (for
// matrixFreeInstead): on the CPU half of the available memory, on a GPU 80% of
// the free memory of device `ordinal`; 0 when unknown.
std::uint64_t memoryForMatrix(DeviceKind kind, int ordinal);

// The GPU's bandwidth and compute rate, measured once per device and process
// (later calls return the first measurement). Throws Unavailable without a GPU.
DeviceBandwidth cachedGpuBandwidth(int ordinal);

}  // namespace uot
