#pragma once
// 3-D LUTs as Hald CLUT images (no Qt, no OpenCV), the form darktable's lut 3D
// module, RawTherapee's film simulation and G'MIC read.
//
// A Hald CLUT of level L is a square image of L^3 x L^3 pixels holding a lattice
// of L^2 nodes per axis: pixel number i (row by row) is the node with red index
// i mod L^2, green index (i / L^2) mod L^2 and blue index i / L^4, which is the
// node order of CubeLut (red fastest). Its colour is the LUT's output there.

#include "core/color/cube_lut.h"
#include "core/color/image.h"

namespace uot {

inline constexpr int kMinHaldLevel = 4;   // 16 nodes per axis, 64 x 64 pixels
inline constexpr int kMaxHaldLevel = 8;   // 64 nodes per axis, 512 x 512 pixels
inline constexpr int kDefaultHaldLevel = 8;

// Nodes per axis of a Hald CLUT of `level` (level^2).
int haldCubeSize(int level);

// The 16-bit RGB Hald image of `lut`, whose size must be level^2 for a level in
// [kMinHaldLevel, kMaxHaldLevel] and whose domain must be [0, 1]. Values are
// clamped to [0, 1]. Throws uot::Error(InvalidArgument) otherwise.
Image haldImageFromCube(const CubeLut& lut);

// The lattice a Hald image holds (8 or 16 bit, RGB or RGBA; alpha ignored).
// Throws uot::Error(InvalidArgument) when the image is not a Hald CLUT (not
// square, or its side is not a cube number L^3 with L >= 2).
CubeLut cubeFromHaldImage(const Image& image, const std::string& title = "");

}  // namespace uot
