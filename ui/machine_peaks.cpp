#include "ui/machine_peaks.h"

#include <QObject>

#include <exception>
#include <optional>

#include "core/perf/bandwidth_probe.h"
#include "core/perf/compute_probe.h"
#include "core/perf/roofline.h"
#include "core/registry/device_registry.h"
#include "core/registry/solver_registry.h"

namespace uot::ui {

double MachinePeaks::bandwidthFor(const std::string& variant, bool readOnly) const
{
    if (runsOnGpu(variant)) return readOnly ? gpuReadGBps : gpuCopyGBps;
    return readOnly ? hostReadGBps : hostReadWriteGBps;
}

double MachinePeaks::computeFor(const std::string& variant) const
{
    const std::optional<SolverCapabilities> caps = solverCapabilities(variant);
    const bool gpu = runsOnGpu(variant);
    if (caps && !caps->storesMatrix) return perf::matrixFreeRoofGflops(gpu ? gpuExp2PerSecond : hostPairsPerSecond);
    return gpu ? gpuFp32Gflops : 0.0;
}

QString MachinePeaks::describeFor(const std::string& variant) const
{
    if (runsOnGpu(variant)) {
        if (!(gpuReadGBps > 0)) return QObject::tr("GPU: not measured");
        return QObject::tr("GPU %1: %2 GB/s read, %3 GB/s copy, %4 GFLOP/s fp32")
            .arg(gpuName)
            .arg(gpuReadGBps, 0, 'f', 0)
            .arg(gpuCopyGBps, 0, 'f', 0)
            .arg(gpuFp32Gflops, 0, 'f', 0);
    }
    if (!(hostReadGBps > 0)) return QObject::tr("host: not measured");
    return QObject::tr("host: %1 GB/s read, %2 GB/s read+write").arg(hostReadGBps, 0, 'f', 1).arg(hostReadWriteGBps, 0, 'f', 1);
}

MachinePeaks measureMachinePeaks(bool gpu)
{
    MachinePeaks peaks;
    try {
        const perf::BandwidthResult& host = perf::cachedHostBandwidth();
        peaks.hostReadGBps = host.readGBps;
        peaks.hostReadWriteGBps = host.readWriteGBps;
        peaks.hostPairsPerSecond = perf::measureComputePeak(0, Precision::Fp32, 0.1).pairsPerSecond;
    } catch (const std::exception&) {
    }
    if (gpu && gpuUnavailableReason().empty()) {
        try {
            const DeviceBandwidth bw = cachedGpuBandwidth(0);
            peaks.gpuReadGBps = bw.readGBps;
            peaks.gpuCopyGBps = bw.copyGBps;
            peaks.gpuFp32Gflops = bw.fp32Gflops;
            peaks.gpuExp2PerSecond = bw.exp2PerSecond;
            const auto devices = findDeviceBackend(DeviceKind::Gpu)->listDevices();
            if (!devices.empty()) peaks.gpuName = QString::fromStdString(devices.front().name);
        } catch (const std::exception&) {
        }
    }
    return peaks;
}

QString durationText(double seconds)
{
    if (!(seconds >= 0)) return QStringLiteral("-");
    if (seconds < 1.0) return QObject::tr("%1 ms").arg(1e3 * seconds, 0, 'f', seconds < 0.01 ? 2 : 1);
    return QObject::tr("%1 s").arg(seconds, 0, 'f', 2);
}

}  // namespace uot::ui
