#pragma once
// 3-D colour lookup tables in the Adobe / DaVinci Resolve ".cube" format (no Qt,
// no OpenCV): the lattice in memory, a writer, a strict reader, and the two
// interpolations that LUT clients use (trilinear, and tetrahedral, which is
// ffmpeg's lut3d default).
//
// The format, as written here:
//   TITLE "name"
//   LUT_3D_SIZE N
//   DOMAIN_MIN 0 0 0
//   DOMAIN_MAX 1 1 1
//   N^3 lines "R G B", the red input index varying fastest, then green, then blue.
// Input and output are the image's encoded values (sRGB-encoded for ordinary
// 8/16-bit images), in the domain's units.

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "core/color/image.h"
#include "core/io/atomic_file.h"

namespace uot {

inline constexpr int kMinCubeSize = 2;
inline constexpr int kMaxCubeSize = 256;
inline constexpr int kDefaultCubeSize = 33;
// The sizes offered by `uot lut` and the studio (what colour tools commonly accept).
bool isOfferedCubeSize(int size);  // 17, 33 or 65

struct CubeLut {
    std::string title;
    int size = 0;                     // nodes per axis
    double domainMin[3] = {0, 0, 0};  // input value of node 0, per channel
    double domainMax[3] = {1, 1, 1};  // input value of node size - 1
    std::vector<float> values;        // size^3 x 3 (R, G, B), red index fastest

    std::size_t nodeIndex(int r, int g, int b) const
    {
        const std::size_t s = static_cast<std::size_t>(size);
        return (static_cast<std::size_t>(b) * s + static_cast<std::size_t>(g)) * s + static_cast<std::size_t>(r);
    }
};

// The identity LUT of `size` nodes per axis over [0, 1].
CubeLut identityCube(int size);

// Throws uot::Error(InvalidArgument) for an inconsistent lut (size out of range,
// wrong value count, domain min >= max, non-finite values).
void validateCube(const CubeLut& lut);

// The .cube text of `lut`. Throws uot::Error(InvalidArgument) for an inconsistent
// lut (size out of range, wrong value count, domain min >= max, non-finite values).
std::string formatCube(const CubeLut& lut);

// Parses .cube text strictly: TITLE, LUT_3D_SIZE, DOMAIN_MIN, DOMAIN_MAX and
// LUT_3D_INPUT_RANGE keywords (each at most once, before the data), comments
// (#) and blank lines, then exactly LUT_3D_SIZE^3 lines of three finite numbers.
// Anything else (a 1-D LUT, an unknown keyword, a short or long table, a bad
// number) throws uot::Error(InvalidArgument) naming `nameForMessages` and the line.
CubeLut parseCube(std::string_view text, const std::string& nameForMessages = "LUT");

// Writes formatCube(lut) atomically (core/io/atomic_file.h). Throws uot::Error(Io).
void writeCubeFile(const std::string& path, const CubeLut& lut, const AtomicWriteOptions& options = {});
// Reads and parses a .cube file. Throws uot::Error(Io) when unreadable,
// uot::Error(InvalidArgument) when malformed.
CubeLut readCubeFile(const std::string& path);

enum class CubeInterpolation { Trilinear, Tetrahedral };

// An interpolation as a weighted sum of lattice nodes: the LUT's output at an
// input is sum_k weight[k] * values[node[k]] (4 nodes for tetrahedral, 8 for
// trilinear; the weights are >= 0 and add up to 1). Shared by applyCube and the
// least-squares fit of a lattice to a rendered image (core/color/look_fit.h), so
// the fit and every evaluation interpolate the same way.
struct CubeStencil {
    std::size_t node[8] = {};
    float weight[8] = {};
    int count = 0;
};
// Where input `value` (domain units, clamped to the domain) of channel 0-2 falls
// on the lattice: the cell (0 .. size - 2) and the fraction inside it (0 .. 1).
struct CubeAxisPosition {
    int cell = 0;
    float fraction = 0;
};
CubeAxisPosition cubeAxisPosition(const CubeLut& lut, int channel, float value);
CubeStencil cubeStencil(const CubeLut& lut, const float rgb[3], CubeInterpolation interpolation);

// The LUT's output at input rgb (domain units; clamped to the domain).
void applyCube(const CubeLut& lut, const float rgb[3], float out[3], CubeInterpolation interpolation);

// The image as the LUT renders it (what a LUT client does to the file's values):
// RGB or RGBA (alpha copied), the image's depth; gray becomes RGB. Outputs are
// rounded to the nearest code value.
Image applyCubeToImage(const CubeLut& lut, const Image& image, CubeInterpolation interpolation, int threads = 0);

}  // namespace uot
