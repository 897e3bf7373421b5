#pragma once
// Public face of the GPU backend. No CUDA types here: callers include this
// whether or not CUDA was found at configure time. Without CUDA the library is
// a stub with the same target name (uot::gpu) that reports "not available".

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "core/transport/uot_solver.h"

namespace uot::gpu {

struct DeviceInfo {
    int ordinal = 0;
    std::string name;
    std::size_t totalMemoryBytes = 0;
    std::size_t freeMemoryBytes = 0;
    int multiprocessors = 0;
    int computeCapabilityMajor = 0;
    int computeCapabilityMinor = 0;
    std::size_t l2CacheBytes = 0;
};

// True when this build contains the CUDA backend (it may still find no device).
bool builtWithCuda();

// Devices the CUDA runtime reports; empty when none or when built without CUDA.
std::vector<DeviceInfo> listDevices();

// Empty when at least one usable device exists; otherwise why not, for a person.
std::string unavailableReason();

// Names of the GPU variants ("gpu-pot-style", "gpu-mapuot", "gpu-fused", "gpu-log").
std::vector<std::string> solverNames();

// Creates a GPU variant by name. Throws uot::Error(Unavailable) without CUDA or
// without a device, uot::Error(InvalidArgument) for an unknown name.
std::unique_ptr<UotSolver> createSolver(const std::string& name);

// Measures the device's streaming-read and device-to-device-copy bandwidth in
// GB/s (bytes read, and bytes read + written, per second). Throws Unavailable.
struct BandwidthMeasurement {
    double readGBps = 0;
    double copyGBps = 0;
};
BandwidthMeasurement measureBandwidth(int device, std::size_t bytes = std::size_t(1) << 30);

}  // namespace uot::gpu
