#pragma once
// What an image file's header says about its size, read without decoding
// (JPEG, PNG, TIFF incl. BigTIFF, WebP, BMP), so that an image too large for
// the memory limit is refused before any memory is allocated for its pixels.
// No OpenCV, no Qt.

#include <cstdint>
#include <string>
#include <vector>

namespace uot {

enum class ImageFormat { Unknown, Jpeg, Png, Tiff, WebP, Bmp };

struct ImageHeader {
    ImageFormat format = ImageFormat::Unknown;
    std::uint64_t width = 0;   // 0 when the header does not say (or is damaged)
    std::uint64_t height = 0;
    // What the decoded image holds per pixel: channels (1, 3 or 4) and bytes
    // per sample (1, 2, or 4 for float samples), as an upper bound.
    int channels = 3;
    int bytesPerSample = 1;

    // TIFF: strips or tiles whose data offsets repeat (several strips decoded
    // from one piece of the file). No writer does this; a crafted file does it to
    // decode a huge image from a few kilobytes. Offsets of 0 (empty tiles of a
    // sparse file) do not count.
    std::uint64_t dataBlocks = 0;        // strips or tiles listed
    std::uint64_t distinctDataBlocks = 0;  // of those, at distinct non-zero offsets (0 when not read)

    bool sizeKnown() const { return width > 0 && height > 0; }
    bool sharesDataBlocks() const { return distinctDataBlocks > 0 && distinctDataBlocks < dataBlocks; }
    // width * height * channels * bytesPerSample, saturating at UINT64_MAX.
    std::uint64_t decodedBytes() const;
};

// The format from the magic bytes, and the size and sample layout from the
// header (width/height 0 when it cannot be read). Never reads past `bytes`.
ImageHeader peekImageHeader(const std::vector<std::uint8_t>& bytes);

// "JPEG", "PNG", ... ("unknown" for Unknown).
std::string formatName(ImageFormat format);

}  // namespace uot
