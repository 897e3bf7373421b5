#include "core/color/image.h"

#include <string>

#include "core/transport/uot_error.h"

namespace uot {

namespace {
void checkShape(const Image& image, const std::string& name)
{
    if (image.width <= 0 || image.height <= 0)
        throw Error(ErrorCode::InvalidArgument, name + ": width and height must be positive (got " +
                                                    std::to_string(image.width) + "x" + std::to_string(image.height) + ")");
    if (image.channels != 1 && image.channels != 3 && image.channels != 4)
        throw Error(ErrorCode::InvalidArgument,
                    name + ": channels must be 1, 3 or 4 (got " + std::to_string(image.channels) + ")");
    if (image.depth != 8 && image.depth != 16)
        throw Error(ErrorCode::InvalidArgument, name + ": depth must be 8 or 16 bits (got " + std::to_string(image.depth) + ")");
}
}  // namespace

Image Image::allocate(int width, int height, int channels, int depth)
{
    Image image;
    image.width = width;
    image.height = height;
    image.channels = channels;
    image.depth = depth;
    checkShape(image, "new image");
    image.data.assign(image.byteSize(), 0);
    return image;
}

void validateImage(const Image& image, const char* what)
{
    const std::string name = what;
    checkShape(image, name);
    if (image.data.size() != image.byteSize())
        throw Error(ErrorCode::InvalidArgument, name + ": buffer has " + std::to_string(image.data.size()) +
                                                    " bytes, the shape needs " + std::to_string(image.byteSize()));
}

}  // namespace uot
