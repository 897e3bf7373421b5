#pragma once
// The per-pixel steps of the color mapping (core/color/color_map.h) on the GPU.
// No CUDA types here: callers include this whether or not CUDA was found; the
// no-CUDA build provides the same class, whose constructor throws
// uot::Error(Unavailable).
//
// What runs on the device: the upload of the 8/16-bit source pixels (through
// pinned staging buffers kept between calls, in chunks that overlap the copy with
// the conversion), sRGB decoding and the conversion to the working space, the
// block means of the fast guided filter, and the composition (displacement from
// the guided-filter coefficients or the LUT, strength, preserve luminance, gamut,
// sRGB encoding, alpha copy), then the download of the result; the residual match's
// distributions of the transferred colours; and the fold of the field into the
// lattice (its normal equations and their conjugate gradients). The small stages
// between them (the guided-filter coefficients on the block means) stay on the
// host (computeDisplacementField), so the results match the CPU path to rounding;
// the entropic map at the lattice's nodes (buildDisplacementLut's) runs here too. The
// lattice's Lipschitz sweeps (regularizeDisplacementLut's longest step) run here too, bit
// for bit. The calling thread sleeps while it waits for the device (blocking events).

#include <memory>

#include "core/color/color_map.h"
#include "core/color/color_space.h"
#include "core/color/image.h"
#include "core/registry/device_registry.h"

namespace uot::gpu {

class ColorMapper final : public DeviceColorMapper {
public:
    // Binds to CUDA device `device` (ordinal). Throws uot::Error(Unavailable)
    // without CUDA or without a usable device, InvalidArgument for a bad ordinal.
    explicit ColorMapper(int device = 0);
    ~ColorMapper() override;
    // Keeps the device buffers and pinned staging for the next mapper of the same
    // device in this process (at most two are kept).
    ColorMapper(const ColorMapper&) = delete;
    ColorMapper& operator=(const ColorMapper&) = delete;

    // Uploads `source` (host memory; gray, RGB or RGBA, 8 or 16 bit), converts it
    // to `space` on the device and keeps both the pixels and the working-space
    // colors there for compose(). When subsample >= 1, returns the block means of
    // the colors and of the lightness guide (as downsampleColors; the means are
    // computed on the device and downloaded, about 16 / subsample^2 bytes per
    // pixel); otherwise an empty LowResolution. Throws uot::Error (Device,
    // OutOfMemory) on CUDA failures, InvalidArgument for an inconsistent image.
    LowResolution setSource(const Image& source, WorkingSpace space, int subsample) override;

    // The block means of the source kept by setSource() (as downsampleColors),
    // without uploading it again. subsample >= 1.
    LowResolution blockMeans(int subsample) override;

    // The displacement field of computeDisplacementField(lut, low, ...) for the
    // block means of the last setSource() / blockMeans() (kept on the device):
    // displacement read from `lut` (host memory) at the block means, then He et
    // al.'s guided filter (radius and eps of `settings`) on the device; the
    // coefficients are downloaded into the returned field (host memory, about
    // 24 / subsample^2 bytes per pixel). Matches the CPU to float rounding.
    // The lightness guide without a slope floor only: otherwise it throws
    // Unavailable, and the caller fits the field on the host from the block means
    // (a low-resolution step) and composes it here.
    DisplacementField computeField(const DisplacementLut& lut, const MappingSettings& settings) override;

    // True after a successful setSource().
    bool hasSource() const override;

    // sampleMappedColors() of the source given to setSource(), on the device: the
    // colours c + d at the pixels whose x and y are multiples of step (step >= 1),
    // row by row, downloaded (3 floats a sample).
    std::vector<float> sampleMapped(const DisplacementLut& lut, const DisplacementField& field, int step) override;

    // channelQuantiles(sampleMapped(lut, field, step), ...) (core/color/marginal_match.h)
    // without downloading the sample: its range per channel and its histograms of `bins`
    // bins are made on the device (exact counts, so the same quantiles as the host's from
    // the same sample), the quantiles walked on the host (quantilesFromHistogram).
    ChannelQuantiles sampledQuantiles(const DisplacementLut& lut, const DisplacementField& field, int step, int levels,
                                      int bins) override;

    // fitLatticeToField(prior, the source's colours, field, space, width, height, step,
    // weights) (core/color/look_lattice.h) on the device: per sampled pixel the field's
    // displacement (as sampleMapped) against the trilinear stencil of its colour on prior's
    // lattice, added into the nodes' normal equations in double precision (atomic adds:
    // the order of the sums, and so their last bits, vary from run to run); the
    // regularisers added on the host (latticeFoldSystem: the equations go down and up
    // again, 240 bytes a node each way); then the conjugate gradients from the prior on the
    // device (at most kFoldIterations, the scalars kept there; the convergence flag read back
// every 8 iterations while the next 8 run, and none queued after it) and the lattice downloaded.
    // Matches the host's fold to the solver's tolerance. `field` must be smoothed, prior a
    // full lattice (as fitLatticeToField).
    DisplacementLut foldLattice(const DisplacementLut& prior, const DisplacementField& field, int step,
                                const LatticeFieldFit& weights) override;

    // The composition of composeMapped() for the source given to setSource():
    // displacement from `field` (when field.smoothed; lightness- or colour-guided)
    // or from `lut` (a residual match is in the field already), then strength, preserve
    // luminance and gamut of `settings`, sRGB encoding into `result` (host memory;
    // the source's size, 3 or 4 channels, 8 or 16 bit; alpha copied from the
    // source when both have it and the depths match).
    void compose(const DisplacementLut& lut, const DisplacementField& field, const MappingSettings& settings,
                 Image& result) override;

    // The chroma's Lipschitz sweeps of regularizeDisplacementLut on the device
    // (gpu/lipschitz_sweeps.h: the projections by levels of edges that share no node, one
    // block per channel); the lattice bit for bit as the host's sweeps. False when a
    // channel does not fit one block's shared memory (the lattice is larger than 37^3).
    bool lipschitzSweeps(float* values, std::size_t nodes, int first, const double* bound,
                         const std::vector<LatticeEdge>& edges) override;

    // The entropic map at the lattice's nodes of buildDisplacementLut (an
    // EntropicLattice's work) on the device: a warp per node over the reference colours,
    // the values to float rounding (the sums in another order).
    bool entropicLattice(DisplacementLut& lut, const std::vector<std::size_t>& nodes, const float* yx, const float* yy,
                         const float* yz, const float* logW, std::size_t cols, float factor) override;

    // Seconds of the last setSource() / compose() call, wall clock on the host
    // (uploads, kernels and downloads included).
    double lastSetSourceSeconds() const override;
    double lastComposeSeconds() const override;

    // The last foldLattice()'s conjugate gradients: the iterations made until the
    // residual met kFoldTolerance (as solveConjugateGradients counts them) and those
    // queued on the device (in chunks of 8; those past the convergence return at once).
    struct FoldIterations {
        int converged = 0, launched = 0;
    };
    FoldIterations lastFoldIterations() const;

    struct Impl;  // device state (defined in the .cu; reused by later mappers of the same device)

private:
    std::unique_ptr<Impl> m_impl;
};

}  // namespace uot::gpu
