#pragma once
// From a solved plan to recolored pixels, on raw host buffers (no OpenCV), so
// that the same steps can later run on the GPU from decoded buffers:
//
//   1. barycentric projection of every source palette point through the plan
//      (computed row by row with forEachPlanRow; the plan is never stored);
//   2. a smooth map of color space: the displacement T(x) - x evaluated on a
//      regular 3-D lattice by the entropic map of the plan (a softmax over the
//      reference points, which equals the barycentric projection at the palette
//      points), read per pixel by trilinear interpolation;
//   3. the per-pixel displacement field smoothed by a guided filter (He et al.)
//      guided by the source lightness, so that neighbouring pixels of one
//      surface move together (keeps structure, no speckle);
//   4. strength, preserve luminance and gamut handling, then back to sRGB.

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "core/color/color_space.h"
#include "core/color/look_controls.h"
#include "core/color/guided_filter.h"
#include "core/color/image.h"
#include "core/color/map_bounds.h"
#include "core/color/marginal_match.h"
#include "core/color/palette.h"
#include "core/transport/uot_problem.h"

namespace uot {

enum class GamutMode {
    Clip,     // clamp each linear RGB channel to [0, 1]
    Compress  // desaturate out-of-gamut colors toward the gray of equal luminance until they fit
};
std::string toString(GamutMode mode);
GamutMode parseGamutMode(const std::string& text);  // "clip" | "compress"

// What the guided filter on the displacement field follows.
enum class SmoothingGuide {
    Lightness,  // the source's lightness: the displacement is affine in L within each window
    Color,      // the source's colour (He et al.'s colour guide): affine in the colour within each window
    Split       // the lightness displacement guided by lightness, the chroma displacement by colour
                // (Lab / Oklab; linear RGB, with no lightness axis, uses the colour guide throughout)
};
std::string toString(SmoothingGuide guide);
SmoothingGuide parseSmoothingGuide(const std::string& text);  // "lightness" | "color" | "split"

// The weights of the fold of the smoothed field into the lattice (core/color/look_lattice.h).
struct LatticeFieldFit {
    double prior = 1e-3;   // pull toward the prior lattice, per mean sample count (core/color/look_fit.h)
    double smooth = 1e-3;  // pull between neighbouring nodes' corrections, per mean sample count
    bool operator==(const LatticeFieldFit&) const = default;
};

struct MappingSettings {
    double strength = 1.0;           // 0 returns the source exactly, 1 the full transfer (values above 1 extrapolate)
    bool preserveLuminance = false;  // keep the source's lightness (Lab/Oklab L; luminance Y for linear RGB)
    GamutMode gamut = GamutMode::Compress;
    int lutSize = 25;                // lattice nodes per axis of the color-space map (9..129)
    // Guided filter on the displacement field, guided by the source's lightness or colour.
    bool smooth = true;
    // Split: chosen on the tuning half of the quality bench's broader set (better palette,
    // same structure as the lightness guide). With a gpu-* solve the GPU fits the
    // lightness guide's field; the others are fitted on the host and composed on the GPU.
    SmoothingGuide smoothGuide = SmoothingGuide::Split;
    // Box radius as a fraction of the image's longer side (>= 1 pixel). 0.035: chosen on the
    // tuning half of the quality bench's broader set with the slope floor and the residual
    // match below (0.02 kept less structure; docs/notes/quality-issue14.md).
    double smoothRadius = 0.035;
    // Regularisation, in (guide / nominal range)^2 units: smaller follows the guide
    // more closely (the displacement stays affine in the guide within each window, so
    // structure is kept). 1e-4 chosen on the tuning half of the quality bench's broader set.
    double smoothEps = 1e-4;
    // The colour guide's regularisation on its chroma axes (Lab / Oklab; linear RGB
    // uses smoothEps on every axis), same units. Above smoothEps, chroma variations
    // smaller than about its square root within a window (a JPEG's 8x8 chroma blocks,
    // noise) keep the source's contrast instead of taking the map's stretch, while
    // chroma edges above it are still followed. 1e-3 (about 3 Lab units): the
    // sample pair's JPEG sky keeps its blocks at 1.2x the source's step (1e-4: 2.3x)
    // at the same tuning median as 1e-4 (3e-3: +0.008).
    double smoothChromaEps = 1e-3;
    // Smallest local slope d(result L) / d(source L) the lightness smoothing allows
    // (Lab / Oklab, lightness or split guide): each window's lightness model is kept
    // at or above it, so that the result never reverses, or (above 0) flattens, the
    // order of the source's lightness within a window. -infinity = no floor. 0.25:
    // chosen on the tuning half (0, 0.15, 0.25, 0.35 and 0.5 measured). With a gpu-*
    // solve a field with a floor is fitted on the host and composed on the device.
    double smoothMinSlope = 0.25;
    int smoothSubsample = 0;         // fast guided filter subsampling factor, 0 = automatic
    // The smoothed field folded into the lattice (core/color/look_lattice.h): the result is
    // composed per pixel from the lattice fitted to the field's displacements, so it is a
    // function of the source colour and an exported 3-D LUT reproduces it (the field's
    // dependence on position, which no LUT holds, is dropped). false: the field itself.
    // With a gpu-* solve the fold runs on the device (DeviceColorMapper::foldLattice).
    bool lutFaithful = true;
    LatticeFieldFit fold;
    // Residual match: each fully transferred colour t is moved toward t + r (f(t) - t),
    // f the per-channel monotone map from the result's distribution of each
    // working-space channel to the reference's (core/color/marginal_match.h), through
    // the smoothed field: the shift is folded into the block displacements that the
    // field is fitted to (a few rounds), so it is as edge-aware and smooth as the
    // field and does not stretch compression blocks or noise (applied per pixel it
    // did). Not applied without smoothing (nor in an exported LUT). 0 = off, 1 = the
    // reference's per-channel distributions as closely as the field follows them.
    // residualMatch for the chroma channels (every channel in linear RGB),
    // residualLightness for the lightness channel of Lab / Oklab. Chroma 1, lightness
    // 0: chosen on the tuning half and the six samples (lightness 0.25 and 0.5 lower
    // the palette distance further but cost structure; docs/notes/quality-issue14.md).
    // With a gpu-* solve the result is sampled on the device and the field refitted on the host.
    // With bounds on, the shift goes into the global lattice instead (addResidualShiftToLut),
    // which is regularised again, and the field is refitted to it.
    double residualMatch = 1;
    double residualLightness = 0;
    // Bounds that keep the lightness order and the chroma map's slope (no bands, no
    // blotches, no islands; core/color/map_bounds.h), on the lattice, the residual
    // match and the field. Fitted on the host; the GPU composes the bounded field.
    MapBounds bounds;
    // The colourist's controls (core/color/look_controls.h): luminance and colour
    // intensity, neutralize, protect skin tones and neutrals. Applied where the
    // result is composed (before strength), so a change re-composes only.
    LookControls look;

