// uot_cpu_topology_probe --pairs [--cpus LIST] [--ms 30] [--json FILE]
// uot_cpu_topology_probe --bandwidth --cpus LIST [--mb 512]
//
// --pairs: the vector-FMA probe of the map-reduce kernels (probeFma: 8 independent
// vector FMA streams, enough to fill a core's FMA ports) on one thread pinned to
// each vCPU alone (its base rate, the better of two runs), then on two threads
// pinned to vCPUs i and j at once, for every pair. A pair's ratio is the mean of
// the two threads' rates over their base rates: about 1 for vCPUs on different
// physical cores, about 0.5 for two hyperthreads of one core (they share its
// ports). Prints the base rates and, for each vCPU, its three lowest ratios, and
// writes {"cpus", "base_rounds_per_s", "ratio"} (ratio[a][b] for cpus[a],
// cpus[b]; 1 on the diagonal) to --json for scripts/mpi_placement.py, which
// decides the sibling pairs and writes the rankfile.
//
// --bandwidth: the process is pinned to the vCPUs of --cpus and the host bandwidth
// probe (core/perf/bandwidth_probe.h: streaming read, and read + write) runs on
// one OpenMP thread each; prints one JSON line. Run it for 1, 2, 4, 8, ... vCPUs of
// distinct cores (bench/mpi_placement_probe.sh does) to see where the bandwidth
// stops growing with the threads.

#include <pthread.h>
#include <sched.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "core/perf/bandwidth_probe.h"
#include "core/transport/mapreduce_kernels.h"

