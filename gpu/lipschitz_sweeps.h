#pragma once
// The chroma's Lipschitz sweeps of regularizeDisplacementLut (core/color/map_regularizer.h)
// on the device, for the GPU colour mapper: the cyclic projections over the lattice's
// edges by the levels of core/color/lipschitz_schedule.h, one block per channel with
// the channel in shared memory, each level's projections at once; the same lattice bit
// for bit (the projections in double, as on the host, without contractions). CUDA types:
// for the .cu files of gpu/ only.
#include <cuda_runtime.h>

#include <cstddef>
#include <vector>

#include "core/color/lipschitz_schedule.h"
#include "core/color/map_regularizer.h"
#include "gpu/cuda_support.h"

namespace uot::gpu {

class LatticeSweeps {
public:
    // A LipschitzSweeper's work (map_regularizer.h) on `stream`, the calling thread
    // sleeping on `idle` (a blocking event) while the device works. The schedules of the
    // last two edge lists are kept (a look bounds the lattice of every node and the one of
    // the nodes next to the colours in turn). Returns false when a channel of the lattice
    // does not fit one block's shared memory. Throws uot::Error on CUDA failures.
    bool run(float* values, std::size_t nodes, int first, const double bound[3], const std::vector<LatticeEdge>& edges,
             cudaStream_t stream, cudaEvent_t idle);

private:
    struct Plan {
        std::vector<LatticeEdge> edges;
        std::size_t nodes = 0;
        LipschitzSchedule schedule;
        detail::DeviceBuffer<LatticeEdge> deviceEdges;
        detail::DeviceBuffer<std::uint32_t> openingStart, openingVisits, groupStart, groupEdges, groupLevels;
    };
    Plan& planFor(const std::vector<LatticeEdge>& edges, std::size_t nodes, cudaStream_t stream);

    Plan m_plans[2];
    int m_next = 0;  // the plan replaced next
    detail::DeviceBuffer<float> m_values;
    detail::DeviceBuffer<unsigned long long> m_worst;
};

}  // namespace uot::gpu
