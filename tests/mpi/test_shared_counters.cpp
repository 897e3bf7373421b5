// uot-mpi's SharedCounters (app/mpi/shared_counters.h), run under mpirun on 3
// ranks, on one node (processor atomics on a shared window) and with
// UOT_MPI_TEST_NODE_RANKS=1 (every rank a node of its own: MPI_Fetch_and_op):
// every rank takes tickets of two counters as fast as it can, and the tickets
// handed out must be each number from 0 up exactly once. An increment that is not
// atomic hands some number out twice and fails the test.
#include <mpi.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <vector>

#include "app/mpi/shared_counters.h"

int main(int argc, char** argv)
{
    MPI_Init(&argc, &argv);
    int rank = 0, size = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    constexpr int kTakes = 20000;
    int failures = 0;
    {
        uot::mpi::SharedCounters counters(MPI_COMM_WORLD, 2);
        std::vector<std::uint64_t> tickets[2];
        for (int i = 0; i < kTakes; ++i)
            for (int which = 0; which < 2; ++which)
                if (which == 0 || i % 3 == 0) tickets[which].push_back(counters.fetchAndIncrement(which));
        for (int which = 0; which < 2; ++which) {
            const int mine = static_cast<int>(tickets[which].size());
            std::vector<int> counts(static_cast<std::size_t>(size)), offsets(static_cast<std::size_t>(size));
            MPI_Gather(&mine, 1, MPI_INT, counts.data(), 1, MPI_INT, 0, MPI_COMM_WORLD);
            int total = 0;
            for (int r = 0; r < size; ++r) {
                offsets[static_cast<std::size_t>(r)] = total;
                total += counts[static_cast<std::size_t>(r)];
            }
            std::vector<std::uint64_t> all(static_cast<std::size_t>(rank == 0 ? total : 0));
            MPI_Gatherv(tickets[which].data(), mine, MPI_UINT64_T, all.data(), counts.data(), offsets.data(),
                        MPI_UINT64_T, 0, MPI_COMM_WORLD);
            if (rank != 0) continue;
            std::sort(all.begin(), all.end());
            for (std::size_t k = 0; k < all.size(); ++k)
                if (all[k] != k) {
                    std::printf("FAIL: counter %d: the %zu-th smallest ticket is %llu (a number handed out twice or "
                                "skipped)\n",
                                which, k, static_cast<unsigned long long>(all[k]));
                    ++failures;
                    break;
                }
            if (failures == 0)
                std::printf("counter %d: %d tickets over %d ranks, each number once\n", which, total, size);
        }
    }
    MPI_Bcast(&failures, 1, MPI_INT, 0, MPI_COMM_WORLD);
    MPI_Finalize();
    return failures == 0 ? 0 : 1;
}
