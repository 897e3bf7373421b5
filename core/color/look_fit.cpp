#include "core/color/look_fit.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <vector>

#include <omp.h>

#include "core/transport/kernel_matrix.h"
#include "core/transport/uot_error.h"

namespace uot {

namespace {

constexpr int kSlots = 27;       // the 3 x 3 x 3 neighbourhood of a node
constexpr int kCentreSlot = 13;  // the node itself

// Reads pixel p of an image as R, G, B in [0, 1] (gray: the one sample three times).
struct PixelReader {
    const Image& image;
    float scale = 1.0f / (image.depth == 16 ? 65535.0f : 255.0f);

    void rgb(std::size_t p, float out[3]) const
    {
        const std::size_t base = p * static_cast<std::size_t>(image.channels);
        for (int k = 0; k < 3; ++k) {
            const std::size_t i = base + (image.channels == 1 ? 0 : k);
            out[k] = (image.depth == 16 ? image.samples16()[i] : image.samples8()[i]) * scale;
        }
    }
};

struct NodeCoordinates {
    int r, g, b;
};

NodeCoordinates coordinatesOf(std::size_t node, int size)
{
    const std::size_t s = static_cast<std::size_t>(size);
    return {static_cast<int>(node % s), static_cast<int>((node / s) % s), static_cast<int>(node / (s * s))};
}

// Slot of neighbour m in node n's row of the stencil (both within one lattice cell).
int slotOf(const NodeCoordinates& n, const NodeCoordinates& m)
{
    return (m.b - n.b + 1) * 9 + (m.g - n.g + 1) * 3 + (m.r - n.r + 1);
}

// The normal equations (look_fit.h): for each node its 27 stencil coefficients and
// its right-hand side per channel.
using NormalEquations = LookNormalEquations;

void checkPrior(const CubeLut& prior)
{
    const std::size_t n = static_cast<std::size_t>(prior.size);
    if (prior.size < kMinCubeSize || prior.size > kMaxCubeSize || prior.values.size() != n * n * n * 3)
        throw Error(ErrorCode::InvalidArgument, "the LUT fit's prior lattice is inconsistent");
}

void checkInputs(const Image& source, const Image& target, const CubeLut& prior)
{
    validateImage(source, "source");
    validateImage(target, "target");
    if (source.width != target.width || source.height != target.height)
        throw Error(ErrorCode::InvalidArgument, "the LUT fit needs the source and the rendered image at the same size (" +
                                                    std::to_string(source.width) + "x" + std::to_string(source.height) +
                                                    " vs " + std::to_string(target.width) + "x" +
                                                    std::to_string(target.height) + ")");
    checkPrior(prior);
}

// One pass over the samples: sample(k, in, out) gives sample k's input (domain
// units) and its target.
template <typename Sample>
NormalEquations accumulate(std::size_t count, const CubeLut& prior, const LookFitOptions& options, Sample&& sample)
{
    const std::size_t nodes = prior.values.size() / 3;
    const std::size_t stride = std::max<std::size_t>(1, (count + options.maxSamples - 1) / options.maxSamples);
    const std::ptrdiff_t samples = static_cast<std::ptrdiff_t>((count + stride - 1) / stride);
    // Each thread adds into its own copy (a node's row is touched by samples of
    // eight cells); at most 4 copies bound the memory (65^3: 66 MB each).
    const int threads = samples > 65536 ? std::min(resolveThreadCount(options.threads), 4) : 1;
    std::vector<NormalEquations> partial(static_cast<std::size_t>(threads));
#pragma omp parallel num_threads(threads)
    {
        const int t = omp_get_thread_num();
        NormalEquations& eq = partial[static_cast<std::size_t>(t)];
        eq.matrix.assign(nodes * kSlots, 0.0);
        eq.rhs.assign(nodes * 3, 0.0);
#pragma omp for schedule(static)
        for (std::ptrdiff_t k = 0; k < samples; ++k) {
            float s[3], v[3];
            sample(static_cast<std::size_t>(k) * stride, s, v);
            const CubeStencil st = cubeStencil(prior, s, options.interpolation);
            NodeCoordinates c[8];
            for (int i = 0; i < st.count; ++i) c[i] = coordinatesOf(st.node[i], prior.size);
            for (int i = 0; i < st.count; ++i) {
                const double wi = st.weight[i];
                if (wi == 0.0) continue;
                double* row = &eq.matrix[st.node[i] * kSlots];
                for (int j = 0; j < st.count; ++j) row[slotOf(c[i], c[j])] += wi * st.weight[j];
                for (int a = 0; a < 3; ++a) eq.rhs[st.node[i] * 3 + a] += wi * v[a];
            }
        }
    }
    NormalEquations sum = std::move(partial[0]);
    for (std::size_t t = 1; t < partial.size(); ++t) {
        for (std::size_t i = 0; i < sum.matrix.size(); ++i) sum.matrix[i] += partial[t].matrix[i];
        for (std::size_t i = 0; i < sum.rhs.size(); ++i) sum.rhs[i] += partial[t].rhs[i];
    }
    sum.samples = static_cast<std::size_t>(samples);
    return sum;
}

// Adds the prior and the neighbour terms (see the header) to the equations. The
// neighbour term acts on the correction L - P, so a lattice equal to the prior
// costs nothing however curved the prior is.
void regularise(NormalEquations& eq, const CubeLut& prior, double priorWeight, double smoothWeight)
{
    const int n = prior.size;
    const std::size_t nodes = prior.values.size() / 3;
    for (std::size_t i = 0; i < nodes; ++i) {
        eq.matrix[i * kSlots + kCentreSlot] += priorWeight;
        for (int a = 0; a < 3; ++a) eq.rhs[i * 3 + a] += priorWeight * prior.values[i * 3 + a];
        const NodeCoordinates c = coordinatesOf(i, n);
        const int axis[3] = {c.r, c.g, c.b};
        for (int d = 0; d < 3; ++d) {
            for (int step : {-1, 1}) {
                if (axis[d] + step < 0 || axis[d] + step >= n) continue;
                NodeCoordinates m = c;
                (d == 0 ? m.r : d == 1 ? m.g : m.b) += step;
                eq.matrix[i * kSlots + kCentreSlot] += smoothWeight;
                eq.matrix[i * kSlots + slotOf(c, m)] -= smoothWeight;
                const std::size_t j = prior.nodeIndex(m.r, m.g, m.b);
                for (int a = 0; a < 3; ++a)
                    eq.rhs[i * 3 + a] += smoothWeight * (prior.values[i * 3 + a] - prior.values[j * 3 + a]);
            }
        }
    }
}

// y = A x over the 27-point stencil, three channels at once.
void multiply(const NormalEquations& eq, int size, const std::vector<double>& x, std::vector<double>& y, int threads)
{
    const std::ptrdiff_t nodes = static_cast<std::ptrdiff_t>(eq.rhs.size() / 3);
#pragma omp parallel for num_threads(threads) schedule(static) if (nodes > 4096)
    for (std::ptrdiff_t i = 0; i < nodes; ++i) {
        const NodeCoordinates c = coordinatesOf(static_cast<std::size_t>(i), size);
        double acc[3] = {0, 0, 0};
        const double* row = &eq.matrix[static_cast<std::size_t>(i) * kSlots];
        for (int db = -1; db <= 1; ++db) {
            if (c.b + db < 0 || c.b + db >= size) continue;
            for (int dg = -1; dg <= 1; ++dg) {
                if (c.g + dg < 0 || c.g + dg >= size) continue;
                for (int dr = -1; dr <= 1; ++dr) {
                    if (c.r + dr < 0 || c.r + dr >= size) continue;
                    const double w = row[(db + 1) * 9 + (dg + 1) * 3 + (dr + 1)];
                    if (w == 0.0) continue;
                    const std::size_t m = (static_cast<std::size_t>(c.b + db) * size + (c.g + dg)) * size + (c.r + dr);
                    for (int a = 0; a < 3; ++a) acc[a] += w * x[m * 3 + a];
                }
            }
        }
        for (int a = 0; a < 3; ++a) y[static_cast<std::size_t>(i) * 3 + a] = acc[a];
    }
}

// Jacobi-preconditioned conjugate gradients, one independent system per channel
// sharing the matrix; x holds the start on entry and the solution on return.
void solveConjugateGradients(const NormalEquations& eq, int size, std::vector<double>& x, int maxIterations,
                             double tolerance, int threads)
{
    const std::size_t nodes = eq.rhs.size() / 3;
    std::vector<double> r(nodes * 3), z(nodes * 3), p(nodes * 3), q(nodes * 3);
    multiply(eq, size, x, q, threads);
    std::array<double, 3> rz{}, bNorm{};
    for (std::size_t i = 0; i < nodes * 3; ++i) {
        r[i] = eq.rhs[i] - q[i];
        z[i] = r[i] / eq.matrix[(i / 3) * kSlots + kCentreSlot];
        p[i] = z[i];
        rz[i % 3] += r[i] * z[i];
        bNorm[i % 3] += eq.rhs[i] * eq.rhs[i];
    }
    for (int iteration = 0; iteration < maxIterations; ++iteration) {
        multiply(eq, size, p, q, threads);
        std::array<double, 3> pq{}, alpha{}, rr{}, rzNew{};
        for (std::size_t i = 0; i < nodes * 3; ++i) pq[i % 3] += p[i] * q[i];
        for (int a = 0; a < 3; ++a) alpha[a] = pq[a] > 0 ? rz[a] / pq[a] : 0.0;
        for (std::size_t i = 0; i < nodes * 3; ++i) {
            x[i] += alpha[i % 3] * p[i];
            r[i] -= alpha[i % 3] * q[i];
            z[i] = r[i] / eq.matrix[(i / 3) * kSlots + kCentreSlot];
            rr[i % 3] += r[i] * r[i];
            rzNew[i % 3] += r[i] * z[i];
        }
        bool done = true;
        for (int a = 0; a < 3; ++a) done = done && rr[a] <= tolerance * tolerance * std::max(bNorm[a], 1e-300);
        if (done) return;
        for (std::size_t i = 0; i < nodes * 3; ++i) p[i] = z[i] + (rz[i % 3] > 0 ? rzNew[i % 3] / rz[i % 3] : 0.0) * p[i];
        rz = rzNew;
    }
}

}  // namespace

namespace {

void checkOptions(const LookFitOptions& options)
{
    if (!(options.prior > 0) || !(options.smooth >= 0) || options.maxSamples == 0)
        throw Error(ErrorCode::InvalidArgument, "the LUT fit needs prior > 0, smooth >= 0 and samples > 0");
}

// The regularised least-squares lattice from the data's normal equations, solved from the prior.
std::vector<double> solveFit(NormalEquations eq, const CubeLut& prior, const LookFitOptions& options)
{
    const NormalEquations system = regularisedNormalEquations(std::move(eq), prior, options);
    std::vector<double> x(prior.values.begin(), prior.values.end());
    solveConjugateGradients(system, prior.size, x, options.maxIterations, options.tolerance,
                            resolveThreadCount(options.threads));
    return x;
}

}  // namespace

CubeLut fitCubeToSamples(const float* inputs, const float* targets, std::size_t n, const CubeLut& prior,
                         const LookFitOptions& options)
{
    checkPrior(prior);
    checkOptions(options);
    if (n == 0 || !inputs || !targets) throw Error(ErrorCode::InvalidArgument, "the LUT fit needs samples");
    NormalEquations eq = accumulate(n, prior, options, [&](std::size_t k, float s[3], float v[3]) {
        for (int a = 0; a < 3; ++a) {
            s[a] = inputs[3 * k + a];
            v[a] = targets[3 * k + a];
        }
    });
    const std::vector<double> x = solveFit(std::move(eq), prior, options);
    CubeLut fitted = prior;
    for (std::size_t i = 0; i < x.size(); ++i) fitted.values[i] = std::isfinite(x[i]) ? static_cast<float>(x[i]) : prior.values[i];
    return fitted;
}

LookNormalEquations regularisedNormalEquations(LookNormalEquations equations, const CubeLut& prior,
                                               const LookFitOptions& options)
{
    checkPrior(prior);
    checkOptions(options);
    const std::size_t nodes = prior.values.size() / 3;
    if (equations.samples == 0 || equations.matrix.size() != nodes * kSlots || equations.rhs.size() != nodes * 3)
        throw Error(ErrorCode::InvalidArgument, "the LUT fit's normal equations do not match the prior lattice");
    const double perNode = std::max(1.0, static_cast<double>(equations.samples) / static_cast<double>(nodes));
    regularise(equations, prior, options.prior * perNode, options.smooth * perNode);
    return equations;
}

CubeLut fitCubeToImage(const Image& source, const Image& target, const CubeLut& prior, const LookFitOptions& options)
{
    checkInputs(source, target, prior);
    checkOptions(options);
    const PixelReader in{source}, out{target};
    NormalEquations eq = accumulate(source.pixelCount(), prior, options, [&](std::size_t p, float s[3], float v[3]) {
        in.rgb(p, s);
        out.rgb(p, v);
    });
    const std::vector<double> x = solveFit(std::move(eq), prior, options);
    CubeLut fitted = prior;
    for (std::size_t i = 0; i < x.size(); ++i) {
        // Nodes may leave [0, 1] slightly (a cell's interpolation can need it);
        // a bound keeps a weakly held node from carrying a wild value.
        const double v = std::isfinite(x[i]) ? std::clamp(x[i], -0.5, 1.5) : prior.values[i];
        fitted.values[i] = static_cast<float>(v);
    }
    return fitted;
}

double cubePsnr(const CubeLut& lut, const Image& source, const Image& target, CubeInterpolation interpolation,
                int threads)
{
    checkInputs(source, target, lut);
    const Image rendered = applyCubeToImage(lut, source, interpolation, threads);
    const PixelReader a{rendered}, b{target};
    double sum = 0.0;
    const std::size_t pixels = source.pixelCount();
    for (std::size_t p = 0; p < pixels; ++p) {
        float x[3], y[3];
        a.rgb(p, x);
        b.rgb(p, y);
        for (int k = 0; k < 3; ++k) sum += static_cast<double>(x[k] - y[k]) * (x[k] - y[k]);
    }
    const double mse = sum / (3.0 * static_cast<double>(pixels));
    return mse > 0 ? 10.0 * std::log10(1.0 / mse) : std::numeric_limits<double>::infinity();
}

}  // namespace uot
