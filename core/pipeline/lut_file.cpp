#include "core/pipeline/lut_file.h"

#include <algorithm>
#include <cctype>
#include <filesystem>

#include "core/color/hald_clut.h"
#include "core/imageio/image_io.h"

namespace uot {

LutFileFormat lutFileFormat(const std::string& path)
{
    std::string ext = std::filesystem::path(path).extension().string();
    std::transform(ext.begin(), ext.end(), ext.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return ext == ".png" ? LutFileFormat::Hald : LutFileFormat::Cube;
}

CubeLut EncodedLut::decoded() const
{
    return format == LutFileFormat::Hald ? cubeFromHaldImage(haldImage) : parseCube(cubeText, "the exported LUT");
}

EncodedLut encodeLut(const CubeLut& lut, LutFileFormat format)
{
    EncodedLut encoded;
    encoded.format = format;
    if (format == LutFileFormat::Hald) encoded.haldImage = haldImageFromCube(lut);
    else encoded.cubeText = formatCube(lut);
    return encoded;
}

void writeEncodedLut(const EncodedLut& lut, const std::string& path, const AtomicWriteOptions& options)
{
    if (lut.format == LutFileFormat::Cube) {
        writeFileAtomically(path, lut.cubeText.data(), lut.cubeText.size(), options);
        return;
    }
    WriteOptions image;
    image.overwrite = options.overwrite;
    image.protectedPaths = options.protectedPaths;
    writeImage(path, lut.haldImage, image);
}

}  // namespace uot
