#include "app/mpi/node_ranks.h"

#include <cstdlib>

namespace uot::mpi {

MPI_Comm nodeCommunicator(MPI_Comm comm)
{
    int rank = 0;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm node = MPI_COMM_NULL;
    const char* test = std::getenv("UOT_MPI_TEST_NODE_RANKS");
    const int group = test ? std::atoi(test) : 0;
    if (group > 0)
        MPI_Comm_split(comm, rank / group, rank, &node);
    else if (group < 0)  // nodes of ranks apart
        MPI_Comm_split(comm, rank % -group, rank, &node);
    else
        MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node);
    return node;
}

void* allocateOnRankZero(MPI_Comm node, std::size_t bytes, MPI_Win* window)
{
    int rank = 0;
    MPI_Comm_rank(node, &rank);
    void* mine = nullptr;
    MPI_Win_allocate_shared(rank == 0 ? static_cast<MPI_Aint>(bytes) : 0, 1, MPI_INFO_NULL, node, &mine, window);
    MPI_Aint size = 0;
    int unit = 0;
    void* base = nullptr;
    MPI_Win_shared_query(*window, 0, &size, &unit, &base);
    return base;
}

}  // namespace uot::mpi