namespace {

using Clock = std::chrono::steady_clock;

constexpr std::size_t kRoundsPerChunk = 20000;  // about 20 us of FMAs between clock reads

volatile double g_sink = 0;

bool pinCurrentThread(int cpu)
{
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    return pthread_setaffinity_np(pthread_self(), sizeof(set), &set) == 0;
}

// Rounds of the FMA probe per second, run for `ms` milliseconds on the calling thread.
double fmaRate(double ms)
{
    const auto& kernels = uot::kernels::mapReduceKernels<double>();
    const auto start = Clock::now();
    std::size_t rounds = 0;
    double sink = 0, elapsed = 0;
    do {
        sink += kernels.probeFma(kRoundsPerChunk);
        rounds += kRoundsPerChunk;
        elapsed = std::chrono::duration<double>(Clock::now() - start).count();
    } while (elapsed * 1e3 < ms);
    g_sink = g_sink + sink;
    return double(rounds) / elapsed;
}

// Runs the FMA probe on one pinned thread per vCPU of `cpus`, all released together;
// returns each thread's rate (0 where the vCPU could not be pinned).
std::vector<double> concurrentRates(const std::vector<int>& cpus, double ms)
{
    std::vector<double> rates(cpus.size(), 0);
    std::atomic<int> ready{0};
    std::atomic<bool> go{false};
    std::vector<std::thread> threads;
    for (std::size_t k = 0; k < cpus.size(); ++k) {
        threads.emplace_back([&, k] {
            const bool pinned = pinCurrentThread(cpus[k]);
            ready.fetch_add(1);
            while (!go.load()) {
            }
            const double rate = fmaRate(ms);
            rates[k] = pinned ? rate : 0;
        });
    }
    while (ready.load() < int(cpus.size())) {
    }
    go.store(true);
    for (auto& t : threads) t.join();
    return rates;
}

std::vector<int> parseCpuList(const std::string& text)
{
    std::vector<int> cpus;
    std::size_t pos = 0;
    while (pos < text.size()) {
        std::size_t end = text.find(',', pos);
        if (end == std::string::npos) end = text.size();
        const std::string item = text.substr(pos, end - pos);
        const std::size_t dash = item.find('-');
        const int first = std::atoi(item.substr(0, dash).c_str());
        const int last = dash == std::string::npos ? first : std::atoi(item.substr(dash + 1).c_str());
        for (int c = first; c <= last; ++c) cpus.push_back(c);
        pos = end + 1;
    }
    return cpus;
}

std::vector<int> allowedCpus()
{
    cpu_set_t set;
    CPU_ZERO(&set);
    std::vector<int> cpus;
    if (sched_getaffinity(0, sizeof(set), &set) != 0) return cpus;
    for (int c = 0; c < CPU_SETSIZE; ++c)
        if (CPU_ISSET(c, &set)) cpus.push_back(c);
    return cpus;
}

std::string joinNumbers(const std::vector<double>& values, const char* format)
{
    std::string out;
    char buf[64];
    for (std::size_t k = 0; k < values.size(); ++k) {
        std::snprintf(buf, sizeof buf, format, values[k]);
        if (k) out += ',';
        out += buf;
    }
    return out;
}

int runPairs(const std::vector<int>& cpus, double ms, const std::string& jsonPath)
{
    const std::size_t n = cpus.size();
    std::vector<double> base(n, 0);
    for (int pass = 0; pass < 2; ++pass)
        for (std::size_t a = 0; a < n; ++a) base[a] = std::max(base[a], concurrentRates({cpus[a]}, ms)[0]);
    for (std::size_t a = 0; a < n; ++a) {
        if (base[a] <= 0) {
            std::fprintf(stderr, "cannot pin a thread to vCPU %d\n", cpus[a]);
            return 1;
        }
    }
    std::vector<std::vector<double>> ratio(n, std::vector<double>(n, 1.0));
    for (std::size_t a = 0; a < n; ++a) {
        for (std::size_t b = a + 1; b < n; ++b) {
            const auto rates = concurrentRates({cpus[a], cpus[b]}, ms);
            ratio[a][b] = ratio[b][a] = 0.5 * (rates[0] / base[a] + rates[1] / base[b]);
        }
    }
    const double fastest = *std::max_element(base.begin(), base.end());
    std::printf("vCPU  base (of fastest)  lowest pair ratios\n");
    for (std::size_t a = 0; a < n; ++a) {
        std::vector<std::size_t> order;
        for (std::size_t b = 0; b < n; ++b)
            if (b != a) order.push_back(b);
        std::sort(order.begin(), order.end(), [&](std::size_t x, std::size_t y) { return ratio[a][x] < ratio[a][y]; });
        std::printf("%4d  %.3f            ", cpus[a], base[a] / fastest);
        for (std::size_t k = 0; k < std::min<std::size_t>(3, order.size()); ++k)
            std::printf(" %d:%.3f", cpus[order[k]], ratio[a][order[k]]);
        std::printf("\n");
    }
    if (!jsonPath.empty()) {
        std::ofstream out(jsonPath);
        out << "{\"cpus\":[";
        for (std::size_t a = 0; a < n; ++a) out << (a ? "," : "") << cpus[a];
        out << "],\"probe_ms\":" << ms << ",\"base_rounds_per_s\":[" << joinNumbers(base, "%.6g") << "],\"ratio\":[";
        for (std::size_t a = 0; a < n; ++a) out << (a ? "," : "") << "[" << joinNumbers(ratio[a], "%.4f") << "]";
        out << "]}\n";
        if (!out) {
            std::fprintf(stderr, "cannot write %s\n", jsonPath.c_str());
            return 1;
        }
    }
    return 0;
}

int runBandwidth(const std::vector<int>& cpus, std::size_t megabytes)
{
    cpu_set_t set;
    CPU_ZERO(&set);
    for (int c : cpus) CPU_SET(c, &set);
    if (sched_setaffinity(0, sizeof(set), &set) != 0) {
        std::fprintf(stderr, "cannot pin the process to the vCPUs given\n");
        return 1;
    }
    uot::perf::BandwidthOptions options;
    options.bytes = megabytes << 20;
    options.threads = int(cpus.size());
    const auto result = uot::perf::measureHostBandwidth(options);
    std::vector<double> cpuValues(cpus.begin(), cpus.end());
    std::printf("{\"threads\":%d,\"cpus\":[%s],\"read_GBps\":%.2f,\"read_write_GBps\":%.2f,\"read_best_GBps\":%.2f}\n",
                result.threads, joinNumbers(cpuValues, "%.0f").c_str(), result.readGBps, result.readWriteGBps,
                result.readBestGBps);
    return 0;
}

}  // namespace

int main(int argc, char** argv)
{
    bool pairs = false, bandwidth = false;
    std::vector<int> cpus;
    double ms = 30;
    std::size_t megabytes = 512;
    std::string jsonPath;
    for (int i = 1; i < argc; ++i) {
        const std::string arg = argv[i];
        const bool hasValue = i + 1 < argc;
        if (arg == "--pairs") pairs = true;
        else if (arg == "--bandwidth") bandwidth = true;
        else if (arg == "--cpus" && hasValue) cpus = parseCpuList(argv[++i]);
        else if (arg == "--ms" && hasValue) ms = std::atof(argv[++i]);
        else if (arg == "--mb" && hasValue) megabytes = std::size_t(std::atol(argv[++i]));
        else if (arg == "--json" && hasValue) jsonPath = argv[++i];
        else {
            std::fprintf(stderr,
                         "usage: %s --pairs [--cpus LIST] [--ms 30] [--json FILE] | --bandwidth --cpus LIST [--mb 512]\n",
                         argv[0]);
            return 2;
        }
    }
    if (pairs == bandwidth || ms <= 0 || megabytes == 0) {
        std::fprintf(stderr, "give one of --pairs and --bandwidth (see --help)\n");
        return 2;
    }
    if (cpus.empty()) cpus = allowedCpus();
    if (pairs) return runPairs(cpus, ms, jsonPath);
    return runBandwidth(cpus, megabytes);
}
