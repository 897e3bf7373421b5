#include "core/color/hald_clut.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "core/transport/uot_error.h"

namespace uot {

int haldCubeSize(int level) { return level * level; }

Image haldImageFromCube(const CubeLut& lut)
{
    int level = 0;
    for (int l = kMinHaldLevel; l <= kMaxHaldLevel; ++l)
        if (haldCubeSize(l) == lut.size) level = l;
    if (level == 0)
        throw Error(ErrorCode::InvalidArgument, "a Hald CLUT needs " + std::to_string(haldCubeSize(kMinHaldLevel)) +
                                                    " to " + std::to_string(haldCubeSize(kMaxHaldLevel)) +
                                                    " nodes per axis, a square number (got " +
                                                    std::to_string(lut.size) + ")");
    for (int a = 0; a < 3; ++a)
        if (lut.domainMin[a] != 0.0 || lut.domainMax[a] != 1.0)
            throw Error(ErrorCode::InvalidArgument, "a Hald CLUT covers the domain [0, 1] only");
    const std::size_t nodes = static_cast<std::size_t>(lut.size) * lut.size * lut.size;
    if (lut.values.size() != nodes * 3) throw Error(ErrorCode::InvalidArgument, "the LUT has the wrong number of values");
    const int side = level * level * level;
    Image image = Image::allocate(side, side, 3, 16);
    std::uint16_t* out = image.samples16();
    for (std::size_t i = 0; i < nodes * 3; ++i) {
        const float v = std::isfinite(lut.values[i]) ? std::clamp(lut.values[i], 0.0f, 1.0f) : 0.0f;
        out[i] = static_cast<std::uint16_t>(std::lround(v * 65535.0f));
    }
    return image;
}

CubeLut cubeFromHaldImage(const Image& image, const std::string& title)
{
    validateImage(image, "Hald image");
    int level = 0;
    for (int l = 2; l * l * l <= image.width; ++l)
        if (l * l * l == image.width) level = l;
    if (image.width != image.height || level == 0 || image.channels < 3)
        throw Error(ErrorCode::InvalidArgument, "not a Hald CLUT: it must be a square color image whose side is L^3 (" +
                                                    std::to_string(image.width) + "x" + std::to_string(image.height) +
                                                    ")");
    CubeLut lut;
    lut.title = title;
    lut.size = level * level;
    const std::size_t nodes = image.pixelCount();
    lut.values.resize(nodes * 3);
    const float scale = 1.0f / (image.depth == 16 ? 65535.0f : 255.0f);
    for (std::size_t i = 0; i < nodes; ++i)
        for (int a = 0; a < 3; ++a) {
            const std::size_t s = i * static_cast<std::size_t>(image.channels) + a;
            lut.values[i * 3 + a] = (image.depth == 16 ? image.samples16()[s] : image.samples8()[s]) * scale;
        }
    return lut;
}

}  // namespace uot
