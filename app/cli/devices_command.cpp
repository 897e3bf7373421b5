// `uot devices`: the GPUs this build can use (name, memory, multiprocessors,
// compute capability), their measured bandwidth on request, and the gpu-mapuot
// tile parameters chosen by measurement (--tune). Exit 4 without a usable GPU.

#include <cstdio>
#include <string>
#include <vector>

#include "app/cli/arg_parser.h"
#include "app/cli/commands.h"
#include "core/registry/device_registry.h"

namespace uot::cli {

namespace {

std::string jsonString(const std::string& text)
{
    std::string out = "\"";
    for (char c : text) {
        if (c == '"' || c == '\\') out += '\\';
        out += c;
    }
    return out + "\"";
}

}  // namespace

int runDevicesCommand(const std::vector<std::string>& args)
{
    ArgParser parser("uot devices [--bandwidth] [--tune] [--json]",
                     "Lists the GPUs this build can use. Exit 4 when there is none (or no CUDA in this build); with --json "
                     "the object then has an empty \"devices\" list and the reason in \"unavailable\".");
    parser.addFlag("bandwidth", "measure each device's streaming-read and device-to-device copy bandwidth (1 GiB) and fp32 FMA rate");
    parser.addFlag("tune", "time the gpu-mapuot tile parameters on an 8192x8192 float32 matrix and print the best");
    parser.addOption("tune-device", "N", "device used by --tune", "0");
    parser.addFlag("json", "print JSON instead of a table");
    parser.parse(args);
    if (parser.helpRequested()) {
        std::fputs(parser.helpText().c_str(), stdout);
        return kExitOk;
    }
    if (!parser.positionals().empty()) throw UsageError("unexpected argument '" + parser.positionals()[0] + "'");

    const bool json = parser.flag("json");
    const std::string reason = gpuUnavailableReason();
    if (!reason.empty()) {
        // A script asking for JSON still gets an object it can read, with the reason.
        if (json) std::printf("{\"devices\": [], \"unavailable\": %s}\n", jsonString(reason).c_str());
        std::fprintf(stderr, "uot devices: %s\n", reason.c_str());
        return kExitUnavailable;
    }
    const bool bandwidth = parser.flag("bandwidth");
    const DeviceBackend& backend = *findDeviceBackend(DeviceKind::Gpu);
    const std::vector<DeviceDescription> devices = backend.listDevices();
    if (json) std::printf("{\"devices\": [");
    for (std::size_t k = 0; k < devices.size(); ++k) {
        const DeviceDescription& d = devices[k];
        DeviceBandwidth bw;
        if (bandwidth) bw = backend.measureBandwidth(d.ordinal);
        if (json) {
            std::printf("%s{\"ordinal\": %d, \"name\": %s, \"total_memory_mb\": %.0f, \"free_memory_mb\": %.0f, "
                        "\"multiprocessors\": %d, \"compute_capability\": \"%d.%d\", \"l2_cache_mb\": %.1f",
                        k ? ", " : "", d.ordinal, jsonString(d.name).c_str(), d.totalMemoryBytes / 1048576.0,
                        d.freeMemoryBytes / 1048576.0, d.multiprocessors, d.computeCapabilityMajor,
                        d.computeCapabilityMinor, d.l2CacheBytes / 1048576.0);
            if (bandwidth)
                std::printf(", \"read_gbps\": %.1f, \"d2d_copy_gbps\": %.1f, \"fp32_gflops\": %.0f", bw.readGBps,
                            bw.copyGBps, bw.fp32Gflops);
            std::printf("}");
        } else {
            std::printf("gpu:%d  %s\n  memory %.0f MiB (%.0f MiB free), %d multiprocessors, compute capability "
                        "%d.%d, L2 %.1f MiB\n",
                        d.ordinal, d.name.c_str(), d.totalMemoryBytes / 1048576.0, d.freeMemoryBytes / 1048576.0,
                        d.multiprocessors, d.computeCapabilityMajor, d.computeCapabilityMinor,
                        d.l2CacheBytes / 1048576.0);
            if (bandwidth)
                std::printf("  streaming read %.0f GB/s, device-to-device copy %.0f GB/s (read + write), "
                            "fp32 FMA %.0f GFLOP/s\n",
                            bw.readGBps, bw.copyGBps, bw.fp32Gflops);
        }
    }
    if (json) std::printf("]");
    if (parser.flag("tune")) {
        if (!backend.tuneKernels) throw UsageError("--tune: the " + backend.displayName + " backend has no kernel tuning");
        backend.tuneKernels(parser.integer("tune-device"), json);
    }
    if (json) std::printf("}\n");
    return kExitOk;
}

}  // namespace uot::cli
