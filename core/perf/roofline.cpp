#include "core/perf/roofline.h"

#include "core/transport/mapreduce_solver.h"

namespace uot::perf {

IterationCost iterationCost(const std::string& variant, std::size_t rows, std::size_t cols, Precision precision)
{
    std::string name = variant;
    if (name.rfind("gpu-", 0) == 0) name = name.substr(4);
    const double mn = double(rows) * double(cols);
    const double element = precision == Precision::Fp32 ? 4.0 : 8.0;
    IterationCost cost;
    cost.flops = 4.0 * mn;
    cost.transcendentals = double(rows) + double(cols);
    if (name == "fused") {
        cost.bytes = std::uint64_t(mn * element);  // one read of K
    } else if (name == "mapuot") {
        cost.bytes = std::uint64_t(2.0 * mn * element);  // one read + one write of the rescaled matrix
        cost.readOnly = false;
    } else if (name == "log") {
        cost.bytes = std::uint64_t(mn * element);  // single pass over the cost / log-kernel
        cost.transcendentals += 2.0 * mn;
    } else if (name == "mapreduce") {
        // Matrix-free: no matrix traffic; a row and a column pass, one exponential
        // and the recomputed cost per entry each (points of dimension 3, the bench's).
        cost.bytes = 0;
        cost.flops = 2.0 * mn * mapReduceFlopsPerEntry(3, precision);
        cost.transcendentals += 2.0 * mn;
    } else if (name == "reference") {
        cost.bytes = std::uint64_t(2.0 * mn * 8.0);  // always float64, two passes
    } else {
        cost.bytes = std::uint64_t(2.0 * mn * element);  // pot-style: K v then K^T u
    }
    return cost;
}

double operationalIntensity(const IterationCost& cost)
{
    return cost.bytes == 0 ? 0.0 : cost.flops / double(cost.bytes);
}

RooflineFigures rooflineFigures(const IterationCost& cost, double secondsPerIteration, double peakGBps)
{
    RooflineFigures f;
    if (!(secondsPerIteration > 0)) return f;
    f.msPerIteration = secondsPerIteration * 1e3;
    f.iterationsPerSecond = 1.0 / secondsPerIteration;
    f.gbps = double(cost.bytes) / secondsPerIteration / 1e9;
    f.gflops = cost.flops / secondsPerIteration / 1e9;
    f.operationalIntensity = operationalIntensity(cost);
    f.pctOfPeak = peakGBps > 0 ? 100.0 * f.gbps / peakGBps : 0.0;
    return f;
}

}  // namespace uot::perf
