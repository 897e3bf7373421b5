#pragma once
// A look's lattice as a file: a .cube text, or a Hald CLUT image when the name
// ends in .png. The one encoder and writer of `uot lut`, `uot recolor
// --export-lut` (app/cli/lut_export.cpp) and the studio's Export LUT and LUT
// Preview (ui/lut_job.cpp).

#include <string>

#include "core/color/cube_lut.h"
#include "core/color/image.h"
#include "core/io/atomic_file.h"

namespace uot {

enum class LutFileFormat { Cube, Hald };

// Hald for a name ending in .png (any case), else Cube.
LutFileFormat lutFileFormat(const std::string& path);

// A lattice encoded as its file holds it.
struct EncodedLut {
    LutFileFormat format = LutFileFormat::Cube;
    std::string cubeText;  // Cube: the file's text
    Image haldImage;       // Hald: the image written as a PNG
    // The lattice decoded back from the encoding: the numbers a client reads from the file.
    CubeLut decoded() const;
};

// Encodes `lut` (Hald: the lattice must have a Hald level's size, haldCubeSize).
EncodedLut encodeLut(const CubeLut& lut, LutFileFormat format);

// Writes the encoded lattice to `path` atomically: an existing file only with
// options.overwrite, never one of options.protectedPaths. Throws uot::Error.
void writeEncodedLut(const EncodedLut& lut, const std::string& path, const AtomicWriteOptions& options);

}  // namespace uot
