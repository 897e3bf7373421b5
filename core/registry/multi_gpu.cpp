#include "core/registry/multi_gpu.h"

#include <algorithm>
#include <mutex>

#include "core/transport/uot_error.h"

namespace uot {

namespace {
std::mutex& devicesMutex()
{
    static std::mutex m;
    return m;
}
std::vector<int>& chosenDevices()
{
    static std::vector<int> devices;
    return devices;
}
}  // namespace

void setMultiGpuDevices(std::vector<int> devices)
{
    std::lock_guard lock(devicesMutex());
    chosenDevices() = std::move(devices);
}

std::vector<int> multiGpuDevices()
{
    std::lock_guard lock(devicesMutex());
    return chosenDevices();
}

namespace {
std::string& variantName()
{
    static std::string name;
    return name;
}
}  // namespace

void registerMultiGpuVariant(std::string name) { variantName() = std::move(name); }
std::string multiGpuVariant() { return variantName(); }

std::vector<int> parseDeviceList(const std::string& text)
{
    if (text == "all") return {};
    std::vector<int> out;
    std::vector<std::string> items;
    for (std::size_t start = 0;;) {  // every item, an empty one before or after a comma included
        const std::size_t comma = text.find(',', start);
        items.push_back(text.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
        if (comma == std::string::npos) break;
        start = comma + 1;
    }
    for (const std::string& item : items) {
        std::size_t used = 0;
        int ordinal = -1;
        try {
            ordinal = std::stoi(item, &used);
        } catch (const std::exception&) {
            used = 0;
        }
        if (item.empty() || used != item.size() || ordinal < 0)
            throw Error(ErrorCode::InvalidArgument,
                        "device list '" + text + "': '" + item + "' is not a GPU ordinal (use e.g. 0,1 or all)");
        if (std::find(out.begin(), out.end(), ordinal) != out.end())
            throw Error(ErrorCode::InvalidArgument, "device list '" + text + "' names GPU " + std::to_string(ordinal) + " twice");
        out.push_back(ordinal);
    }
    if (out.empty()) throw Error(ErrorCode::InvalidArgument, "device list is empty (use e.g. 0,1 or all)");
    return out;
}

}  // namespace uot
