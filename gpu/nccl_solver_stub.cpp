// gpu-nccl when the build has no NCCL: the same interface, saying so.

#include "core/transport/uot_error.h"
#include "gpu/nccl_solver.h"

namespace uot::gpu {

namespace {
const char* kNoNccl =
    "this build has no multi-GPU support (NCCL was not found, UOT_NCCL=OFF, or no CUDA at configure time); "
    "install NCCL (nccl.h, libnccl) and reconfigure, or use gpu-fused on one GPU";
}

bool builtWithNccl() { return false; }
std::string ncclUnavailableReason() { return kNoNccl; }
std::unique_ptr<UotSolver> createNcclSolver(std::vector<int>, int) { throw Error(ErrorCode::Unavailable, kNoNccl); }

}  // namespace uot::gpu
