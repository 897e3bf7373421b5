#include "app/mpi/local_gpu.h"

#include <cstdlib>
#include <filesystem>
#include <sstream>
#include <vector>

namespace uot::mpi {

LocalRank localRank(MPI_Comm comm)
{
    MPI_Comm node = MPI_COMM_NULL;
    MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    LocalRank out;
    MPI_Comm_rank(node, &out.rank);
    MPI_Comm_size(node, &out.size);
    MPI_Comm_free(&node);
    return out;
}

std::string pinLocalGpu(const LocalRank& local)
{
    std::vector<std::string> devices;
    if (const char* visible = std::getenv("CUDA_VISIBLE_DEVICES")) {
        std::stringstream list(visible);
        for (std::string item; std::getline(list, item, ',');)
            if (!item.empty()) devices.push_back(item);
    } else {
        std::error_code ec;
        std::size_t count = 0;
        for (const auto& entry : std::filesystem::directory_iterator("/proc/driver/nvidia/gpus", ec)) {
            (void)entry;
            ++count;
        }
        for (std::size_t i = 0; i < count; ++i) devices.push_back(std::to_string(i));
    }
    if (devices.empty()) return {};
    const std::string& chosen = devices[static_cast<std::size_t>(local.rank) % devices.size()];
    ::setenv("CUDA_VISIBLE_DEVICES", chosen.c_str(), 1);
    return "local rank " + std::to_string(local.rank) + " of " + std::to_string(local.size) + " -> GPU " + chosen +
           " (of " + std::to_string(devices.size()) + " visible)";
}

}  // namespace uot::mpi
