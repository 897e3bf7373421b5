#pragma once
// The GPU backend's multi-GPU solver ("gpu-nccl"), for gpu/ and the GPU tests
// and benches; everything else reaches it through the solver registry. No CUDA
// or NCCL types here: without NCCL the build has a stub that says so.
//
// gpu-fused split over several GPUs of one process, one NCCL communicator per
// GPU (ncclCommInitAll): GPU g holds rows [r_g, r_{g+1}) of K (rows split
// evenly; a GPU may hold none). An iteration on every GPU: the fused pass over
// its rows (u of its rows, and its column partials K^T u), the column partials
// summed across GPUs with ncclAllReduce, then v = (b / colsum)^fb on every GPU
// (v is replicated). The local rows go in `chunks` pieces: the all-reduce of a
// piece's column sums runs on a communication stream while the next piece is
// computed, so only the last piece's all-reduce is exposed. The stopping rule is
// gpu-fused's (maxima reduced over the GPUs), so on one GPU it takes the same
// iterations. fp32, plain iteration (no translation-invariant mode, no
// relaxation: they are reported as not applied).

#include <memory>
#include <string>
#include <vector>

#include "core/transport/uot_solver.h"

namespace uot::gpu {

// True when this build has NCCL (the multi-GPU solver is real, not the stub).
bool builtWithNccl();

// Empty when gpu-nccl can run here (NCCL built in and a GPU present), else why not.
std::string ncclUnavailableReason();

// gpu-nccl over `devices` (empty = the list of multiGpuDevices() at solve time,
// and when that is empty every visible GPU), the local rows in `chunks` pieces
// (1 = no overlap of the all-reduce). Throws uot::Error(Unavailable) without
// NCCL or a device; a bad ordinal fails the solve with InvalidArgument.
std::unique_ptr<UotSolver> createNcclSolver(std::vector<int> devices = {}, int chunks = 2);

}  // namespace uot::gpu
