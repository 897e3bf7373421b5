// The CUDA backend: registers the GPU solver variants and the GPU device
// backend (device list, bandwidth probe, colour mapper, kernel tuning) with the
// core registries. Plain C++, built with and without CUDA: without it the same
// variants are listed as unavailable, with the reason. Linked whole (its static
// initialiser is the point) through uot::solvers.

#include <cstdio>

#include "core/registry/batched_solver_registry.h"
#include "core/registry/device_registry.h"
#include "core/registry/multi_gpu.h"
#include "core/registry/solver_registry.h"
#include "gpu/batched_solver.h"
#include "gpu/gpu_backend.h"
#include "gpu/gpu_color_map.h"
#include "gpu/gpu_solver.h"
#include "gpu/nccl_solver.h"

namespace uot::gpu {
namespace {


void registerGpu(std::string name, std::string description, SolverCapabilities caps, detail::Variant variant)
{
    caps.device = DeviceKind::Gpu;
    // The one-pass gpu-fused, not its cuBLAS fallback for very wide rows.
    caps.matrixSweepsPerIteration = detail::sweepsFor(variant);
    const std::string created = name;
    registerSolver({std::move(name), std::move(description), std::move(caps),
                    [created] { return createSolver(created); }, [] { return unavailableReason(); }});
}

void printTuning(int device, bool json)
{
    std::vector<TuningTrial> trials;
    const Tuning best = tuneMapUot(device, 8192, 8192, &trials);
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

bool registerCudaBackend()
{
    SolverCapabilities potStyle;
    potStyle.algorithm = "pot-style";
    potStyle.overRelaxation = true;
    potStyle.stabilizedFallback = "gpu-log";
    registerGpu("gpu-pot-style", "two cuBLAS matrix-vector passes per iteration on the GPU (the POT-style baseline)",
                potStyle, detail::Variant::PotStyle);

    SolverCapabilities mapuot;
    mapuot.algorithm = "mapuot";
    mapuot.readOnlyMatrix = false;
    mapuot.overRelaxation = true;  // part 4 puts its matrix to the settled iterate (launchMapRealign)
    mapuot.stabilizedFallback = "gpu-log";
    registerGpu("gpu-mapuot", "MAP-UOT's in-place rescaling kernels on the GPU (exact UOT form): two kernels, each a read and a write of K",
                mapuot, detail::Variant::MapUot);

    SolverCapabilities fused;
    fused.algorithm = "fused";
    fused.overRelaxation = true;
    fused.stabilizedFallback = "gpu-log";
    fused.deviceDefault = true;
    registerGpu("gpu-fused", "one read-only pass over K per iteration on the GPU: the fastest exact GPU variant", fused,
                detail::Variant::Fused);

    SolverCapabilities bf16;
    bf16.algorithm = "fused-bf16";
    bf16.overRelaxation = true;
    bf16.fp64 = false;
    bf16.storedEntryBytes = 2;
    bf16.stabilizedFallback = "gpu-log";
    registerGpu("gpu-fused-bf16", "gpu-fused with K stored as bfloat16 (half the traffic; fp32 solves only)", bf16,
                detail::Variant::Fused);

    SolverCapabilities log;
    log.algorithm = "log";
    log.overRelaxation = true;
    log.logDomain = true;
    log.transcendentalsPerEntry = 2;
    registerGpu("gpu-log", "log-domain passes on the GPU (rows, then columns): stable for any eps (used automatically on underflow)",
                log, detail::Variant::Log);

    SolverCapabilities mapreduce;
    mapreduce.device = DeviceKind::Gpu;
    mapreduce.algorithm = "mapreduce";
    mapreduce.fp64 = false;
    mapreduce.denseCost = false;
    mapreduce.storesMatrix = false;
    mapreduce.logDomain = true;
    mapreduce.overRelaxation = true;  // relaxed rows, then the shared step kernel (relaxed_passes.h)
    mapreduce.matrixSweepsPerIteration = 0;
    mapreduce.transcendentalsPerEntry = 2;  // one exponential per entry in each of the two passes
    // Faster than gpu-fused from 8192^2 on (H100: 0.062 vs 0.102 ms; slower at 4096^2, 0.041 vs 0.034 ms).
    mapreduce.fasterFromEntries = std::uint64_t(8192) * 8192;
    registerSolver({"gpu-mapreduce",
                    "matrix-free log-domain passes on the GPU (KeOps-style map-reduce over two point clouds, fp32): "
                    "memory O(M + N), any eps",
                    mapreduce, [] { return createSolver("gpu-mapreduce"); }, [] { return unavailableReason(); }});

    // One solve over several GPUs (NCCL); the GPUs are core/registry/multi_gpu.h's choice.
    SolverCapabilities nccl;
    nccl.device = DeviceKind::Gpu;
    nccl.algorithm = "fused-nccl";
    nccl.fp64 = false;
    nccl.overRelaxation = true;  // TI shift and relaxed step on the first GPU, over the gathered rows
    registerSolver({"gpu-nccl",
                    "gpu-fused with the rows split over several GPUs (--devices 0,1 or --device gpu:all), the column "
                    "sums all-reduced by NCCL (fp32; plain, TI and over-relaxed iterations)",
                    nccl, [] { return createNcclSolver(); }, [] { return ncclUnavailableReason(); }});
    registerMultiGpuVariant("gpu-nccl");

    // Many palette problems per launch (the batch engine's GPU path): TI and
    // over-relaxed iterations; its log-sum-exp runs in fp32.
    BatchedSolverCapabilities batched;
    batched.translationInvariant = true;
    batched.overRelaxation = true;
    registerBatchedSolver({"gpu-batched",
                           "many point-cloud problems (dimension <= 3) in one launch sequence on the GPU: "
                           "log-domain, matrix-free, per-problem convergence and over-relaxation",
                           batched, [] { return createBatchedSolver(); },
                           [] { return unavailableReason(); }});

    DeviceBackend device;
    device.kind = DeviceKind::Gpu;
    device.displayName = "CUDA";
    device.compiledIn = [] { return builtWithCuda(); };
    device.listDevices = [] {
        std::vector<DeviceDescription> out;
        for (const DeviceInfo& d : gpu::listDevices())
            out.push_back({d.ordinal, d.name, d.totalMemoryBytes, d.freeMemoryBytes, d.multiprocessors,
                           d.computeCapabilityMajor, d.computeCapabilityMinor, d.l2CacheBytes});
        return out;
    };
    device.unavailableReason = [] { return unavailableReason(); };
    device.measureBandwidth = [](int ordinal) {
        const BandwidthMeasurement bw = measureBandwidth(ordinal);
        return DeviceBandwidth{bw.readGBps, bw.copyGBps, bw.fp32Gflops, measureExp2Throughput(ordinal)};
    };
    device.createColorMapper = [](int ordinal) -> std::unique_ptr<DeviceColorMapper> {
        return std::make_unique<ColorMapper>(ordinal);
    };
    device.tuneKernels = printTuning;
    return registerDeviceBackend(std::move(device));
}

const bool registered = registerCudaBackend();

}  // namespace
}  // namespace uot::gpu
