#include "core/registry/device_registry.h"

#include <map>
#include <mutex>
#include <stdexcept>

#include "core/transport/point_cloud_cost.h"
#include "core/transport/uot_error.h"

namespace uot {
namespace {

std::vector<DeviceBackend>& backends()
{
    static std::vector<DeviceBackend> all;
    return all;
}

}  // namespace

bool registerDeviceBackend(DeviceBackend backend)
{
    for (const DeviceBackend& b : backends())
        if (b.kind == backend.kind) throw std::logic_error("registerDeviceBackend: two backends of one device kind");
    backends().push_back(std::move(backend));
    return true;
}

const DeviceBackend* findDeviceBackend(DeviceKind kind)
{
    for (const DeviceBackend& b : backends())
        if (b.kind == kind) return &b;
    return nullptr;
}

std::string gpuUnavailableReason()
{
    const DeviceBackend* gpu = findDeviceBackend(DeviceKind::Gpu);
    if (!gpu) return "this program was built without a GPU backend";
    return gpu->unavailableReason();
}

std::uint64_t memoryForMatrix(DeviceKind kind, int ordinal)
{
    if (kind == DeviceKind::Cpu) return availableMemoryBytes() / 2;
    const DeviceBackend* gpu = findDeviceBackend(DeviceKind::Gpu);
    if (!gpu || !gpu->unavailableReason().empty()) return 0;
    for (const DeviceDescription& d : gpu->listDevices())
        if (d.ordinal == ordinal) return d.freeMemoryBytes / 10 * 8;
    return 0;
}

DeviceBandwidth cachedGpuBandwidth(int ordinal)
{
    static std::mutex mutex;
    static std::map<int, DeviceBandwidth> measured;
    std::lock_guard<std::mutex> lock(mutex);
    if (const auto found = measured.find(ordinal); found != measured.end()) return found->second;
    const std::string reason = gpuUnavailableReason();
    if (!reason.empty()) throw Error(ErrorCode::Unavailable, reason);
    const DeviceBandwidth bw = findDeviceBackend(DeviceKind::Gpu)->measureBandwidth(ordinal);
    measured.emplace(ordinal, bw);
    return bw;
}

}  // namespace uot