    bool operator==(const MappingSettings&) const = default;
};

// Barycentric projection of the source palette points through the plan of
// `problem` (whose cost is the PointCloudCost of the two palettes):
//   T_i = sum_j P_ij y_j / sum_j P_ij
// target receives rows x 3 values; mass receives the row sums sum_j P_ij (may be
// empty). Points whose row mass underflows to 0 keep their own color.
void barycentricProjection(const UotProblem& problem, std::span<const double> logU, std::span<const double> logV,
                           const Palette& source, const Palette& reference, std::vector<double>& target,
                           std::vector<double>* mass = nullptr, int threads = 0);

// A displacement lattice over a box of the working space: at node (i,j,k)
// (i along the first coordinate, fastest index k), values[3*node..] = T(x) - x.
struct DisplacementLut {
    int size = 0;                 // nodes per axis
    double lo[3] = {0, 0, 0};     // box corner (working-space units)
    double step[3] = {1, 1, 1};   // node spacing per axis
    std::vector<float> values;    // size^3 * 3
};

// Which lattice nodes buildDisplacementLut evaluates.
enum class LatticeNodes {
    NextToColors,  // only the corners of cells that hold one of the colors (enough to map those colors)
    All            // every node (to map any color, e.g. for a LUT export)
};

// The nodes of `lut` (size, lo and step set) that buildDisplacementLut evaluates for
// these colours: 1 per evaluated node (every node for LatticeNodes::All).
std::vector<unsigned char> latticeNodeMask(const DisplacementLut& lut, const float* colors, std::size_t n, LatticeNodes nodes,
                                           int threads = 0);

// The entropic map at lattice nodes computed elsewhere (the GPU colour mapper), as
// buildDisplacementLut computes it here: at each node of `nodes` (indices into lut's
// lattice, whose size, lo and step are set) with colour x, lut.values = sum_j w_j y_j /
// sum_j w_j - x, w_j = exp(logW[j] - factor |x - y_j|^2) in float (the terms below exp(-80)
// of the largest dropped), y_j = (yx[j], yy[j], yz[j]), j < cols; the float sums in another
// order (the values to float rounding). Returns false when it did not (then the host does).
using EntropicLattice = std::function<bool(DisplacementLut& lut, const std::vector<std::size_t>& nodes, const float* yx,
                                           const float* yy, const float* yz, const float* logW, std::size_t cols,
                                           float factor)>;

// Builds the lattice from the entropic map of the plan:
//   T(x) = sum_j y_j w_j(x) / sum_j w_j(x),  w_j(x) = exp(logV_j - scale |x - y_j|^2 / eps) R_j
// on the bounding box of `colors` (n working-space colors, interleaved floats,
// used only to find the box and the nodes that are needed). With
// LatticeNodes::NextToColors the other nodes are left at 0. A node's value does
// not depend on `nodes`. The nodes' map by `elsewhere` when given and it makes it.
DisplacementLut buildDisplacementLut(const UotProblem& problem, std::span<const double> logV, const Palette& reference,
                                     const float* colors, std::size_t n, int lutSize, int threads = 0,
                                     LatticeNodes nodes = LatticeNodes::NextToColors,
                                     const EntropicLattice* elsewhere = nullptr);

// Per-pixel displacement by trilinear interpolation: out (n x 3 floats).
void applyDisplacementLut(const DisplacementLut& lut, const float* colors, std::size_t n, float* out, int threads = 0);

// The lightness guide of a working-space color, in [0, 1]: L / range for Lab and
// Oklab, luminance Y for linear RGB.
float guideValue(WorkingSpace space, const float* color);

// The guided-filter radius in pixels for an image (smoothRadius x longer side,
// 0 when smoothing is off) and the automatic subsampling factor.
int smoothingRadiusPixels(const MappingSettings& settings, int width, int height);
int smoothingSubsample(const MappingSettings& settings, int radius);

// The displacement field of an image in compact form. With smoothing: the
// low-resolution coefficients of the guided filter (fast variant: guide and LUT
// displacement averaged over subsample x subsample blocks), interpolated
// bilinearly per pixel. Lightness guide: 6 per node, [a (3), b (3)], displacement
// a * guide + b (about 24 / subsample^2 bytes per pixel). Colour guide: 12 per
// node, [A (3 x 3, row-major), b (3)], displacement A c + b with c the pixel's
// working-space colour (the guide's 1 / nominalRange scale folded into A).
// Without smoothing: empty (the LUT is read per pixel).
struct DisplacementField {
    bool smoothed = false;
    bool colorGuided = false;
    int width = 0, height = 0;        // full resolution
    int subsample = 1;
    int lowWidth = 0, lowHeight = 0;
    std::vector<float> coefficients;  // lowWidth * lowHeight x 6 (lightness guide) or x 12 (colour guide)
};

// Computes the field for an image whose working-space colors are `colors`
// (width x height x 3 floats, host memory): one pass over the pixels plus
// low-resolution box filters.
DisplacementField computeDisplacementField(const DisplacementLut& lut, const float* colors, int width, int height,
                                           WorkingSpace space, const MappingSettings& settings, int threads = 0);

// Block means over subsample x subsample blocks of the working-space colors and
// of their lightness guide (the inputs of the fast guided filter).
struct LowResolution {
    WorkingSpace space = WorkingSpace::Lab;  // of the colors
    int width = 0, height = 0;  // of the low-resolution grid
    int subsample = 1;
    std::vector<float> colors;  // width * height x 3
    std::vector<float> guide;   // width * height
};
LowResolution downsampleColors(const float* colors, int width, int height, WorkingSpace space, int subsample,
                               int threads = 0);

// The field from block means (He's fast guided filter: the displacement is read
// from the LUT at each block's mean color, so the LUT is needed only around the
// low-resolution colors). width/height: the full-resolution image.
DisplacementField computeDisplacementField(const DisplacementLut& lut, const LowResolution& low, int width, int height,
                                           const MappingSettings& settings, int threads = 0);

// The two steps of the function above: the LUT read at every block's mean colour
// (low.width * low.height x 3 floats), and the guided-filter field fitted to any
// such block displacements (the same for the same displacements). Throws
// uot::Error(InvalidArgument) when the block means are not of a width x height image.
std::vector<float> blockDisplacements(const DisplacementLut& lut, const LowResolution& low, int threads = 0);
DisplacementField fitDisplacementField(const LowResolution& low, const float* blockDisplacement, int width, int height,
                                       const MappingSettings& settings, int threads = 0);

// fitDisplacementField for several block displacements on the same block means
// (the residual match's refits): the colour guide's window statistics are computed
// once. `low` must outlive the fitter. Throws as fitDisplacementField.
class DisplacementFieldFitter {
public:
    DisplacementFieldFitter(const LowResolution& low, int width, int height, const MappingSettings& settings,
                            int threads = 0);
    ~DisplacementFieldFitter();
    DisplacementField fit(const float* blockDisplacement) const;

private:
    const LowResolution& m_low;
    MappingSettings m_settings;
    int m_width, m_height, m_threads;
    int m_radius = 0;  // in blocks; 0 = no smoothing
    std::unique_ptr<ColorGuideWindows> m_colorGuide;  // colour and split guides
};

// The residual match folded into the block displacements that a smoothed field is
// fitted to: at each block, t = its mean colour + the field's displacement there,
// and the block's displacement moves by the match's shift r (f(t) - t) (strengths
// of MappingSettings). Refitting the field to them applies the match through the
// guided filter: the shift is as edge-aware and as smooth as the field, so texture
// and compression noise below the filter's eps keep the source's contrast instead
// of taking the map's slope (which per pixel stretched JPEG 8x8 chroma blocks).
// Throws uot::Error(InvalidArgument) for an unsmoothed field or mismatched sizes.
void addResidualShift(std::vector<float>& blockDisplacement, const LowResolution& low, const DisplacementField& field,
                      const MarginalMap& residual, const MappingSettings& settings, int threads = 0);

// The residual match folded into the global lattice instead (with MapBounds on): at
// every node of `mark`, t = the node's colour + its displacement moves by the match's
// shift r (f(t) - t), so that the shift is a function of the colour alone; the
// lattice is then regularised again (regularizeDisplacementLut), which keeps the
// match under the map's bounds. Throws uot::Error(InvalidArgument) when mark has the
// wrong size.
void addResidualShiftToLut(DisplacementLut& lut, const std::vector<unsigned char>& mark, WorkingSpace space,
                           const MarginalMap& residual, const MappingSettings& settings);

// One pass over the pixels: displacement from the field (or the LUT), then
// strength, preserve luminance, gamut handling and sRGB encoding into `result`
// (as composeResult). This is what a strength change re-runs. A residual match is
// in the field already (addResidualShift).
// `look`: the prepared look controls (prepareLookAdjustment), null or inactive for none.
// `within` (width x height weights, or null for every pixel): only the pixels whose
// weight is > 0 are composed; the others' samples in `result` are left as they are.
void composeMapped(const float* colors, const DisplacementLut& lut, const DisplacementField& field, WorkingSpace space,
                   const MappingSettings& settings, const Image& source, Image& result, int threads = 0,
                   const LookAdjustment* look = nullptr, const float* within = nullptr);


// The fully transferred colours c + d (strength 1, before gamut handling) of the
// pixels whose x and y are multiples of `step`, row by row (ceil(height / step) x
// ceil(width / step) x 3 floats): the result's distribution for the residual match.
std::vector<float> sampleMappedColors(const float* colors, const DisplacementLut& lut, const DisplacementField& field,
                                      WorkingSpace space, int width, int height, int step, int threads = 0);

// Final step: out = in + strength * displacement, then preserve luminance, gamut
// handling and conversion to sRGB into `result` (which has the shape wanted:
// 3 or 4 channels, 8 or 16 bit; alpha copied from `source` when both have it).
// colors and displacement: n x 3 working-space floats.
void composeResult(const float* colors, const float* displacement, WorkingSpace space, const MappingSettings& settings,
                   const Image& source, Image& result, int threads = 0, const LookAdjustment* look = nullptr);

}  // namespace uot
