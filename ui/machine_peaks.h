#pragma once
// The peaks a run is held against: the host's memory bandwidth for CPU variants,
// the GPU's own bandwidth and fp32 compute rate for GPU variants. Measured once
// per process off the GUI thread (core/perf and core/registry cache them).

#include <QString>

#include <string>

// The roofline figures of a run (iteration cost, operational intensity, GB/s),
// which the statistics and comparison views show next to these peaks.
#include "core/perf/roofline.h"

namespace uot::ui {

struct MachinePeaks {
    double hostReadGBps = 0;       // streaming read; 0 = not measured
    double hostReadWriteGBps = 0;
    double gpuReadGBps = 0;        // 0 = no GPU or not measured
    double gpuCopyGBps = 0;        // device-to-device copy (read + write)
    double gpuFp32Gflops = 0;      // fp32 FMA rate: the GPU's compute roof
    double gpuExp2PerSecond = 0;   // the GPU's exp2 probe: its matrix-free variant's limit
    double hostPairsPerSecond = 0; // the host's exp-and-FMA pair probe (core/perf/compute_probe.h), fp32
    QString gpuName;

    // The bandwidth a run of `variant` is held against: its device's streaming
    // read for a read-only iteration, else its read+write (copy) rate.
    double bandwidthFor(const std::string& variant, bool readOnly) const;
    // The compute roof for `variant` in GFLOP/s (0 when not measured): the GPU's
    // fp32 FMA rate for a stored-matrix GPU variant, none for a CPU one; for a
    // matrix-free variant its device's exp-and-FMA roof (perf::matrixFreeRoofGflops).
    double computeFor(const std::string& variant) const;
    // "GPU H100: 3016 GB/s read, ..." or the host's figures, for a person.
    QString describeFor(const std::string& variant) const;
};

// Measures the host (and, when `gpu` and a GPU is usable, GPU 0); each figure is
// 0 where it could not be measured. Blocking: call it off the GUI thread.
MachinePeaks measureMachinePeaks(bool gpu);

// "235 ms" below a second, "1.52 s" above.
QString durationText(double seconds);

}  // namespace uot::ui
