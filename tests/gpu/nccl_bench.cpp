// gpu-nccl checks and multi-GPU speed, without Qt (the GPU machines have none):
//
//   nccl_bench --check
//       tests/gpu/nccl_cases.h on GPU 0 alone (a 1-rank NCCL communicator) and,
//       when 2 or more GPUs are visible, on GPUs 0 and 1 (else reported skipped);
//       exit 1 when a check fails;
//   nccl_bench [--sizes MxN,...] [--iterations K] [--chunks C]
//       ms per iteration of gpu-fused on GPU 0 and of gpu-nccl over every
//       visible GPU (1 and C chunks), point-cloud problems (d = 3, K built on
//       the devices), K iterations without a stopping rule, after a warm-up
//       solve; prints the speed-up over one GPU. Default sizes: 16384x16384,
//       32768x32768. Run with NCCL_NVLS_ENABLE=0 on the lent multi-GPU machines.
//
// ms per iteration is host wall time of the iteration loop (including the
// checks every 50 iterations) divided by the iterations. Exit 4 without a GPU.

#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <string>
#include <vector>

#include "tests/gpu/nccl_cases.h"

using namespace uot;
using namespace uot::test;

namespace {

int runChecks()
{
    std::vector<CheckOutcome> all = ncclChecks({0});
    all.push_back(checkBadDevice());
    const int gpus = visibleGpus();
    if (gpus >= 2) {
        const std::vector<CheckOutcome> two = ncclChecks({0, 1});
        all.insert(all.end(), two.begin(), two.end());
    } else {
        std::printf("SKIP two-GPU checks: %d GPU visible (test_gpu_nccl_two exits 77 here)\n", gpus);
    }
    return reportOutcomes(all, "nccl");
}

double msPerIteration(UotSolver& solver, const UotProblem& problem, int iterations)
{
    SolveOptions o = cloudOptions(Precision::Fp32, iterations, 0, 50);
    o.evaluateFinalPlan = false;
    (void)solver.solve(problem, o);  // warm-up: buffers, communicators, kernels
    const SolveResult r = solver.solve(problem, o);
    return 1e3 * r.timings.iterateSeconds / std::max(1, r.iterations);
}

int runBench(const std::vector<std::pair<std::size_t, std::size_t>>& sizes, int iterations, int chunks)
{
    const int gpus = visibleGpus();
    for (const auto& [m, n] : sizes) {
        const CloudProblem cloud({"bench", m, n, 3, 0.05, 1.0, 1.0, ReferenceMeasure::Ones});
        auto fused = createSolver("gpu-fused");
        const double single = msPerIteration(*fused, cloud.problem, iterations);
        fused.reset();  // frees its K before the multi-GPU solve allocates its share
        auto one = gpu::createNcclSolver({}, 1);
        const double ncclOne = msPerIteration(*one, cloud.problem, iterations);
        one.reset();
        auto overlapped = gpu::createNcclSolver({}, chunks);
        const double ncclChunks = msPerIteration(*overlapped, cloud.problem, iterations);
        std::printf("{\"size\": \"%zux%zu\", \"gpus\": %d, \"iterations\": %d, \"gpu_fused_1gpu_ms\": %.4f, "
                    "\"gpu_nccl_1chunk_ms\": %.4f, \"gpu_nccl_%dchunks_ms\": %.4f, \"speedup_1chunk\": %.3f, "
                    "\"speedup_chunks\": %.3f}\n",
                    m, n, gpus, iterations, single, ncclOne, chunks, ncclChunks, single / ncclOne, single / ncclChunks);
    }
    return 0;
}

}  // namespace

int main(int argc, char** argv)
{
    bool check = false;
    int iterations = 200, chunks = 2;
    std::vector<std::pair<std::size_t, std::size_t>> sizes = {{16384, 16384}, {32768, 32768}};
    for (int i = 1; i < argc; ++i) {
        const std::string arg = argv[i];
        const bool hasValue = i + 1 < argc;
        if (arg == "--check") {
            check = true;
        } else if (arg == "--iterations" && hasValue) {
            iterations = std::atoi(argv[++i]);
        } else if (arg == "--chunks" && hasValue) {
            chunks = std::atoi(argv[++i]);
        } else if (arg == "--sizes" && hasValue) {
            sizes.clear();
            std::stringstream in(argv[++i]);
            std::string item;
            while (std::getline(in, item, ',')) {
                std::size_t m = 0, n = 0;
                if (std::sscanf(item.c_str(), "%zux%zu", &m, &n) != 2 || !m || !n) {
                    std::fprintf(stderr, "nccl_bench: bad size '%s' (use MxN)\n", item.c_str());
                    return 2;
                }
                sizes.emplace_back(m, n);
            }
        } else {
            std::fprintf(stderr, "usage: nccl_bench [--check] [--sizes MxN,..] [--iterations K] [--chunks C]\n");
            return 2;
        }
    }
    if (iterations < 1 || chunks < 1) {
        std::fprintf(stderr, "nccl_bench: --iterations and --chunks need positive values\n");
        return 2;
    }
    const std::string reason = gpu::unavailableReason();
    if (!reason.empty()) {
        std::fprintf(stderr, "nccl_bench: %s\n", reason.c_str());
        return 4;
    }
    if (!gpu::builtWithNccl()) {
        std::fprintf(stderr, "nccl_bench: %s\n", gpu::ncclUnavailableReason().c_str());
        return 4;
    }
    try {
        return check ? runChecks() : runBench(sizes, iterations, chunks);
    } catch (const std::exception& e) {
        std::fprintf(stderr, "nccl_bench: %s\n", e.what());
        return 1;
    }
}
