#include "core/perf/roofline.h"

#include <optional>

#include "core/registry/solver_registry.h"
#include "core/transport/mapreduce_solver.h"

namespace uot::perf {

IterationCost iterationCost(const std::string& variant, std::size_t rows, std::size_t cols, Precision precision)
{
    const double mn = double(rows) * double(cols);
    IterationCost cost;
    cost.flops = 4.0 * mn;
    cost.transcendentals = double(rows) + double(cols);
    const std::optional<SolverCapabilities> caps = solverCapabilities(variant);
    if (!caps) {
        cost.bytes = std::uint64_t(2.0 * mn * (precision == Precision::Fp32 ? 4.0 : 8.0));
        return cost;
    }
    cost.bytes = bytesPerIteration(variant, rows, cols, precision);
    cost.readOnly = caps->readOnlyMatrix;
    cost.transcendentals += caps->transcendentalsPerEntry * mn;
    // Matrix-free variants: no matrix traffic; a row and a column pass, each
    // recomputing the cost (points of dimension 3, the bench's) and one exponential.
    if (!caps->storesMatrix) {
        cost.flops = 2.0 * mn * mapReduceFlopsPerEntry(3, precision);
        cost.pointBytes = std::uint64_t(2.0 * (double(rows) + double(cols)) * 4 * sizeof(float));
    }
    return cost;
}

double operationalIntensity(const IterationCost& cost)
{
    if (cost.bytes > 0) return cost.flops / double(cost.bytes);
    return cost.pointBytes > 0 ? cost.flops / double(cost.pointBytes) : 0.0;
}

double matrixFreeRoofGflops(double entriesPerSecond)
{
    return entriesPerSecond > 0 ? entriesPerSecond * mapReduceFlopsPerEntry(3, Precision::Fp32) / 1e9 : 0.0;
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
