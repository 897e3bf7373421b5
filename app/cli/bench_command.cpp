// `uot bench`: time per iteration, achieved bandwidth against the bandwidth
// measured in the same run, roofline figures, peak memory and (where the
// machine exposes them) hardware cache counters, for chosen solver variants,
// sizes, precisions and thread counts. Method: docs/notes/benchmark-history.md ("Method").
//
// Every case runs in its own forked child process (core/perf/isolated_run.h):
// the peak RSS reported is that case's alone, and the parent never starts
// OpenMP threads or CUDA (neither survives fork). --in-process turns that off
// (for valgrind). GPU cases always run in-process (CUDA does not survive fork).

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include <omp.h>
#include <unistd.h>

#include "app/cli/arg_parser.h"
#include "app/cli/json_text.h"
#include "app/cli/commands.h"
#include "app/cli/parameter_flags.h"
#include "app/cli/solver_flags.h"
#include "app/cli/thread_check.h"
#include "core/perf/bandwidth_probe.h"
#include "core/perf/cache_counters.h"
#include "core/perf/compute_probe.h"
#include "core/perf/isolated_run.h"
#include "core/perf/peak_memory.h"
#include "core/perf/roofline.h"
#include "core/registry/device_registry.h"
#include "core/registry/solver_registry.h"
#include "core/transport/point_cloud_cost.h"
#include "core/transport/uot_error.h"

namespace uot::cli {
namespace {

constexpr double kMiB = 1024.0 * 1024.0;

struct BenchCase {
    std::string solver;
    std::size_t m = 0, n = 0;
    Precision precision = Precision::Fp32;
    int threads = 0;
};

struct BenchConfig {
    SolverSettings settings;  // eps, tau, reference, device, check cadence
    int iterations = 50;
    int warmup = 5;
    int repeats = 5;
    bool probe = true;
    std::size_t probeBytes = std::size_t(512) << 20;
    bool singleSolve = false;
    bool inProcess = false;
    unsigned seed = 1;
};

// A flat record: key -> JSON literal, in insertion order.
class Record {
public:
    void set(const std::string& key, double value, int decimals = 6)
    {
        if (!std::isfinite(value)) {
            put(key, "null");
            return;
        }
        char buf[64];
        // Integral counts as integers, everything else with 7 significant digits
        // (fixed decimals would round tiny per-iteration times away).
        if (decimals == 0) std::snprintf(buf, sizeof buf, "%.0f", value);
        else std::snprintf(buf, sizeof buf, "%.7g", value);
        put(key, buf);
    }
    void setInt(const std::string& key, long long value) { put(key, std::to_string(value)); }
    void setBool(const std::string& key, bool value) { put(key, value ? "true" : "false"); }
    void setString(const std::string& key, const std::string& value) { put(key, jsonString(value)); }
    void setNull(const std::string& key) { put(key, "null"); }

