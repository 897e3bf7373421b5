// The chroma's Lipschitz sweeps on the device (lipschitz_sweeps.h).

#include "gpu/lipschitz_sweeps.h"

#include <algorithm>
#include <cstring>

#include "core/transport/uot_error.h"

namespace uot::gpu {

namespace {

constexpr int kSweepThreads = 1024;

struct SweepPlan {
    const LatticeEdge* edges;
    const std::uint32_t *openingStart, *openingVisits, *groupStart, *groupEdges, *groupLevels;
    std::uint32_t openingLevels, levels, nodes;
    int opening, period, first;
    double bound[3];
    int limit[3];
};

// One projection of map_regularizer.cpp's sweeps: the edge's two values moved
// symmetrically onto its bound, in double and rounded to float as there; the sweep's
// largest excess over the bound (relative) kept in *worst (positive doubles order as
// their bits).
__device__ void projectEdge(float* v, const LatticeEdge& e, const double* bound, unsigned long long* worst)
{
    const float a = v[e.node], b = v[e.next];
    const double d = __dsub_rn(static_cast<double>(b), static_cast<double>(a));
    const double edgeBound = bound[e.axis];
    const double excess = __dsub_rn(fabs(d), edgeBound);
    if (excess <= 0) return;
    const double ratio = __ddiv_rn(excess, edgeBound);
    if (ratio > 0) atomicMax(worst, static_cast<unsigned long long>(__double_as_longlong(ratio)));
    const double move = __dmul_rn(__dmul_rn(0.5, excess), d > 0 ? 1.0 : -1.0);
    v[e.node] = __double2float_rn(__dadd_rn(static_cast<double>(a), move));
    v[e.next] = __double2float_rn(__dsub_rn(static_cast<double>(b), move));
}

// Block b: channel first + b of `values` (nodes x 3), its sweeps up to limit[c] level by level.
__global__ void __launch_bounds__(kSweepThreads) lipschitzSweepKernel(SweepPlan p, float* values,
                                                                      unsigned long long* worst)
{
    extern __shared__ float v[];
    __shared__ unsigned long long w[kLipschitzSweeps];
    const int c = p.first + static_cast<int>(blockIdx.x);
    const std::uint32_t t = threadIdx.x, stride = blockDim.x;
    for (std::uint32_t i = t; i < p.nodes; i += stride) v[i] = values[3 * static_cast<std::size_t>(i) + c];
    for (std::uint32_t i = t; i < kLipschitzSweeps; i += stride) w[i] = 0;
    __syncthreads();
    const int limit = p.limit[c];
    for (std::uint32_t level = 0; level < p.levels; ++level) {
        if (level < p.openingLevels)
            for (std::uint32_t k = p.openingStart[level] + t; k < p.openingStart[level + 1]; k += stride) {
                const std::uint32_t visit = p.openingVisits[k];
                const int sweep = static_cast<int>(visit & 7u);
                if (sweep < limit) projectEdge(v, p.edges[visit >> 3], p.bound, w + sweep);
            }
        const std::uint32_t r = level % static_cast<std::uint32_t>(p.period);
        for (std::uint32_t k = p.groupStart[r] + t; k < p.groupStart[r + 1]; k += stride) {
            const std::uint32_t at = p.groupLevels[k];
            if (at > level) break;  // ascending in a group: the rest come later
            const int sweep = p.opening + static_cast<int>((level - at) / static_cast<std::uint32_t>(p.period));
            if (sweep < limit) projectEdge(v, p.edges[p.groupEdges[k]], p.bound, w + sweep);
        }
        __syncthreads();
    }
    for (std::uint32_t i = t; i < p.nodes; i += stride) values[3 * static_cast<std::size_t>(i) + c] = v[i];
    for (std::uint32_t i = t; i < kLipschitzSweeps; i += stride) worst[c * kLipschitzSweeps + i] = w[i];
}

// Uploads `host` into `buffer`, grown to `capacity` elements the first time it is too
// small: the buffers of a lattice's plans are allocated once for the largest plan of its
// size, since freeing a device buffer waits for the work of every stream (a batch maps
// on many threads, each with a long sweep in flight).
template <typename T>
void upload(detail::DeviceBuffer<T>& buffer, const std::vector<T>& host, std::size_t capacity, cudaStream_t stream)
{
    if (buffer.size() < std::max<std::size_t>(1, host.size())) buffer.allocate(std::max({std::size_t(1), host.size(), capacity}));
    if (!host.empty())
        UOT_CUDA_CHECK(cudaMemcpyAsync(buffer.get(), host.data(), host.size() * sizeof(T), cudaMemcpyHostToDevice, stream));
}

bool sameEdges(const std::vector<LatticeEdge>& a, const std::vector<LatticeEdge>& b)
{
    return a.size() == b.size() && (a.empty() || std::memcmp(a.data(), b.data(), a.size() * sizeof(LatticeEdge)) == 0);
}

}  // namespace

LatticeSweeps::Plan& LatticeSweeps::planFor(const std::vector<LatticeEdge>& edges, std::size_t nodes, cudaStream_t stream)
{
    for (int k = 0; k < 2; ++k)
        if (m_plans[k].nodes == nodes && sameEdges(m_plans[k].edges, edges)) {
            m_next = 1 - k;  // the other one is the least recently used
            return m_plans[k];
        }
    Plan& plan = m_plans[m_next];
    m_next = 1 - m_next;
    plan.nodes = 0;  // invalid until uploaded
    plan.schedule = lipschitzSchedule(edges, nodes);
    plan.edges = edges;
    // At most 3 edges a node, as many levels as visits, a period of at most a sweep's levels.
    const std::size_t sweepVisits = 3 * nodes, openingVisits = static_cast<std::size_t>(plan.schedule.opening) * sweepVisits;
    upload(plan.deviceEdges, edges, sweepVisits, stream);
    upload(plan.openingStart, plan.schedule.openingStart, openingVisits + 1, stream);
    upload(plan.openingVisits, plan.schedule.openingVisits, openingVisits, stream);
    upload(plan.groupStart, plan.schedule.groupStart, sweepVisits + 1, stream);
    upload(plan.groupEdges, plan.schedule.groupEdges, sweepVisits, stream);
    upload(plan.groupLevels, plan.schedule.groupLevels, sweepVisits, stream);
    plan.nodes = nodes;
    return plan;
}

bool LatticeSweeps::run(float* values, std::size_t nodes, int first, const double bound[3],
                        const std::vector<LatticeEdge>& edges, cudaStream_t stream, cudaEvent_t idle)
{
    if (first < 0 || first > 2) throw Error(ErrorCode::InvalidArgument, "LatticeSweeps: the first channel must be 0 to 2");
    int device = 0, sharedLimit = 0;
    UOT_CUDA_CHECK(cudaGetDevice(&device));
    UOT_CUDA_CHECK(cudaDeviceGetAttribute(&sharedLimit, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
    const std::size_t shared = nodes * sizeof(float);
    if (shared + kLipschitzSweeps * sizeof(unsigned long long) > static_cast<std::size_t>(sharedLimit)) return false;
    if (edges.empty()) return true;  // nothing to project: the sweeps leave the values as they are
    UOT_CUDA_CHECK(cudaFuncSetAttribute(lipschitzSweepKernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                        static_cast<int>(shared)));
    const Plan& plan = planFor(edges, nodes, stream);
    const LipschitzSchedule& s = plan.schedule;
    SweepPlan p{};
    p.edges = plan.deviceEdges.get();
    p.openingStart = plan.openingStart.get();
    p.openingVisits = plan.openingVisits.get();
    p.groupStart = plan.groupStart.get();
    p.groupEdges = plan.groupEdges.get();
    p.groupLevels = plan.groupLevels.get();
    p.openingLevels = static_cast<std::uint32_t>(s.openingStart.size() - 1);
    p.nodes = static_cast<std::uint32_t>(nodes);
    p.opening = s.opening;
    p.period = s.period;
    p.first = first;
    for (int a = 0; a < 3; ++a) p.bound[a] = bound[a], p.limit[a] = kLipschitzSweeps;
    if (m_values.size() < 3 * nodes) m_values.allocate(3 * nodes);
    if (m_worst.size() < 3 * kLipschitzSweeps) m_worst.allocate(3 * kLipschitzSweeps);
    std::vector<float> out(3 * nodes);
    std::vector<unsigned long long> worstBits(3 * kLipschitzSweeps, 0);
    // The device runs every sweep of the limit; a channel that settled before its last
    // (lipschitzSweepsMade) is run again from the start with that many, as the host stops it.
    for (;;) {
        p.levels = s.levels(*std::max_element(p.limit + first, p.limit + 3));
        UOT_CUDA_CHECK(cudaMemcpyAsync(m_values.get(), values, 3 * nodes * sizeof(float), cudaMemcpyHostToDevice, stream));
        lipschitzSweepKernel<<<3 - first, kSweepThreads, shared, stream>>>(p, m_values.get(), m_worst.get());
        UOT_CUDA_CHECK_LAUNCH();
        // Waited for (asleep) before the copies to pageable memory, so that they do not
        // hold the driver's staging while the sweeps run.
        UOT_CUDA_CHECK(cudaEventRecord(idle, stream));
        UOT_CUDA_CHECK(cudaEventSynchronize(idle));
        UOT_CUDA_CHECK(cudaMemcpyAsync(out.data(), m_values.get(), out.size() * sizeof(float), cudaMemcpyDeviceToHost, stream));
        UOT_CUDA_CHECK(cudaMemcpyAsync(worstBits.data(), m_worst.get(), worstBits.size() * sizeof(unsigned long long),
                                       cudaMemcpyDeviceToHost, stream));
        bool again = false;
        for (int c = first; c < 3; ++c) {
            double worst[kLipschitzSweeps];
            for (int k = 0; k < kLipschitzSweeps; ++k)
                std::memcpy(&worst[k], &worstBits[static_cast<std::size_t>(c) * kLipschitzSweeps + k], sizeof(double));
            const int made = lipschitzSweepsMade(worst, p.limit[c]);
            again = again || made < p.limit[c];
            p.limit[c] = made;
        }
        if (!again) break;
    }
    std::memcpy(values, out.data(), out.size() * sizeof(float));
    return true;
}

}  // namespace uot::gpu
