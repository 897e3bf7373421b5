#pragma once
// gpu_bench --cluster-phases N[,N]: where an iteration of gpu-fused's one-launch
// cluster path (gpu/cluster_iterations.h) spends its time, from block 0's clock at
// the ends of its phases, on N random 3-D points a side (tau 1, TI + automatic
// omega; fp32 and fp64), and what plain iterations cost in the same launch (the
// bound for the accelerated one: plain_* in its JSON line). Built with CUDA only.

#include <string>

namespace uot::bench {

// Prints one JSON line per size and precision; 0 on success, 4 where no cluster path launches.
int runClusterPhases(const std::string& sizes, double eps, int iterations);

}  // namespace uot::bench
