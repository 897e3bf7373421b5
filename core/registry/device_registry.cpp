#include "core/registry/device_registry.h"

#include <stdexcept>

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

}  // namespace uot
