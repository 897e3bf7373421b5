#pragma once
// The GPU backend's own interface, for gpu/ and the GPU tests and benches;
// everything else reaches it through core/registry. Public face of the GPU backend. No CUDA types here: callers include this
// whether or not CUDA was found at configure time. Without CUDA the library is
// a stub with the same target name (uot::gpu) that reports "not available".

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/transport/uot_solver.h"
#include "gpu/mapreduce_config.h"

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

// Creates a GPU variant by name ("gpu-pot-style", "gpu-mapuot", "gpu-fused",
// "gpu-fused-bf16", "gpu-log"; gpu_registration.cpp registers them with their
// capabilities; callers outside gpu/ use core/registry/solver_registry.h). Throws uot::Error(Unavailable) without CUDA or
// without a device, uot::Error(InvalidArgument) for an unknown name.
std::unique_ptr<UotSolver> createSolver(const std::string& name);

// gpu-mapreduce in a given kernel configuration (gpu/mapreduce_config.h; the
// registry's "gpu-mapreduce" is the default one). Throws Unavailable without a
// device, InvalidArgument for an unsupported configuration.
std::unique_ptr<UotSolver> createMapReduceSolver(const MapReduceConfig& config);

// Exponentials per second of the device's special-function units (ex2.approx,
// fp32), measured with a probe kernel: the limit of gpu-mapreduce's passes.
double measureExp2Throughput(int device);

// Measures the device's streaming-read and device-to-device-copy bandwidth in
// GB/s (bytes read, and bytes read + written, per second), and its fp32 FMA
// rate in GFLOP/s (the roofline's compute roof). Throws Unavailable.
struct BandwidthMeasurement {
    double readGBps = 0;
    double copyGBps = 0;
    double fp32Gflops = 0;
};
BandwidthMeasurement measureBandwidth(int device, std::size_t bytes = std::size_t(1) << 30);

// Launch parameters of the GPU kernels. Zero means "choose automatically".
struct Tuning {
    // gpu-mapuot, paper's part 2 (row factors applied, column sums accumulated):
    // blocks of mapTy x mapTx threads, each thread mapNy rows of one 128-bit column vector.
    // Defaults: the best of tuneMapUot on the H100 at 8192^2 fp32 (the paper's
    // RTX 3090 Ti choice, 32/2/8 and 128/8, was 3% and 6% slower there).
    int mapTx = 32;
    int mapTy = 8;
    int mapNy = 2;
    // gpu-mapuot, part 4 (column factors applied, row sums accumulated): 1-D blocks
    // of rowTx threads, rowNy rows per block, 4 vectors per thread per row.
    int rowTx = 256;
    int rowNy = 1;
    // gpu-fused column reduction: number of partial rows the blocks add into
    // (1 = every block atomically adds into one row of column sums; a value >= the
    // block count = one private row per block, reduced in a second stage;
    // 0 = automatic: one row per block, capped by memory to rows/64).
    int fusedPartials = 0;
    // gpu-fused: programmatic dependent launch (compute capability >= 9.0): each
    // pass starts streaming K while the previous column finalize still runs.
    bool programmaticLaunch = true;
    // gpu-fused: blocks per thread-block cluster (compute capability >= 9.0). With
    // 2 or 4 the blocks of a cluster add their column partials on chip (distributed
    // shared memory) and write one partial row per cluster. 1 = no clusters,
    // 0 = automatic (the H100 measurement: 2, or 4 for few rows of 16384-wide
    // fp32; falls back to 1 where clusters cannot launch).
    int fusedCluster = 0;
    // gpu-fused column finalize: partial rows summed side by side per column
    // (8, 16 or 32; 0 = automatic: 8, the fastest measured).
    int finalizeLanes = 0;
    // gpu-fused: the fewest blocks that keep the largest rows-per-block count, so
    // that all blocks finish together (false: one block per free slot, up to two per SM).
    bool fusedEvenGroups = true;
    // A user-given cost matrix: uploaded through page-locked staging on a copy
    // stream, overlapped with the kernel build (false: copied from the caller's
    // pageable memory on the solve's stream, chunk after chunk, for comparison).
    bool overlappedUpload = true;
    // gpu-fused, accelerated (--accel relax|auto): a matrix of up to 768 x 768 entries
    // (palettes) runs up to 512 iterations in one launch of one thread-block cluster,
    // to the device's stop (gpu/cluster_iterations.h); false, or larger: the CUDA
    // graph of one check interval.
    bool clusterIterations = true;
    // gpu-fused, accelerated, where the one-pass kernel runs and the matrix has at
    // most 4096 columns: the step's sweep and decision inside the column half-step
    // kernel, then the commit (two launches after the pass); false, or wider: the
    // column finalize, then the step's two kernels (three).
    bool stepInColumns = true;
    // gpu-mapreduce: the compiled variant of its fast pass (gpu/mapreduce_config.h).
    MapReduceConfig mapReduce;
};

// Creates a GPU variant with explicit launch parameters (see createSolver above).
std::unique_ptr<UotSolver> createSolver(const std::string& name, const Tuning& tuning);

// Tuning used by createSolver(name) from now on in this process (e.g. after tuneMapUot).
void setDefaultTuning(const Tuning& tuning);
Tuning defaultTuning();

// One measured candidate of tuneMapUot.
struct TuningTrial {
    Tuning tuning;
    const char* part = "";  // "part2" (mapTx/mapTy/mapNy varied) or "part4" (rowTx/rowNy varied)
    double ms = 0;          // median device time of that kernel alone, milliseconds
};

// Picks the gpu-mapuot tile parameters (mapTx, mapTy, mapNy, rowTx, rowNy) for this
// device by timing candidate launches on a rows x cols float32 problem held on
// the device. Returns the fastest; every trial is appended to `trials` when given.
// Throws Unavailable without a device, OutOfMemory when the matrix does not fit.
Tuning tuneMapUot(int device, std::size_t rows, std::size_t cols, std::vector<TuningTrial>* trials = nullptr);

// Free and total memory of a device in bytes (cudaMemGetInfo). Throws Unavailable.
struct DeviceMemory {
    std::size_t freeBytes = 0;
    std::size_t totalBytes = 0;
};
DeviceMemory deviceMemory(int device);

// Device contexts (buffers, streams, iteration graphs, upload staging) kept
// across solves: a GPU solver parks its context when it is destroyed after a
// clean solve, and the next solver of the same variant, precision, device and
// tuning takes it back (the studio re-solves one size again and again). A
// context is freed, never reused, after a solve that failed; it frees its
// matrix when the next solve has another size; at most two are parked.
struct DeviceContextStats {
    std::size_t parked = 0;             // contexts parked now
    std::size_t parkedDeviceBytes = 0;  // device memory they hold
    std::uint64_t created = 0;          // contexts created in this process
    std::uint64_t reused = 0;           // solvers that took a parked context
    std::uint64_t discarded = 0;        // contexts freed after a failed solve
};
DeviceContextStats deviceContextStats();
// Frees every parked context now (they are also freed at exit).
void releaseDeviceContexts();

// The cost matrix (rows x cols, row-major) of a point-cloud problem as the GPU
// solvers build it on the device from the points (the dense matrix never
// crosses PCIe on the way in); for checks against the host's cost rows.
std::vector<double> pointCloudCostOnDevice(const PointCloudCost& cost, int device = 0);

}  // namespace uot::gpu
