#include "core/color/look_lattice.h"

#include <cstddef>
#include <utility>
#include <vector>

#include "core/transport/uot_error.h"

namespace uot {

namespace {

// The displacement lattice as a CubeLut over its box: the lattice's fastest index
// runs along the third working-space coordinate and the cube's along its first
// input, so the cube's inputs are the coordinates in reverse order (the values'
// memory order is then the same). Both interpolate trilinearly and clamp to the box.
CubeLut asCube(const DisplacementLut& lut)
{
    CubeLut cube;
    cube.size = lut.size;
    for (int a = 0; a < 3; ++a) {
        cube.domainMin[2 - a] = lut.lo[a];
        cube.domainMax[2 - a] = lut.lo[a] + (lut.size - 1) * lut.step[a];
    }
    cube.values = lut.values;
    return cube;
}

// The fold's solve: a few dozen iterations from the prior settle the lattice to well under
// a Lab unit (any lattice is a function of colour: the convergence moves the look, not its
// LUT fidelity).
LookFitOptions foldOptions(const LatticeFieldFit& weights, int threads)
{
    LookFitOptions options;
    options.interpolation = CubeInterpolation::Trilinear;
    options.prior = weights.prior;
    options.smooth = weights.smooth;
    options.threads = threads;
    options.maxIterations = kFoldIterations;
    options.tolerance = kFoldTolerance;
    return options;
}

}  // namespace

DisplacementLut fitLatticeToField(const DisplacementLut& prior, const float* colors, const DisplacementField& field,
                                  WorkingSpace space, int width, int height, int step, const LatticeFieldFit& weights,
                                  int threads)
{
    const std::size_t nodes = static_cast<std::size_t>(prior.size) * prior.size * prior.size;
    if (!field.smoothed || prior.size < 2 || prior.values.size() != 3 * nodes)
        throw Error(ErrorCode::InvalidArgument, "fitLatticeToField: needs a smoothed field and a full prior lattice");
    // The mapped colours c + d on the grid (rows of ceil(width / step)), then the inputs and the displacements.
    const std::vector<float> mapped = sampleMappedColors(colors, prior, field, space, width, height, step, threads);
    const std::size_t cols = static_cast<std::size_t>((width + step - 1) / step);
    const std::size_t count = mapped.size() / 3;
    std::vector<float> inputs(3 * count), targets(3 * count);
    for (std::size_t k = 0; k < count; ++k) {
        const std::size_t x = (k % cols) * static_cast<std::size_t>(step), y = (k / cols) * static_cast<std::size_t>(step);
        const float* c = colors + 3 * (y * static_cast<std::size_t>(width) + x);
        for (int a = 0; a < 3; ++a) {
            inputs[3 * k + a] = c[2 - a];
            targets[3 * k + a] = mapped[3 * k + a] - c[a];
        }
    }
    const CubeLut fitted = fitCubeToSamples(inputs.data(), targets.data(), count, asCube(prior), foldOptions(weights, threads));
    DisplacementLut out = prior;
    out.values = fitted.values;
    return out;
}

LookNormalEquations latticeFoldSystem(const DisplacementLut& prior, LookNormalEquations equations,
                                      const LatticeFieldFit& weights)
{
    return regularisedNormalEquations(std::move(equations), asCube(prior), foldOptions(weights, 1));
}

}  // namespace uot