    std::string json() const
    {
        std::string out = "{";
        for (std::size_t i = 0; i < m_items.size(); ++i) {
            if (i) out += ", ";
            out += jsonString(m_items[i].first) + ": " + m_items[i].second;
        }
        return out + "}";
    }
    // One "key\tliteral" per line: how a child hands its record to the parent.
    std::string serialize() const
    {
        std::string out;
        for (const auto& [k, v] : m_items) out += k + "\t" + v + "\n";
        return out;
    }
    static Record deserialize(const std::string& text)
    {
        Record r;
        std::istringstream in(text);
        std::string line;
        while (std::getline(in, line)) {
            const auto tab = line.find('\t');
            if (tab != std::string::npos) r.put(line.substr(0, tab), line.substr(tab + 1));
        }
        return r;
    }
    double number(const std::string& key) const
    {
        const std::string* v = find(key);
        if (!v || *v == "null") return std::nan("");
        return std::strtod(v->c_str(), nullptr);
    }
    std::string text(const std::string& key) const
    {
        const std::string* v = find(key);
        if (!v || v->size() < 2 || (*v)[0] != '"') return v ? *v : std::string();
        return v->substr(1, v->size() - 2);  // plain identifiers only are read back this way
    }

private:
    void put(const std::string& key, const std::string& literal)
    {
        for (auto& item : m_items) {
            if (item.first == key) {
                item.second = literal;
                return;
            }
        }
        m_items.emplace_back(key, literal);
    }
    const std::string* find(const std::string& key) const
    {
        for (const auto& item : m_items)
            if (item.first == key) return &item.second;
        return nullptr;
    }
    std::vector<std::pair<std::string, std::string>> m_items;
};

bool isGpuSolver(const std::string& name) { return runsOnGpu(name); }

// Matrix-free variants (no K): compute-bound, compared with the compute probe
// instead of the bandwidth probe.
bool isMatrixFree(const std::string& name)
{
    const std::optional<SolverCapabilities> caps = solverCapabilities(name);
    return caps && !caps->storesMatrix;
}

// The stored-matrix variant a matrix-free one is compared with: the default of its device (fused / gpu-fused).
std::string storedMatrixCounterpart(const std::string& name)
{
    return defaultSolver(isGpuSolver(name) ? DeviceKind::Gpu : DeviceKind::Cpu);
}

// The 1-minute load average (NaN when unknown): a busy machine explains a low figure.
double loadAverage1m()
{
    double load = std::nan("");
    if (std::FILE* f = std::fopen("/proc/loadavg", "r")) {
        if (std::fscanf(f, "%lf", &load) != 1) load = std::nan("");
        std::fclose(f);
    }
    return load;
}

double median(std::vector<double> v)
{
    std::sort(v.begin(), v.end());
    const std::size_t n = v.size();
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

// The benchmark problem: points uniform in [0,1)^3, squared Euclidean cost
// scaled so that its maximum is exactly 1, weights uniform in [0.5, 1.5)
// normalised to masses 1 (source) and 1.5 (target): unequal masses, so the
// unbalanced terms matter. Deterministic for a seed.
struct RandomProblem {
    std::vector<double> x, y, a, b;
    UotProblem problem;

    RandomProblem(std::size_t m, std::size_t n, unsigned seed, const SolverSettings& settings)
    {
        constexpr std::size_t dim = 3;
        std::mt19937_64 rng(seed);
        std::uniform_real_distribution<double> unit(0.0, 1.0), weight(0.5, 1.5);
        x.resize(m * dim);
        y.resize(n * dim);
        for (double& v : x) v = unit(rng);
        for (double& v : y) v = unit(rng);
        a.resize(m);
        b.resize(n);
        for (double& v : a) v = weight(rng);
        for (double& v : b) v = weight(rng);
        double sa = 0, sb = 0;
        for (double v : a) sa += v;
        for (double v : b) sb += v;
        for (double& v : a) v /= sa;
        for (double& v : b) v *= 1.5 / sb;
        const double maxCost = maxSquaredDistance(x.data(), m, y.data(), n, dim, settings.options.threads);
        PointCloudCost cost{x.data(), y.data(), m, n, dim, maxCost > 0 ? 1.0 / maxCost : 1.0};
        problem.cost = cost;
        problem.a = a;
        problem.b = b;
        applyProblemParameters(settings, problem);
    }
};

struct TimedSolve {
    double iterateSeconds = 0;  // the solver's own timing of its iteration loop
    double wallSeconds = 0;     // around solve(), set-up included
    SolveResult result;
    perf::CacheCounterSample counters;
};

TimedSolve timedSolve(UotSolver& solver, const UotProblem& problem, SolveOptions options, int iterations,
                      perf::CacheCounters* counters)
{
    options.maxIterations = iterations;
    options.tolerance = 0;  // exactly `iterations` iterations
    options.evaluateFinalPlan = false;
    TimedSolve t;
    if (counters) counters->start();
    const auto t0 = std::chrono::steady_clock::now();
    t.result = solver.solve(problem, options);
    t.wallSeconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (counters) t.counters = counters->stop();
    t.iterateSeconds = t.result.timings.iterateSeconds;
    if (t.result.iterations != iterations && !t.result.cancelled) {
        throw Error(ErrorCode::Numerical, solver.name() + " stopped after " + std::to_string(t.result.iterations) +
                                              " of " + std::to_string(iterations) + " iterations (status " +
                                              toString(t.result.status) + (t.result.message.empty() ? "" : ": ") +
                                              t.result.message + ")");
    }
    return t;
}

// Runs one case (in the child process). Returns its record.
Record runCase(const BenchCase& c, const BenchConfig& cfg)
{
    Record r;
    const bool gpu = isGpuSolver(c.solver);
    const int threads = c.threads > 0 ? c.threads : omp_get_max_threads();
    r.setString("solver", c.solver);
    r.setInt("m", (long long)c.m);
    r.setInt("n", (long long)c.n);
    r.setString("precision", toString(c.precision));
    r.setInt("threads", threads);
    r.setString("device", gpu ? "gpu:" + std::to_string(cfg.settings.options.device) : "cpu");
    r.setInt("iterations", cfg.iterations);
    r.setInt("warmup", cfg.warmup);
    r.setInt("repeats", cfg.singleSolve ? 1 : cfg.repeats);
    r.set("load_1m", loadAverage1m(), 2);  // other work on the machine when the case started

    // 1. The machine's bandwidth, measured right here, before the case.
    double peakRead = std::nan(""), peakRw = std::nan(""), wsRead = std::nan("");
    double bestRead = std::nan(""), bestRw = std::nan("");
    const bool matrixFree = isMatrixFree(c.solver);
    perf::ComputePeak computePeak;
    if (cfg.probe && matrixFree && !gpu) {
        computePeak = perf::measureComputePeak(threads, c.precision);
    } else if (cfg.probe) {
        if (gpu) {
            const DeviceBandwidth bw = findDeviceBackend(DeviceKind::Gpu)->measureBandwidth(cfg.settings.options.device);
            peakRead = bw.readGBps;
            peakRw = bw.copyGBps;
        } else {
            perf::BandwidthOptions bo;
            bo.bytes = cfg.probeBytes;
            bo.threads = threads;
            const perf::BandwidthResult bw = perf::measureHostBandwidth(bo);
            peakRead = bw.readGBps;
            peakRw = bw.readWriteGBps;
            bestRead = bw.readBestGBps;
            bestRw = bw.readWriteBestGBps;
            // The same streaming read over a buffer the size of the matrix: when it is
            // much faster than the large-buffer read, the matrix is partly served by the
            // last-level cache and a variant can exceed 100% of the DRAM figure.
            bo.bytes = std::max<std::size_t>(std::size_t(1) << 20,
                                             c.m * c.n * (c.precision == Precision::Fp32 ? 4 : 8));
            bo.repetitions = 5;
            wsRead = perf::measureHostBandwidth(bo).readGBps;
        }
    }
    // The probe's buffer is unmapped: forget its peak so the RSS below is the solve's.
    const bool peakReset = perf::resetPeakRss();

    // 2. The problem and the solver.
    const RandomProblem rp(c.m, c.n, cfg.seed, cfg.settings);
    std::unique_ptr<UotSolver> solver = createSolver(c.solver);
    SolveOptions options = cfg.settings.options;
    options.precision = c.precision;
    options.threads = threads;
    perf::CacheCounters counters;
    perf::CacheCounters* cc = (counters.available() && !gpu) ? &counters : nullptr;

    // 3. Timing: per iteration = (T(warmup + N) - T(warmup)) / N on the solver's
    // iteration-loop timer, median over repeats (set-up excluded twice over).
    std::vector<double> perIteration;
    std::vector<double> l1PerIt, llcPerIt, insPerIt, cycPerIt;
    std::string timingSource = "iterate_loop";
    std::string solverUsed = c.solver, status = "ok";
    std::uint64_t peakDevice = 0;
    const int n = cfg.iterations, k = cfg.warmup;
    auto perIt = [&](const perf::CounterValue& hi, const perf::CounterValue& lo, int count, std::vector<double>& out) {
        if (hi.valid && lo.valid) out.push_back((double(hi.value) - double(lo.value)) / count);
    };
    if (cfg.singleSolve) {
        const TimedSolve t = timedSolve(*solver, rp.problem, options, n, cc);
        perIteration.push_back((t.iterateSeconds > 0 ? t.iterateSeconds : t.wallSeconds) / n);
        if (!(t.iterateSeconds > 0)) timingSource = "wall_including_setup";
        solverUsed = t.result.solver;
        status = toString(t.result.status);
        peakDevice = t.result.peakDeviceBytes;
    } else {
        if (k > 0) timedSolve(*solver, rp.problem, options, k, nullptr);  // untimed warm-up solve
        for (int rep = 0; rep < cfg.repeats; ++rep) {
            const TimedSolve lo = k > 0 ? timedSolve(*solver, rp.problem, options, k, cc) : TimedSolve{};
            const TimedSolve hi = timedSolve(*solver, rp.problem, options, k + n, cc);
            double seconds = hi.iterateSeconds - lo.iterateSeconds;
            if (!(hi.iterateSeconds > 0)) {
                seconds = hi.wallSeconds - lo.wallSeconds;
                timingSource = "wall_difference";
            }
            perIteration.push_back(seconds / n);
            if (cc) {
                perIt(hi.counters.l1dReadMisses, lo.counters.l1dReadMisses, n, l1PerIt);
                perIt(hi.counters.llcMisses, lo.counters.llcMisses, n, llcPerIt);
                perIt(hi.counters.instructions, lo.counters.instructions, n, insPerIt);
                perIt(hi.counters.cycles, lo.counters.cycles, n, cycPerIt);
            }
            solverUsed = hi.result.solver;
            status = toString(hi.result.status);
            peakDevice = std::max(peakDevice, hi.result.peakDeviceBytes);
        }
    }
    const double seconds = median(perIteration);
    if (!(seconds > 0)) {
        throw Error(ErrorCode::Numerical,
                    "timing noise exceeded the measured difference (median per-iteration time <= 0): the machine "
                    "is too busy or the case too small; raise --iterations");
    }

    // 4. Figures.
    perf::IterationCost cost = perf::iterationCost(c.solver, c.m, c.n, c.precision);
    cost.bytes = solver->bytesPerIteration(c.m, c.n, c.precision);  // the solver's own count is authoritative
    const double peak = cost.readOnly ? peakRead : peakRw;
    const perf::RooflineFigures f = perf::rooflineFigures(cost, seconds, std::isfinite(peak) ? peak : 0.0);
    // gpu-fused-bf16 stores K in 2 bytes an entry.
    const bool bf16 = c.solver.size() > 5 && c.solver.compare(c.solver.size() - 5, 5, "-bf16") == 0;
    const double element = bf16 ? 2.0 : c.precision == Precision::Fp32 ? 4.0 : 8.0;
    const double matrixMb = double(c.m) * double(c.n) * element / kMiB;
    const double rssMb = double(perf::peakRssBytes()) / kMiB;

    r.set("ms_per_iter", f.msPerIteration, 4);
    r.set("ms_per_iter_min", 1e3 * *std::min_element(perIteration.begin(), perIteration.end()), 4);
    r.set("ms_per_iter_max", 1e3 * *std::max_element(perIteration.begin(), perIteration.end()), 4);
    r.set("iterations_per_s", f.iterationsPerSecond, 2);
    r.setInt("bytes_per_iter", (long long)cost.bytes);
    r.set("gbps", f.gbps, 2);
    r.set("peak_read_gbps", peakRead, 2);
    r.set("peak_rw_gbps", peakRw, 2);
    r.setString("peak_kind", cost.readOnly ? "read" : "read+write");
    r.set("matrix_sized_read_gbps", wsRead, 2);
    r.set("pct_of_peak", std::isfinite(peak) ? f.pctOfPeak : std::nan(""), 1);
    // Least-disturbed figures for a shared machine: the fastest repeat against the
    // fastest probe repetition (both are the moments other work interfered least).
    const double fastest = *std::min_element(perIteration.begin(), perIteration.end());
    const double bestPeak = cost.readOnly ? bestRead : bestRw;
    if (fastest > 0) {
        const double bestGbps = double(cost.bytes) / fastest / 1e9;
        r.set("gbps_best", bestGbps, 2);
        r.set("peak_best_gbps", bestPeak, 2);
        r.set("pct_of_peak_best", std::isfinite(bestPeak) ? 100.0 * bestGbps / bestPeak : std::nan(""), 1);
    }
    if (matrixFree) {
        // Each iteration evaluates every pair twice (row pass, column pass), one
        // exponential each.
        const double entries = 2.0 * double(c.m) * double(c.n);
        r.set("pairs_per_s", entries / seconds, 4);
        r.set("exps_per_s", entries / seconds, 4);
        r.set("exps_per_s_best", fastest > 0 ? entries / fastest : std::nan(""), 4);
        if (computePeak.expsPerSecond > 0) {
            r.set("peak_exps_per_s", computePeak.expsPerSecond, 4);
            r.set("pct_of_exp_peak", 100.0 * entries / seconds / computePeak.expsPerSecond, 1);
            r.set("pct_of_exp_peak_best", 100.0 * entries / fastest / computePeak.expsPerSecond, 1);
            r.set("peak_pairs_per_s", computePeak.pairsPerSecond, 4);
            r.set("pct_of_pair_peak", 100.0 * entries / seconds / computePeak.pairsPerSecond, 1);
            r.set("pct_of_pair_peak_best", 100.0 * entries / fastest / computePeak.pairsPerSecond, 1);
            r.set("peak_fma_gflops", computePeak.fmaGflops, 2);
            r.set("pct_of_fma_peak", 100.0 * f.gflops / computePeak.fmaGflops, 1);
        }
    }
    r.set("flops_per_iter", cost.flops, 0);
    r.set("operational_intensity", f.operationalIntensity, 3);
    r.set("gflops", f.gflops, 2);
    r.set("peak_rss_mb", rssMb, 1);
    r.setBool("rss_per_case", !cfg.inProcess && !gpu && peakReset);
    r.set("matrix_mb", matrixMb, 1);
    r.set("memory_budget_mb", 1.1 * matrixMb + 64.0, 1);  // the target: <= 1.1 x matrix + 64 MiB
    if (gpu) r.set("peak_device_mb", double(peakDevice) / kMiB, 1);
    r.setString("timing", timingSource);
    r.setString("solver_used", solverUsed);
    r.setString("status", status);
    r.set("eps", rp.problem.eps, 6);
    r.set("tau_a", rp.problem.tauA, 6);
    r.set("tau_b", rp.problem.tauB, 6);
    r.setInt("seed", cfg.seed);
    // Hardware counters, per iteration (same difference method), where available.
    r.setBool("cache_counters", cc != nullptr && !insPerIt.empty());
    if (cc != nullptr && !insPerIt.empty()) {
        r.set("instructions_per_iter", median(insPerIt), 0);
        if (!cycPerIt.empty()) r.set("cycles_per_iter", median(cycPerIt), 0);
        if (!l1PerIt.empty()) r.set("l1d_read_misses_per_iter", median(l1PerIt), 0);
        if (!llcPerIt.empty()) r.set("llc_misses_per_iter", median(llcPerIt), 0);
    }
    if (gpu) r.setString("cache_counters_note", "not read on the GPU (CUPTI is the GPU backend's business)");
    else if (!counters.available() || !counters.unavailableReason().empty())
        r.setString("cache_counters_note", counters.unavailableReason());
    return r;
}

std::pair<std::size_t, std::size_t> parseSize(const std::string& text)
{
    const auto x = text.find_first_of("xX");
    char* end1 = nullptr;
    char* end2 = nullptr;
    if (x != std::string::npos) {
        const std::string a = text.substr(0, x), b = text.substr(x + 1);
        const long long m = std::strtoll(a.c_str(), &end1, 10);
        const long long n = std::strtoll(b.c_str(), &end2, 10);
        if (!a.empty() && !b.empty() && *end1 == '\0' && *end2 == '\0' && m > 0 && n > 0 && m <= (1 << 20) &&
            n <= (1 << 20))
            return {std::size_t(m), std::size_t(n)};
    }
    throw UsageError("option '--size' needs MxN with positive integers (e.g. 4096x4096), got '" + text + "'");
}

// The matrix-free cases against the compute probe of the same run, and against
// `fused` (stored matrix) at the same size: the crossover is the smallest size
// measured from which mapreduce is at least as fast.
void printMatrixFreeTable(std::FILE* to, const std::vector<Record>& rows)
{
    bool any = false;
    for (const Record& r : rows) any = any || isMatrixFree(r.text("solver"));
    if (!any) return;
    std::fprintf(to, "\n%-14s %-12s %-5s %3s %10s %10s %10s %7s %10s %7s %8s %9s %7s %9s\n", "matrix-free", "size",
                 "prec", "thr", "ms/iter", "pairs/s", "peak exp/s", "%exp", "peak pair/s", "%pair", "%pair-b", "GFLOP/s",
                 "%fma", "vs fused");
    for (const Record& r : rows) {
        if (!isMatrixFree(r.text("solver"))) continue;
        double fusedMs = std::nan("");
        for (const Record& o : rows) {
            if (o.text("solver") == storedMatrixCounterpart(r.text("solver")) &&
                o.number("m") == r.number("m") && o.number("n") == r.number("n") &&
                o.text("precision") == r.text("precision") && o.number("threads") == r.number("threads"))
                fusedMs = o.number("ms_per_iter");
        }
        char size[32], ratio[16] = "-";
        std::snprintf(size, sizeof size, "%.0fx%.0f", r.number("m"), r.number("n"));
        if (std::isfinite(fusedMs)) std::snprintf(ratio, sizeof ratio, "%.2fx", fusedMs / r.number("ms_per_iter"));
        std::fprintf(to, "%-14s %-12s %-5s %3.0f %10.3f %10.3g %10.3g %6.1f%% %11.3g %6.1f%% %7.1f%% %9.1f %6.1f%% %9s\n",
                     r.text("solver").c_str(), size, r.text("precision").c_str(), r.number("threads"),
                     r.number("ms_per_iter"), r.number("pairs_per_s"), r.number("peak_exps_per_s"),
                     r.number("pct_of_exp_peak"), r.number("peak_pairs_per_s"), r.number("pct_of_pair_peak"),
                     r.number("pct_of_pair_peak_best"), r.number("gflops"), r.number("pct_of_fma_peak"), ratio);
    }
    // Crossover per (solver, precision, threads), over the sizes where both ran.
    std::vector<std::string> seen;
    for (const Record& r : rows) {
        if (!isMatrixFree(r.text("solver"))) continue;
        const std::string key = r.text("solver") + " " + r.text("precision") + " threads=" +
                                std::to_string(static_cast<int>(r.number("threads")));
        if (std::find(seen.begin(), seen.end(), key) != seen.end()) continue;
        seen.push_back(key);
        double crossover = std::nan(""), largestSlower = 0;
        int compared = 0;
        for (const Record& a : rows) {
            if (a.text("solver") != r.text("solver") || a.text("precision") != r.text("precision") ||
                a.number("threads") != r.number("threads"))
                continue;
            for (const Record& o : rows) {
                if (o.text("solver") != storedMatrixCounterpart(r.text("solver")) ||
                    o.number("m") != a.number("m") || o.number("n") != a.number("n") ||
                    o.text("precision") != a.text("precision") || o.number("threads") != a.number("threads"))
                    continue;
                ++compared;
                const double entries = a.number("m") * a.number("n");
                if (a.number("ms_per_iter") <= o.number("ms_per_iter")) {
                    if (!(entries >= crossover)) crossover = entries;
                } else {
                    largestSlower = std::max(largestSlower, entries);
                }
            }
        }
        if (compared == 0) continue;
        if (std::isfinite(crossover) && crossover > largestSlower)
            std::fprintf(to, "crossover %s: mapreduce at least as fast as fused from %.0f entries (%.0f^2) on\n",
                         key.c_str(), crossover, std::sqrt(crossover));
        else if (std::isfinite(crossover))
            std::fprintf(to, "crossover %s: no clean crossover (faster at %.0f entries, slower at %.0f)\n", key.c_str(),
                         crossover, largestSlower);
        else
            std::fprintf(to, "crossover %s: fused faster at every size measured (up to %.0f entries)\n", key.c_str(),
                         largestSlower);
    }
    std::fprintf(to, "pairs/s: cost evaluations (one exponential each) per second, 2 M N per iteration. Compute probe "
                 "run just before each case (same threads, same 2^x, all in registers): %%exp of its exponentials/s; "
                 "%%pair of its pairs/s for the kernel's whole arithmetic per 3-D pair (3 FMAs + 2^x + add); "
                 "%%pair-b: fastest repeat. %%fma: GFLOP/s of its peak FMA rate. vs fused: fused ms / this ms.\n");
}

void printTable(std::FILE* to, const std::vector<Record>& rows)
{
    std::fprintf(to, "%-14s %-12s %-5s %3s %10s %9s %9s %9s %7s %8s %9s %9s %9s\n", "solver", "size", "prec", "thr",
                "ms/iter", "iter/s", "GB/s", "peak GB/s", "%peak", "GFLOP/s", "RSS MiB", "matrix", "vs pot");
    for (const Record& r : rows) {
        double potMs = std::nan("");
        for (const Record& o : rows) {
            if (o.text("solver").find("pot-style") != std::string::npos && o.number("m") == r.number("m") &&
                o.number("n") == r.number("n") && o.text("precision") == r.text("precision") &&
                o.number("threads") == r.number("threads") &&
                isGpuSolver(o.text("solver")) == isGpuSolver(r.text("solver")))
                potMs = o.number("ms_per_iter");
        }
        char size[32], ratio[16] = "-";
        std::snprintf(size, sizeof size, "%.0fx%.0f", r.number("m"), r.number("n"));
        if (std::isfinite(potMs)) std::snprintf(ratio, sizeof ratio, "%.2fx", potMs / r.number("ms_per_iter"));
        const bool rw = r.text("peak_kind") != "read";
        std::fprintf(to, "%-14s %-12s %-5s %3.0f %10.3f %9.1f %9.1f %7.1f%s %6.1f%% %8.1f %9.1f %9.1f %9s\n",
                    r.text("solver").c_str(), size, r.text("precision").c_str(), r.number("threads"),
                    r.number("ms_per_iter"), r.number("iterations_per_s"), r.number("gbps"),
                    rw ? r.number("peak_rw_gbps") : r.number("peak_read_gbps"), rw ? "rw" : " r",
                    r.number("pct_of_peak"), r.number("gflops"), r.number("peak_rss_mb"), r.number("matrix_mb"),
                    ratio);
    }
    std::fprintf(to, "ms/iter: median over repeats of (T(warm-up + N) - T(warm-up)) / N, iteration loop only. "
                "%%peak: against the streaming read (r) or in-place read+write (rw) bandwidth measured just "
                "before each case. vs pot: pot-style ms / this ms.\n");
    printMatrixFreeTable(to, rows);
}

}  // namespace

int runBenchCommand(const std::vector<std::string>& args)
{
    ArgParser parser("uot bench [options]",
                     "Measures solver variants on random problems: time per iteration (median after warm-up, "
                     "set-up excluded), achieved bandwidth as a share of the bandwidth measured in the same run, "
                     "roofline figures and peak memory. One case per solver x size x precision x threads, each in "
                     "its own child process.");
    SolverFlagConfig flags;
    flags.allowSolverList = true;
    flags.allowPrecisionAndThreadLists = true;
    flags.iterationLimits = false;
    flags.deviceAuto = false;  // auto would ask the GPU runtime before the cases are forked
    flags.defaultSolver = "fused,pot-style";
    addSolverOptions(parser, flags);
    parser.addOption("size", "MxN", "problem size, rows x cols", "4096x4096", true);
    parser.addOption("iterations", "N", "timed iterations N per measurement", "50");
    parser.addOption("warmup", "K", "warm-up iterations K subtracted from each measurement", "5");
    parser.addOption("repeats", "R", "measurements per case; the median is reported", "5");
    addParameterOption(parser, params::parameter("random-seed"));
    parser.addOption("probe-mib", "MIB", "buffer of the bandwidth probe (much larger than the last-level cache)",
                     "512");
    parser.addFlag("no-probe", "skip the bandwidth probe (pct_of_peak is then null)");
    parser.addFlag("single-solve", "one solve of exactly --iterations iterations per case (for valgrind)");
    parser.addFlag("in-process", "run cases in this process instead of a child each (peak RSS then accumulates)");
    parser.addFlag("json", "also print one JSON object per case, one per line");
    parser.parse(args);
    if (parser.helpRequested()) {
        std::printf("%s", parser.helpText().c_str());
        std::printf("\nEvery measurement runs an exact number of iterations (--warmup + --iterations): there is no "
                    "--max-iter or --tol here.\n");
        return kExitOk;
    }

    // Lists the shared flags take one value of: read them here, hand the first on.
    // Each item is checked against the parameter table (core/params).
    std::vector<Precision> precisions;
    for (const std::string& p : splitList(parser.value("precision"))) {
        checkParameterValue(params::parameter("precision", params::Problems::Raw), p);
        precisions.push_back(parsePrecision(p));
    }
    std::vector<int> threadCounts;
    for (const std::string& t : splitList(parser.value("threads"))) {
        checkParameterValue(params::parameter("threads", params::Problems::Raw), t);
        threadCounts.push_back(std::stoi(t));
    }
    if (precisions.empty() || threadCounts.empty()) throw UsageError("--precision and --threads need a value");
    // The first count is checked where readSolverOptions reads it below; the others here.
    for (std::size_t k = 1; k < threadCounts.size(); ++k) requireThreadsCanStart(threadCounts[k]);
    std::vector<std::string> firstArgs = args;
    firstArgs.push_back("--precision=" + toString(precisions[0]));
    firstArgs.push_back("--threads=" + std::to_string(threadCounts[0]));
    ArgParser single = parser;
    single.parse(firstArgs);

    BenchConfig cfg;
    cfg.settings = readSolverOptions(single, flags);
    cfg.iterations = parser.integer("iterations");
    cfg.warmup = parser.integer("warmup");
    cfg.repeats = parser.integer("repeats");
    const int seed = static_cast<int>(parameterNumber(parser, params::parameter("random-seed")));
    const int probeMib = parser.integer("probe-mib");
    if (cfg.iterations < 1) throw UsageError("option '--iterations' must be >= 1");
    if (cfg.warmup < 0) throw UsageError("option '--warmup' must be >= 0");
    if (cfg.repeats < 1) throw UsageError("option '--repeats' must be >= 1");
    if (probeMib < 1) throw UsageError("option '--probe-mib' must be >= 1");
    cfg.seed = unsigned(seed);
    cfg.probeBytes = std::size_t(probeMib) << 20;
    cfg.probe = !parser.flag("no-probe");
    cfg.singleSolve = parser.flag("single-solve");
    cfg.inProcess = parser.flag("in-process");
    const bool json = parser.flag("json");

    std::vector<std::pair<std::size_t, std::size_t>> sizes;
    for (const std::string& s : parser.values("size")) sizes.push_back(parseSize(s));
    if (sizes.empty()) sizes.push_back(parseSize(parser.value("size")));
    const std::vector<std::string> solvers = splitList(cfg.settings.solver);

    // Unknown names are a usage error, found before any case runs. Nothing here
    // starts OpenMP threads or CUDA.
    // (solverCapabilities rather than findSolver: the latter asks the CUDA
    // runtime for devices, which must not happen before fork.)
    for (const std::string& s : solvers) {
        if (!solverCapabilities(s)) throw UsageError("unknown solver '" + s + "'; known: " + solverNamesForHelp());
    }
    const bool anyGpu = std::any_of(solvers.begin(), solvers.end(), isGpuSolver);
    const DeviceBackend* gpuBackend = findDeviceBackend(DeviceKind::Gpu);
    if (anyGpu && (!gpuBackend || !gpuBackend->compiledIn())) {
        std::fprintf(stderr, "uot bench: %s\n", gpuUnavailableReason().c_str());
        return kExitUnavailable;
    }

    std::vector<Record> rows;
    int failures = 0, unavailable = 0;
    for (const std::string& solverName : solvers) {
        for (const auto& [m, n] : sizes) {
            for (Precision precision : precisions) {
                for (int threads : threadCounts) {
                    const BenchCase c{solverName == "auto" ? defaultSolver(DeviceKind::Cpu) : solverName, m, n, precision, threads};
                    auto work = [&c, &cfg]() -> std::string {
                        try {
                            return "R" + runCase(c, cfg).serialize();
                        } catch (const Error& e) {
                            return std::string(e.code() == ErrorCode::Unavailable ? "U" : "F") + e.what();
                        }
                    };
                    std::string out;
                    // GPU cases run in this process: the help text of the shared flags already
                    // asked the CUDA runtime about devices, and CUDA does not survive fork.
                    if (cfg.inProcess || isGpuSolver(c.solver)) {
                        out = work();
                    } else {
                        const perf::IsolatedOutcome o = perf::runIsolated(work);
                        out = o.ok ? o.output : "F" + o.failure;
                    }
                    const std::string label = c.solver + " " + std::to_string(m) + "x" + std::to_string(n) + " " +
                                              toString(precision) + " threads=" + std::to_string(threads);
                    if (out.empty() || out[0] != 'R') {
                        std::fprintf(stderr, "uot bench: %s: %s\n", label.c_str(),
                                     out.empty() ? "no result" : out.substr(1).c_str());
                        ++failures;
                        if (!out.empty() && out[0] == 'U') ++unavailable;
                        continue;
                    }
                    Record r = Record::deserialize(out.substr(1));
                    if (json) {
                        std::printf("%s\n", r.json().c_str());
                        std::fflush(stdout);
                    } else {
                        std::fprintf(stderr, "  done: %s\n", label.c_str());
                    }
                    rows.push_back(std::move(r));
                }
            }
        }
    }
    // With --json, stdout carries only the JSON lines; the table goes to stderr.
    if (!rows.empty()) printTable(json ? stderr : stdout, rows);
    if (failures == 0) return kExitOk;
    if (unavailable == failures) return kExitUnavailable;
    return rows.empty() ? kExitFailure : kExitPartial;
}

}  // namespace uot::cli
