// `uot devices`: the GPUs this build can use (name, memory, multiprocessors,
// compute capability), their measured bandwidth on request, and the gpu-mapuot
// tile parameters chosen by measurement (--tune). Exit 4 without a usable GPU.

#include <cstdio>
#include <string>
#include <vector>

#include "app/cli/arg_parser.h"
#include "app/cli/commands.h"
#include "gpu/gpu_backend.h"

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
                     "Lists the GPUs this build can use. Exit 4 when there is none (or no CUDA in this build).");
    parser.addFlag("bandwidth", "measure each device's streaming-read and device-to-device copy bandwidth (1 GiB)");
    parser.addFlag("tune", "time the gpu-mapuot tile parameters on an 8192x8192 float32 matrix and print the best");
    parser.addOption("tune-device", "N", "device used by --tune", "0");
    parser.addFlag("json", "print JSON instead of a table");
    parser.parse(args);
    if (parser.helpRequested()) {
        std::fputs(parser.helpText().c_str(), stdout);
        return kExitOk;
    }
    if (!parser.positionals().empty()) throw UsageError("unexpected argument '" + parser.positionals()[0] + "'");

    const std::string reason = gpu::unavailableReason();
    if (!reason.empty()) {
        std::fprintf(stderr, "uot devices: %s\n", reason.c_str());
        return kExitUnavailable;
    }
    const bool json = parser.flag("json");
    const bool bandwidth = parser.flag("bandwidth");
    const std::vector<gpu::DeviceInfo> devices = gpu::listDevices();
    if (json) std::printf("{\"devices\": [");
    for (std::size_t k = 0; k < devices.size(); ++k) {
        const gpu::DeviceInfo& d = devices[k];
        gpu::BandwidthMeasurement bw;
        if (bandwidth) bw = gpu::measureBandwidth(d.ordinal);
        if (json) {
            std::printf("%s{\"ordinal\": %d, \"name\": %s, \"total_memory_mb\": %.0f, \"free_memory_mb\": %.0f, "
                        "\"multiprocessors\": %d, \"compute_capability\": \"%d.%d\", \"l2_cache_mb\": %.1f",
                        k ? ", " : "", d.ordinal, jsonString(d.name).c_str(), d.totalMemoryBytes / 1048576.0,
                        d.freeMemoryBytes / 1048576.0, d.multiprocessors, d.computeCapabilityMajor,
                        d.computeCapabilityMinor, d.l2CacheBytes / 1048576.0);
            if (bandwidth) std::printf(", \"read_gbps\": %.1f, \"d2d_copy_gbps\": %.1f", bw.readGBps, bw.copyGBps);
            std::printf("}");
        } else {
            std::printf("gpu:%d  %s\n  memory %.0f MiB (%.0f MiB free), %d multiprocessors, compute capability "
                        "%d.%d, L2 %.1f MiB\n",
                        d.ordinal, d.name.c_str(), d.totalMemoryBytes / 1048576.0, d.freeMemoryBytes / 1048576.0,
                        d.multiprocessors, d.computeCapabilityMajor, d.computeCapabilityMinor,
                        d.l2CacheBytes / 1048576.0);
            if (bandwidth)
                std::printf("  streaming read %.0f GB/s, device-to-device copy %.0f GB/s (read + write)\n", bw.readGBps,
                            bw.copyGBps);
        }
    }
    if (json) std::printf("]");
    if (parser.flag("tune")) {
        const int device = parser.integer("tune-device");
        std::vector<gpu::TuningTrial> trials;
        const gpu::Tuning best = gpu::tuneMapUot(device, 8192, 8192, &trials);
        if (json) {
            std::printf(", \"mapuot_tuning\": {\"mapTx\": %d, \"mapTy\": %d, \"mapNy\": %d, \"rowTx\": %d, "
                        "\"rowNy\": %d, \"trials\": [",
                        best.mapTx, best.mapTy, best.mapNy, best.rowTx, best.rowNy);
            for (std::size_t k = 0; k < trials.size(); ++k) {
                const auto& t = trials[k];
                std::printf("%s{\"part\": \"%s\", \"mapTx\": %d, \"mapTy\": %d, \"mapNy\": %d, \"rowTx\": %d, "
                            "\"rowNy\": %d, \"ms\": %.4f}",
                            k ? ", " : "", t.part, t.tuning.mapTx, t.tuning.mapTy, t.tuning.mapNy, t.tuning.rowTx,
                            t.tuning.rowNy, t.ms);
            }
            std::printf("]}");
        } else {
            std::printf("gpu-mapuot tiles on gpu:%d (8192x8192 fp32, %zu candidates timed): part 2 Tx=%d Ty=%d Ny=%d, "
                        "part 4 Tx=%d Ny=%d\n",
                        device, trials.size(), best.mapTx, best.mapTy, best.mapNy, best.rowTx, best.rowNy);
        }
    }
    if (json) std::printf("}\n");
    return kExitOk;
}

}  // namespace uot::cli
