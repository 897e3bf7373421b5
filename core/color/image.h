#pragma once
// A decoded raster image in host memory, independent of OpenCV and Qt, so that
// the pipeline, the app and the GPU bench can exchange pixels without either.

#include <cstddef>
#include <cstdint>
#include <vector>

namespace uot {

// Row-major, interleaved, rows tightly packed (no padding).
//   channels: 1 = gray, 3 = RGB, 4 = RGBA (alpha not premultiplied)
//   depth:    8 (std::uint8_t samples) or 16 (std::uint16_t samples, native byte order)
// Color samples are sRGB-encoded. data.size() == width * height * channels * depth / 8.
struct Image {
    int width = 0;
    int height = 0;
    int channels = 3;
    int depth = 8;
    std::vector<std::uint8_t> data;

    // Allocates a zero-filled image of the given shape.
    static Image allocate(int width, int height, int channels, int depth);

    std::size_t pixelCount() const { return static_cast<std::size_t>(width) * static_cast<std::size_t>(height); }
    std::size_t bytesPerSample() const { return depth == 16 ? 2 : 1; }
    std::size_t byteSize() const { return pixelCount() * static_cast<std::size_t>(channels) * bytesPerSample(); }
    bool empty() const { return width <= 0 || height <= 0 || data.empty(); }
    bool hasAlpha() const { return channels == 4; }

    // Typed views of data (host memory). Valid only for the matching depth.
    const std::uint8_t* samples8() const { return data.data(); }
    std::uint8_t* samples8() { return data.data(); }
    const std::uint16_t* samples16() const { return reinterpret_cast<const std::uint16_t*>(data.data()); }
    std::uint16_t* samples16() { return reinterpret_cast<std::uint16_t*>(data.data()); }
};

// Throws uot::Error(InvalidArgument) when the shape fields are inconsistent
// with each other or with data.size(). `what` names the image in the message.
void validateImage(const Image& image, const char* what);

}  // namespace uot
