#include "core/perf/peak_memory.h"

#include <sys/resource.h>

#include <fstream>
#include <sstream>
#include <string>

namespace uot::perf {
namespace {

// The value in kB of a "Key:   123 kB" line of /proc/self/status, in bytes; 0 when absent.
std::uint64_t statusField(const std::string& key)
{
    std::ifstream in("/proc/self/status");
    std::string line;
    while (std::getline(in, line)) {
        if (line.compare(0, key.size(), key) != 0 || line.size() <= key.size() || line[key.size()] != ':') continue;
        std::istringstream fields(line.substr(key.size() + 1));
        std::uint64_t kb = 0;
        if (fields >> kb) return kb * 1024;
    }
    return 0;
}

}  // namespace

std::uint64_t currentRssBytes() { return statusField("VmRSS"); }

std::uint64_t peakRssBytes()
{
    if (const std::uint64_t hwm = statusField("VmHWM")) return hwm;
    rusage usage{};
    if (getrusage(RUSAGE_SELF, &usage) == 0) return std::uint64_t(usage.ru_maxrss) * 1024;  // kB on Linux
    return 0;
}

bool resetPeakRss()
{
    std::ofstream out("/proc/self/clear_refs");
    if (!out) return false;
    out << "5";
    out.flush();
    return bool(out);
}

}  // namespace uot::perf
