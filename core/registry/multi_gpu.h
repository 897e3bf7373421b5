#pragma once
// The GPUs that the multi-GPU solver variant ("gpu-nccl", registered by gpu/
// when the build has NCCL) spreads one solve over. A process-wide choice, made
// once by the front end (`--devices 0,1`, `--device gpu:all`) before solving;
// the backend reads it when a solve starts.

#include <string>
#include <vector>

namespace uot {

// Sets the device ordinals (empty = every visible GPU).
void setMultiGpuDevices(std::vector<int> devices);
std::vector<int> multiGpuDevices();

// The solver variant that spreads one solve over several GPUs, as its backend
// declared it (registerMultiGpuVariant from a static initialiser), or empty when
// the build has none. Front ends map "auto" and the fused algorithm to it when
// several GPUs are asked for.
void registerMultiGpuVariant(std::string name);
std::string multiGpuVariant();

// Parses "0,1,3" (ordinals, no repeats) or "all" (= empty). Throws
// uot::Error(InvalidArgument) naming the fault.
std::vector<int> parseDeviceList(const std::string& text);

}  // namespace uot
