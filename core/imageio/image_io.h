#pragma once
// Reading and writing image files (OpenCV's imgcodecs): JPEG, PNG, TIFF, WebP,
// BMP; 8 and 16 bit; gray, RGB, RGBA (alpha passed through). Every failure is a
// uot::Error(Io) whose message names the file and says what is wrong.

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "core/color/image.h"
#include "core/imageio/output_profile.h"

namespace uot {

struct ReadOptions {
    std::uint64_t maxPixels = 200'000'000;  // larger images are refused (0 = no limit)
    bool applyExifOrientation = true;       // rotate/flip as the file's EXIF orientation tag says
    bool convertToSrgb = true;              // convert from the embedded ICC profile to sRGB (image_metadata.h)
};

// Reads an image file into an Image (gray stays 1 channel, alpha kept as 4th
// channel, 16-bit kept; other depths converted to 8 bit). Throws uot::Error(Io)
// for a missing, empty, truncated, corrupt or oversized file.
Image readImage(const std::string& path, const ReadOptions& options = {});

enum class OutputColor { Auto, Gray, Color };

struct WriteOptions {
    int depth = 0;            // 8 or 16 bit; 0 = the image's (formats without 16 bit: JPEG, WebP, BMP get 8)
    OutputColor color = OutputColor::Auto;  // Gray writes the luminance only
    int jpegQuality = 95;     // 1..100
    int webpQuality = 95;     // 1..100 (101 = lossless)
    int pngCompression = 3;   // 0..9
    bool overwrite = true;    // false: an existing file is an error
    // Files that must never be replaced (e.g. the source image), compared as
    // filesystem entries; writing to one is an error.
    std::vector<std::string> protectedPaths;
    // Copy EXIF, XMP and IPTC from this file (the source; orientation set to
    // normal). Empty: none.
    std::string metadataFrom;
    // The colour profile of the file (output_profile.h): the pixels (sRGB) are
    // converted into it and it is embedded. None: no profile, pixels as they are.
    OutputProfile profile = OutputProfile::None;
    // For OutputProfile::Source: the file whose embedded profile is used
    // (empty: metadataFrom).
    std::string profileSource;
    // Told when the source's metadata cannot be copied and is left out (the
    // output is written without it); empty: printed on stderr.
    std::function<void(const std::string& message)> warn;
};

// The output choices as `uot recolor`'s flags and the studio's Save Options
// spell them (the parameter table's --depth, --output-color, --output-profile,
// --jpeg-quality): depth "source", "8" or "16"; color "auto", "color" or
// "gray"; a profile parseOutputProfile reads; quality 1..100 (JPEG and WebP).
// Throws uot::Error(InvalidArgument) for another spelling.
void setOutputChoices(WriteOptions& options, const std::string& depth, const std::string& color,
                      const std::string& profile, int quality);

// Encodes (format from the extension), adds the metadata in memory, then
// writes atomically through writeFileAtomically (core/io/atomic_file.h).
// Throws uot::Error(Io) naming the file.
void writeImage(const std::string& path, const Image& image, const WriteOptions& options = {});

// The warning writeImage would give (through WriteOptions::warn) for copying
// the metadata of `metadataFrom` into an output named like `outputPath`; empty
// when there is none. Found by copying it into a tiny image of the output's
// format in memory: cheap, so a caller can say it before the heavy work.
std::string metadataCopyWarning(const std::string& metadataFrom, const std::string& outputPath);

// The ICC profile `options` asks for (outputProfileBytes with profileSource or
// metadataFrom): lets a caller find a bad choice before the heavy work.
IccProfile chosenOutputProfile(const WriteOptions& options);

// True when the extension is one this module reads (".jpg", ".png", ... case-insensitive).
bool isSupportedImageExtension(const std::string& path);

// Encodes to memory (format from extension, e.g. ".png") / decodes from memory.
std::vector<std::uint8_t> encodeImage(const std::string& extension, const Image& image,
                                      const WriteOptions& options = {});
Image decodeImage(const std::vector<std::uint8_t>& bytes, const std::string& nameForMessages,
                  const ReadOptions& options = {});

}  // namespace uot
